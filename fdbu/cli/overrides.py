"""The command line read one way, before Hydra parses it: a bare word answered with the key it needs
(`Command.bare`), a scalar where a list is expected made a one-element list, a comma without -m refused in fdbu's
words, Hydra's flags put before the overrides, and a config file of the command's keys (`--config-dir/--config-name`)
read as overrides, checked first (a regular file, a few hundred bytes of YAML, no alias bomb, no key that would make
Hydra run code)."""
from __future__ import annotations

import io
import re
from pathlib import Path

from .. import registry
from ..errors import FdbuError

SWEEPS = ("glob(", "range(", "choice(", "interval(", "tag(", "sort(", "shuffle(")


def swept(value: str) -> bool:
    """Whether an override's value gives several values (a comma outside brackets and quotes, or a sweep)."""
    value = value.strip()
    return value.startswith(SWEEPS) or len(split_top(value)) > 1


def split_top(value: str) -> list[str]:
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


def one_grammar(command: str, rest: list[str]) -> list[str]:
    """The command line read one way: a bare path is answered with the key it needs; a scalar where a list is
    expected is a one-element list (trees=A is trees=[A]); A,B there is several jobs with -m (each a list),
    and without -m refused in fdbu's words with the list syntax."""
    from ..config.keys import list_keys

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
            bare = registry.COMMANDS[command].bare
            if bare is None or a in INFO_TOPICS:
                out.append(a)
                continue
            raise FdbuError("config", None, f"{a!r} is not a setting (key=value); did you mean "
                            f"{_bare_hint(command, bare, a, rest)}?")
        key, _, value = a.partition("=")
        v = value.strip()
        if key.lstrip("+~") not in lists or v.startswith(SWEEPS + ("${",)) or v in ("", "null", "~"):
            out.append(a)
        elif swept(v) and multirun:
            out.append(f"{key}=" + ",".join(p if p.strip().startswith("[") else f"[{p}]" for p in split_top(v)))
        elif v.startswith("["):
            out.append(a)
        elif swept(v):
            raise FdbuError("config", None, f"{key}={value}: a list is written \"{key}=[{value}]\" (quoted for the "
                            "shell); a bare comma means several jobs, with -m")
        else:
            out.append(f"{key}=[{value}]")
    return out


WHOLE = ("launcher", "sweeper")  # Hydra's nodes a group picks (hydra/launcher=...), beside those HydraConf declares


def hydra_keys(command: str, rest: list[str]) -> None:
    """Hydra's own settings (`hydra.*`) checked before Hydra runs them, as fdbu's are: a group of Hydra's settings
    (hydra.sweeper, hydra.launcher, hydra.run, ...) replaced by a scalar, and the sweeper's `params` (the swept keys
    go after -m), are refused in one line naming the override; Hydra met them with a TypeError or an
    AssertionError. A key inside a group (hydra.launcher.n_jobs=2) is left to Hydra, whose errors are one line."""
    from hydra.conf import HydraConf
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException
    from omegaconf import DictConfig, OmegaConf

    mine = [a for a in rest if not a.startswith(("-", "~")) and a.lstrip("+").startswith(("hydra.", "hydra="))]
    if not mine:
        return

    def nodes(n, at=""):
        for k in n.keys():
            if isinstance(n._get_node(k), DictConfig):
                yield at + k
                yield from nodes(n._get_node(k), f"{at}{k}.")

    whole = {"", *WHOLE, *nodes(OmegaConf.structured(HydraConf))}
    parser = OverridesParser.create()

    def check(arg: str, key: str, value, swept: bool = False) -> None:
        inner = key.removeprefix("hydra").lstrip(".")
        if inner == "sweeper.params" or inner.startswith("sweeper.params."):
            raise FdbuError("config", None, f"{arg}: fdbu sweeps the keys given after -m (fdbu score -m tree=A,B); "
                            "give them there, not in Hydra's sweeper")
        if isinstance(value, dict):
            for k, v in value.items():
                check(arg, f"{key}.{k}", v)
        elif inner in whole and not (value is None and not swept and inner not in ("", *WHOLE, "run", "sweep")):
            # (null turns a group such as job_logging off, as Hydra allows; it leaves no launcher or sweeper)
            pick = f"; or pick another with hydra/{inner}=..." if inner in WHOLE else ""
            raise FdbuError("config", None, f"{arg}: {key} is a group of Hydra's settings, not a value: set one of "
                            f"its keys ({key}.<key>=..., listed by fdbu {command} --cfg hydra){pick}")

    for a in mine:
        try:
            o = parser.parse_override(a)
        except HydraException:
            continue  # Hydra's own parse error: one line from Hydra
        check(a, o.key_or_group.lstrip("+"), None if o.is_sweep_override() else o.value(), o.is_sweep_override())


def _bare_hint(command: str, bare: str, word: str, rest: list[str]) -> str:
    """What a bare word on the command line meant: a bool setting's name is that setting set true (`plot`), any other
    setting's name is that setting with a value; else the command's bare key, holding every bare word where it takes
    a list (`fdbu compare A B`: trees=[A,B]), and never a key the line already gives (`tree=A plot`)."""
    from ..config.keys import bool_keys, keys_of

    if word in bool_keys(command):
        return f"{word}=true"
    if word in keys_of(command):
        return f"{word}=..."
    key = bare.partition("=")[0]
    words = [a for i, a in enumerate(rest) if "=" not in a and not a.startswith(("-", "~")) and a not in INFO_TOPICS
             and not (i and rest[i - 1] in HYDRA_VALUED)]  # not a Hydra flag's value (--cfg job)
    if any(a.partition("=")[0].lstrip("+~") == key for a in rest if "=" in a):
        return f"a setting of {command} (key=value; {key}= is given already): fdbu {command} --help lists them"
    least = registry.COMMANDS[command].bare_least
    if "[" in bare and len(words) < least:  # `fdbu compare A`: trees=[A] would be refused in turn
        more = ",".join([*words, *(f"TREE{k + 2}" for k in range(len(words) - 1, least - 1))])
        return f"{bare.format(more)} (at least {least}: {command} needs another)"
    return bare.format(",".join(words) if "[" in bare else word)


