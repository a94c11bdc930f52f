"""`fdbu COMMAND [key=value ...]`: one Hydra app per command, typed configs in `fdbu.config`, the
work in `fdbu.commands`; this module parses, composes and prints.

The command word is taken off argv before Hydra parses the rest, so every Hydra feature
(`--cfg job`, `-m` multirun, launchers, overrides) works per command. Every expected
failure (input, file system, cache, output, config) is one line `fdbu: error: ...` and exit
status 2; Ctrl-C is exit 130; anything else is a bug: its traceback, and a line asking to
report it.
"""
from __future__ import annotations

import os
import signal
import sys


def _stop(signum=None, frame=None):
    """Ctrl-C while fdbu starts (torch, Hydra and the config load for seconds): nothing was read or
    written yet, so it ends here, in one line, whatever import it came in."""
    os.write(2, b"fdbu: error: interrupted (Ctrl-C) while starting; nothing was read or written\n")
    os._exit(130)


# first of all, in the console script (not where a program imports fdbu): a shell's background job keeps
# SIGINT ignored, which stays so
if os.path.basename(sys.argv[0]) == "fdbu" and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _stop)

import difflib  # noqa: E402
from pathlib import Path  # noqa: E402
import io  # noqa: E402
import traceback  # noqa: E402
from typing import NoReturn  # noqa: E402

from . import commands, registry  # noqa: E402
from .version import __version__  # noqa: E402
from .errors import FdbuError  # noqa: E402
from .log import console_handler  # noqa: E402



def usage() -> str:
    """`fdbu --help`: every registered command, one line each."""
    return f"""usage: fdbu COMMAND [key=value ...] [--cfg job] [-m]      fdbu COMMAND --help: every key

commands:
{registry.usage()}

Hydra: --cfg job shows the composed config; -m runs several jobs (fdbu score -m tree=A,B).
Python: import fdbu; fdbu.score("runs/modelA").to_pandas()  (see the README)."""


@registry.console("score")
def _score(cfg) -> None:
    from pathlib import Path

    from . import unified
    from .tree import require

    require(Path(cfg.tree))  # a wrong tree= is its one line, before anything else is said
    if cfg.progress and sys.stderr.isatty():  # the seconds before the first bar: torch, Silero, the kernels load
        print(f"fdbu score: loading Silero VAD (torch) and the kernels, then reading {cfg.tree}", file=sys.stderr,
              flush=True)
    ran = commands.score.run(cfg, reference_column=True, cores=launcher_share())
    show(unified.summary(ran.value.unified))
    if ran.column:
        show("\n" + ran.column)
    show("\n".join(["", *ran.lines]))


@registry.console("sweep")
def _sweep(cfg) -> None:
    from .sweep_grid import table

    ran = commands.sweep.run(cfg, cores=launcher_share())
    show(table(ran.value, cfg.trees()))
    show("\n".join(["", *ran.lines]))


@registry.console("compare")
def _compare(cfg) -> None:
    from .pairwise import leaderboard

    ran = commands.compare.run(cfg)
    show(leaderboard(ran.value))
    show("\n".join(["", *(ran.lines or ["pass out=DIR to write compare.json, compare.csv and the figures"])]))


@registry.console("report")
def _report(cfg) -> None:
    from pathlib import Path

    ran = commands.report.run(cfg)
    show("\n".join(ran.lines))
    if "html" in cfg.report.formats():
        show(f"open {(Path(cfg.out) / 'index.html').resolve()}")


@registry.console("evaluate")
def _evaluate(cfg) -> None:
    from .evaluate import table

    ran = commands.evaluate.run(cfg)
    show(table(ran.value))
    show("\n".join(ran.lines))
    if ran.disagreements:
        print("official scripts disagree with fdbu's rules:\n  " + "\n  ".join(ran.disagreements), file=sys.stderr)
        sys.exit(3)


