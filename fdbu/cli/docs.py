"""The docs' Reference pages, made from the registries so they cannot drift from the code: every command with its
settings (`fdbu.config.keys.settings_of`, what --help prints), each subset's metrics (its metric table), and the
output files' schemas from the declarations their readers check (unified.json and each task's per-sample rows:
`fdbu.scoring.scored`; compare.json: `fdbu.comparison.compared`; summary.json: `fdbu.official.summary`) with the kinds of value they accept. `docs/_ext/fdbu_docs.py` renders them while Sphinx builds the site (`make docs`)."""
from __future__ import annotations

import re

from .. import registry, tasks
from ..config.settings import AXES


_MARKDOWN = re.compile(r"([\\`*\[\]<>|$])")  # what Markdown (and MyST's $math$) would read as markup


def _cell(text: str) -> str:
    """`text` as one cell of a Markdown table, shown as written: Markdown's and HTML's characters escaped (a help's
    `<subset>` would be an HTML tag, a pipe would end the cell), a newline a space."""
    return _MARKDOWN.sub(r"\\\1", str(text)).replace("\n", " ")


def _code(text: str) -> str:
    """`text` as inline code in a table cell (a pipe inside still ends the cell unless escaped)."""
    return f"`{text}`".replace("|", "\\|")


def command_line(value) -> str:
    """A default as it is written on the command line (Hydra's grammar): null, true, a list in brackets."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(command_line(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {command_line(v)}" for k, v in value.items()) + "}"
    return str(value)


class Md(str):
    """A cell already in Markdown (a code span, a link): not escaped again."""


def _table(head: tuple[str, ...], rows: list[tuple]) -> list[str]:
    return [f"| {' | '.join(head)} |", f"|{'---|' * len(head)}",
            *(f"| {' | '.join(c if isinstance(c, Md) else _cell(c) for c in r)} |" for r in rows), ""]


def setting_cell(key: str) -> str:
    """A setting's key in its table: inline code, and where it first appears a target search ranks first for it
    (the docs' extension's `{fdbu-setting}` role; a search for `vad.threshold` lists its row before any page)."""
    return "{fdbu-setting}" + _code(key)


def sweep_axis(key: str) -> str:
    """The sweep's axis that varies `key` (`vad.threshold` -> `sweep.threshold`; a `sweep.*` axis is its own), or ''
    when no sweep varies it."""
    group, _, name = key.partition(".")
    if group == "sweep" and name in AXES:
        return "an axis: its values are swept"
    return f"`sweep.{name}`" if group == "vad" and name in AXES else ""


def settings(command: str) -> list[str]:
    """`command`'s settings as tables: its own keys, then one table per group (vad.*, bootstrap.*, ...)."""
    from ..config.store import CONFIGS
    from ..config.keys import settings_of

    head = ("key", "type", "default", "meaning", "a sweep varies it")
    every = settings_of(command)
    groups = {s.key: s.help for s in every if s.kind is None}
    tables: dict[str, list[tuple]] = {"": []}  # a group's keys under its key ("": the command's own), in order
    for s in every:
        if s.kind is None:
            tables.setdefault(s.key, [])
            continue
        group = max((g for g in groups if s.key.startswith(g + ".")), key=len, default="")
        tables[group].append((Md(setting_cell(s.key)), s.kind, Md("(required)" if s.default == "(required)" else
                              _code(command_line(s.value))), s.help, Md(sweep_axis(s.key))))
    out: list[str] = []
    for group, rows in tables.items():
        out += [f"`{group}.*`: {_cell(groups[group])}", ""] if group else []
        out += ["```{container} fdbu-settings", *_table(head, rows)[:-1], "```", ""] if rows else []
    refused = getattr(CONFIGS[command], "REFUSED", ())
    if refused:
        out += [f"Every run of `fdbu {command}` refuses {', '.join(f'`{k}`' for k in refused)}.", ""]
    return out


def commands() -> str:
    """A section per registered command: what it does, its shortest command line, the files it writes and every
    setting it takes."""
    out = []
    for c in registry.COMMANDS.values():
        out += [f"## fdbu {c.name}", "", f"{c.summary[:1].upper()}{c.summary[1:]}.", "", "```text", c.usage, "```", ""]
        if c.writes:
            out += [f"Writes: {', '.join(f'`{w}`' for w in c.writes)}.", ""]
        out += settings(c.name)
    return "\n".join(out)


def metrics() -> str:
    """A section per scored subset: each metric of its table (unified.json's records, compare's lines)."""
    out = []
    for name in tasks.scored():
        s = tasks.subset(name)
        out += [f"## {name}", "", f"Task `{s.task.name}` ({s.task.family}); {s.release_size} samples in its release.", ""]
        out += _table(("metric", "kind", "better", "over", "meaning"),
                      [(Md(_code(f"{m.name}")), m.kind, m.better, m.over, m.description) for m in tasks.metric_table(name)])
    return "\n".join(out)


def _kind(kind: str) -> str:
    return kind.rstrip("?") + (" or null" if kind.endswith("?") else "")


