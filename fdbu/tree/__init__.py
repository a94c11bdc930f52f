"""A reference tree, made and read: `export` (and `export_sources`, `adopt`) writes one from a release's folders and
a system's outputs; `load` reads and checks it into samples, `readers` every JSON file in it, `layout` what a folder is."""