@registry.console("export")
def _export(cfg) -> None:
    import json

    tree = commands.export.run(cfg).value
    rows = json.loads((tree / "manifest.json").read_text())["samples"]
    bad = [r for r in rows if not r["eligible"]]
    adopted = " (transcripts adopted from the official asr.py's output.json)" if cfg.export.transcripts == "adopt" \
        else ""
    fitted = [r for r in rows if r.get("length_fit")]
    show(f"wrote {tree}: {len(rows)} samples, {len(rows) - len(bad)} eligible, {len(bad)} ineligible{adopted}")
    if fitted:
        shown = ", ".join(f"{r['sample_id']} {r['length_fit']['action']} {r['length_fit']['samples'] / 16:.1f} ms"
                          for r in fitted[:5])
        show(f"  {len(fitted)} output{'s' if len(fitted) > 1 else ''} fitted to T (export.length="
             f"{cfg.export.length}; manifest.json length_fit): {shown}{', ...' if len(fitted) > 5 else ''}")
    dropped = sum(r.get("dropped_words", 0) for r in rows)
    if dropped:
        show(f"  {dropped} transcript words starting after T dropped from cropped outputs (manifest.json dropped_words)")
    if bad:
        from .export import keeps

        show("  ineligible (not scored; counted in unified.json's ineligible_reasons):")
    for r in bad:
        show(f"  {r['sample_id']}: {keeps(r)}")


def _lines(command):
    """A command whose console output is its lines (given the launcher's share of the cores)."""
    def run(cfg) -> None:
        show("\n".join(command(cfg, cores=launcher_share()).lines))
    return run


def launcher_share() -> int | None:
    """Under a launcher whose jobs are parallel processes on this machine (it declares `n_jobs`, as
    Hydra's joblib launcher does) each job gets its share of the cores (cores // workers), so they do
    not start on the same free cores and fight."""
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ImportError, ValueError):
        return None
    if "n_jobs" not in launcher:
        return None
    from .device import allowed_cores

    cores, n = allowed_cores(), int(launcher.get("n_jobs") or -1)
    return max(1, cores // (cores if n < 1 else min(n, cores)))


@registry.console("synth")
def _synth(cfg) -> None:
    tree = commands.synth.run(cfg).value
    what = "official per-task folders" if cfg.layout == "official" else "tree"
    n = cfg.n if isinstance(cfg.n, int) else "the release's" if cfg.n == "release" else \
        ", ".join(f"{k} {v}" for k, v in dict(cfg.n).items())
    show(f"wrote synthetic {what} {tree} ({n} samples{' per subset' if not isinstance(cfg.n, dict) else ''}, "
         f"system={cfg.system}, seed={cfg.seed})")


@registry.console("calibrate")
def _calibrate(cfg) -> None:
    from .vad.calibration import FLOOR, IMPLAUSIBLE, MULTIPLE

    ran = commands.calibrate.run(cfg, cores=launcher_share())
    cal = ran.value
    ident = cal.identity["device"]
    show(f"device: {', '.join(f'{k} {v}' for k, v in ident.items() if v is not None)}")
    show(f"corpus: {cal.windows} windows, {cal.audio_s:.0f} s of audio (sha256:{cal.corpus_sha256[:12]})")
    show(f"largest |batched - reference| probability: {cal.deviation:.3e} (refused above {IMPLAUSIBLE:.0e})")
    show(f"guard margin: {cal.margin:.3e} = max({MULTIPLE} x deviation, {FLOOR:.0e}); {cal.seconds:.1f} s")
    show("\n".join(ran.lines))


def console_of(command: str):
    """What runs `command` and prints: its registered console, or (a command that registers none, as asr and vad)
    its lines."""
    c = registry.COMMANDS[command]
    return c.show or _lines(c.run)


def _gaps(row: str) -> set:
    """Where a table row may be cut: after two spaces (inside a cell there is at most one, as in "not reached"
    or "[0.1, 0.2]"); a cut is taken only where every row of the table has one."""
    return {p for p in range(2, len(row)) if row[p - 1] == row[p - 2] == " "}


def _fold_table(rows: list[str], width: int) -> list[str]:
    """Table rows wider than `width`, each cut in a gap between cells they all share (so the cut-off cells stay
    under one another, right-aligned ones too), the rest on the following lines, indented four more; rows with no
    shared gap stay as they are."""
    return [line for parts in _fold_rows(rows, width) for line in parts]


def _fold_rows(rows: list[str], width: int) -> list[list[str]]:
    if all(len(r) <= width for r in rows):
        return [[r] for r in rows]
    indent = len(rows[0]) - len(rows[0].lstrip(" "))
    gaps = [_gaps(r) for r in rows]
    cut = next((p for p in range(width, indent + 2, -1) if all(p >= len(r) or p in g for r, g in zip(rows, gaps))),
               None)
    if cut is None:
        return [[r] for r in rows]
    long = [k for k, r in enumerate(rows) if len(r) > cut]
    tails = _fold_rows([" " * (indent + 4) + rows[k][cut:] for k in long], width)
    out = [[r[:cut].rstrip()] if len(r) > cut else [r] for r in rows]
    for k, parts in zip(long, tails):
        out[k] += parts
    return out


def fit(text: str) -> str:
    """On a terminal, lines wider than it are fitted to it: prose wraps at spaces (indented under its start); a
    table's rows are cut at a column boundary they share, the rest of each row on the line below it, so no
    cell is split. Everything printed into a pipe or a file stays as it is."""
    if not sys.stdout.isatty():
        return text
    import re
    import shutil
    import textwrap

    width = max(40, shutil.get_terminal_size((100, 24)).columns)
    out: list[str] = []
    table: list[str] = []

    def flush():
        out.extend(_fold_table(table, width) if table else [])
        table.clear()

    for line in text.split("\n"):
        body = line.lstrip(" ")
        if len(re.findall(r"\S {2,}\S", body)) >= 2:  # a table row: kept with its table
            if table and len(table[0]) - len(table[0].lstrip(" ")) != len(line) - len(body):
                flush()
            table.append(line)
            continue
        flush()
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(body))
        kept = re.sub(r"\[[^\[\]]*\]", lambda m: m.group(0).replace(" ", "\x00"), body)  # an interval stays whole
        out += [w.replace("\x00", " ") for w in textwrap.wrap(kept, width, initial_indent=indent,
                                                               subsequent_indent=indent + "  ",
                                                               break_long_words=False, break_on_hyphens=False)]
    flush()
    return "\n".join(out)


