"""Figures as bytes (PNG and PDF, no date or version stamp: the same figure gives the same bytes), at a paper's
column or page width with every text at least 7 pt, tall figures as pages; and the curves F(t) every figure of
latencies is made of.

F(t) is the share of the population (eligible samples for turn-taking, exercised ones
for interruption) with a response latency of at most t; non-responders never arrive,
so a curve that stays below 0.5 is a median that is not reached. The sweep's heatmaps are in `plot_sweep`,
compare's forest in `plot_forest`.
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import signal
from typing import Any

import numpy as np

from ..config.settings import WIDTH, WIDTHS
from ..tasks import SUBSETS

MARKS_S = (1, 2, 5)  # the response_rate_ks marks


def _held(values: np.ndarray) -> np.ndarray:
    """A step curve's values from 0, held at the last one to the plot's edge."""
    return np.concatenate([[0.0], values, [values[-1] if len(values) else 0.0]])


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# no timestamp or version stamp: the same figure gives the same bytes
METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}


def _fork_ok(since=None) -> bool:
    """A second core to draw on, idle now, and fork to reach it with the figure as it is in memory (Linux, macOS).
    Idle is measured over the figure's layout, from `since` (`fdbu.common.device.idle_sample`, taken before it): at
    least half a core's worth. Where it cannot be (no sample, no /proc/stat) the 1-minute load average must leave
    half a core (this process is one of its runnable tasks). On a machine whose cores are all busy (the suite's
    three workers on two cores, a full node) the child would only wait for a core the parent needs, and the fork's
    copy-on-write costs system CPU besides (0.1-0.3 s a figure in a process with torch and NeMo loaded): one after
    the other instead, the same bytes."""
    from ..common import device as devices

    if not hasattr(os, "fork"):
        return False
    cores = devices.allowed_cores()
    if cores < 2:
        return False
    idle = devices.idle_since(since)
    return idle >= 0.5 if idle is not None else _load() < cores - 0.5


def _load() -> float:
    """The 1-minute load average: runnable tasks, this one included (0 where the system has none to give)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


# the tables of a font that its subset embedded in a PDF never uses: a PDF places every glyph itself, so glyph
# substitution and positioning (GSUB, GPOS, GDEF) and math layout (MATH) are read by matplotlib from the installed
# font as it lays the text out, never by a viewer from the embedded copy; fontTools decompiles them to subset them,
# 0.06 s of the 0.08 s that each font of each PDF costs (the glyphs' outlines and metrics are embedded as before)
NOT_READ_FROM_A_PDF = ("GSUB", "GPOS", "GDEF", "MATH")


@contextlib.contextmanager
def _subsets_without_layout_tables():
    """matplotlib's PDF backend subsets each font with fontTools' default options plus a list of its own, and has no
    setting for more: the tables above are added to fontTools' default list while a PDF is drawn (figures are drawn
    by one thread, as pyplot requires). A fontTools without that list draws the PDF with the tables, as before."""
    from fontTools import subset

    default = getattr(subset.Options, "_drop_tables_default", None)
    if default is None:
        yield
        return
    try:
        subset.Options._drop_tables_default = [*default, *NOT_READ_FROM_A_PDF]
        yield
    finally:
        subset.Options._drop_tables_default = default


def _beside(pdf, png, since=None) -> tuple[bytes, bytes]:
    """`pdf()` and `png()`, the PDF drawn in a forked child while this process draws the PNG: the two drawings of one
    laid-out figure are independent, and a figure step takes the longer of the two rather than their sum. With no
    second core idle (or without fork, or when fork fails) one after the other, the PDF first, as the child draws it:
    the same bytes either way (a test checks). The child only draws and writes its bytes to a pipe, then leaves
    without the parent's exit handlers; its failure, or its death, is raised here with its message."""
    import matplotlib.backends.backend_pdf  # noqa: F401 (imported once here, not again by every child)

    if not _fork_ok(since):
        return _one_after_the_other(pdf, png)
    read, write = os.pipe()
    # Ctrl-C held across the fork: the child must not take one while it still runs the caller's Python handler
    # (it would unwind the caller's stack in a second process); each process lets it through once it is set up
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pid = os.fork()
    except OSError:  # no memory or no process left for a child: both drawn here
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        os.close(read)
        os.close(write)
        return _one_after_the_other(pdf, png)
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read)
            if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # a background job ignores Ctrl-C: so does this
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C ends the child, never runs the caller's code
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            try:
                data = b"0" + pdf()
            except BaseException as e:  # noqa: B036 (everything goes to the parent, which raises it)
                data = b"1" + f"{type(e).__name__}: {e}".encode()
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    reaped = False
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        mine = png()
        with os.fdopen(read, "rb") as got:
            read = -1
            data = got.read()
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        reaped = True
    finally:
        if not reaped:  # interrupted or failed here: the child goes too, and is reaped
            if read != -1:
                os.close(read)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if status != 0 or data[:1] not in (b"0", b"1"):  # killed or crashed: what it wrote may be cut short
        from ..errors import FdbuError

        why = f"was killed by signal {-status}" if status < 0 else f"ended with status {status}"
        raise FdbuError("figures", None, f"the process drawing the PDF beside this one {why} (out of memory, or "
                        "stopped from outside); nothing was written: run the command again")
    if data[:1] == b"1":
        raise RuntimeError(f"drawing the PDF in a child process failed: {data[1:].decode()}")
    return data[1:], mine


