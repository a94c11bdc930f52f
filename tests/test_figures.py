"""Figures that go into a paper as they are: printed width, fonts >= 7 pt, no overlapping or clipped text,
readable labels, context metrics apart, +-inf as labelled arrows, legends outside the data, PDF page size."""
import re

import numpy as np
import pytest

from fdbu.figures import plot, forest as plot_forest, sweep as plot_sweep
from fdbu.metrics.table import readable

MIN_PT = 7.0


@pytest.fixture
def captured(monkeypatch):
    """Each figure the plot functions build, beside the bytes they return, its boxes measured where its PNG's drawing
    (the last: after the PDF's, or beside it) left every text, at the PNG's dpi: drawing it once more before the save,
    as this fixture did, cost 8 s of the suite's CPU for the same boxes. (pyplot's close left the figure a bare
    canvas: an Agg one measures the texts, as it draws them.)"""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figs = []
    save = plot._save

    def keep(fig, *args, **kwargs):
        pages = fig if isinstance(fig, list) else [fig]
        data = save(fig, *args, **kwargs)
        for page in pages:
            page.renderer = FigureCanvasAgg(page).get_renderer()
            page.text_boxes = _texts(page)
            page.legend_box = page.legends[0].get_window_extent(page.renderer) if page.legends else None
            page.axes_boxes = [ax.get_window_extent(page.renderer) for ax in page.axes if ax.get_visible()]
            page.pages = pages  # every page of the one figure
        figs.extend(pages)
        return data

    for module in (plot, plot_forest, plot_sweep):  # each figure module saves through plot._save
        monkeypatch.setattr(module, "_save", keep)
    return figs


def _texts(fig):
    from matplotlib.text import Text

    return [(t, t.get_window_extent(fig.renderer)) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]


def check_layout(fig, data: dict, width: str):
    """Every page of the figure `fig` belongs to: the printed width, no taller than a page, every text >= 7 pt
    inside it, no two text boxes overlapping, each PDF page of that size; the PNG its pages one under the other."""
    pages = getattr(fig, "pages", [fig])
    boxes = re.findall(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", data["pdf"])
    assert len(boxes) == len(pages)
    for page, box in zip(pages, boxes):
        w, h = page.get_size_inches()
        assert w == pytest.approx(plot.WIDTHS[width]) and h <= plot.PAGE_IN + 1e-9
        _check_texts(page)
        assert float(box[0]) == pytest.approx(72 * plot.WIDTHS[width], abs=0.5)
        assert float(box[1]) == pytest.approx(72 * h, abs=0.5)
    assert data["png"][:4] == b"\x89PNG"
    height = int.from_bytes(data["png"][20:24], "big")  # the IHDR's height, in pixels at the figures' 200 dpi
    assert height == pytest.approx(sum(p.get_size_inches()[1] * p.dpi for p in pages), abs=len(pages))


def _check_texts(fig):
    texts = fig.text_boxes
    assert texts
    page = fig.bbox
    for t, box in texts:
        assert t.get_fontsize() >= MIN_PT, t.get_text()
        assert box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1, \
            f"{t.get_text()!r} is cut off at the figure's edge"
    b = np.array([[box.x0, box.y0, box.x1, box.y1] for _, box in texts])  # every pair at once
    overlap_x = np.minimum(b[:, None, 2], b[None, :, 2]) - np.maximum(b[:, None, 0], b[None, :, 0])
    overlap_y = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1])
    clash = np.triu((overlap_x > 1) & (overlap_y > 1), k=1)
    for i, j in zip(*np.nonzero(clash)):
        raise AssertionError(f"{texts[i][0].get_text()!r} overlaps {texts[j][0].get_text()!r}")


def _metric(kind, better, value, lo, hi, flags=(None, None, None), excludes=False, reason=None):
    return {"kind": kind, "better": better, "marker": excludes, "reason": reason, "difference": {
        "value": value, "value_flag": flags[0], "interval": [lo, hi], "interval_flags": list(flags[1:]),
        "excludes_zero": excludes}}


