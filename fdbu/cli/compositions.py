"""A command's config composed once per process for the same command line, then copied (issue 78).

Hydra composes a command's config anew on every call: reading fdbu's YAML and schemas, building the defaults list,
merging (0.1-0.15 s on a 2-core AVX2 machine, against 7 ms to deep-copy the result). A process that runs several
commands (the Python API, a notebook, the test suite's some 700 commands) pays it each time. What a composition
reads is all in its key here, so a repeat gives what composing again would: the command and its overrides, the run
mode, the working directory (hydra.runtime.cwd), Hydra's job name, the search path, every file under its package
sources (path, size, modification time) and every node of the ConfigStore (a plugin's registration is a new node).
Not remembered: a composition whose search path has a user's folder (--config-dir, hydra.searchpath: what their
YAML reads is theirs to change at any time) or that copies environment variables into the job
(hydra.job.env_copy). Each caller gets its own deep copy; the remembered one is never handed out.
"""
from __future__ import annotations

import contextlib
import copy
import os
from collections import OrderedDict
from typing import Any

KEPT = 32  # compositions remembered, the least recently used dropped first
_COMPOSED: OrderedDict[tuple, tuple[Any, list]] = OrderedDict()  # key -> (config, the store's nodes it was made with)


@contextlib.contextmanager
def remembered():
    """Hydra's config loader answers a composition it has made in this process with a copy of it, while in this."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    real = ConfigLoaderImpl.load_configuration

    def load_configuration(self, config_name, overrides, *rest, **named):  # Hydra's own arguments, passed on
        key, nodes = _key(self, config_name, overrides, (*rest, *sorted(named.items())))
        if key is not None and key in _COMPOSED:
            _COMPOSED.move_to_end(key)
            return copy.deepcopy(_COMPOSED[key][0])
        cfg = real(self, config_name, overrides, *rest, **named)
        if key is not None and not cfg.hydra.job.env_copy:
            _COMPOSED[key] = (copy.deepcopy(cfg), nodes)  # the nodes held: an id is not reused while it is a key
            while len(_COMPOSED) > KEPT:
                _COMPOSED.popitem(last=False)
        return cfg

    ConfigLoaderImpl.load_configuration = load_configuration
    try:
        yield
    finally:
        ConfigLoaderImpl.load_configuration = real


def _key(loader, config_name, overrides, rest: tuple) -> tuple[tuple | None, list]:
    """Everything the composition reads, or None where it reads what this cannot see (a user's folder)."""
    from hydra.core.utils import JobRuntime

    path = [(e.provider, e.path) for e in loader.config_search_path.get_path()]
    if any(not p.startswith(("pkg://", "structured://")) for _, p in path) or \
            any(o.split("=", 1)[0].lstrip("+~") in ("hydra", "hydra.searchpath") for o in overrides):
        return None, []
    try:
        job = JobRuntime.instance().get("name")
    except KeyError:
        job = None
    nodes = _store_nodes()
    files = tuple(_files(p[len("pkg://"):]) for _, p in path if p.startswith("pkg://"))
    return (config_name, tuple(overrides), repr(rest), os.getcwd(), job, tuple(path), files,
            tuple((where, id(node)) for where, node in nodes)), nodes


def _store_nodes() -> list[tuple[str, Any]]:
    """(its path, the node) of every config in Hydra's ConfigStore."""
    from hydra.core.config_store import ConfigStore

    out: list[tuple[str, Any]] = []

    def walk(d: dict, at: str) -> None:
        for name, value in sorted(d.items()):
            if isinstance(value, dict):
                walk(value, f"{at}{name}/")
            else:
                out.append((at + name, value))

    walk(ConfigStore.instance().repo, "")
    return out


def _files(package: str) -> tuple:
    """(relative path, size, modification time) of every file under a package source's folders."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    out = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                st = os.stat(os.path.join(folder, name))
                out.append((os.path.relpath(os.path.join(folder, name), root), st.st_size, st.st_mtime_ns))
    return package, tuple(roots), tuple(out)
