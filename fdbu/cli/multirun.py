"""Hydra multiruns (`-m`) as fdbu runs them: jobs that would write over each other refused before any runs (or,
with one out= for all, each given its own subfolder), a job's header line, and Hydra's bookkeeping kept in a
temporary folder cleared when the jobs end."""
from __future__ import annotations

import os
from pathlib import Path

from .. import registry
from ..errors import FdbuError
from .overrides import swept
from .terminal import show

PER_JOB = "FDBU_OUT_PER_JOB"  # set in each job of a multirun whose jobs share one out= (hydra.job.env_set)
def _writes(command: str) -> tuple[str | None, str | None]:
    """Where a command's job writes: (its out= key, the key it writes into without one)."""
    c = registry.COMMANDS.get(command)
    return (c.out_key, c.tree_key) if c else (None, None)
MAX_JOBS = 100_000  # jobs of one multirun (a cluster's array job holds far fewer)


def _jobs(rest: list[str]) -> list[dict[str, str]] | None:
    """Every job of a multirun as {key: value}, the swept overrides expanded as Hydra's basic sweeper does
    (their cartesian product); None where Hydra's parser refuses them (Hydra then says why)."""
    import itertools
    import math

    from hydra.core.override_parser.overrides_parser import OverridesParser

    args = [a for a in rest if not a.startswith("-") and "=" in a and not a.lstrip("+~").startswith("hydra")]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
        # each axis read at most MAX_JOBS + 1 values: a range of 10^8 is refused without being built
        axes = [list(itertools.islice(((o.key_or_group, v) for v in (
            o.sweep_string_iterator() if o.is_sweep_override() else [o.get_value_element_as_str()])), MAX_JOBS + 1))
            for o in parsed]
    except Exception:
        return None
    count = math.prod(len(a) for a in axes)
    if count > MAX_JOBS:  # bounded, so every multirun's jobs are checked for collisions (none skipped)
        raise FdbuError("config", None, f"-m: more than {MAX_JOBS:,} jobs (every combination of the swept values): "
                        "split the sweep into several commands")
    return [dict(c) for c in itertools.product(*axes)]


def _target(command: str, job: dict[str, str]) -> str | None:
    """The folder a job writes into, resolved (None: only the cache, or nothing to say)."""
    out_key, tree_key = _writes(command)
    if registry.COMMANDS[command].cache_when_sharded and job.get("shards", "1").strip() not in ("1", ""):
        return None  # a shard fills the cache only
    folder = job.get(out_key) if out_key else None
    if folder in (None, "null") and tree_key:
        folder = job.get(tree_key)
    if folder in (None, "null"):
        return None
    return os.path.realpath(folder.strip("'\""))


def outputs_of_jobs(command: str, rest: list[str]) -> list[str]:
    """`-m` whose jobs would write over each other: with one out= for all, each job writes into its own
    subfolder of it (hydra.job.env_set tells the job, on whatever node it runs); otherwise the jobs are
    expanded as Hydra will run them, and two that would write into one folder are refused before any
    runs, naming both."""
    if not any(a in ("-m", "--multirun") for a in rest):
        return rest
    given = {a.partition("=")[0].lstrip("+~"): a.partition("=")[2] for a in rest if "=" in a and not a.startswith("-")}
    varied = [k for k, v in given.items() if swept(v) and not k.startswith("hydra")]
    out_given = given.get("out", "").strip() not in ("", "null", "~", "None") and _writes(command)[0]
    jobs = _jobs(rest) or []  # refused past MAX_JOBS whatever out= says
    if varied and out_given and "out" not in varied:
        return [*rest, f"++hydra.job.env_set.{PER_JOB}=1"]
    seen: dict[str, int] = {}
    for k, job in enumerate(jobs):
        folder = _target(command, job)
        if folder is None:
            continue
        if folder in seen:
            first = seen[folder]
            shown = lambda j: " ".join(f"{key}={v}" for key, v in jobs[j].items()  # noqa: E731
                                       if swept(given.get(key, "")))
            raise FdbuError("config", None, f"-m: job {first} ({shown(first)}) and job {k} ({shown(k)}) would both "
                            f"write into {folder}, the second over the first; " + (
                                "give each job its own out= (Hydra runs every combination of the swept values: "
                                "out=A,B beside tree=X,Y is four jobs), or one out=DIR for all (each job then "
                                "writes into its own subfolder)" if _writes(command)[0] else
                                f"fdbu {command} writes into the tree: sweep only what gives each job its own tree"))
        seen[folder] = k
    return rest


def job_header(cfg) -> None:
    """In a multirun: a header naming the job's overrides, and its own subfolder of a shared out=."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
    except (ImportError, ValueError):
        return
    if hc.mode != RunMode.MULTIRUN:
        return
    num = hc.job.num
    if os.environ.get(PER_JOB) and getattr(cfg, "out", None):  # Hydra unsets it after the job
        tree = getattr(cfg, "tree", None)
        name = Path(tree).resolve().name if isinstance(tree, str) else ""
        cfg.out = str(Path(cfg.out) / (f"{num}-{name}" if name else str(num)))
    shown = [o for o in hc.overrides.task]
    show(f"== job {num}: {' '.join(shown)}" + (f" (outputs in {cfg.out})" if getattr(cfg, "out", None) else ""))


def scratch_sweep_dir(rest: list[str]) -> str | None:
    """A multirun on this machine keeps Hydra's bookkeeping (multirun.yaml, empty job folders) in a temporary
    folder fdbu clears when the jobs end; one given as hydra.sweep.dir, a cluster launcher's (its logs), or one
    the jobs work in (hydra.job.chdir) stays."""
    if not any(a in ("-m", "--multirun") for a in rest):
        return None
    if any(a.lstrip("+").startswith(("hydra.sweep.dir=", "hydra.job.chdir=")) or
           (a.lstrip("+").startswith("hydra/launcher=") and a.split("=", 1)[1] not in ("basic", "local", "joblib"))
           for a in rest):
        return None
    import tempfile

    return tempfile.mkdtemp(prefix="fdbu-multirun-")


def clear_bookkeeping(folder: Path) -> None:
    """Remove Hydra's multirun.yaml and the folders left empty, bottom up; anything a job wrote there stays (and
    so does the folder holding it)."""
    (folder / "multirun.yaml").unlink(missing_ok=True)
    for path in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)) + [folder]:
        if path.is_dir() and not path.is_symlink():
            try:
                path.rmdir()
            except OSError:
                pass