def _result(n_pairs: int):
    pairs = []
    for k in range(n_pairs):
        metrics = {
            "exercised_rate": _metric("share", "context", 0.1, -0.2, 0.3),
            "speaking_at_end_rate": _metric("share", "lower", -0.4, -0.7, -0.1, excludes=True),
            "response_rate_1s": _metric("share", "higher", 0.2 * k, -0.1, 0.5, excludes=k > 0),
            "response_latency_s": _metric("latency_quantiles", "lower", None, None, None,
                                          flags=("-inf", "-inf", "+inf") if k == 0 else ("+inf", "-inf", "+inf"),
                                          excludes=True),
            "stop_latency_s": _metric("latency_quantiles", "lower", 0.3, -0.2, 0.8, reason="too few pairs"),
        }
        pairs.append({"a": "base", "b": f"system-{k}", "subsets": {"synthetic_user_interruption": {
            "metrics": metrics}}})
    return {"pairs": pairs}


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
@pytest.mark.parametrize("n_pairs", [1, 3])
def test_forest(captured, width, n_pairs):
    result = _result(n_pairs)
    data = plot_forest.compare_forest(result, width=width)
    fig = captured[-1]
    check_layout(fig, data, width)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    titles = [" ".join(ax.get_title(loc="left").split()) for ax in axes]  # wrapped to the width
    assert titles == ["synthetic_user_interruption: outcomes", "synthetic_user_interruption: latency medians (s)",
                      "synthetic_user_interruption: context"]  # context apart from the outcomes
    labels = [[t.get_text() for t in ax.get_yticklabels()] for ax in axes]
    assert labels[0] == [readable("response_rate_1s") + " \u2191", readable("speaking_at_end_rate") + " \u2193"]
    assert labels[2] == [readable("exercised_rate") + " "] or labels[2] == [readable("exercised_rate")]
    assert not any("_" in label for panel in labels for label in panel)
    # every infinite difference: an arrow at the axis edge, labelled with its sign; the panel is not empty
    seconds = axes[1]
    arrows = [c for c in seconds.get_children() if type(c).__name__ == "Annotation"]
    assert len(arrows) == n_pairs
    assert {t.get_text() for t in seconds.texts if "inf" in t.get_text()} == ({"-inf"} if n_pairs == 1 else
                                                                               {"-inf", "+inf"})
    lo, hi = seconds.get_xlim()
    assert {round(abs(a.xy[0]) / hi, 6) for a in arrows} == {1.0} and lo == -hi
    stars = [t for ax in axes for t in ax.texts if t.get_text() == "*"]
    assert len(stars) == sum(m["marker"] for p in result["pairs"]
                             for m in p["subsets"]["synthetic_user_interruption"]["metrics"].values())
    few = [t for ax in axes for t in ax.texts if t.get_text() == plot_forest.FEW]  # too few pairs to decide
    assert len(few) == n_pairs


def _curves(n_systems: int, horizon=4.0, subsets=("candor_turn_taking", "synthetic_user_interruption")):
    rng = np.random.default_rng(0)
    out = []
    for subset in subsets:
        systems = []
        for k in range(n_systems):
            t = np.sort(rng.integers(100_000, 5_000_000, 12))
            F = np.arange(1, 13) / 16
            systems.append({"name": f"system-{k}", "t_us": t, "F": F, "lo": np.maximum(F - 0.2, 0),
                            "hi": np.minimum(F + 0.2, 1), "n": 16})
        out.append({"subset": subset, "label": subset, "over": "eligible", "horizon_s": horizon, "systems": systems})
    return out


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_latency_curves(captured, width):
    data = plot.compare_latency_curves(_curves(3), width=width)
    fig = captured[-1]
    check_layout(fig, data, width)
    assert all(f"system-{k}" in fig._suptitle.get_text() for k in range(3))
    for box in fig.axes_boxes:
        assert not fig.legend_box.overlaps(box)  # the legend is outside the data
    for ax in [ax for ax in fig.axes if ax.get_visible()]:
        bands = [c for c in ax.collections if type(c).__name__ in ("FillBetweenPolyCollection", "PolyCollection")]
        assert len(bands) == 3
        shaded = [p for p in ax.patches if p.get_x() == pytest.approx(4.0)] if hasattr(ax.patches[0], "get_x") \
            else []
        assert shaded or any(getattr(p, "get_xy", None) is not None for p in ax.patches)  # min_observable shaded
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "F = 0.5: the median" in labels and any("min_observable_s" in x for x in labels)


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_four_subsets_of_curves_stay_within_a_page(captured, width):
    """v1.5's four subsets: at column width four panels one under the other would be 10.9 in; the fourth goes on a
    second page."""
    subsets = ("user_interruption", "user_backchannel", "talking_to_other", "background_speech")
    data = plot.compare_latency_curves(_curves(2, subsets=subsets), width=width)
    fig = captured[-1]
    check_layout(fig, data, width)
    assert len(fig.pages) == (2 if width == "column" else 1)
    titles = [ax.get_title().split("\n")[0] for page in fig.pages for ax in page.axes if ax.get_title()]
    assert titles == list(subsets)


