"""The typed configs: each command's dataclass in Hydra's ConfigStore (`store`), the groups several share
(`base`), a config's keys, `--help` and errors (`keys`), and each setting's facts once (`settings`)."""