def show(*parts: str) -> None:
    """print, fitted to the terminal."""
    print(fit(" ".join(parts)))


def error(message: str, status: int = 2) -> NoReturn:
    print(f"fdbu: error: {message}", file=sys.stderr)
    sys.exit(status)


def _task(fn, command: str | None = None):
    """Run one command on its composed config: validated into its dataclass first, errors as one line."""
    def run(cfg) -> None:
        from omegaconf import OmegaConf
        from omegaconf.errors import OmegaConfBaseException

        from .config import composition_error

        console_handler()  # the notes of the modules below (fdbu.log) on stderr, one line each
        try:
            try:
                obj = OmegaConf.to_object(cfg)
            except OmegaConfBaseException as e:
                raise FdbuError("config", None, composition_error(e, command)) from None
            if signal.getsignal(signal.SIGINT) is _stop:  # the work starts: Ctrl-C unwinds it (outputs clean up)
                _preload(command)
                signal.signal(signal.SIGINT, signal.default_int_handler)
            _multirun_job(obj)
            fn(obj)
        except FdbuError as e:
            error(str(e).splitlines()[0])
        except KeyboardInterrupt as e:
            interrupted(e)
        except RecursionError:
            error("a JSON file is nested too deeply to read")
    return run


def _preload(command: str | None) -> None:
    """torch before Ctrl-C becomes an exception: a KeyboardInterrupt raised while torch's C++ (pybind11) runs its
    import calls back into Python aborts the process (std::terminate) instead of unwinding. Until here Ctrl-C
    exits at once (130), nothing having been written."""
    if command in registry.COMMANDS and registry.COMMANDS[command].loads_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            pass


PER_JOB = "FDBU_OUT_PER_JOB"  # set in each job of a multirun whose jobs share one out= (hydra.job.env_set)
SWEEPS = ("glob(", "range(", "choice(", "interval(", "tag(", "sort(", "shuffle(")