def test_score_curves_have_bands_and_the_system_name(captured):
    rows = [{"subset": "candor_turn_taking", "eligible": True, "outcome": "response" if k % 3 else "no_response",
             "latency_s": None if k % 3 == 0 else 0.2 * k, "E_s": 5.0, "T_s": 10.0} for k in range(12)]
    unified = {"bootstrap": {"resamples": 200, "seed": 0}, "subsets": {"candor_turn_taking": {"min_observable_s": 3.5}}}
    data = plot.latency_curves(rows, name="modelA", unified=unified, width="column")
    fig = captured[-1]
    check_layout(fig, data, "column")
    assert "modelA" in fig._suptitle.get_text()
    ax = fig.axes[0]
    assert "candor_turn_taking" in ax.get_title() and "min_observable_s 3.5 s" in ax.get_title()
    curve, = [line for line in ax.lines if line.get_linewidth() == 1.4]  # the band's edges are thinner
    assert curve.get_ydata()[-1] == pytest.approx(8 / 12)  # no_response never arrives


def _moving_bar(monkeypatch) -> list:
    """fdbu's figure bars (fdbu.common.progress.figure_bar), never drawn: each one's keyword arguments and every
    position it was drawn at, in the list returned."""
    from builders import recording_bar
    from fdbu.common import progress

    bars: list = []
    monkeypatch.setattr(progress, "Bar", recording_bar(bars, positions=True))
    return bars


def test_one_systems_figures_are_steps_of_a_bar(captured, monkeypatch):
    """score plot=true and a one-tree report draw one system's figures with a bar that moves inside each figure (each
    page laid out, then rendered: seconds each on a full tree; issue 77, item 1); drawn on a terminal only."""
    from fdbu.scoring.unified import CURVES, figures

    bars = _moving_bar(monkeypatch)
    rows = [{"subset": "candor_turn_taking", "eligible": True, "outcome": "response", "latency_s": 0.2 * k,
             "E_s": 5.0, "T_s": 10.0} for k in range(1, 9)]
    unified = {"bootstrap": {"resamples": 50, "seed": 0}, "subsets": {"candor_turn_taking": {"min_observable_s": 3.5}}}
    made = figures(rows, unified, "modelA", "column", progress=True)
    assert set(made) == set(CURVES)
    (kw, at), = bars
    assert kw["desc"] == "figures" and kw["total"] == len(made) // 2 and kw["disable"] is None
    assert at == [0.5, 1.0]  # one page: laid out, then rendered
    figures(rows, unified, "modelA", "column")
    assert bars[1][0]["disable"] is True  # progress=false (and the API): no bar


def test_compares_figures_move_their_bar_page_by_page(captured, monkeypatch):
    """compare's (and a report's) two figures: the bar moves as each page of each is laid out and rendered, never
    backwards, and ends at 2 (a forest of several pages moves in as many steps)."""
    from fdbu.comparison.files import FIGURES, figures

    bars = _moving_bar(monkeypatch)
    result = _result(8)  # a forest of 8 pairs: two pages at page width (40 pairs: five)
    monkeypatch.setattr("fdbu.comparison.files.curves", lambda systems, result: _curves(2))
    figures(result, [], "page", progress=True)
    (kw, at), = bars
    pages = len(captured[-1].pages)  # the forest's (the curves': one)
    assert kw["total"] == len(FIGURES) and pages > 1
    assert at == sorted(at) and at[-1] == 2.0
    assert at == [0.5, 1.0, *(1 + (k + 1) / (2 * pages) for k in range(2 * pages))]