def habits(command: str, rest: list[str]) -> list[str]:
    """Other command lines' habits read as fdbu's: `--key=value` (or `--key value`) for a setting of the command is
    `key=value`, and `--flag` for a true/false setting is `flag=true`. Hydra's own flags are left as they are."""
    from ..config.keys import bool_keys, keys_of

    keys, flags, out, i = set(keys_of(command)), set(bool_keys(command)), [], 0
    while i < len(rest):
        a = rest[i]
        key, eq, value = a[2:].partition("=") if a.startswith("--") else ("", "", "")
        if key in keys and eq:
            out.append(f"{key}={value}")
        elif key in flags and not eq:  # --plot, or --plot false as other tools write it
            given = rest[i + 1].lower() if i + 1 < len(rest) else ""
            out.append(f"{key}={given if given in ('true', 'false') else 'true'}")
            i += given in ("true", "false")
        elif key in keys and not eq and i + 1 < len(rest) and "=" not in rest[i + 1] and not rest[i + 1].startswith("-"):
            out.append(f"{key}={rest[i + 1]}")
            i += 1
        else:
            out.append(a)
        i += 1
    return out


HYDRA_VALUED = ("--cfg", "-c", "--package", "-p", "--config-path", "-cp", "--experimental-rerun")
INFO = ("--info", "-i")  # its value is optional: one of these, or none (all)
INFO_TOPICS = ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath")


def options_first(rest: list[str]) -> list[str]:
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


def value_text(v) -> str:
    """A YAML value as Hydra's override grammar writes it: strings quoted, lists and mappings nested."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(value_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{value_text(x)}" for k, x in v.items()) + "}"
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


MAX_CONFIG_BYTES = 1 << 20  # a config file of settings is a few hundred bytes
MAX_CONFIG_NODES = 100_000  # values after YAML's aliases are expanded ("billion laughs")


def _examples() -> Path:
    """Where the example config files are installed (`fdbu.conf.examples`; conf/examples in a checkout)."""
    import importlib.resources

    return Path(str(importlib.resources.files("fdbu.conf") / "examples"))


def config_text(path) -> str:
    """A config file's text, read only when it is a regular file of at most MAX_CONFIG_BYTES, and refused when its
    aliases would expand past MAX_CONFIG_NODES values (counted on the composed node graph, nothing expanded)."""
    import yaml

    from ..common.atomic import regular

    try:
        regular(path, "config", str(path))  # a FIFO would block the read forever
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        shipped = _examples()
        hint = (f"; fdbu's examples are installed with it: --config-dir {shipped}"
                if isinstance(e, FileNotFoundError) and Path(path).parent.name == "examples"
                and (shipped / Path(path).name).is_file() and Path(path).resolve() != (shipped / Path(path).name)
                else "")
        raise FdbuError("config", None, f"the config file {path} cannot be read: {e.strerror or e}{hint}") from None
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


def entries(data, at: str = ""):
    """Every (key path, key, value, at the top) of a config file's data, depth first, list items keyed by index."""
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        yield f"{at}{k}", k, v, not at
        yield from entries(v, f"{at}{k}.")


def runs_code(data) -> str | None:
    """The first key of a config file that would make Hydra run code: a `hydra` key, or `_target_` anywhere."""
    for path, k, _, top in entries(data):
        key = str(k).lstrip("+~")
        if (top and (key == "hydra" or key.startswith(("hydra.", "hydra/")))) or key == "_target_":
            return path
    return None


RESOLVER = re.compile(r"\$\{\s*[\w.\-]+\s*:")  # ${oc.env:VAR}, ${oc.decode:...}: a resolver call, not a reference


def resolves(data) -> str | None:
    """The first key of a config file whose value calls an OmegaConf resolver (`${oc.env:TOKEN}` would put the
    environment of whoever runs the file into a setting, which may be sent elsewhere: evaluate.judge.base_url)."""
    return next((path for path, _, v, _ in entries(data) if isinstance(v, str) and RESOLVER.search(v)), None)


def config_file(rest: list[str]) -> list[str]:
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
    from omegaconf import OmegaConf

    path = Path(found.get("dir", ".")) / found["name"]
    path = path if path.suffix in (".yaml", ".yml") else path.with_name(path.name + ".yaml")
    text = config_text(path)
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
    env = resolves(data)
    if env:
        raise FdbuError("config", None, f"the config file {path} sets {env} by an interpolation (${{...:...}}): a "
                        "config file holds values only, never the environment or other resolvers (give such a value "
                        "on the command line)")
    code = runs_code(data)
    if code:  # Hydra instantiates `_target_` (callbacks, launchers): a file someone sent could run anything
        raise FdbuError("config", None, f"the config file {path} sets {code}: a config file holds the command's "
                        "settings only, never hydra keys or _target_ (give Hydra's settings on the command line)")

    def flat(d, prefix=""):
        for k, v in d.items():
            if isinstance(v, dict) and v and not (prefix + str(k)).startswith("export.roots"):
                yield from flat(v, f"{prefix}{k}.")
            else:
                yield f"{prefix}{k}={value_text(v)}"

    return [*flat(data), *out]