def _swept(value: str) -> bool:
    """Whether an override's value gives several values (a comma outside brackets and quotes, or a sweep)."""
    value = value.strip()
    return value.startswith(SWEEPS) or len(_split_top(value)) > 1


def _writes(command: str) -> tuple[str | None, str | None]:
    """Where a command's job writes: (its out= key, the key it writes into without one)."""
    c = registry.COMMANDS.get(command)
    return (c.out_key, c.tree_key) if c else (None, None)
MAX_JOBS_CHECKED = 100_000


def _jobs(rest: list[str]) -> list[dict[str, str]] | None:
    """Every job of a multirun as {key: value}, the swept overrides expanded as Hydra's basic sweeper does
    (their cartesian product); None where Hydra's parser refuses them (Hydra then says why)."""
    import itertools
    import math

    from hydra.core.override_parser.overrides_parser import OverridesParser

    args = [a for a in rest if not a.startswith("-") and "=" in a and not a.lstrip("+~").startswith("hydra")]
    try:
        parsed = OverridesParser.create().parse_overrides(args)
        axes = [[(o.key_or_group, v) for v in (o.sweep_string_iterator() if o.is_sweep_override()
                                                else [o.get_value_element_as_str()])] for o in parsed]
    except Exception:
        return None
    if math.prod(len(a) for a in axes) > MAX_JOBS_CHECKED:
        return None
    return [dict(c) for c in itertools.product(*axes)]


def _target(command: str, job: dict[str, str]) -> str | None:
    """The folder a job writes into, resolved (None: only the cache, or nothing to say)."""
    out_key, tree_key = _writes(command)
    if command == "asr" and job.get("shards", "1").strip() not in ("1", ""):
        return None  # a shard fills the cache only
    folder = job.get(out_key) if out_key else None
    if folder in (None, "null") and tree_key:
        folder = job.get(tree_key)
    if folder in (None, "null"):
        return None
    return os.path.realpath(folder.strip("'\""))


def _multirun_outputs(command: str, rest: list[str]) -> list[str]:
    """`-m` whose jobs would write over each other: with one out= for all, each job writes into its own
    subfolder of it (hydra.job.env_set tells the job, on whatever node it runs); otherwise the jobs are
    expanded as Hydra will run them, and two that would write into one folder are refused before any
    runs, naming both."""
    if not any(a in ("-m", "--multirun") for a in rest):
        return rest
    given = {a.partition("=")[0].lstrip("+~"): a.partition("=")[2] for a in rest if "=" in a and not a.startswith("-")}
    varied = [k for k, v in given.items() if _swept(v) and not k.startswith("hydra")]
    out_given = given.get("out", "").strip() not in ("", "null", "~", "None") and _writes(command)[0]
    if varied and out_given and "out" not in varied:
        return [*rest, f"++hydra.job.env_set.{PER_JOB}=1"]
    jobs = _jobs(rest) or []
    seen: dict[str, int] = {}
    for k, job in enumerate(jobs):
        folder = _target(command, job)
        if folder is None:
            continue
        if folder in seen:
            first = seen[folder]
            shown = lambda j: " ".join(f"{key}={v}" for key, v in jobs[j].items()  # noqa: E731
                                       if _swept(given.get(key, "")))
            raise FdbuError("config", None, f"-m: job {first} ({shown(first)}) and job {k} ({shown(k)}) would both "
                            f"write into {folder}, the second over the first; " + (
                                "give each job its own out= (Hydra runs every combination of the swept values: "
                                "out=A,B beside tree=X,Y is four jobs), or one out=DIR for all (each job then "
                                "writes into its own subfolder)" if _writes(command)[0] else
                                f"fdbu {command} writes into the tree: sweep only what gives each job its own tree"))
        seen[folder] = k
    return rest


BARE = {"compare": "trees=[{}]", "report": "trees=[{}]", "export": "dataset={}", "synth": "out={}"}


