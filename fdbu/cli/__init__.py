"""The command line: dispatch (`main`), each command's console (`consoles`), the command line read one way
(`overrides`), multiruns (`multirun`), fitting text to a terminal (`terminal`), the SLURM launcher (`launcher`) and
the docs' Reference pages made from the registries (`docs`)."""
