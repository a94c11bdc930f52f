"""The report opened from disk in a real browser (headless Chromium over the DevTools Protocol): the leaderboard
shows unified.json's values, clicking a sample opens its drill-down, a not_exercised interruption sample's
drill-down states its rule, and nothing is logged as an error. Screenshots are written (FDBU_SCREENSHOTS=DIR
also copies them there: the README's docs/report-*.png come from this test)."""
import json
import os
import shutil

import pytest

from browser import Chromium, executable
from builders import fdbu_main
from fdbu.pairwise import load
from fdbu.cells import num
from report_trees import scored_pair

EXE = executable()
try:
    import websocket  # noqa: F401
except ImportError:
    websocket = None

pytestmark = [
    pytest.mark.skipif(EXE is None, reason="Chromium is not installed (make system-tools installs Debian's chromium; "
                                           "it could not be installed here)"),
    pytest.mark.skipif(websocket is None, reason="websocket-client (the test extra) is not installed"),
]

UI = "synthetic_user_interruption"


@pytest.fixture(scope="module")
def report(vad, boot, tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    a, b = scored_pair(root, vad, boot, n=20)  # enough pairs for some of compare's markers
    out = root / "site"
    res = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={out}", "report.format=html")
    assert res.returncode == 0, res.stderr
    return out, [load(a, "mixed"), load(b, "prompt")]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chrome = Chromium(EXE, tmp_path_factory.mktemp("profile"))
    yield chrome
    chrome.close()


def _select(browser, select, value):
    browser.eval(f"(() => {{ const s = document.getElementById('{select}'); s.value = '{value}'; "
                 "s.dispatchEvent(new Event('change')); })()")


def test_the_report_in_a_browser(report, browser, tmp_path):
    out, systems = report
    browser.open((out / "index.html").resolve().as_uri())
    # the leaderboard: every cell's text is the value and interval of that system's unified.json
    cells = browser.eval("Array.from(document.querySelectorAll('table.board')).map(t => [t.dataset.subset, "
                         "Array.from(t.tBodies[0].rows).map(r => [r.dataset.metric, Array.from(r.querySelectorAll("
                         "'td[data-system]')).map(td => td.querySelector('.v').textContent)])])")
    assert [c[0] for c in cells] == list(systems[0].unified["subsets"])
    for subset, rows in cells:
        for metric, texts in rows:
            for s, text in zip(systems, texts):
                entry = s.unified["subsets"][subset]
                if metric == "coverage":
                    assert text == num(entry["coverage"])
                    continue
                rec = entry["metrics"][metric]
                lo, hi = rec["interval"]
                assert text == f"{num(rec['value'])} [{num(lo)}, {num(hi)}]"
    # the marks shown are compare.json's markers (Holm p < alpha), on exactly the lines it marks
    shown = browser.eval("Array.from(document.querySelectorAll('table.board')).map(t => [t.dataset.subset, "
                         "Array.from(t.tBodies[0].rows).filter(r => Array.from(r.querySelectorAll('td[data-system] "
                         "span')).some(s => s.textContent.trim() == '*')).map(r => r.dataset.metric)])")
    pair = json.loads((out / "compare.json").read_text())["pairs"][0]
    marked = [[subset, [k for k, m in pair["subsets"][subset]["metrics"].items() if m["marker"]]] for subset, _ in shown]
    assert shown == marked and any(metrics for _, metrics in shown)
    # why coverage is below 1: each system's ineligible samples by reason, under its subset's table
    why = browser.eval("Array.from(document.querySelectorAll('p.why')).map(p => p.textContent)")
    want = [f"{s.name}: coverage below 1, ineligible samples by reason: " + "; ".join(
                f"{k} ({v})" for k, v in s.unified["subsets"][subset]["counts"]["ineligible_reasons"].items())
            for subset in systems[0].unified["subsets"] for s in systems
            if s.unified["subsets"][subset]["counts"]["ineligible"]]
    assert why == want and want  # the synthetic trees have ineligible samples (synth's default 5%)
    shot = browser.screenshot(tmp_path / "report-leaderboard.png", "#leaderboard")
    # sorting by a system's column puts its largest value first (descending on the second click)
    browser.eval("document.querySelector('table.board thead th:nth-child(3)').click()")
    browser.eval("document.querySelector('table.board thead th:nth-child(3)').click()")
    first = browser.eval("parseFloat(document.querySelector('table.board tbody tr td:nth-child(3)').dataset.sort)")
    column = browser.eval("Array.from(document.querySelectorAll('table.board')[0].tBodies[0].rows).map(r => "
                          "parseFloat(r.cells[2].dataset.sort)).filter(x => !isNaN(x))")
    assert first == max(column)
    # a not_exercised interruption sample: click it, its drill-down states the rule
    row = next(r for r in systems[0].rows[UI] if r["eligible"] and r["outcome"] == "not_exercised")
    _select(browser, "pick-subset", UI)
    _select(browser, "pick-outcome", "not_exercised")
    listed = browser.eval("Array.from(document.querySelectorAll('#sample-list li')).map(li => li.dataset.outcome)")
    assert listed and set(listed) == {"not_exercised"}
    browser.eval(f"document.querySelector('#sample-list li[data-id=\"{row['sample_id']}\"]').click()")
    rule = browser.wait("document.getElementById('rule') && document.getElementById('rule').textContent")
    assert rule.startswith(f"not exercised: no speech segment covers S = {row['S_s']:.3f} s")
    assert browser.eval("document.querySelectorAll('#timeline .mark').length") == 2  # S and R
    assert browser.eval("document.querySelectorAll('#timeline .segment').length") == len(row["segments"])
    # jump to the same sample in the other system
    browser.eval("document.querySelector('#drilldown .others a').click()")
    browser.wait(f"document.querySelector('#drilldown h3').textContent === 'prompt: {row['sample_id']}'")
    # a sample with words and segments for the README's picture
    shown = next(r for r in systems[0].rows[UI] if r["eligible"] and r["outcome"] == "response")
    browser.eval(f"location.hash = 'sample=0/{shown['sample_id']}'")
    browser.wait(f"document.querySelector('#drilldown h3').textContent === 'mixed: {shown['sample_id']}'")
    assert browser.eval("document.querySelectorAll('#timeline .word').length") > 0
    drill = browser.screenshot(tmp_path / "report-drilldown.png", "#samples")
    assert browser.errors() == []
    for path in (shot, drill):
        assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000
        if os.environ.get("FDBU_SCREENSHOTS"):
            shutil.copy(path, os.environ["FDBU_SCREENSHOTS"])