def _one_after_the_other(pdf, png) -> tuple[bytes, bytes]:
    first = pdf()  # the PDF first, as the child draws it: from the figure as laid out, before any other drawing
    return first, png()


def _save(fig, formats=("png", "pdf"), tight: bool = True, tick=None) -> dict[str, bytes]:
    """The figure as PNG and PDF bytes, without dates or version stamps (the same figure gives the same bytes). A list
    of figures (pages, each no taller than PAGE_IN, all of one width) gives a PDF of one page each and a PNG of the
    pages one under the other (a screen scrolls; a paper includes a page: \\includegraphics[page=2]{...})."""
    if isinstance(fig, list):  # `tick(done, of)`: called as each page is laid out and as each is rendered
        return _save_pages(fig, tick) if len(fig) > 1 else _save(fig[0], formats, tight, tick)
    from ..common.device import idle_sample

    since = idle_sample()  # the cores idle over the layout decide whether the PDF is drawn beside (`_fork_ok`)
    if tight:
        fig.tight_layout()
    _freeze(fig)
    if tick is not None:
        tick(1, 2)

    def drawn(ext: str):
        def draw() -> bytes:
            buf = io.BytesIO()
            with _subsets_without_layout_tables() if ext == "pdf" else contextlib.nullcontext():
                fig.savefig(buf, format=ext, metadata=METADATA[ext])
            return buf.getvalue()
        return draw

    try:
        if set(formats) == {"png", "pdf"}:
            pdf, png = _beside(drawn("pdf"), drawn("png"), since)
            out = {"png": png, "pdf": pdf}
        else:
            out = {ext: drawn(ext)() for ext in formats}
    finally:  # closed also when a drawing fails: pyplot keeps every figure it has not been told to close
        _pyplot().close(fig)
    if tick is not None:
        tick(2, 2)
    return out


