"""Hydra configs, installed as the package `fdbu.conf` so an installed fdbu finds them."""
