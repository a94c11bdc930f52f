"""`fdbu report`: scored trees as one static site a person opens from disk, and the leaderboard as tables.

The site is `index.html` (CSS, script, the leaderboard and a small index of every sample
inlined) and the drill-downs (waveform peaks, words, segments, annotation marks, the outcome
and the rule that decided it) in parts of CHUNK samples, `samples-K-C.js` (system K's part C),
each loaded by a script tag the first time one of its samples is opened, so the page opens at
once for 10,000 samples x several systems, a sample opens after loading a few hundred kB, and
it works over file:// (no server, no network, no CDN).
Audio is played from the trees themselves, by a path relative to the site.

Numbers are read, never recomputed: values and intervals from each tree's unified.json, the
mark against the baseline from the compare result (`decision`), the outcome of each sample
from unified-samples.jsonl (the rule text only restates why, from the row's own fields).
"""
from __future__ import annotations

import json
from pathlib import Path

from .board import leaderboard, summary
from .drilldown import _index, _relative
from ..config.settings import FORMATS, WIDTH
from .tables import to_csv, to_latex, to_markdown

ASSETS = Path(__file__).with_name("site_assets")


SCRIPT_ESCAPE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_ESCAPE_TABLE = str.maketrans(SCRIPT_ESCAPE)


def _script_json(obj) -> str:
    """JSON safe inside a <script> element: no `<` at all (so no `</script`, `<!--` or `<script` can change the
    element's parsing state), no `>` or `&`, and the two line separators JavaScript once refused in strings, all
    as JSON escapes that parse back to the same text."""
    text = json.dumps(obj, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    return text.translate(_ESCAPE_TABLE)


def html(systems, board: list[dict], index: list, figures: list[str], links: dict, signatures: list) -> str:
    data = {"systems": [s.name for s in systems], "board": board, "summary": summary(board, [s.name for s in systems]),
            "index": index, "chunk": CHUNK, "figures": figures,
            "links": links, "signatures": signatures}
    page = (ASSETS / "index.html").read_text()
    return (page.replace("/*CSS*/", (ASSETS / "site.css").read_text())
            .replace("/*JS*/", (ASSETS / "site.js").read_text())
            .replace("/*DATA*/", "window.FDBU = " + _script_json(data) + ";"))


def signature(system, out: Path) -> dict:
    """What a tree was scored with and from, and where it is relative to the report."""
    u = system.unified
    vad = u.get("speech_detection", {})
    return {"name": system.name, "tree": _relative(system.root, out), "fdbu_version": u.get("fdbu_version"),
            "definitions": u.get("definitions"), "inputs": u.get("inputs"), "sha256": system.sha256,
            "silero_vad": vad.get("silero_vad_version"), "vad_settings": vad.get("settings"),
            "transcripts": u.get("transcripts"), "bootstrap": u.get("bootstrap"),
            "non_default": u.get("non_default", [])}  # every setting not the spec's (fdbench.stop_by=R): issue 75


CHUNK = 250  # drill-downs per samples-K-C.js: a sample opens after loading its part, never a whole system's


def parts(n: int) -> int:
    """How many samples-K-C.js files hold a system's n drill-downs."""
    return -(-n // CHUNK)


def names(sizes: list[int], formats=FORMATS, figures: tuple = ()) -> list[str]:
    """The report's files; `sizes`: each system's number of samples."""
    out = []
    if "html" in formats:
        out += ["index.html", *(f"samples-{k}-{c}.js" for k, n in enumerate(sizes) for c in range(parts(n))),
                *figures]
    out += [f"leaderboard.{f}" for f in formats if f != "html"]
    return out


def files(systems, result: dict | None, out: Path, formats=FORMATS, figures: dict[str, bytes] | None = None,
          links: dict | None = None, progress: bool = False) -> dict[str, bytes]:
    """Every file of the report folder `out` as bytes."""
    board = leaderboard(systems, result)
    sys_names = [s.name for s in systems]
    files = {}
    exporters = {"md": to_markdown, "tex": to_latex, "csv": to_csv}
    for f in formats:
        if f in exporters:
            files[f"leaderboard.{f}"] = exporters[f](board, sys_names).encode()
    if "html" in formats:
        index = []
        from ..common.progress import Bar

        bar = Bar(total=sum(len(r) for s in systems for r in s.rows.values()), desc="drill-downs", unit="sample",
                   disable=None if progress else True)  # on a terminal only
        with bar:  # closed before a Ctrl-C's message: no bar is drawn again under it
            for k, s in enumerate(systems):
                idx, details = _index(s, out, bar)
                index.append(idx)
                for c in range(parts(len(details))):
                    files[f"samples-{k}-{c}.js"] = (f'window.FDBU_SAMPLES = window.FDBU_SAMPLES || {{}}; '
                                                    f'window.FDBU_SAMPLES["{k}-{c}"] = '
                                                    f'{_script_json(details[c * CHUNK:(c + 1) * CHUNK])};\n').encode()
        figures = figures or {}
        files.update(figures)
        links = {k: _relative(v, out) for k, v in (links or {}).items()}
        files["index.html"] = html(systems, board, index, [f for f in figures if f.endswith(".png")], links,
                                   [signature(s, out) for s in systems]).encode()
    return files


HEAD = "report.json"


def figure_names(n_systems: int, plot: bool) -> tuple[str, ...]:
    if not plot:
        return ()
    from ..comparison.files import FIGURES, FORMATS
    from ..scoring.unified import CURVES, family_figures

    return tuple(f"{stem}.{ext}" for stem in FIGURES for ext in FORMATS) if n_systems > 1 else CURVES + family_figures()


def outputs(out: Path, sizes: list[int], formats, plot: bool, own_compare: bool):
    """`fdbu report`'s outputs in `out` (`sizes`: each system's number of samples), checked before any work;
    report.json is their header."""
    from ..common.outputs import Outputs

    extra = ["compare.json"] if own_compare else []
    return Outputs(out, "report", [HEAD, *extra, *names(sizes, formats, figure_names(len(sizes), plot))], head=HEAD)


def figures(systems, result: dict | None, width: str, progress: bool = False,
            compare_path: Path | None = None) -> dict[str, bytes]:
    """The figures the site embeds (PNG) and links (PDF): the comparison's (with report.compare, those fdbu compare
    drew beside its compare.json at this width, where they are still its bytes: `comparison.files.taken`), or one
    system's own (its latency curves, and for v1.5 its stop curves)."""
    if result is not None:
        from ..comparison.files import figures as compared, taken

        reused = taken(result, compare_path.parent, width) if compare_path is not None else None
        return reused if reused is not None else compared(result, systems, width, progress)
    from ..scoring.unified import figures as own

    rows = [r for rs in systems[0].rows.values() for r in rs]
    return own(rows, systems[0].unified, systems[0].name, width, progress)


def build(systems, result: dict | None, out: Path, *, formats=FORMATS, plot: bool = True, width: str = WIDTH,
          compare_path: Path | None = None, progress: bool = False) -> dict[str, bytes]:
    """Every file of `fdbu report` as bytes; compare.json is written beside the site when it was computed here."""
    from ..common.atomic import dumps

    out = Path(out)
    figs = figures(systems, result, width, progress, compare_path) if plot and "html" in formats else {}
    links = {f"{s.name}: unified.json": s.root / "unified.json" for s in systems}
    made = {}
    if result is not None:
        if compare_path is None:
            made["compare.json"] = dumps(result).encode()
            links["compare.json"] = out / "compare.json"
        else:
            links["compare.json"] = compare_path
    made.update(files(systems, result, out, formats, figs, links, progress))
    from ..version import __version__

    head = {"generator": "fdbu", "fdbu_version": __version__, "kind": "report",
            "systems": [signature(s, out) for s in systems], "files": sorted(made)}
    return {HEAD: dumps(head).encode(), **made}
