"""A command's config as its keys: the API's plain values built into it (`build`, the CLI's grammar), the keys that
are lists or groups, an error of Hydra's or OmegaConf's as one line with the nearest key, and `--help`'s text of
every key with its type, default and meaning."""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any, Dict, List

from omegaconf import MISSING

from .store import CONFIGS
from ..errors import FdbuError, one_line
from .settings import MAX_INT


def too_large(overrides) -> str | None:
    """The first `key=value` whose value (or a list element) is an integer no float holds: OmegaConf would
    fail converting it (OverflowError) before any check runs."""
    for item in overrides:
        key, _, value = str(item).partition("=")
        for part in value.strip("[]").split(","):
            part = part.strip()
            if part.lstrip("+-").isdigit() and part.isascii() and abs(int(part)) > MAX_INT:
                return f"{key.lstrip('+~')}=<an integer of {len(part.lstrip('+-'))} digits>: no setting takes a " \
                       "number this large"
    return None


def flat(values: Dict[str, Any], prefix: str = "") -> List[str]:
    """The API's nested settings as `key=value` overrides (for `too_large`)."""
    out = []
    for key, value in values.items():
        if isinstance(value, dict):
            out += flat(value, f"{prefix}{key}.")
        else:
            shown = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else value
            out.append(f"{prefix}{key}={shown}")
    return out


def build(command: str, values: Dict[str, Any]):
    """The config object for a command from plain values (the Python API): the same types, defaults and checks."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    schema = OmegaConf.structured(CONFIGS[command])
    values = one_grammar(command, values)
    large = too_large(flat(values))
    if large:
        raise FdbuError("config", None, large)
    try:
        merged = OmegaConf.merge(schema, values)
        return OmegaConf.to_object(merged)
    except OmegaConfBaseException as e:
        raise FdbuError("config", None, composition_error(e, command)) from None


def _fields(cls, prefix: str = ""):
    """(key path, field) of every setting of a config class, groups walked into."""
    import typing

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        kind = hints.get(f.name, f.type)
        if dataclasses.is_dataclass(kind):
            yield prefix + f.name, kind
            yield from _fields(kind, f"{prefix}{f.name}.")
        else:
            yield prefix + f.name, kind


def list_keys(command: str) -> List[str]:
    """The keys of `command` whose value is a list (List[...] or Optional[List[...]])."""
    import typing

    def is_list(kind) -> bool:
        if typing.get_origin(kind) in (list, List):
            return True
        return typing.get_origin(kind) is typing.Union and any(is_list(a) for a in typing.get_args(kind))

    return [key for key, kind in _fields(CONFIGS[command]) if is_list(kind)]


def keys_of(command: str) -> List[str]:
    """Every setting of `command` (groups walked into)."""
    return [key for key, kind in _fields(CONFIGS[command]) if not dataclasses.is_dataclass(kind)]


def bool_keys(command: str) -> List[str]:
    """The settings of `command` that are true or false."""
    import typing

    return [key for key, kind in _fields(CONFIGS[command])
            if kind is bool or (typing.get_origin(kind) is typing.Union and bool in typing.get_args(kind))]


def group_keys(command: str) -> List[str]:
    return [key for key, kind in _fields(CONFIGS[command]) if dataclasses.is_dataclass(kind)]


def one_grammar(command: str, values: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """The API's settings read as the CLI reads them: a scalar where a list is expected is a one-element list
    (names="A" is names=["A"]), and a group given anything but a dict is refused in fdbu's words."""
    lists, groups = set(list_keys(command)), set(group_keys(command))
    out = {}
    for key, value in values.items():
        path = prefix + str(key)
        if path in groups and not (isinstance(value, Mapping) or dataclasses.is_dataclass(value)):
            raise FdbuError("config", None, f"{path}={value!r}: a group of settings is a dict of its keys, e.g. "
                            f"{path}={{{_example(command, path)}}}")
        if isinstance(value, Mapping) and path in groups:
            value = one_grammar(command, dict(value), path + ".")
        elif path in lists and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            value = [value]
        out[key] = value
    return out


def _example(command: str, group: str) -> str:
    first = next(k for k, _ in _fields(CONFIGS[command]) if k.startswith(group + ".") and k.count(".") ==
                 group.count(".") + 1)
    return f"{first.rsplit('.', 1)[1]!r}: ..."


def composition_error(e: BaseException, command: str | None = None) -> str:
    """One line for a config Hydra or OmegaConf refused: the key, the value, what is allowed (an unknown key:
    the nearest key of `command`)."""
    cause = e.__cause__ if e.__cause__ is not None else e
    key = getattr(cause, "full_key", None)
    text = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
    if "not in" in text and key:  # an unknown key: suggest the nearest known one
        return f"{key} is not a setting{did_you_mean(key, command)}"
    if text.startswith("LexerNoViableAltException"):  # Hydra's lexer: unquoted newline, tab, non-ASCII letter
        override = getattr(cause, "override", None) or text.partition(": ")[2]
        key, _, value = override.partition("=")
        return one_line(f"cannot read the override {override!r}: quote a value holding spaces, tabs, newlines or "
                        f"non-ASCII letters, e.g. \"{key}='{value}'\" (single quotes inside the argument)")
    if type(cause).__name__ == "MissingMandatoryValue":
        return f"{key or text} is required (e.g. {key}=PATH)"
    if key and text.startswith(("Cannot convert 'list' to", "Cannot convert 'ListConfig' to")):
        import re

        listed = re.search(r"\[(.*)\]'?$", text)
        values = ",".join(v.strip().strip("'\"") for v in listed.group(1).split(",")) if listed else "A,B"
        return (f"{key} takes one value, not a list: several values are several jobs, -m {key}={values}"
                + (f" (or fdbu compare trees=[{values}] to compare trees)" if key == "tree" else ""))
    if key and " is not a valid bool" in text:
        given = text.partition("Value '")[2].partition("'")[0]
        near = difflib.get_close_matches(given.lower(), ["true", "false"], n=1, cutoff=0.5)
        return f"{key}={given}: true or false" + (f"; did you mean {key}={near[0]}?" if near else "")
    return f"{key}: {text}" if key else text