def _sweep(pads=(0,)):
    from fdbu.families.v1_0.interruption import METRICS
    from fdbu.scoring.sweep import SPEC

    points = []
    for thr in (0.4, 0.5):
        for sil in (100, 200):
            for pad in pads:
                st = {**SPEC, "threshold": thr, "min_silence_duration_ms": sil, "speech_pad_ms": pad}
                at_spec = st == SPEC
                values = {m.name: 0.5 for m in METRICS}
                values["stop_latency_s"] = 1.0 if at_spec else 0.8 if thr == 0.4 else 1.5
                values["response_latency_s"] = "not reached"
                points.append({"settings": st, "metrics": {k: {"value": v} for k, v in values.items()}})
    return {"trees": [{"name": "modelA", "subset": "synthetic_user_interruption", "points": points}]}, SPEC


@pytest.mark.slow
def test_sweep_heatmaps_colour_the_difference_from_the_spec_by_direction(captured):
    result, spec = _sweep(pads=(0, 30))
    data = plot_sweep.sweep_heatmaps(result, spec)
    fig = captured[-1]
    check_layout(fig, data, "page")
    by_title = {" ".join(ax.get_title().split()): ax for page in fig.pages for ax in page.axes if ax.get_title()}
    # padding swept: a panel per padding
    assert "stop latency (s) (median) modelA, pad 30 ms" in by_title
    stop = by_title["stop latency (s) (median) modelA, pad 0 ms"]
    shown = stop.images[0].get_array()  # better is positive: lower latency than at the spec point
    assert shown[0, 0] > 0 and shown[1, 1] < 0 and shown[1, 0] == 0  # thr 0.4 better, thr 0.5 sil 200 worse
    cmap, norm = stop.images[0].get_cmap(), stop.images[0].norm
    r, _, b, _ = cmap(norm(shown[0, 0]))
    assert b > r  # better is blue
    # one number format per metric; every cell prints its value, not the difference
    texts = sorted(t.get_text() for t in stop.texts)
    assert texts == ["0.800", "0.800", "1.000", "1.500"]
    # nothing reached anywhere: grey, labelled, no colour scale
    never = by_title["response latency (s) (median) modelA, pad 0 ms"]
    assert len(never.images) == 0 and [t.get_text() for t in never.texts] == ["not reached\nat any setting"]


@pytest.mark.slow
def test_every_command_with_figures_takes_the_width(tmp_path, calibrated):
    """score plot=true, sweep and compare write their PDFs at the printed width asked for (width=column)."""
    from builders import fdbu_main
    from fdbu.synth import synthesize

    a = synthesize(tmp_path / "A", n=2, seed=0)
    b = synthesize(tmp_path / "B", n=2, seed=0, system="prompt")
    runs = {
        "score": (["score", f"tree={a}", "plot=true", "progress=false"], a / "latency-curves.pdf"),
        "score B": (["score", f"tree={b}", "progress=false"], None),
        "sweep": (["sweep", f"tree={a}", f"out={tmp_path / 'sw'}", "sweep.threshold=[0.5]",
                   "sweep.min_silence_duration_ms=[100,200]", "progress=false"], tmp_path / "sw" / "sweep-heatmaps.pdf"),
        "compare": (["compare", f"trees=[{a},{b}]", f"out={tmp_path / 'cmp'}"], tmp_path / "cmp" / "compare-forest.pdf"),
    }
    for what, (args, pdf) in runs.items():
        out = fdbu_main(*args, *(["width=column"] if pdf is not None else []))
        assert out.returncode == 0, (what, out.stderr)
        if pdf is not None:
            box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf.read_bytes())
            assert float(box.group(1)) == pytest.approx(72 * plot.WIDTHS["column"], abs=0.5), what
    out = fdbu_main("score", f"tree={a}", "width=poster")
    assert out.returncode == 2 and "width='poster': choose column (3.3 in) or page (7 in)" in out.stderr