def _split_top(value: str) -> list[str]:
    """A value split at its commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, ""
    for ch in value:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    return parts + [cur]


def _one_grammar(command: str, rest: list[str]) -> list[str]:
    """The command line read one way: a bare path is answered with the key it needs; a scalar where a list is
    expected is a one-element list (trees=A is trees=[A]); A,B there is several jobs with -m (each a list),
    and without -m refused in fdbu's words with the list syntax."""
    from .config import list_keys

    lists = set(list_keys(command))
    multirun = any(a in ("-m", "--multirun") for a in rest)
    out, skip = [], False
    for a in rest:
        if (skip and "=" not in a) or a.startswith("-"):  # a flag, or a flag's value (never key=value)
            out.append(a)
            skip = a in HYDRA_VALUED or a in INFO
            continue
        skip = False
        if "=" not in a and a.startswith("~"):  # Hydra's deletion: its own grammar says what it makes of it
            out.append(a)
            continue
        if "=" not in a:
            if command == "calibrate" or a in INFO_TOPICS:
                out.append(a)
                continue
            raise FdbuError("config", None, f"{a!r} is not a setting (key=value); did you mean "
                            f"{BARE.get(command, 'tree={}').format(a)}?")
        key, _, value = a.partition("=")
        v = value.strip()
        if key.lstrip("+~") not in lists or v.startswith(SWEEPS + ("${",)) or v in ("", "null", "~"):
            out.append(a)
        elif _swept(v) and multirun:
            out.append(f"{key}=" + ",".join(p if p.strip().startswith("[") else f"[{p}]" for p in _split_top(v)))
        elif v.startswith("["):
            out.append(a)
        elif _swept(v):
            raise FdbuError("config", None, f"{key}={value}: a list is written \"{key}=[{value}]\" (quoted for the "
                            "shell); a bare comma means several jobs, with -m")
        else:
            out.append(f"{key}=[{value}]")
    return out


HYDRA_VALUED = ("--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--experimental-rerun")
INFO = ("--info", "-i")  # its value is optional: one of these, or none (all)
INFO_TOPICS = ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath")


def _options_first(rest: list[str]) -> list[str]:
    """Hydra's flags (-m, --cfg job, ...) before the overrides: its parser takes the overrides as one run of
    positional arguments, so a flag between or after them left the rest 'unrecognized'."""
    flags, overrides, i = [], [], 0
    while i < len(rest):
        a = rest[i]
        if a in INFO:  # moved before the overrides, it must not take the first of them as its topic
            topic = rest[i + 1] if i + 1 < len(rest) and rest[i + 1] in INFO_TOPICS else None
            flags.append(f"{a}={topic or 'all'}" if a == "--info" else a)
            if a == "-i":
                flags.append(topic or "all")
            i += 2 if topic else 1
            continue
        if a.startswith("-"):
            flags.append(a)
            if a in HYDRA_VALUED and i + 1 < len(rest) and not rest[i + 1].startswith("-") and "=" not in rest[i + 1]:
                flags.append(rest[i + 1])
                i += 1
        else:
            overrides.append(a)
        i += 1
    return flags + overrides


FILE_FLAGS = {"--config-name": "name", "-cn": "name", "--config-dir": "dir", "-cd": "dir"}