def known_keys(cls, prefix: str = "") -> List[str]:
    out = []
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(f.type) or (isinstance(f.default_factory, type)
                                                and dataclasses.is_dataclass(f.default_factory)):
            out += known_keys(f.default_factory, f"{prefix}{f.name}.")
        else:
            out.append(prefix + f.name)
    return out


def did_you_mean(key: str, command: str | None = None) -> str:
    """The nearest key of the command (of any command when it is not known), never the word typed; a key of
    other commands says so."""
    commands: list[str] = [command] if command is not None and command in CONFIGS else list(CONFIGS)
    keys = sorted({k for c in commands for k in known_keys(CONFIGS[c])} - {key})
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]}?" if near else ""
    elsewhere = [c for c in CONFIGS if c not in commands and key in known_keys(CONFIGS[c])]
    if command in CONFIGS and elsewhere:
        hint = f" of {command} (it is one of {', '.join(elsewhere)})" + hint
    return hint


def _type_name(t) -> str:
    import typing

    args = [a for a in typing.get_args(t) if a is not type(None)]
    if typing.get_origin(t) is typing.Union:
        return "|".join(_type_name(a) for a in args) + "|null"
    if args:
        return f"{getattr(typing.get_origin(t), '__name__', 'list')}[{','.join(_type_name(a) for a in args)}]"
    return "any" if t is Any else getattr(t, "__name__", str(t))


@dataclasses.dataclass(frozen=True)
class Setting:
    """One line of a command's settings: a key with its type, default and meaning, or a group's heading (kind None).
    --help prints them (`help_text`) and the docs' settings reference lists them (`fdbu.cli.docs`)."""

    key: str
    kind: str | None
    default: str   # as --help prints it (repr; "(required)")
    help: str
    value: Any = None  # the default itself (None for a required key)


def settings_of(command: str) -> List[Setting]:
    """Every setting of `command` in --help's order (a group's heading, then its keys), the refused ones left out."""
    import typing

    out: List[Setting] = []
    refused = getattr(CONFIGS[command], "REFUSED", ())

    def walk(cls, prefix):
        hints = typing.get_type_hints(cls)  # a group declared beside its settings may annotate in strings
        for f in dataclasses.fields(cls):
            if prefix + f.name in refused:
                continue
            if isinstance(f.default_factory, type) and dataclasses.is_dataclass(f.default_factory):
                out.append(Setting(prefix + f.name, None, "", f.metadata.get("help", "")))
                walk(f.default_factory, f"{prefix}{f.name}.")
                continue
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else "???")
            shown = "(required)" if default == MISSING else repr(default)
            out.append(Setting(prefix + f.name, _type_name(hints.get(f.name, f.type)), shown,
                               f.metadata.get("help", ""), None if default == MISSING else default))

    walk(CONFIGS[command], "")
    return out


HELP_WIDTH = 80  # every line of --help fits a terminal of 80 columns
SHORT_DEFAULT = 40  # a default longer than this is shown by its size, with the command that prints it whole


def shown_default(command: str, s: Setting) -> str:
    """A setting's default as --help shows it: whole where it is short, else its kind and size and where to read it
    whole (a dict of 13 SHA-256 values is 1,361 characters)."""
    if len(s.default) <= SHORT_DEFAULT:
        return s.default
    size = f"{len(s.value)} entries" if isinstance(s.value, dict) else f"{len(s.value)} values" \
        if isinstance(s.value, (list, tuple)) else f"{len(s.default)} characters"
    return f"{size} (whole: fdbu {command} --cfg job)"


def help_text(command: str) -> str:
    """Every key of a command with its type, default and meaning (from the field's `help`), in lines of at most
    HELP_WIDTH columns: the meaning wrapped at words under its key, a long default shown short."""
    import textwrap

    def wrapped(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, HELP_WIDTH, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)

    lines = []
    for s in settings_of(command):
        if s.kind is None:
            lines += wrapped(f"{s.key}.*: {s.help}", "  ")
            continue
        head = f"  {s.key:<34} {s.kind:<16} default {shown_default(command, s)}"
        if len(head) > HELP_WIDTH:
            head = f"  {s.key:<34} {s.kind}"
            lines += [head, *wrapped(f"default {shown_default(command, s)}", "      ")]
        else:
            lines.append(head)
        if s.help:
            lines += wrapped(s.help, "      ")
    refused = getattr(CONFIGS[command], "REFUSED", ())
    if refused:
        lines += wrapped(f"(every run of fdbu {command} refuses {', '.join(refused)}: not listed)", "  ")
    return "\n".join(lines)