@pytest.mark.slow
def test_each_colour_bar_formats_with_its_own_metrics_digits(captured):
    """A metric whose values differ only in the 5th decimal gets a 4-decimal colour bar; the others keep 2 (the
    formatter once bound its digits late: every bar formatted as the last metric's)."""
    result, spec = _sweep()
    first = result["trees"][0]["points"]
    for k, p in enumerate(first):  # the first metric of the table: values 0.50001, 0.50002, ...
        name = next(iter(p["metrics"]))
        p["metrics"][name] = {"value": 0.5 + (k + 1) * 1e-5}
    plot_sweep.sweep_heatmaps(result, spec)
    bars = [ax for page in captured[-1].pages for ax in page.axes if ax.get_label() == "<colorbar>"]
    shown = [ax.yaxis.get_major_formatter()(0.123456, 0) for ax in bars]
    assert shown[0] == "+0.1235" and set(shown[1:]) == {"+0.12"}, shown


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_heatmaps_of_any_grid_fit_the_width_and_a_page(captured, width):
    """Two systems, a 5 x 8 grid whose values need four decimals: exactly the printed width, every
    page no taller than PAGE_IN, no text touching another (the page-width figure once printed "0.08970.0897"),
    every panel on some page."""
    from fdbu.families.v1_0.interruption import METRICS
    from fdbu.scoring.sweep import SPEC

    thresholds, silences, pads = (0.3, 0.4, 0.5, 0.6, 0.7), (50, 100, 150, 200, 300, 400, 500, 600), (0,)
    trees = []
    for name in ("modelA", "model B with a long name"):
        points = []
        for i, thr in enumerate(thresholds):
            for j, sil in enumerate(silences):
                for pad in pads:
                    st = {**SPEC, "threshold": thr, "min_silence_duration_ms": sil, "speech_pad_ms": pad}
                    points.append({"settings": st, "metrics": {m.name: {"value": 0.0897 + 1e-4 * (i + j) + 1e-3 * pad}
                                                               for m in METRICS}})
        trees.append({"name": name, "subset": "synthetic_user_interruption", "points": points})
    data = plot_sweep.sweep_heatmaps({"trees": trees}, SPEC, width)
    fig = captured[-1]
    check_layout(fig, data, width)
    shown = [ax for page in fig.pages for ax in page.axes if ax.get_title()]
    assert len(shown) == len(METRICS) * 2  # a panel per metric and system
    # at page width every value is printed; a column has no room for eight of them: left out, and the title says so
    printed = 40 if width == "page" else 0
    assert all(len([t for t in ax.texts if re.fullmatch(r"\d\.\d{4}", t.get_text())]) == printed for ax in shown)
    assert ("no room for the values: sweep.csv" in " ".join(fig.pages[0]._suptitle.get_text().split())) == (
        width == "column")
    assert len(fig.pages) > 1  # 22 panels: more than a page at either width


@pytest.mark.slow
def test_a_small_change_is_pale_and_the_colour_range_is_stated(captured):
    """A 0.0006 change of a share does not saturate the colour: the scale runs to COLOUR_RANGE's 0.05, and the
    colour bar's ends say so; a latency's scale is at least 0.25 s."""
    result, spec = _sweep()
    for p in result["trees"][0]["points"]:
        if p["settings"]["threshold"] == 0.4:
            p["metrics"]["speaking_at_end_rate"] = {"value": 0.5006}
    plot_sweep.sweep_heatmaps(result, spec)
    axes = {" ".join(ax.get_title().split()): ax for page in captured[-1].pages for ax in page.axes}
    image = axes["speaking at end rate modelA"].images[0]
    assert (image.norm.vmin, image.norm.vmax) == (-0.05, 0.05)
    assert abs(image.norm(image.get_array()[0, 0]) - 0.5) < 0.01  # -0.0006 of 0.05: next to white
    stop = axes["stop latency (s) (median) modelA"].images[0]
    assert stop.norm.vmax == 0.5  # the largest difference, 1.5 - 1.0, over the 0.25 s least range


