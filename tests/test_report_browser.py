"""The report opened from disk in a real browser (headless Chromium over the DevTools Protocol): the leaderboard
shows unified.json's values, clicking a sample opens its drill-down, a not_exercised interruption sample's
drill-down states its rule, and nothing is logged as an error. Screenshots are written (FDBU_SCREENSHOTS=DIR
also copies them there: the docs' report-*.png come from this test)."""
import json
import math
import os
import shutil

import pytest

from browser import Chromium, executable
from builders import fdbu_main
from fdbu.reporting import board as lb, drilldown, site
from fdbu.official import evaluate
from fdbu.comparison.systems import load
from fdbu.common.cells import difference_text, num, p_text
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
    evaluate.write(evaluate.evaluate(a), a)  # the official rules' numbers for one system; the other has none
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


@pytest.mark.slow
def test_the_report_in_a_browser(report, browser, tmp_path):
    out, systems = report
    browser.open((out / "index.html").resolve().as_uri())
    # the leaderboard: every cell's text is the value and interval of that system's unified.json
    cells = browser.eval("Array.from(document.querySelectorAll('#boards table.board:not(.summary)')).filter(t => "
                         "t.dataset.subset != 'icc_backchannel').map(t => [t.dataset.subset, "
                         "Array.from(t.tBodies[0].rows).filter(r => r.dataset.metric).map(r => [r.dataset.metric, "
                         "Array.from(r.querySelectorAll("
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
    shown = browser.eval("Array.from(document.querySelectorAll('#boards table.board:not(.summary)')).filter(t => "
                         "t.dataset.subset != 'icc_backchannel').map(t => [t.dataset.subset, "
                         "Array.from(t.tBodies[0].rows).filter(r => r.querySelector('button.pd.mark'))"
                         ".map(r => r.dataset.metric)])")
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
    browser.eval("document.querySelector('#boards table.board:not(.summary) thead th:nth-child(3) button').click()")
    browser.eval("document.querySelector('#boards table.board:not(.summary) thead th:nth-child(3) button').click()")
    first = browser.eval("parseFloat(document.querySelector('#boards table.board:not(.summary) tbody tr td:nth-child(3)')"
                         ".dataset.sort)")
    column = browser.eval("Array.from(document.querySelector('#boards table.board:not(.summary)').tBodies[0].rows).map(r => "
                          "parseFloat(r.cells[2].dataset.sort)).filter(x => !isNaN(x))")
    assert browser.eval("document.querySelector('#boards table.board:not(.summary)').tBodies[0].lastChild.className") == \
        "reference"  # the official rules' row stays last
    assert first == max(column)
    # a not_exercised interruption sample: click it, its drill-down states the rule
    row = next(r for r in systems[0].rows[UI] if r["eligible"] and r["outcome"] == "not_exercised")
    _select(browser, "pick-subset", UI)
    _select(browser, "pick-outcome", "not_exercised")
    listed = browser.eval("Array.from(document.querySelectorAll('#sample-list li')).map(li => li.dataset.outcome)")
    assert listed and set(listed) == {"not_exercised"}
    browser.eval(f"document.querySelector('#sample-list li[data-id=\"{row['sample_id']}\"] a').click()")
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


def _shots(*paths):
    for path in paths:
        assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000
        if os.environ.get("FDBU_SCREENSHOTS"):
            shutil.copy(path, os.environ["FDBU_SCREENSHOTS"])


@pytest.mark.slow
def test_the_summary_the_official_numbers_and_the_paired_details(report, browser, tmp_path):
    out, systems = report
    browser.open((out / "index.html").resolve().as_uri())
    names = [s.name for s in systems]
    result = json.loads((out / "compare.json").read_text())
    board = lb.leaderboard(systems, result)
    top = lb.summary(board, names)
    # the summary: systems as rows in the ranking's order, each headline value, the rule stated above it
    got = browser.eval("Array.from(document.querySelectorAll('table.summary tbody tr')).map(r => [r.dataset.system, "
                       "Array.from(r.querySelectorAll('td[data-system] .v')).map(v => v.textContent)])")
    assert got == [[r["system"], [num(c["value"]) for c in r["cells"]]] for r in top["rows"]]
    ranks = browser.eval("Array.from(document.querySelectorAll('table.summary tbody tr')).map(r => "
                         "r.querySelectorAll('td')[1].textContent)")
    assert ranks == [f"{r['mean_rank']:.2f}" for r in top["rows"]]  # as leaderboard.md and .tex print it
    assert len(got[0][1]) == 10  # v1.0's headline metrics
    # a subset's name above its columns wraps after an underscore, never inside a word (it broke "synthetic_p" /
    # "ause_handli" / "ng" in a one-column group): each part between two breaks stands on one line, and a name
    # wider than its columns does wrap
    # the names at 40 px: wider than their columns, as a small screen's font settings can make them
    browser.eval("document.querySelectorAll('table.summary th.group').forEach(th => th.style.fontSize = '40px')")
    heads = browser.eval("Array.from(document.querySelectorAll('table.summary th.group')).map(th => { const rects = "
                         "Array.from(th.childNodes).filter(n => n.nodeType === 3).map(n => { const r = "
                         "document.createRange(); r.selectNodeContents(n); return Array.from(r.getClientRects()); }); "
                         "return [th.textContent, rects.map(x => x.length), new Set(rects.flat().map(x => "
                         "Math.round(x.top))).size]; })")
    assert [h[0] for h in heads] == list(dict.fromkeys(c["subset"] for c in top["columns"]))
    assert all(lines == [1] * len(name.split("_")) for name, lines, _ in heads), heads
    assert max(rows for *_, rows in heads) > 1, heads  # a one-column group's name does wrap, after its underscores
    browser.eval("document.querySelectorAll('table.summary th.group').forEach(th => th.style.fontSize = '')")
    assert lb.RANK_RULE in browser.eval("document.querySelector('#summary-head + p').textContent")
    # the family the summary's marks belong to, and its level, said under it (issue 54, item 2)
    assert browser.eval("document.querySelector('p.hint.family').textContent") == f"Marks: {top['family']}."
    assert "(compare.family=subset)" in top["family"] and "over a system's 4 subsets" in top["family"]
    # its column heads rank the systems: by a metric's value, ascending on the first press (not reached: +inf)
    j = next(j for j, c in enumerate(top["columns"]) if len({num(r["cells"][j]["value"]) for r in top["rows"]}) > 1)
    browser.eval(f"document.querySelectorAll('table.summary thead tr:last-child th')[{3 + j}].querySelector('button')"
                 ".click()")
    order = browser.eval("Array.from(document.querySelectorAll('table.summary tbody tr')).map(r => r.dataset.system)")
    raw = {r["system"]: math.inf if r["cells"][j]["value"] == "not reached" else r["cells"][j]["value"]
           for r in top["rows"]}
    assert order == sorted(raw, key=lambda n: raw[n]) and len(set(raw.values())) == len(raw)
    # the official rules' row in every subset: summary.json's numbers for mixed, why there are none for prompt
    refs = browser.eval("Array.from(document.querySelectorAll('tr.reference')).map(r => [r.closest('table').dataset"
                        ".subset, Array.from(r.querySelectorAll('td.ref')).map(td => td.textContent)])")
    assert refs == [[sub["subset"], [r["text"] for r in sub["reference"]]] for sub in board if "reference" in sub]
    assert refs[0][1][0].startswith("take_turn_rate ") and refs[0][1][1].startswith("no summary.json")
    assert any(subset == "icc_backchannel" for subset, _ in refs)  # shown, not dropped
    assert browser.eval("document.querySelector('table[data-subset=icc_backchannel]').tBodies[0].rows.length") == 1
    # each mark: a symbol and a word besides the colour, the Holm p on the button; pressed, the paired details
    legend = browser.eval("document.getElementById('legend').textContent")
    assert "paired samples" in legend and "each on that system's own samples" in legend
    assert board[0]["family"] in legend and "a system's marks on one subset hold alpha 0.05 together" in board[0]["family"]
    pair = result["pairs"][0]
    buttons = browser.eval("Array.from(document.querySelectorAll('#boards table.board:not(.summary) button.pd.mark')).map(b => "
                           "[b.closest('table').dataset.subset, b.closest('tr').dataset.metric, b.textContent])")
    assert buttons
    for k, (subset, metric, text) in enumerate(buttons):
        m = pair["subsets"][subset]["metrics"][metric]
        side = lb.decision(m)["side"]
        assert text.startswith("* " + {"better": "\u25b2 better", "worse": "\u25bc worse", None: "different"}[side])
        assert text.endswith(f"Holm p {p_text(m['p_holm'])}")  # as every output spells it (issue 54, item 4)
        browser.eval(f"document.querySelectorAll('#boards table.board:not(.summary) button.pd.mark')[{k}].click()")
        detail = browser.eval(f"(() => {{ const b = document.querySelectorAll('#boards table.board:not(.summary) button.pd.mark')"
                              f"[{k}]; return [b.getAttribute('aria-expanded'), b.nextElementSibling.hidden, "
                              "b.nextElementSibling.textContent]; })()")
        assert detail[:2] == ["true", False]
        # the numbers as Python spells them for the console, md, tex and csv: the page never rounds on its own (its
        # script rounded halves up, Python to even: 0.3125 read 0.313 here and 0.312 everywhere else)
        assert detail[2] == (f"prompt \u2212 mixed on {m['n']} paired samples: {difference_text(m['difference'])}; "
                             f"raw p {p_text(m['p'])}; Holm p {p_text(m['p_holm'])}")
    browser.eval("document.querySelector('table.summary thead tr:last-child th button').click()")  # by place again
    assert browser.eval("Array.from(document.querySelectorAll('table.summary tbody tr')).map(r => r.dataset.system)") \
        == [r["system"] for r in top["rows"]]
    shot = browser.screenshot(tmp_path / "report-summary.png", "#leaderboard")
    assert browser.errors() == []
    _shots(shot)


def _focused(browser) -> str:
    return browser.eval("(() => { const e = document.activeElement; return e.tagName + '.' + (e.className || '') + "
                        "'#' + (e.id || '') + '@' + (e.closest('[id]') ? e.closest('[id]').id : ''); })()")


@pytest.mark.slow
def test_every_control_by_keyboard_and_the_page_on_a_phone(report, browser, tmp_path):
    out, systems = report
    browser.viewport(1200)
    browser.open((out / "index.html").resolve().as_uri())
    # Tab reaches every kind of control, each with a visible focus ring
    seen, ring = set(), set()
    for _ in range(700):
        browser.key("Tab")
        f = _focused(browser)
        seen.add(f)
        ring.add(f if not f.startswith("BODY.") and not browser.eval("(() => { const e = document.activeElement; const s = getComputedStyle(e); return "
                              "e.matches(':focus-visible') && s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) "
                              ">= 2; })()") else True)
    kinds = {"BUTTON.sort", "BUTTON.pd", "SELECT.#pick-system", "A.@sample-list", "INPUT.#across-search",
             "INPUT.#across-disagree", "A.@across-table"}
    reached = {k for k in kinds if any(f.startswith(k.split(".")[0] + ".") and (k.split(".")[1].split("#")[0] in f)
                                       and (("#" + k.split("#")[1]) in f if "#" in k else True)
                                       and (("@" + k.split("@")[1]) in f if "@" in k else True) for f in seen)}
    assert reached == kinds, sorted(seen)[:40]
    assert ring == {True}  # every focused element shows it (the body: focus passed through the browser's own UI)
    # operated by keyboard: Enter on a column head sorts, Space opens a mark's details, Enter opens a sample
    browser.eval("document.querySelector('#boards table.board:not(.summary) thead th:nth-child(3) button').focus()")
    browser.key("Enter")
    assert browser.eval("document.querySelector('#boards table.board:not(.summary) thead th:nth-child(3)')"
                        ".getAttribute('aria-sort')") == "ascending"
    browser.eval("document.querySelector('button.pd').focus()")
    browser.key(" ")
    assert browser.eval("document.querySelector('button.pd').getAttribute('aria-expanded')") == "true"
    sid = next(r["sample_id"] for r in systems[0].rows[UI] if r["eligible"] and r["outcome"] == "response")
    _select(browser, "pick-subset", UI)
    browser.eval(f"document.querySelector('#sample-list li[data-id=\"{sid}\"] a').focus()")
    browser.key("Enter")
    browser.wait(f"document.querySelector('#drilldown h3') && document.querySelector('#drilldown h3').textContent "
                 f"=== 'mixed: {sid}'")
    # a phone, 390 px: nothing scrolls sideways but the tables and the timeline inside their boxes
    browser.viewport(390)
    browser.open("about:blank")
    browser.open((out / "index.html").resolve().as_uri() + f"#sample=0/{sid}")
    browser.wait("!!document.getElementById('timeline')")
    assert browser.eval("document.documentElement.scrollWidth") <= 390
    assert browser.eval("getComputedStyle(document.querySelector('.split')).flexDirection") == "column"
    assert browser.eval("document.getElementById('drilldown').getBoundingClientRect().width") >= 300
    wide = browser.eval("Array.from(document.querySelectorAll('.scroll')).filter(b => b.scrollWidth > b.clientWidth)"
                        ".length")
    assert wide > 0  # the tables scroll in their boxes
    phone = browser.screenshot(tmp_path / "report-phone-leaderboard.png", "#leaderboard", width=390)
    phone_drill = browser.screenshot(tmp_path / "report-phone-drilldown.png", "#samples", width=390)
    assert browser.errors() == []
    _shots(phone, phone_drill)
    browser.viewport(1200)


def test_every_systems_outcome_per_sample(report, browser, tmp_path):
    out, systems = report
    browser.viewport(1200)
    browser.open((out / "index.html").resolve().as_uri())
    _select(browser, "across-subset", UI)
    ids = [r["sample_id"] for r in systems[0].rows[UI]]
    outcome = [{r["sample_id"]: drilldown.rule(r, [])[0] if not r["eligible"] else r["outcome"] for r in s.rows[UI]}
               for s in systems]
    table = browser.eval("Array.from(document.querySelectorAll('table.across tbody tr')).map(r => [r.dataset.id, "
                         "Array.from(r.querySelectorAll('td')).map(td => td.textContent.split(' (')[0])])")
    assert sorted(t[0] for t in table) == sorted(ids)
    assert all(texts == [o[sid] for o in outcome] for sid, texts in table)
    differ = [sid for sid in ids if outcome[0][sid] != outcome[1][sid]]
    browser.eval("document.getElementById('across-disagree').click()")
    shown = browser.eval("Array.from(document.querySelectorAll('table.across tbody tr')).map(r => r.dataset.id)")
    assert sorted(shown) == sorted(differ) and differ  # the pairs McNemar counts on outcomes
    browser.eval("document.getElementById('across-disagree').click()")
    # sorted by a system's latency: ascending, samples without one last
    _select(browser, "across-sort", "latency_s/1")
    shown = browser.eval("Array.from(document.querySelectorAll('table.across tbody tr')).map(r => r.dataset.id)")
    lat = {r["sample_id"]: r.get("latency_s") for r in systems[1].rows[UI]}
    values = [lat[sid] if isinstance(lat[sid], float) else float("inf") for sid in shown]
    assert values == sorted(values) and any(v != float("inf") for v in values)
    # found by id
    browser.eval(f"(() => {{ const i = document.getElementById('across-search'); i.value = '{ids[3].split('/')[1]}'; "
                 "i.dispatchEvent(new Event('input')); })()")
    shown = browser.eval("Array.from(document.querySelectorAll('table.across tbody tr')).map(r => r.dataset.id)")
    assert ids[3] in shown and all(ids[3].split("/")[1] in sid.split("/")[1] for sid in shown)
    # opened: every system's rule and timeline, one under the other
    browser.eval(f"document.querySelector('table.across tr[data-id=\"{ids[3]}\"] a').click()")
    browser.wait("document.getElementById('across-detail').dataset.ready")
    parts = browser.eval("Array.from(document.querySelectorAll('.across-system')).map(p => [p.dataset.system, "
                         "p.querySelector('h4').textContent, p.querySelectorAll('svg.timeline').length])")
    assert parts == [[s.name, f"{s.name}: {outcome[k][ids[3]]}", 1] for k, s in enumerate(systems)]
    shot = browser.screenshot(tmp_path / "report-across.png", "#across")
    assert browser.errors() == []
    _shots(shot)


def test_drill_downs_in_parts_open_from_any_part(report, browser, monkeypatch):
    """A system's drill-downs in parts of site.CHUNK samples (7 here, so 100 samples make 15 parts): each part
    holds its samples in index order, and a sample of a late part opens, alone and across systems, loading only
    the parts it needs."""
    out, systems = report
    monkeypatch.setattr(site, "CHUNK", 7)
    chunked = out.parent / "site-chunked"
    chunked.mkdir(exist_ok=True)
    files = site.files(systems, None, chunked, formats=("html",))
    for name, data in files.items():
        (chunked / name).write_bytes(data)
    rows = [r for rs in systems[0].rows.values() for r in rs]
    names = sorted(n for n in files if n.startswith("samples-0-"))
    assert names == sorted(f"samples-0-{c}.js" for c in range(-(-len(rows) // 7))) and len(names) > 10
    held = []
    for c in range(len(names)):
        text = files[f"samples-0-{c}.js"].decode()
        part = json.loads(text[text.index("] = ") + 4:].rstrip().rstrip(";"))
        assert 1 <= len(part) <= 7 and f'FDBU_SAMPLES["0-{c}"]' in text
        held += [d["id"] for d in part]
    assert held == [r["sample_id"] for r in rows]  # every sample once, in the index's order
    late = rows[-3]["sample_id"]  # in the last part
    browser.open((chunked / "index.html").resolve().as_uri())
    browser.eval(f"location.hash = 'sample=0/{late}'")
    title = browser.wait("document.querySelector('#drilldown h3') && document.querySelector('#drilldown h3').textContent")
    assert title == f"mixed: {late}"
    loaded = browser.eval("Array.from(document.querySelectorAll('script[src]')).map(s => s.getAttribute('src'))")
    assert loaded == [f"samples-0-{(len(rows) - 3) // 7}.js"]
    browser.eval(f"location.hash = 'across={late}'")
    browser.wait("document.getElementById('across-detail').dataset.ready")
    heads = browser.eval("Array.from(document.querySelectorAll('.across-system h4')).map(h => h.textContent)")
    assert [h.split(":")[0] for h in heads] == ["mixed", "prompt"] and all(": not in" not in h for h in heads)
    assert browser.errors() == []