def schemas() -> str:
    """unified.json's keys and unified-samples.jsonl's fields, each with the kind its reader (`fdbu.scoring.scored`) checks
    it against, from the declarations it checks; then what each kind must be."""
    from ..scoring.scored import (BOOTSTRAP, COUNTED, COUNTS, ENTRY, HEADER, INPUTS, KINDS, RECORDS, SHARE_INTERVAL,
                         SPEECH_DETECTION, SPEECH_SETTINGS, TRANSCRIPTS)

    def keys(prefix: str, schema: dict) -> list[tuple]:
        return [(Md(_code(prefix + k)), _kind(v) + (", or absent" if v.endswith("?") else "")) for k, v in schema.items()]

    head = [*keys("", HEADER), *keys("inputs.", INPUTS)]
    head += [(Md(_code(f"transcripts.{k}")), Md(f"{_kind(v)} (when `transcripts` is there)"))
             for k, v in TRANSCRIPTS.items()]
    head += [*keys("bootstrap.", BOOTSTRAP), *keys("speech_detection.", SPEECH_DETECTION),
             *keys("speech_detection.settings.", SPEECH_SETTINGS), *keys("share_interval.", SHARE_INTERVAL)]
    entry = [(Md(_code("task")), "text: the subset's task"), *keys("", ENTRY),
             *((Md(_code(f"counts.{k}")), "count") for k in COUNTS), *keys("counts.", COUNTED),
             (Md(_code("metrics.<name>")), Md("a record per metric of the subset's table ([Metrics](metrics.md)): "
                                              "`kind`, `better` (the table's), `value`, `count`, `n` (what the rows "
                                              "give back, checked equal)"))]
    entry += [(Md(_code(f"metrics.<{kind} metric>.{k}")), _kind(v))
              for kind, fields in RECORDS.items() for k, v in fields.items()]
    out = ["## unified.json", "", "Every key of the signature and of each subset's counts and metrics, as every reader "
           "of a scored tree checks it (`fdbu.scoring.scored`; `generator` is `\"fdbu\"`). A family's entries beside a "
           "subset's metrics (v1.5's `control`; v2's `judge`, `offset`, `bins`) and the other benchmarks' `views` are "
           "checked by their own declarations: [Outputs](outputs.md), and each family's page.", "",
           *_table(("key", "kind"), head),
           "Under `subsets.<subset>`, for each scored subset:", "", *_table(("key", "kind"), entry)]
    common = [(Md(_code(k)), what) for k, what in (("sample_id", "text"), ("subset", "text"), ("task", "text"),
                                                     ("eligible", "flag"),
                                                     ("reasons", "a list of the sample's ineligible reasons"))]
    out += ["## unified-samples.jsonl", "", "One row per sample; every row has:", "", *_table(("field", "kind"), common)]
    for t in tasks.TASKS.values():
        if t.metric_module is None:
            continue
        fields = [(Md(_code(f"{k}")), _kind(v)) for k, v in t.metric_module.ROW.items()]
        out += [f"### {t.name}", "", f"An eligible row of {t.label} ({t.family}) also has:", "",
                *_table(("field", "kind"), fields)]
    out += _compare_json() + _summary_json()
    out += ["## Kinds", "", "What a value of each kind must be (the readers refuse anything else, naming the file "
            "and the key):", "", *_table(("kind", "a value is"), [(k, what) for k, (_, what) in KINDS.items()])]
    return "\n".join(out)


def _compare_json() -> list[str]:
    """compare.json's compared lines as `fdbu report` reads them back (fdbu.comparison.compared.LINE, DIFFERENCE)."""
    from ..comparison.compared import DIFFERENCE, LINE, SHAPE

    head = [(Md(_code(path)), what + (" (when compared)" if path.endswith(("entries", "views")) else ""))
            for path, (_, what) in SHAPE.items()]
    rows: list[tuple] = [(Md("`kind`, `better`, `headline`"), Md("the metric's declared ones ([Metrics](metrics.md))"))]
    rows += [(Md(_code(key)), what) for key, _, _, what in LINE]
    rows += [(Md(_code(f"difference.{key}")), what) for key, _, _, what in DIFFERENCE]
    return ["## compare.json", "", "As `fdbu report` reads a compare.json back (`fdbu.comparison.compared`): the keys above the "
            "lines, then each compared line (`pairs[k].subsets.<subset>.metrics.<metric>`, and the same under a pair's "
            "`entries` and `views`). What each holds: [Outputs](outputs.md).", "", *_table(("key", "a value is"), head),
            *_table(("key of a line", "a value is"), rows)]


def _summary_json() -> list[str]:
    """What a reader of summary.json checks (fdbu.official.summary.INPUTS): it is read leniently, never an error."""
    from ..official.summary import INPUTS

    rows = [(Md(_code(f"inputs.{name}")), f"the SHA-256 of the tree's {name} as it is now") for name in INPUTS]
    rows += [(Md(_code("subsets.<subset>")), "an object: the official numbers of the subset")]
    return ["## summary.json", "", "What `fdbu evaluate` writes is read back leniently: a summary.json that fails these "
            "is left out with the reason (score and report go on without the reference column), never an error. Its "
            "numbers per task family: [The reference column](../guides/reference-column.md).", "",
            *_table(("key", "a value is"), rows)]


PAGES = {"commands": commands, "metrics": metrics, "schemas": schemas}