def _latency_only(n_pairs: int, flags):
    metrics = {"response_latency_s": _metric("latency_quantiles", "lower", None, None, None, flags=flags),
               "stop_latency_s": _metric("latency_quantiles", "lower", None, None, None, flags=("+inf", "-inf", "+inf")),
               "speaking_at_end_rate": _metric("share", "lower", -0.4, -0.7, -0.1, excludes=True)}
    return {"pairs": [{"a": "base", "b": f"system-{k}", "subsets": {s: {"metrics": metrics} for s in (
        "candor_turn_taking", "synthetic_user_interruption", "user_interruption", "user_backchannel",
        "talking_to_other", "background_speech")}} for k in range(n_pairs)]}


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_the_forest_notes_medians_never_reached_and_splits_into_pages(captured, width):
    """Latency panels with no finite line are a note of each flag, not an empty axis; each drawn panel has its x
    label; six subsets of three pairs go on pages no taller than PAGE_IN, each exactly the printed width."""
    result = _latency_only(3, ("-inf", "-inf", "+inf"))
    data = plot_forest.compare_forest(result, width=width)
    fig = captured[-1]
    check_layout(fig, data, width)
    assert len(fig.pages) > 1
    axes = [ax for page in fig.pages for ax in page.axes if ax.get_visible()]
    notes = [ax for ax in axes if not ax.axison]
    assert len(notes) == 6 and all(ax.get_title(loc="left").replace("\n", " ").endswith("latency medians (s)")
                                   for ax in notes)
    text = " ".join(notes[0].texts[0].get_text().split())  # wrapped to the width
    assert "response latency (s) \u2193: system-0 - base -inf [-inf, +inf]" in text
    assert "stop latency (s) \u2193: system-2 - base +inf [-inf, +inf]" in text and "median not reached" in text
    drawn = [ax for ax in axes if ax.axison]
    assert drawn and all(ax.get_xlabel() == "difference b - a" for ax in drawn)


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_a_forest_of_many_pairs_stays_within_a_page(captured, width):
    """Eight pairs against one baseline, seven outcome lines: one panel would be taller than a page, so its rows
    are split over panels that fit; every line is drawn once."""
    names = [f"response_rate_{k}s" for k in range(7)]
    pairs = [{"a": "base", "b": f"system-{k}", "subsets": {"synthetic_user_interruption": {"metrics": {
        n: _metric("share", "higher", 0.1 * k, -0.1, 0.3) for n in names}}}} for k in range(8)]
    data = plot_forest.compare_forest({"pairs": pairs}, width=width)
    fig = captured[-1]
    check_layout(fig, data, width)
    ticks = [t.get_text() for page in fig.pages for ax in page.axes for t in ax.get_yticklabels()]
    assert sorted(ticks) == sorted(f"{readable(n)} \u2191" for n in names)


def test_pages_of_a_height_a_hair_below_whole_pixels_are_stacked():
    """A page 8.45 in tall at 200 dpi: 8.45 x 200 is 1689.9999999999998 in floats while Agg's canvas has 1690 rows;
    the PNG's pages were reshaped by the computed height and failed ("cannot reshape"), a crash of the forest once
    the views' panels made it that tall."""
    import matplotlib.pyplot as plt

    figs = [plt.figure(figsize=(7, h), dpi=200) for h in (8.45, 2.0)]
    out = plot._save_pages(figs)
    png = plt.imread(__import__("io").BytesIO(out["png"]))
    assert png.shape[:2] == (1690 + 400, 1400) and out["pdf"].startswith(b"%PDF")


@pytest.mark.parametrize("make", ["forest", "curves", "heatmaps"])
def test_the_pdf_drawn_beside_the_png_gives_the_bytes_of_one_drawn_after_the_other(monkeypatch, make):
    """The PDF drawn in a forked child while this process draws the PNG (two cores) and both drawn here (one core):
    the same bytes, for a one-page figure and for pages."""
    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no fork here: every figure is drawn in one process")

    def draw():
        if make == "forest":  # pages: drawn panels and notes
            return plot_forest.compare_forest(_result(3), width="page")
        if make == "curves":
            return plot.compare_latency_curves(_curves(2), width="column")
        return plot_sweep.sweep_heatmaps(*_sweep(pads=(0, 30)))

    import os

    forks = []
    fork = os.fork

    def counted():
        forks.append(1)
        return fork()

    monkeypatch.setattr(os, "fork", counted)
    out = {}
    for forked in (True, False):
        monkeypatch.setattr(plot, "_fork_ok", lambda *_, forked=forked: forked)
        out[forked] = draw()
    assert forks == [1] and out[True] == out[False] and out[True]["pdf"].startswith(b"%PDF")