def _freeze(fig) -> None:
    """Lay the figure out once by its layout engine (constrained), then keep those positions for every format and
    page: each savefig would lay it out again, measuring every text (0.15 s a page, a third of a figure's time)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        fig.get_layout_engine().execute(fig)
        fig.set_layout_engine("none")


def _save_pages(figs: list, tick=None) -> dict[str, bytes]:
    """The pages as one PDF and one PNG (drawn side by side, `_beside`): each page rendered once for the PNG, its
    pixels taken from the canvas (not encoded as a PNG and decoded again), the pages' pixels stacked and encoded
    once."""
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.image import imsave

    from ..common.device import idle_sample

    since = idle_sample()
    rc = _pyplot().rcParams
    dpi = figs[0].dpi if rc["savefig.dpi"] == "figure" else float(rc["savefig.dpi"])
    for k, fig in enumerate(figs):
        _freeze(fig)
        if tick is not None:
            tick(k + 1, 2 * len(figs))

    def pdf() -> bytes:
        buf = io.BytesIO()
        with _subsets_without_layout_tables(), PdfPages(buf, metadata=METADATA["pdf"]) as pages:  # fonts at close
            for fig in figs:
                pages.savefig(fig)
        return buf.getvalue()

    def png() -> bytes:
        images = []
        for fig in figs:
            raw = io.BytesIO()  # as savefig(format="png") renders it (the savefig rc: dpi, face colour), unencoded
            fig.savefig(raw, format="rgba", dpi=dpi, bbox_inches=None)
            # the canvas's columns: the preset widths at the figures' dpi are whole pixels (3.3 in and 7 in at 200);
            # its rows are whatever Agg made of the height (figheight x dpi may fall a hair below a whole number
            # while the canvas's bbox does not: reshaping by a computed height was off by one row)
            width = round(fig.get_figwidth() * dpi)
            images.append(np.frombuffer(raw.getvalue(), np.uint8).reshape(-1, width, 4))
            if tick is not None:
                tick(len(figs) + len(images), 2 * len(figs))
        out = io.BytesIO()
        imsave(out, np.concatenate(images, axis=0), format="png", metadata=METADATA["png"],  # type: ignore[arg-type]
               dpi=dpi)  # None drops the version stamp, as savefig does
        return out.getvalue()

    try:
        made_pdf, made_png = _beside(pdf, png, since)
    finally:
        for fig in figs:
            _pyplot().close(fig)
    return {"png": made_png, "pdf": made_pdf}


PAGE_IN = 9.0  # the tallest figure: a US-letter page's text height with 1 in margins (A4's is 9.7 in)


def _paginate(heights: list[float], above: float) -> list[list[int]]:
    """Items of these heights (inches) in order on pages of at most PAGE_IN with `above` inches on top of each;
    an item taller than a page alone on its own."""
    pages: list[list[int]] = [[]]
    used = above
    for i, h in enumerate(heights):
        if pages[-1] and used + h > PAGE_IN:
            pages.append([])
            used = above
        pages[-1].append(i)
        used += h
    return pages


FONT_PT = {"column": 7.0, "page": 8.0}  # at the printed width: never below 7 pt
PANEL_IN = 2.5  # one panel's height


def _style(width: str):
    """Font sizes for a figure printed at `width` (column or page): every text at least 7 pt."""
    if width not in WIDTHS:
        raise ValueError(f"width {width!r}: choose column or page")
    pt = FONT_PT[width]
    return _pyplot().rc_context({"font.size": pt, "axes.titlesize": pt + 0.5, "axes.labelsize": pt,
                                 "xtick.labelsize": pt, "ytick.labelsize": pt, "legend.fontsize": pt,
                                 "figure.titlesize": pt + 1, "pdf.fonttype": 42})


def _wrap(text: str, width: str, share: float = 1.0) -> str:
    """Text wrapped to the printed width (a `share` of it), lines of at most as many characters as fit at 7-8 pt."""
    import textwrap

    chars = int(WIDTHS[width] * share * 72 / (FONT_PT[width] * 0.6))
    return "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))


def latency_values(task, comps: list) -> tuple[Any, list[np.ndarray]]:
    """The task's latency metric (`Task.latency`) and each system's values (int64 microseconds, INF for never) over
    the samples its population (`over`) keeps in every system: what a latency curve draws, for score's one system
    and compare's several."""
    module = task.metric_module
    metric = next(m for m in module.METRICS if m.name == task.latency)
    mask = np.logical_and.reduce([module.populations(c)[metric.over] for c in comps])
    return metric, [np.asarray(metric.values(c), np.int64)[mask] for c in comps]


def score_curves(rows: list[dict], name: str, unified: dict | None = None) -> list[dict]:
    """One system's F(t) per subset whose task names a latency metric (`Task.latency`), over that metric's samples,
    with its pointwise bootstrap band (unified.json's draw; the spec's without one)."""
    from ..metrics.paired import cdf_band
    from ..metrics.stats import Bootstrap
    from ..config.settings import RESAMPLES, SEED

    b = (unified or {}).get("bootstrap") or {"resamples": RESAMPLES, "seed": SEED}
    boot = Bootstrap(b["resamples"], b["seed"])
    out = []
    for subset, entry in SUBSETS.items():
        task = entry.task
        eligible = [r for r in rows if r["subset"] == subset and r["eligible"]]
        if task.latency is None or not task.scored or not eligible:
            continue
        metric, (lat,) = latency_values(task, [task.metric_module.from_rows(eligible)])
        if not len(lat):
            continue
        horizon = ((unified or {}).get("subsets", {}).get(subset) or {}).get("min_observable_s")
        out.append({"subset": subset, "label": task.label, "over": metric.over,
                    "horizon_s": horizon if isinstance(horizon, (int, float)) else None,
                    "systems": [{"name": name, **cdf_band(lat, boot)}]})
    return out


def latency_curves(rows: list[dict], name: str = "system", unified: dict | None = None,
                   width: str = WIDTH, tick=None) -> dict[str, bytes]:
    """`fdbu score`'s response-latency curves F(t) with their bands (PNG and PDF)."""
    return compare_latency_curves(score_curves(rows, name, unified), width=width, tick=tick)


STYLES = ("-", "--", ":", "-.")


