"""Every command of fdbu, registered once: the one place a command's facts live.

A `Command` holds what each layer needs to know about it: its usage line (the CLI's `USAGE`), the files it
writes through `fdbu.common.outputs.Outputs` (the only names a stopped run's recovery moves), which key names the
folder it writes into (multirun's collision check), how a bare word on its command line is read (the hint),
whether it loads torch (Ctrl-C before that exits at once), and the three parts the layers above attach with a
decorator, lm-evaluation-harness style: its config dataclass (`@registry.config`, `fdbu.config.store`), its function
(`@registry.command`, `fdbu.commands`: `run(cfg, call: Call) -> Ran`, typed by `Run`, which mypy checks) and its
console printing (`@registry.console`, `fdbu.cli.consoles`; optional: without one the CLI prints the lines the
command returns). The CLI dispatches through `show` (or `run`), Hydra composes `config` (fdbu.config.store.register).
The module imports nothing of fdbu, so the writer and every other layer may read it; `check()`
(tests/test_command_registry.py) says which part a command lacks.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol

if TYPE_CHECKING:  # for the types only: the registry imports nothing of fdbu when it runs
    from .commands.base import Ran


@dataclass(frozen=True)
class Call:
    """What a command is told beside its config by whoever runs it (the CLI, the Python API, a test): every such
    argument, typed, in one place."""

    cores: int | None = None  # a launcher's share of this machine's cores (jobs side by side); None: its own choice
    write: bool = True        # write its files (the API only computes unless write=True)
    console: bool = False     # a person reads its console: also compute what only the console shows (score's
    #                           reference column, made before the commit so it never stops one)


CALL = Call()  # a command run as the CLI runs it without a launcher, writing its files


class Run(Protocol):
    """A command's function: its checked config and a `Call` in, a `fdbu.commands.Ran` out (mypy checks every one
    registered with `@registry.command`: a function returning anything else fails the type check)."""

    def __call__(self, cfg: Any, call: Call = ...) -> Ran: ...


class Stop(NamedTuple):
    """How the tests stop a command by Ctrl-C inside its work (tests/test_ctrl_c.py) and read its first line
    (tests/test_first_output.py), every command that declares one: its command line on the demo's trees
    (benchmarks/first_output.demo: {mixed} and {prompt} two scored trees, {untranscribed} one without transcripts,
    {official} the official per-task layout, {out} a fresh folder), the named step of its work where the Ctrl-C
    comes (fdbu.common.faults), and whether what the stopped run did is kept for the next."""
    args: tuple[str, ...]
    at: str
    keeps: bool = False


@dataclass
class Command:
    name: str
    summary: str                 # what it does, in a few words (USAGE's middle column)
    usage: str                   # its shortest useful command line (USAGE's right column)
    writes: tuple[str, ...] = ()  # the files it writes through Outputs, as fnmatch patterns
    out_key: str | None = None   # the key naming the folder it writes into ...
    tree_key: str | None = None  # ... and the one it writes into without it
    loads_torch: bool = False    # its work always imports torch (imported before Ctrl-C becomes an exception;
    # score, sweep and vad import it when something must be computed, through fdbu.common.device.load_torch, and
    # export only to resample; evaluate and synth never: their start-up skips torch's seconds of imports)
    config: Any = None           # the config dataclass (fdbu.config.store)
    run: Run | None = None       # the function: config and Call in, fdbu.commands.Ran out (fdbu.commands)
    show: Callable[[Any], None] | None = None  # the console: runs it and prints (fdbu.cli.consoles)
    bare: str | None = "tree={}"  # a bare word on its command line is refused with this hint (None: Hydra's own
    #                               grammar reads it)
    bare_least: int = 1           # the fewest values the bare hint's list takes (compare: two trees): a hint with
    #                               fewer says what is missing rather than suggesting a list that would be refused
    cache_when_sharded: bool = False  # with shards > 1 it fills the cache only: its jobs write no folder
    assembled_by: str | None = None   # the command whose run without shard= reads its shards' cache (None: itself)
    # a quick run of it on the tests' synthetic data (tests/test_kill.py runs every writer so): {tree} a synthetic
    # tree it may write into, {a} and {b} two scored trees, {out} a fresh folder
    example: tuple[str, ...] = ()
    names: Callable[[], set[str]] | None = None  # every file name its code can announce, over its options
    #                                              (`@registry.announces`; a writer's, checked against `writes`)
    stop: Stop | None = None      # a run the tests stop by Ctrl-C (`Stop`): every command that writes files or
    #                               loads torch declares one (tests/test_ctrl_c.py checks that it does)

    def owns(self, name: str) -> bool:
        """Whether `name` is one of the files this command writes (recovery moves nothing else): a plain file name
        (no folder, no "..") matching one of its patterns."""
        return "/" not in name and "\\" not in name and ".." not in name and \
            any(fnmatchcase(name, p) for p in self.writes)


_FIGURE = ("png", "pdf")
_CURVES = tuple(f"latency-curves.{e}" for e in _FIGURE)
_COMPARED = tuple(f"compare-{f}.{e}" for f in ("forest", "latency-curves") for e in _FIGURE)

COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("score", "score a reference tree", "fdbu score tree=PATH [out=DIR] [plot=true]",
            ("unified.json", "unified-samples.jsonl", *_CURVES), "out", "tree",
            example=("tree={tree}", "progress=false"),
            stop=Stop(("tree={mixed}", "vad.batch_seconds=10"), "vad:batch:1", True)),
    Command("sweep", "speech-detection metrics over VAD settings", 'fdbu sweep tree=PATH | "tree=[A,B]" out=DIR',
            ("sweep.json", "sweep.csv", *(f"sweep-heatmaps.{e}" for e in _FIGURE)), "out", "tree",
            example=("tree={tree}", "out={out}", "sweep.threshold=[0.4,0.5]", "sweep.min_silence_duration_ms=[100]",
                     "progress=false", "plot=false"),
            stop=Stop(("tree={mixed}", "out={out}", "vad.batch_seconds=10"), "vad:batch:1", True)),
    Command("compare", "scored systems, pair by pair", 'fdbu compare "trees=[A,B]" [names=[a,b]] [out=DIR]',
            ("compare.json", "compare.csv", *_COMPARED), "out", bare="trees=[{}]", bare_least=2,
            example=("trees=[{a},{b}]", "names=[a,b]", "out={out}", "progress=false", "plot=false"),
            stop=Stop(("trees=[{mixed},{prompt}]", "out={out}"), "compare:subset:1")),
    Command("report", "a site and the leaderboard as tables", 'fdbu report "trees=[A,B]" [names=[a,b]] out=DIR',
            ("report.json", "compare.json", "index.html", "samples-[0-9]*.js", "leaderboard.md", "leaderboard.tex",
             "leaderboard.csv", *_COMPARED, *_CURVES), "out", bare="trees=[{}]",
            example=("trees=[{a},{b}]", "names=[a,b]", "out={out}", "progress=false"),
            stop=Stop(("trees=[{mixed},{prompt}]", "out={out}"), "report:sample:1")),
    Command("evaluate", "the official rules (reference column)",
            "fdbu evaluate tree=PATH [evaluate.official_checkout=DIR]", ("summary.json", "judge-ledger.jsonl"),
            None, "tree", example=("tree={tree}",), stop=Stop(("tree={mixed}",), "evaluate:staged:summary.json")),
    Command("export", "a tree from the release + outputs",
            'fdbu export dataset=DIR | "export.roots={subset: DIR}" out=DIR', (), "out", None, bare="dataset={}",
            stop=Stop(("dataset={official}", "out={out}"), "export:sample:1")),
    Command("asr", "transcripts with Parakeet (NeMo)", "fdbu asr tree=DIR [asr.model=NAME | asr.checkpoint=PATH.nemo]",
            (), None, "tree", True, cache_when_sharded=True,
            stop=Stop(("tree={untranscribed}", "asr.batch_size=1", "asr.max_batch_seconds=10", "device=cpu"),
                      "asr:batch:0", True)),
    Command("vad", "speech probabilities into the cache", "fdbu vad tree=DIR [shard=K shards=N] (then score assembles)",
            (), assembled_by="score", stop=Stop(("tree={mixed}", "vad.batch_seconds=10"), "vad:batch:1", True)),
    Command("synth", "write a synthetic reference tree", "fdbu synth out=PATH [n=5] [seed=0] [system=mixed]",
            (), "out", None, bare="out={}", stop=Stop(("out={out}", "n=2"), "synth:sample:1")),
    Command("calibrate", "the batched VAD's guard margin here", "fdbu calibrate [device=cuda]", (), None, None, True,
            bare=None, stop=Stop((), "calibrate:batched")),
)}


PLUGINS = "FDBU_PLUGINS"  # the environment variable naming plugin modules, comma-separated
PLUGIN_GROUP = "fdbu.plugins"  # the entry point group an installed package names its plugin module in
_LOADED: list[str] = []
_ASKED: list[str] = []  # the FDBU_PLUGINS values already read: the installed entry points are scanned once a process


def load_plugins() -> list[str]:
    """Import each plugin once: a module that registers, when imported, commands (`add` and the decorators below),
    subsets or families (fdbu.tasks.register, register_family), named in FDBU_PLUGINS (comma-separated module
    names) or by an installed package's entry point in group "fdbu.plugins". The CLI and the API load them first,
    so a plugin's command, family or subset is every stage's, in every process a command starts. Returns the
    modules loaded by this call; one that cannot be imported raises ImportError naming it and where it was named."""
    import importlib
    import os
    from importlib.metadata import entry_points

    asked = os.environ.get(PLUGINS, "")
    if asked in _ASKED:  # every in-process command calls this: the scan (about 20 ms over a full venv) once
        return []
    named = [(n.strip(), PLUGINS) for n in asked.split(",") if n.strip()]
    if not _ASKED:
        named += [(e.value, f"entry point {e.name} of {PLUGIN_GROUP}") for e in entry_points(group=PLUGIN_GROUP)]
    loaded = []
    for name, where in named:
        if name in _LOADED:
            continue
        try:
            importlib.import_module(name)
        except Exception as e:  # a plugin's own error, said with its name: not fdbu's traceback
            raise ImportError(f"plugin {name} ({where}) cannot be loaded: {type(e).__name__}: {e}") from e
        _LOADED.append(name)
        loaded.append(name)
    _ASKED.append(asked)
    return loaded


def add(command: Command) -> Command:
    """Register a command (a plugin's, a test's): its parts attach as fdbu's own do."""
    if command.name in COMMANDS:
        raise ValueError(f"command {command.name} is already registered")
    COMMANDS[command.name] = command
    return command