def _pdf_objects(pdf: bytes) -> list[tuple[bytes, bytes]]:
    """(dictionary or body, stream inflated or b"") of each object of a PDF as matplotlib writes it (each stream
    Flate-compressed), in order; the cross-reference table (byte offsets) is left out."""
    import zlib

    out = []
    for m in re.finditer(rb"\d+ 0 obj\s*(.*?)endobj", pdf, re.S):
        head, sep, _ = m[1].partition(b"stream")
        if sep and head.rstrip().endswith(b">>"):
            data = m[1][len(head) + len(sep):].lstrip(b"\r\n")
            out.append((head, zlib.decompressobj().decompress(data)))
        else:
            out.append((m[1], b""))
    return out


@pytest.mark.parametrize("make", ["curves", "heatmaps"])
def test_a_pdf_s_fonts_are_embedded_without_the_layout_tables_and_draw_the_same(monkeypatch, make):
    """Each font of a PDF (a one-page figure, and pages) is embedded as a TrueType subset without the tables only a
    text layout reads (plot.NOT_READ_FROM_A_PDF; fontTools decompiles them to subset them): every other object (the
    pages and their drawing, the fonts' descriptors, widths and character maps, the images) is the one drawn with
    the tables kept, and every glyph the pages can name has the same number, outline, advance and character."""
    import contextlib
    import io

    from fontTools.ttLib import TTFont

    def draw() -> bytes:
        made = plot.compare_latency_curves(_curves(2), width="column") if make == "curves" else \
            plot_sweep.sweep_heatmaps(*_sweep())
        return made["pdf"]

    lean = _pdf_objects(draw())
    monkeypatch.setattr(plot, "_subsets_without_layout_tables", contextlib.nullcontext)
    kept = _pdf_objects(draw())
    assert len(lean) == len(kept)
    fonts = 0
    for (head, data), (other_head, other) in zip(lean, kept):
        if b"/Length1" not in head:  # not a font program
            assert (head, data) == (other_head, other)
            continue
        fonts += 1
        mine, theirs = TTFont(io.BytesIO(data)), TTFont(io.BytesIO(other))
        assert "glyf" in mine and set(plot.NOT_READ_FROM_A_PDF) & set(mine.keys()) == set()
        assert {"GSUB", "GPOS", "GDEF"} <= set(theirs.keys())  # what is left out was there to leave out
        names = mine.getGlyphOrder()
        assert theirs.getGlyphOrder()[:len(names)] == names  # the same number for every glyph the pages use
        assert all(mine["glyf"][g].compile(mine["glyf"]) == theirs["glyf"][g].compile(theirs["glyf"]) and
                   mine["hmtx"][g] == theirs["hmtx"][g] for g in names)
        assert mine["cmap"].getBestCmap() == theirs["cmap"].getBestCmap()
    assert fonts >= 1 and len(lean) > 2 * fonts


@pytest.mark.parametrize("cores,idle,load,beside", [
    (1, 1.0, 0.0, False), (2, 0.95, 3.0, True), (2, 0.5, 3.0, True), (2, 0.3, 0.0, False), (2, 0.0, 0.0, False),
    (16, 7.2, 9.0, True),                                    # the cores idle over the figure's layout decide
    (2, None, 0.4, True), (2, None, 1.49, True), (2, None, 1.5, False), (2, None, 3.3, False)])  # unknown: the load
def test_the_pdf_is_drawn_beside_only_where_a_core_is_idle(monkeypatch, cores, idle, load, beside):
    """A fork for the PDF only where half a core or more was idle while the figure was laid out (or, where that cannot
    be measured, the load average leaves half a core beside this process): on a busy machine (the suite's three
    workers on two cores, a full node) the child would wait for the parent's core, and its copy-on-write costs system
    CPU for nothing. A 1-minute load average alone would also count the command's own speech detection just before."""
    from fdbu.common import device

    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no fork here: every figure is drawn in one process")
    monkeypatch.setattr(device, "allowed_cores", lambda: cores)
    monkeypatch.setattr(device, "idle_since", lambda since: idle)
    monkeypatch.setattr(plot, "_load", lambda: load)
    assert plot._fork_ok(object()) is beside


