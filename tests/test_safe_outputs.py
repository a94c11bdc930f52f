"""What leaves fdbu is inert where people open it (issue 38, item 4): leaderboard.md rendered by a CommonMark
renderer that passes HTML through, the CSVs in a spreadsheet, the site in a real browser, with script payloads
in system names, transcript words, ineligible reasons, annotation texts, asr.json fields and a tree folder's
name; and the sweep grid's size refused from its axes before any grid exists (item 3)."""
import csv
import io
import json
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

import fdbu
from browser import Chromium, executable
from builders import fdbu_main, sha
from fdbu.synth import synthesize

PAYLOAD = "<!--<script>window.PWNED=1</script>\u2028</script><script>window.PWNED=2</script>"
NAMES = ["<script>window.PWNED=3</script>a|b", "=HYPERLINK(\"http://x\",\"y\")**#"]
UI, TT = "synthetic_user_interruption", "candor_turn_taking"


def _poison(tree: Path) -> None:
    """Payloads where a tree carries text: a word of every transcript, the ineligible reasons, the interruption
    annotation's texts and asr.json's model name (each hash recorded again, so the tree still loads)."""
    manifest = json.loads((tree / "manifest.json").read_text())
    asr = json.loads((tree / "asr.json").read_text())
    asr["config"]["model_id"] = PAYLOAD
    for row in manifest["samples"]:
        if not row["eligible"]:
            row["reasons"] = [PAYLOAD]
            continue
        sid, subset, name = row["sample_id"], row["subset"], row["sample_id"].split("/")[1]
        doc = json.loads((tree / sid / "output.json").read_text())
        for chunk in doc["chunks"][:1]:
            chunk["text"] = PAYLOAD
        data = json.dumps(doc).encode()
        (tree / sid / "output.json").write_bytes(data)
        asr["subsets"][subset]["transcripts"][name] = sha(data)
        if subset == UI:
            ann = json.loads((tree / sid / "interrupt.json").read_text())
            ann[0]["context"] = ann[0]["interrupt"] = PAYLOAD
            data = json.dumps(ann).encode()
            (tree / sid / "interrupt.json").write_bytes(data)
            row["files"]["interrupt.json"] = sha(data)
    (tree / "manifest.json").write_text(json.dumps(manifest))
    (tree / "asr.json").write_text(json.dumps(asr))


@pytest.fixture(scope="module")
def reported(tmp_path_factory, calibrated):
    root = tmp_path_factory.mktemp("safe")
    trees = []
    for name, system in (("javascript:void(window.PWNED=4)", "mixed"), ("b", "prompt")):
        tree = synthesize(root / "site" / name, n={UI: 4, TT: 4}, seed=5, system=system, ineligible=0.25)
        _poison(tree)
        fdbu.score(tree, write=True)  # (the API: a parenthesis in a path needs quoting on the CLI)
        trees.append(tree)
    out = fdbu.report(trees, root / "site", names=NAMES, plot=False)  # the trees sit inside out=
    return out, trees