def _marks(ax, horizon_s: float | None, xmax: float, marks_s=MARKS_S, horizon: str = "min_observable_s") -> list:
    """The 1, 2 and 5 s marks (`marks_s`) as lines, the median line, the region beyond the `horizon`
    (min_observable_s) shaded (F there is a lower bound); returns legend handles explaining the line and the
    shading."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax.set_xticks([k for k in range(0, int(xmax) + 1)])
    for k in marks_s:
        if k < xmax:
            ax.axvline(k, color="0.85", lw=0.7, zorder=0)
    ax.axhline(0.5, color="0.45", lw=0.8, ls=(0, (4, 3)), zorder=1)
    handles: list[Any] = [Line2D([], [], color="0.45", lw=0.8, ls=(0, (4, 3)), label="F = 0.5: the median")]
    if horizon_s is not None and horizon_s < xmax:
        ax.axvspan(horizon_s, xmax, color="0.9", zorder=0, lw=0)
        handles.append(Patch(color="0.9", label=f"shaded: after {horizon}, F is a lower bound"))
    return handles


RESPONSE_CURVES = {"title": "Response-latency curves F(t), 95% bands", "ylabel": "share responded by then",
                   "marks_s": MARKS_S, "none": "no subset with response latencies", "horizon": "min_observable_s"}


def compare_latency_curves(curves: list[dict], width: str = WIDTH, words: dict = RESPONSE_CURVES,
                           tick=None) -> dict[str, bytes]:
    """F(t) of every system on one axis per subset, with pointwise 95% bootstrap bands (PNG and PDF): side by side
    at page width, stacked at column width; the legend below the data. `words`: the title, the y label, the
    vertical marks and the empty figure's text (response latencies; a family's own curves, fdbu.family.Figure);
    `tick(done, of)`: its steps as drawn (`_save`)."""
    plt = _pyplot()
    panels = max(1, len(curves))
    cols = (panels if panels <= 2 else 2) if width == "page" else 1  # more than two (v1.5's four): two a row
    per_page = cols * int((PAGE_IN - 0.9) // PANEL_IN)  # rows of panels a page holds, with its title and legend
    names = list(dict.fromkeys(s["name"] for c in curves for s in c["systems"]))
    names = [words["subject"]] if "subject" in words else names
    chunks = [curves[i:i + per_page] for i in range(0, len(curves), per_page)] or [[]]
    figs = []
    with _style(width):
        for n, chunk in enumerate(chunks):
            rows = math.ceil(max(1, len(chunk)) / cols)
            fig, axes = plt.subplots(rows, cols, figsize=(WIDTHS[width], PANEL_IN * rows + 0.9), dpi=200,
                                     squeeze=False, layout="constrained")
            handles = _curve_panels(axes, chunk, words, width, cols, plt)
            if not curves:
                axes.flat[0].text(0.5, 0.5, words["none"], ha="center", va="center")
            more = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            fig.suptitle(_wrap(f"{words['title']}: {', '.join(names) or 'no system'}{more}", width))
            if handles:
                fig.legend(list(handles.values()), list(handles),  # each handle is kept under its own label
                           loc="outside lower center", ncol=1 if width == "column" else 2, frameon=False)
            figs.append(fig)
        return _save(figs, tight=False, tick=tick)


def _curve_panels(axes, curves: list[dict], words: dict, width: str, cols: int, plt) -> dict[str, Any]:
    """Each subset's F(t) of every system on its own axis; the legend's handles by label."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    handles: dict[str, Any] = {}
    for ax, c in zip(axes.flat, curves):
        horizon = c["horizon_s"]
        xmax = 6.0 if horizon is None else min(max(horizon, 5.5), 10.0)
        for k, s in enumerate(c["systems"]):
            t = np.asarray(s["t_us"], np.float64) / 1e6
            keep = t <= xmax
            x = np.concatenate([[0.0], t[keep], [xmax]])
            y, lo, hi = (_held(np.asarray(s[key])[keep]) for key in ("F", "lo", "hi"))
            color, ls = colors[k % len(colors)], STYLES[k % len(STYLES)]
            ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.13, lw=0)
            for edge in (lo, hi):
                ax.step(x, edge, where="post", color=color, lw=0.5, alpha=0.6, ls=ls)
            line, = ax.step(x, y, where="post", color=color, lw=1.4, ls=ls)
            handles.setdefault(s["name"], line)
        for h in _marks(ax, horizon, xmax, words["marks_s"], words["horizon"]):
            handles.setdefault(h.get_label(), h)
        axis = SUBSETS[c["subset"]].task.latency_from if c["subset"] in SUBSETS else None
        ax.set(xlim=(0, xmax), ylim=(0, 1.02), xlabel=axis or "latency (s)", ylabel=words["ylabel"])
        ns = ", ".join(f"{s['name']} {s['n']}" for s in c["systems"])
        bound = "" if horizon is None else f"; {words['horizon']} {horizon:g} s"
        ax.set_title(_wrap(f"{c['subset']}\nn: {ns}{bound}", width, 0.8 / cols))
    for ax in list(axes.flat)[len(curves):]:
        ax.axis("off")
    return handles