def _value(v) -> str:
    """A YAML value as Hydra's override grammar writes it: strings quoted, lists and mappings nested."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_value(x)}" for k, x in v.items()) + "}"
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


MAX_CONFIG_BYTES = 1 << 20  # a config file of settings is a few hundred bytes
MAX_CONFIG_NODES = 100_000  # values after YAML's aliases are expanded ("billion laughs")


def _config_text(path) -> str:
    """A config file's text, read only when it is a regular file of at most MAX_CONFIG_BYTES, and refused when its
    aliases would expand past MAX_CONFIG_NODES values (counted on the composed node graph, nothing expanded)."""
    import yaml

    from .tree import regular

    try:
        regular(path, "config", str(path))  # a FIFO would block the read forever
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise FdbuError("config", None, f"the config file {path} cannot be read: {e.strerror or e}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise FdbuError("config", None, f"the config file {path} is larger than {MAX_CONFIG_BYTES >> 20} MiB; a file "
                        "of settings is a few lines")
    try:
        text = raw.decode("utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except UnicodeDecodeError:
        raise FdbuError("config", None, f"the config file {path} is not UTF-8 text") from None
    except RecursionError:
        raise FdbuError("config", None, f"the config file {path} is nested too deeply to be a file of settings") from None
    except yaml.YAMLError as e:
        raise FdbuError("config", None, f"the config file {path} is not valid YAML: "
                        f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    sizes: dict[int, int] = {}

    def size(n) -> int:  # values under a node once its aliases are expanded, each shared node counted once
        if id(n) not in sizes:
            sizes[id(n)] = 0  # a cycle counts nothing more
            kids = [v for pair in n.value for v in pair] if isinstance(n, yaml.MappingNode) else \
                n.value if isinstance(n, yaml.SequenceNode) else []
            sizes[id(n)] = 1 + sum(min(size(k), MAX_CONFIG_NODES) for k in kids)
        return sizes[id(n)]

    try:
        big = node is not None and size(node) > MAX_CONFIG_NODES
    except RecursionError:
        raise FdbuError("config", None, f"the config file {path} is nested too deeply to be a file of settings") from None
    if big:
        raise FdbuError("config", None, f"the config file {path} expands to more than {MAX_CONFIG_NODES} values "
                        "(YAML aliases); a file of settings needs none")
    return text


def _runs_code(data, at: str = "") -> str | None:
    """The first key of a config file that would make Hydra run code: a `hydra` key, or `_target_` anywhere."""
    if isinstance(data, dict):
        for k, v in data.items():
            key = str(k).lstrip("+~")
            if (not at and (key == "hydra" or key.startswith(("hydra.", "hydra/")))) or key == "_target_":
                return f"{at}{k}"
            found = _runs_code(v, f"{at}{k}.")
            if found:
                return found
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found = _runs_code(v, f"{at}{i}.")
            if found:
                return found
    return None


def _config_file(rest: list[str]) -> list[str]:
    """`--config-dir DIR --config-name NAME` (or `-cd`/`-cn`, or a path as the name): a YAML file of the command's
    keys, as a Hydra user writes one, taken as overrides placed before the command line's (which win). Its
    mapping is flattened to `key=value`, so the file's values travel with every job, on any launcher."""
    found, out, i = {}, [], 0
    while i < len(rest):
        flag, eq, val = rest[i].partition("=")
        if flag in FILE_FLAGS:
            if not eq:
                if i + 1 == len(rest):
                    raise FdbuError("config", None, f"{flag} needs a value")
                val, i = rest[i + 1], i + 1
            found[FILE_FLAGS[flag]] = val
        else:
            out.append(rest[i])
        i += 1
    if "name" not in found:
        if "dir" in found:
            raise FdbuError("config", None, "--config-dir needs --config-name, the file's name (without .yaml)")
        return rest
    from pathlib import Path

    from omegaconf import OmegaConf

    path = Path(found.get("dir", ".")) / found["name"]
    path = path if path.suffix in (".yaml", ".yml") else path.with_name(path.name + ".yaml")
    text = _config_text(path)
    try:
        data = OmegaConf.to_container(OmegaConf.load(io.StringIO(text)), resolve=False)
    except Exception as e:  # YAML syntax
        raise FdbuError("config", None, f"the config file {path} is not valid YAML: "
                        f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise FdbuError("config", None, f"the config file {path} is not a mapping of settings (key: value)")
    if "defaults" in data:
        raise FdbuError("config", None, f"the config file {path} has a defaults list; give the command's keys only "
                        "(pick launchers and other groups on the command line: hydra/launcher=slurm_cpu)")
    code = _runs_code(data)
    if code:  # Hydra instantiates `_target_` (callbacks, launchers): a file someone sent could run anything
        raise FdbuError("config", None, f"the config file {path} sets {code}: a config file holds the command's "
                        "settings only, never hydra keys or _target_ (give Hydra's settings on the command line)")

    def flat(d, prefix=""):
        for k, v in d.items():
            if isinstance(v, dict) and v and not (prefix + str(k)).startswith("export.roots"):
                yield from flat(v, f"{prefix}{k}.")
            else:
                yield f"{prefix}{k}={_value(v)}"

    return [*flat(data), *out]


def _multirun_job(cfg) -> None:
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
        from pathlib import Path

        tree = getattr(cfg, "tree", None)
        name = Path(tree).resolve().name if isinstance(tree, str) else ""
        cfg.out = str(Path(cfg.out) / (f"{num}-{name}" if name else str(num)))
    shown = [o for o in hc.overrides.task]
    show(f"== job {num}: {' '.join(shown)}" + (f" (outputs in {cfg.out})" if getattr(cfg, "out", None) else ""))


def _command_help(command: str) -> str:
    from .config import help_text

    return (f"usage: fdbu {command} [key=value ...] [--cfg job] [-m]\n\n{help_text(command)}\n\n"
            f"Hydra: --cfg job shows the composed config; -m runs several jobs; hydra/launcher=... picks a launcher.")


def interrupted(e: KeyboardInterrupt) -> NoReturn:
    """Ctrl-C: one line (a second Ctrl-C is ignored while it prints), exit 130. The message of a
    KeyboardInterrupt raised with one (`Outputs.commit`) says what the next run will do."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    error(f"interrupted (Ctrl-C); {e.args[0] if e.args else 'nothing half-written was left behind'}", 130)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt as e:  # while the imports and the config load
        interrupted(e)
    except BrokenPipeError:  # printing into a reader that stopped (`| head`): what SIGPIPE would end with
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if argv[0] in ("--version", "-V", "version"):
        print(f"fdbu {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in registry.COMMANDS:
        near = difflib.get_close_matches(command, registry.COMMANDS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        print(f"fdbu: error: unknown command {command!r}{hint}\n\n{usage()}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in rest):
        print(_command_help(command))
        return 0
    from .config import register, too_large

    try:
        rest = _multirun_outputs(command, _one_grammar(command, _config_file(rest)))
    except FdbuError as e:
        return error(str(e))
    large = too_large(rest)  # the command line's and a config file's values alike
    if large:
        return error(f"config: {large}")
    register()
    os.environ["HYDRA_FULL_ERROR"] = "1"  # composition errors reach this function, which prints one line
    scratch = _scratch_sweep_dir(rest)
    if scratch:
        rest = [*rest, f"hydra.sweep.dir={_value(scratch)}"]  # quoted: any TMPDIR Hydra's grammar can read
    sys.argv = [f"fdbu-{command}"] + _options_first(rest)
    try:
        return _run(command, app_of(command))
    finally:
        if scratch:
            _clear_bookkeeping(Path(scratch))


def app_of(command: str):
    import hydra

    return hydra.main(version_base="1.3", config_path="pkg://fdbu.conf", config_name=command)(
        _task(console_of(command), command))


def _scratch_sweep_dir(rest: list[str]) -> str | None:
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


def _clear_bookkeeping(folder: Path) -> None:
    """Remove Hydra's multirun.yaml and the folders left empty, bottom up; anything a job wrote there stays (and
    so does the folder holding it)."""
    (folder / "multirun.yaml").unlink(missing_ok=True)
    for path in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)) + [folder]:
        if path.is_dir() and not path.is_symlink():
            try:
                path.rmdir()
            except OSError:
                pass


def _run(command: str, app) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from .config import composition_error

    try:
        app()
    except KeyboardInterrupt as e:
        interrupted(e)
    except (HydraException, OmegaConfBaseException) as e:  # composing the config, parsing the overrides
        error(f"config: {composition_error(e, command)}")
    except FdbuError as e:  # a launcher's refusal, or jobs of a multirun that did not finish
        error(str(e).splitlines()[0])
    except BrokenPipeError:
        raise
    except Exception as e:
        if isinstance(e, ValueError) and str(e).startswith("Only one of --run, --multirun, --cfg"):
            error("-m and --cfg/--info cannot be combined (Hydra shows one run's config): leave out -m and give "
                  "each swept key one value to see it")
        traceback.print_exc()
        print(f"fdbu {__version__}: this is a bug in fdbu, not a problem with your input; please report it with "
              "the command and the traceback above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