def remove(name: str) -> None:
    del COMMANDS[name]


def also_writes(name: str, *files: str) -> None:
    """More files command `name` writes: a family's figures (fdbu.tasks.register_family), for score and report."""
    c = COMMANDS[name]
    c.writes = c.writes + tuple(f for f in files if f not in c.writes)


def no_longer_writes(name: str, *files: str) -> None:
    c = COMMANDS[name]
    c.writes = tuple(f for f in c.writes if f not in files)


def _attach(part: str, name: str):
    def put(obj):
        if name not in COMMANDS:
            raise KeyError(f"{name!r} is not a registered command (fdbu.registry.COMMANDS)")
        setattr(COMMANDS[name], part, obj)
        return obj
    return put


def config(name: str):
    """Class decorator: the config dataclass of command `name`."""
    return _attach("config", name)


def command(name: str) -> Callable[[Run], Run]:
    """Function decorator: the work of command `name`, `run(cfg, call: Call) -> Ran` (`Run`; mypy checks fdbu's
    own, and a function that cannot take (cfg, call) is refused here, naming the command, not at its first run)."""
    def put(fn: Run) -> Run:
        try:
            inspect.signature(fn).bind(None, CALL)
        except (TypeError, ValueError):
            raise TypeError(f"the function of command {name!r} must take (cfg, call: fdbu.registry.Call), as "
                            f"run(cfg, call=CALL); {getattr(fn, '__name__', fn)!r} cannot") from None
        return _attach("run", name)(fn)
    return put


def console(name: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Function decorator: the console of command `name` (runs it on its config and prints); without one the CLI
    prints the lines of its `Ran`."""
    return _attach("show", name)


def announces(name: str) -> Callable[[Callable[[], set[str]]], Callable[[], set[str]]]:
    """Function decorator: every file name command `name`'s code can announce (tests/test_command_registry.py holds
    them to its `writes`, so recovery moves exactly what the command writes)."""
    return _attach("names", name)


def check() -> list[str]:
    """What is missing: each registered command's part that no layer attached (empty when whole); a command that
    writes files also says their names and how to run it quickly (`names`, `example`)."""
    parts = {c.name: ("config", "run", *(("names", "example") if c.writes else ())) for c in COMMANDS.values()}
    return [f"{c.name}: no {part}" for c in COMMANDS.values() for part in parts[c.name] if not getattr(c, part)]


def usage() -> str:
    """The CLI's command list: a command and what it does, its shortest useful command line under it (80 columns)."""
    return "\n".join(f"  {c.name:<10} {c.summary}\n               {c.usage}" for c in COMMANDS.values())