def test_markdown_renders_the_names_as_text(reported):
    from markdown_it import MarkdownIt

    out, _ = reported
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render((out / "leaderboard.md").read_text())
    assert "<script" not in html and "<!--" not in html

    class Heads(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells, self.inside = [], False

        def handle_starttag(self, tag, attrs):
            self.inside = tag == "th"
            if self.inside:
                self.cells.append("")

        def handle_endtag(self, tag):
            self.inside = False

        def handle_data(self, data):
            if self.inside:
                self.cells[-1] += data

    heads = Heads()
    heads.feed(html)
    at = heads.cells.index("metric")  # after the summary's heads
    assert heads.cells[at:at + 4] == ["metric", "better", *NAMES]  # every column kept, each name shown as written


def test_csv_cells_a_spreadsheet_would_evaluate_are_neutralised(reported):
    out, _ = reported
    for path in (out / "leaderboard.csv",):
        rows = list(csv.reader(io.StringIO(path.read_text())))
        cells = [c for r in rows[1:] for c in r]
        risky = [c for c in cells if c.startswith(("=", "+", "@")) or (c.startswith("-") and not _number(c))]
        assert risky == []
        head = rows[0]
        assert {r[head.index("system")] for r in rows[1:]} == {NAMES[0], "'" + NAMES[1]}


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(executable() is None, reason="Chromium is not installed (make system-tools installs it)")
def test_the_site_renders_and_runs_no_injected_script(reported, tmp_path):
    pytest.importorskip("websocket", reason="websocket-client (the test extra) is not installed")
    out, trees = reported
    page = (out / "index.html").read_text()
    data = page[page.index("window.FDBU = "):]
    assert "<" not in data.split("\n", 1)[0] and "\u2028" not in page
    chrome = Chromium(executable(), tmp_path / "profile")
    try:
        chrome.open((out / "index.html").resolve().as_uri())
        assert chrome.eval("document.querySelectorAll('#boards table.board:not(.summary)').length") == 2
        heads = chrome.eval("Array.from(document.querySelector('#boards table.board:not(.summary)').tHead.rows[0]"
                            ".cells).map(c => c.textContent)")
        assert heads[2].startswith(NAMES[0]) and heads[3] == NAMES[1]
        ranked = chrome.eval("Array.from(document.querySelectorAll('table.summary tbody th')).map(c => c.textContent)")
        assert sorted(n.removesuffix(" (baseline)") for n in ranked) == sorted(NAMES)  # as text, in the summary too
        across = chrome.eval("Array.from(document.querySelectorAll('table.across thead th')).map(c => c.textContent)")
        assert across == ["sample", *NAMES]
        hrefs = chrome.eval("Array.from(document.querySelectorAll('#links a')).map(a => a.getAttribute('href'))")
        assert hrefs and all(h.startswith(("./", "../")) for h in hrefs), hrefs
        for system in (0, 1):  # open every sample's drill-down: words, reasons, annotation marks, the model
            ids = chrome.eval(f"window.FDBU.index[{system}].map(r => r[0])")
            for sid in ids:
                chrome.eval(f"location.hash = 'sample={system}/{sid}'")
                chrome.wait(f"document.querySelector('#drilldown h3') && document.querySelector('#drilldown h3')"
                            f".textContent.endsWith({json.dumps(sid)})")
        words = chrome.eval("Array.from(document.querySelectorAll('#drilldown *')).map(e => e.textContent)"
                            ".join(' ')")
        assert words
        for link in chrome.eval("Array.from(document.querySelectorAll('a')).map(a => a.href)"):
            assert not link.lower().startswith("javascript:"), link
        assert chrome.eval("typeof window.PWNED") == "undefined"
        assert chrome.errors() == []
    finally:
        chrome.close()


def test_a_huge_sweep_grid_is_refused_from_its_axes_at_once(tmp_path, monkeypatch):
    """40 values on each of 5 axes (1.02e8 points) was a MemoryError after 151 s under a 4 GiB cap: now refused
    from the axes' lengths before any grid exists (building one fails this test), on the CLI, the API and in a
    config file, with or without sweep.allow_large. (The time bound only says it is not the old minutes: speed is
    measured in benchmarks, and a loaded machine may take a second.)"""
    import fdbu.config.base

    real = fdbu.config.base.grid

    def grid(*axes):
        assert fdbu.config.base.grid_size(*axes) <= 1000, "a grid was built to be refused"
        return real(*axes)

    monkeypatch.setattr(fdbu.config.base, "grid", grid)
    axes = {"threshold": [round(0.01 + 0.024 * i, 3) for i in range(40)],
            "min_silence_duration_ms": list(range(10, 410, 10)), "min_speech_duration_ms": list(range(10, 410, 10)),
            "speech_pad_ms": list(range(40)), "neg_threshold_offset": [round(0.001 * i, 3) for i in range(1, 41)]}
    args = [f"sweep.{k}=[{','.join(map(str, v))}]" for k, v in axes.items()]
    for extra, want in (([], "has 102400000 points, more than 1000"),
                        (["sweep.allow_large=true"], "has 102400000 points, more than 1000000, which no run holds")):
        start = time.monotonic()
        out = fdbu_main("sweep", f"tree={tmp_path}", *args, *extra)
        assert time.monotonic() - start < 20
        assert out.returncode == 2 and want in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
    start = time.monotonic()
    with pytest.raises(fdbu.FdbuError, match="has 102400000 points"):
        fdbu.sweep(tmp_path, sweep=axes)
    assert time.monotonic() - start < 20
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "big.yaml").write_text("sweep:\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in axes.items()))
    out = fdbu_main("sweep", "--config-dir", str(conf), "--config-name", "big", f"tree={tmp_path}")
    assert out.returncode == 2 and "has 102400000 points" in out.stderr, out.stderr