def test_idle_is_measured_between_two_samples_of_the_cpus():
    """Two samples with a busy loop between them: this process's core was not idle, so less than every allowed core
    was; no sample: unknown; no clock tick between them: measured again a moment later."""
    import time

    from fdbu.common import device

    before = device.idle_sample()
    if before is None:
        pytest.skip("no /proc/stat here: the load average decides")
    end = time.process_time() + 0.1
    while time.process_time() < end:
        pass
    idle = device.idle_since(before)
    assert idle is not None and 0 <= idle <= len(before) - 0.5
    assert device.idle_since(None) is None
    # no time between the two (a figure without a layout to compute): measured after a wait, not unknown
    assert device.idle_since(device.idle_sample()) is not None


@pytest.fixture
def forked(monkeypatch):
    """Every PDF drawn in a forked child (as on two cores or more)."""
    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no fork here: every figure is drawn in one process")
    monkeypatch.setattr(plot, "_fork_ok", lambda *_: True)


def test_a_failure_in_the_child_that_draws_the_pdf_is_raised_here_with_its_message(forked):

    def pdf():
        raise ValueError("no room left on the page")

    with pytest.raises(RuntimeError, match="drawing the PDF in a child process failed: ValueError: no room left"):
        plot._beside(pdf, lambda: b"png")


def test_a_child_that_dies_or_a_png_that_fails_leaves_no_child_and_no_cut_short_pdf(forked, monkeypatch):
    """The child killed while it holds the PDF (the OOM killer, a kill from outside): one line naming the signal, not
    the bytes it had written; the PNG's drawing failing here: the child killed and reaped (no zombie), the error
    raised as it was."""
    import os
    import signal

    def dies():
        os.kill(os.getpid(), signal.SIGKILL)
        return b"%PDF"

    from fdbu.errors import FdbuError

    with pytest.raises(FdbuError, match="^figures: the process drawing the PDF beside this one was killed by signal 9 "):
        plot._beside(dies, lambda: b"png")
    pids = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: pids.append(fork()) or pids[-1])

    def fails():
        raise ValueError("the PNG could not be drawn")

    with pytest.raises(ValueError, match="the PNG could not be drawn"):
        plot._beside(lambda: __import__("time").sleep(30) or b"%PDF", fails)
    assert pids and pids[0] > 0
    with pytest.raises(ChildProcessError):  # already reaped
        os.waitpid(pids[0], os.WNOHANG)


def test_a_figure_drawn_in_a_background_job_keeps_ignoring_ctrl_c(forked):
    """A shell's background job (`fdbu sweep ... &`) ignores Ctrl-C: so does the child drawing its PDF, which must not
    die of a Ctrl-C meant for the foreground."""
    import os
    import signal

    def pressed():
        os.kill(os.getpid(), signal.SIGINT)
        return b"%PDF"

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert plot._beside(pressed, lambda: b"png") == (b"%PDF", b"png")
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("text", ["0.0897", "stop latency (s) (median)", "$\\alpha$-sys, pad 30 ms"])
def test_the_heatmaps_measure_a_text_as_matplotlib_lays_it_out(text):
    """A cell's or title's width (plot_sweep._text_in) is the box the drawn text takes, mathematics included (a
    system named with $...$ is drawn as mathematics, and was measured as its raw characters). Compared unhinted (the
    layout's geometry; hinting then moves each glyph to whole pixels, by up to 1.6% of these texts' widths at 200 dpi,
    which the cells' 2 pt margins hold): FreeType places each glyph in 26.6 fixed point, so two layouts of n glyphs
    differ by at most n/64 of a pixel, on any machine (integer arithmetic, matplotlib's own FreeType; no figure is
    drawn on a GPU)."""
    import matplotlib.pyplot as plt

    dpi = 200
    with plt.rc_context({"text.hinting": "no_hinting"}):
        fig = plt.figure(dpi=dpi)
        drawn = fig.text(0, 0, text, fontsize=8.0)
        width = drawn.get_window_extent(fig.canvas.get_renderer()).width
        plt.close(fig)
    assert abs(plot_sweep._text_in(text, 8.0) * dpi - width) <= len(text) / 64
