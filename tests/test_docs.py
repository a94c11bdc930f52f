"""The README a landing page and the docs site behind it (issue 57): every topic of the old README on its page, every
fenced block of every page run by a test or saying why not, the Reference made from the registries, and the site
built strictly and offline, then read in headless Chromium as a person opens it from disk."""
from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from docs_pages import DOCS, README, ROOT, blocks, headings, pages

# Each section of the README before it became a landing page (531ae0c, 2,393 lines) -> the page holding it now.
MOVED = {
    "Why not just the official numbers": "docs/families/v1.0.md",
    "Set-up and the two commands": "docs/getting-started.md",
    "Scoring your system's outputs": "docs/guides/scoring.md",
    "Commands": "docs/guides/commands.md",
    "Speech detection at scale, exact on every machine": "docs/guides/speech-detection.md",
    "Export and the reference column": "docs/guides/reference-column.md",
    "The reference column": "docs/guides/reference-column.md",
    "The ASR stage": "docs/guides/asr.md",
    "Sensitivity sweep": "docs/guides/sweep.md",
    "Comparing systems": "docs/guides/compare.md",
    "How compare decides": "docs/guides/compare.md",
    "The report": "docs/guides/report.md",
    "Synthetic captures": "docs/guides/synth.md",
    "Full-Duplex-Bench v1.5": "docs/families/v1.5.md",
    "Did the system stop *because of* the overlap?": "docs/families/v1.5.md",
    "Full-Duplex-Bench v2": "docs/families/v2.md",
    "Numbers in other benchmarks' terms": "docs/families/views.md",
    "Running at scale": "docs/guides/scale.md",
    "Running on a cluster": "docs/guides/cluster.md",
    "Layout": "docs/reference/layout.md",
    "Outputs": "docs/reference/outputs.md",
    "Definitions": "docs/definitions.md",
    "Development": "docs/development.md",
}

# Every fenced block of every page (page -> its blocks' languages in order, each with the test running it or
# why none does): a new block fails here until it is run or says why not.
BLOCKS = {
    "README.md": [("sh", "not run: the two make targets are what runs this suite (test_make_targets_exist)"),
                  ("sh", "test_readme.py::test_the_readmes_flow_runs_as_written"),
                  ("sh", "test_readme.py::test_the_readmes_flow_runs_as_written"),
                  ("sh", "test_readme.py::test_the_readmes_flow_runs_as_written"),
                  ("sh", "test_readme.py::test_the_readmes_flow_runs_as_written (the other releases)")],
    "docs/getting-started.md": [("sh", "not run: the README's make targets, the same two lines")],
    "docs/guides/scoring.md": [("sh", "test_readme.py::test_the_readmes_flow_runs_as_written (the README's)"),
                               ("sh", "test_readme.py::test_the_readmes_flow_runs_as_written (the README's)")],
    "docs/guides/commands.md": [("sh", "test_readme.py::test_every_command_runs_as_written"),
                                ("python", "test_readme.py::test_every_command_runs_as_written"),
                                ("sh", "test_readme.py::test_the_config_file_example_runs_as_written")],
    "docs/guides/python.md": [("sh", "test_docs.py::test_the_notebook_guide_runs_as_written"),
                              ("python", "test_docs.py::test_the_notebook_guide_runs_as_written")],
    "docs/guides/speech-detection.md": [("", "not run: what `make demo`'s score prints, shown")],
    "docs/guides/compare.md": [("", "not run: the leaderboard `make demo` prints, shown"),
                               ("", "not run: a line of a larger comparison, shown")],
    "docs/guides/asr.md": [("sh", "not run: it downloads the model from the Hugging Face hub (needs the network)")],
    "docs/families/v1.5.md": [("sh", "test_readme.py::test_the_v15_section_runs_as_written"),
                              ("json", "test_readme.py::test_the_v15_section_runs_as_written (the row it wrote)")],
    "docs/families/v2.md": [("sh", "test_readme.py::test_the_v2_section_runs_as_written")],
    "docs/families/views.md": [("sh", "test_views.py::test_the_readme_section_runs_and_its_report_shows_the_views")],
    "ARCHITECTURE.md": [("", "not run: the folders drawn as text (the site includes the page)"),
                        ("", "not run: the stages drawn as text")],
    "docs/guides/cluster.md": [("sh", "not run as written: it needs a SLURM cluster and /shared; test_cluster.py runs "
                                      "the same commands on a one-node cluster"),
                               ("text", "not run: a transcript of a real run (test_cluster.py)")],
}


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)


def test_the_readme_is_a_landing_page_whose_links_resolve():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    links = [link for link in _links(text) if "://" not in link]
    assert len(links) >= 20
    for link in links:
        assert (ROOT / link).is_file(), link
    # the site's pages are each linked from the README's table
    linked = {str((ROOT / link).resolve().relative_to(ROOT)) for link in links}
    for page in pages()[1:]:
        rel = str(page.relative_to(ROOT))
        if rel not in ("docs/index.md", "docs/benchmarks.md", "docs/architecture.md"):
            assert rel in linked, rel


def test_every_section_of_the_old_readme_is_on_its_page():
    for title, page in MOVED.items():
        assert title in {t for _, _, t in headings((ROOT / page).read_text())}, (title, page)


def test_every_block_of_every_page_is_run_or_says_why():
    found = {}
    for page in [*pages(), ROOT / "ARCHITECTURE.md", ROOT / "benchmarks" / "RESULTS.md"]:  # and the pages included
        fences = re.findall(r"^```(.*)$", page.read_text(), flags=re.M)
        langs = [f for f in fences[::2] if not f.startswith("{")]  # opening fences, not MyST's directives
        if langs:
            found[str(page.relative_to(ROOT))] = langs
    assert found == {page: [lang for lang, _ in declared] for page, declared in BLOCKS.items()}
    for declared in BLOCKS.values():
        for _, how in declared:
            assert how.startswith("not run") or "::test_" in how, how
    for declared in BLOCKS.values():  # a test named runs: it exists
        for _, how in declared:
            if "::test_" in how:
                file, test = how.split(" ")[0].split("::")
                assert f"def {test}(" in (ROOT / "tests" / file).read_text(), how


def test_make_targets_exist():
    """The README's and Getting started's `make demo`, `make test` (and `make docs`) are the Makefile's."""
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test", "docs"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    (first, *_) = blocks(README.read_text(), "sh")
    assert blocks((DOCS / "getting-started.md").read_text(), "sh")[0] == first


def test_the_settings_reference_lists_every_registered_setting_and_a_new_one(monkeypatch):
    """The commands page lists exactly the keys each command's config declares (settings_of, what --help prints),
    and a family registered now, with a settings group of its own, appears in it with its key and default."""
    import made_up_family
    from fdbu.cli import docs as reference
    from fdbu import registry, tasks
    from fdbu.config.keys import settings_of

    def listed(command: str) -> set[str]:
        return set(re.findall(r"^\| \{fdbu-setting\}`([^`]+)` \|", "\n".join(reference.settings(command)), re.M))

    for command in registry.COMMANDS:
        assert listed(command) == {s.key for s in settings_of(command) if s.kind is not None}, command
    plugged = "vX" in tasks.FAMILIES  # already registered as a plugin (FDBU_PLUGINS=made_up_plugin)
    assert ("hold.window_s" in listed("score")) == plugged
    if not plugged:
        made_up_family.register()
    try:
        page = reference.commands()
        assert "hold.window_s" in listed("score")
        assert "| {fdbu-setting}`hold.window_s` | float | `1.0` | how long the system should stay silent" in page
    finally:
        if not plugged:
            made_up_family.unregister()
    assert ("hold.window_s" in listed("score")) == plugged
    score = "\n".join(reference.settings("score"))
    assert "| {fdbu-setting}`vad.threshold` | float | `0.5` | Silero speech threshold, in (0, 1) | " \
           "`sweep.threshold` |" in score
    assert "| {fdbu-setting}`vad.min_silence_duration_ms` | int | `100` | silence that ends a segment, ms | " \
           "`sweep.min_silence_duration_ms` |" in score
    assert re.search(r"^\| \{fdbu-setting\}`vad.backend` \| str \| `batched` \| .* \|  \|$", score, re.M)  # none varies it
    assert "| {fdbu-setting}`out` | str\\|null | `null` |" in score  # the command line's null, not Python's None
    sweep = "\n".join(reference.settings("sweep"))
    assert "| {fdbu-setting}`sweep.threshold` | list\\[float\\] | `[0.3,0.4,0.5,0.6,0.7]` |" in sweep
    export = "\n".join(reference.settings("export"))
    assert "\\<subset\\>/\\<id\\>/input.wav" in export  # a placeholder is text, not an HTML tag


def test_the_rows_and_metrics_reference_follow_the_declarations():
    from fdbu.cli import docs as reference
    from fdbu import tasks

    rows, metrics = reference.schemas(), reference.metrics()
    for t in tasks.TASKS.values():
        if t.metric_module is not None:
            for key in t.metric_module.ROW:
                assert f"| `{key}` |" in rows, (t.name, key)
    for name in tasks.scored():
        assert f"## {name}\n" in metrics
        for m in tasks.metric_table(name):
            assert f"| `{m.name}` | {m.kind} | {m.better} |" in metrics, (name, m.name)


@pytest.mark.slow
def test_the_site_builds_strictly_offline_and_reads_in_a_browser(tmp_path):
    """`make docs`'s build (strict: -W -n), then the site from disk in headless Chromium: no request leaves the
    machine, no console error, formulas rendered by the bundled MathJax, search answers, the Reference's tables
    are there, and a guide reads at 390 px with nothing wider than the screen."""
    from browser import Chromium, executable
    from fdbu.config.keys import settings_of

    out = tmp_path / "html"
    build = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q", str(DOCS),
                            str(out)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-3000:]
    assert not list(out.rglob("*.md"))  # html_copy_source off: the sources are not copied
    exe = executable()
    if exe is None:
        pytest.skip("no chromium: the built site was not opened (make browser-tools installs it)")
    browser = Chromium(exe, tmp_path / "profile")
    try:
        browser.call("Network.enable")
        seen: list[str] = []

        def visit(page: str, ready: str = "true") -> None:
            """Open `page` from disk, wait for `ready` and for its fonts (MathJax's load late), then take every
            resource it loaded (the Performance API) and every request the browser sent for it (the Network
            domain), and its console errors."""
            path, _, query = page.partition("?")
            browser.open((out / path).as_uri() + (f"?{query}" if query else ""))
            browser.wait(ready, 30)
            seen.extend(browser.eval("document.fonts.ready.then(() => new Promise(r => setTimeout(r, 300)))"
                                     ".then(() => performance.getEntriesByType('resource').map(e => e.name))"))
            seen.extend(e["params"]["request"]["url"] for e in browser.events
                        if e.get("method") == "Network.requestWillBeSent")
            assert browser.errors() == [], (page, browser.errors())

        browser.viewport(1280, 900)  # a laptop's screen, then a phone's (390 px) below
        visit("index.html")
        assert browser.eval("document.querySelectorAll('.sidebar-tree a').length") >= 20
        visit("definitions.html", "document.querySelectorAll('mjx-container').length >= 8")
        assert browser.eval("document.querySelectorAll('mjx-container[display=\"true\"]').length") >= 3
        assert browser.eval("document.querySelectorAll('.MathJax merror, mjx-merror').length") == 0
        def woff() -> bool:  # MathJax's fonts, from disk: what the page has loaded so far (each call reads events)
            seen.extend(browser.eval("performance.getEntriesByType('resource').map(e => e.name)"))
            seen.extend(e["params"]["request"]["url"] for e in browser.events
                        if e.get("method") == "Network.requestWillBeSent")
            return any(u.endswith(".woff") and "/_static/mathjax/" in u for u in seen)
        deadline = time.monotonic() + 30  # waited for, however slow the machine, not a grace measured here
        while not woff() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert woff()
        browser.screenshot(tmp_path / "definitions.png")
        visit("search.html?q=wilson", "(document.querySelector('.search-summary') || {}).textContent"
              " && document.querySelector('.search-summary').textContent.includes('found')")
        hits = browser.eval("[...document.querySelectorAll('#search-results li a')].map(a => a.href).join(' ')")
        assert "definitions.html" in hits
        # a setting's key: its row first (an object search ranks by name), then the pages holding it most, each with
        # a summary of where (built beside the site: from disk a browser refuses the requests search makes for them)
        visit("search.html?q=vad.threshold", "document.querySelectorAll('#search-results li').length > 2 && "
              "document.querySelectorAll('#search-results p.context').length > 2")
        first = browser.eval("document.querySelector('#search-results li a').href")
        assert first.endswith("reference/commands.html#setting-vad-threshold"), first
        pages = browser.eval("[...document.querySelectorAll('#search-results li.kind-text a')].map(a => a.href)")
        assert pages[0].endswith("reference/commands.html"), pages  # the page naming it most, not the first by name
        summary = browser.eval("document.querySelector('#search-results li.kind-text p.context').textContent")
        assert "vad.threshold" in summary, summary
        visit("getting-started.html")  # its commands fit at 1,280 px: no code block scrolls sideways
        assert browser.eval("Math.max(...[...document.querySelectorAll('pre')].map(p => p.scrollWidth - "
                            "p.clientWidth))") <= 0
        visit("reference/commands.html")
        keys = set(browser.eval("[...document.querySelectorAll('table td:first-child code')].map(c => c.textContent)"))
        assert {s.key for s in settings_of("score") if s.kind is not None} <= keys
        dataset = browser.eval("[...document.querySelectorAll('#fdbu-export tr')].find(r => r.querySelector('td code')"
                               " && r.querySelector('td code').textContent === 'dataset').textContent")
        assert "<subset>/<id>/input.wav" in dataset, dataset
        meaning = ("(() => { const r = [...document.querySelectorAll('tr')].find(r => r.querySelector('td code') && "
                   "r.querySelector('td code').textContent === 'vad.backend'); return [r.children[3]"
                   ".getBoundingClientRect().width, getComputedStyle(r).display]; })()")
        width, display = browser.eval(meaning)  # room for its words, not one or two a line
        assert width >= 12 * 16 and display == "table-row" and browser.eval(
            "document.documentElement.scrollWidth") <= browser.eval("window.innerWidth"), (width, display)
        browser.viewport(390, 844)
        visit("reference/commands.html")  # on a phone each setting is a card: nothing wider than the screen
        width, display = browser.eval(meaning)
        assert display == "block" and width >= 300 and browser.eval("document.documentElement.scrollWidth") <= 390
        visit("guides/compare.html")
        wide = browser.eval("document.documentElement.scrollWidth")
        assert wide <= 390, wide
        assert browser.eval("getComputedStyle(document.querySelector('article p')).fontSize") in ("16px", "17px",
                                                                                                  "15.2px")
        browser.screenshot(tmp_path / "phone.png", width=390, height=844)
    finally:
        browser.close()
    outside = [u for u in seen if not u.startswith(("file://", "data:", "blob:"))]
    assert seen and outside == [], outside


def test_the_schema_page_lists_what_the_reader_checks(monkeypatch):
    """A key added to unified.json's declared header appears on the schema page and is what the reader asks for:
    the page and the check read one declaration."""
    import json

    from fdbu.cli import docs as reference
    from fdbu.scoring import scored
    from fdbu.errors import FdbuError

    doc = {"generator": "fdbu", "fdbu_version": "0.1.0", "definitions": "fdb-v1.0-unified-4",
           "samples_sha256": "0" * 64, "settings": "spec", "quantile_rule": "ceil(qN)-th smallest"}

    def refusal() -> str:
        with pytest.raises(FdbuError) as e:
            scored._unified(ROOT / "nowhere", json.dumps(doc).encode())
        return str(e.value)

    assert "inputs" in refusal() and "| `inputs.asr.json` | sha256 |" in reference.schemas()
    monkeypatch.setitem(scored.HEADER, "made_up_key", "count")
    assert "made_up_key is missing" in refusal()
    assert "| `made_up_key` | count |" in reference.schemas()


@pytest.mark.slow
def test_the_notebook_guide_runs_as_written(tmp_path, calibrated, monkeypatch, capsys):
    """The Python API guide in an empty folder: its shell block, then its notebook code, which prints what it says."""
    from builders import fdbu_main
    from test_readme import commands

    monkeypatch.chdir(tmp_path)
    text = (DOCS / "guides" / "python.md").read_text()
    (shell,), (code,) = blocks(text, "sh"), blocks(text, "python")
    for line, argv in commands(shell):
        out = fdbu_main(*argv[1:])
        assert out.returncode == 0, f"{line}\n{out.stderr}"
    capsys.readouterr()
    exec(compile(code, "docs/guides/python.md", "exec"), {})
    printed = capsys.readouterr().out
    assert "fdb-v1.0-unified-4" in printed and "response_latency_s" in printed
    assert "vad.threshhold is not a setting; did you mean vad.threshold?" in printed
    assert (tmp_path / "nb/site/index.html").is_file() and (tmp_path / "nb/modelA/unified.json").is_file()


def test_the_compare_json_schema_is_what_the_report_checks(monkeypatch):
    """A key added to compare.json's declared line appears on the schema page and the report's reader asks for it."""
    from fdbu.comparison import compared
    from fdbu.cli import docs as reference
    from fdbu import tasks

    metric = tasks.metric_table("candor_turn_taking")[0]
    line = {"kind": metric.kind, "better": metric.better, "headline": metric.headline, "n": 4, "p": 0.5,
            "p_holm": 0.5, "reason": None, "family": None, "marker": False,
            "difference": {"value": 0.1, "value_flag": None, "interval": [0.0, 0.2], "interval_flags": [None, None]}}
    compared._line(line, "x", metric, 0.05)  # as fdbu compare writes it: read
    monkeypatch.setattr(compared, "LINE", (*compared.LINE, ("made_up", ("int",), None, "a made-up count")))
    with pytest.raises(compared._Bad) as e:
        compared._line(line, "x", metric, 0.05)
    assert e.value.args == ("x.made_up", "is missing")
    assert "| `made_up` | a made-up count |" in reference.schemas()


def test_compare_json_s_keys_above_the_lines_are_what_the_report_checks(monkeypatch):
    """A type changed in compare.json's declared shape changes what the report's reader accepts, and the page says
    what each key must be."""
    from fdbu.comparison import compared
    from fdbu.cli import docs as reference

    page = reference.schemas()
    assert "| `comparison.alpha` | a number in (0, 1) |" in page and "| `pairs[k].subsets` | an object |" in page
    monkeypatch.setitem(compared.SHAPE, "generator", (("int",), "a made-up whole number"))
    with pytest.raises(compared.FdbuError) as e:
        compared.read_result({"generator": "fdbu"}, [], "report.compare")
    assert "generator is \"fdbu\", not a made-up whole number" in str(e.value)
    assert "| `generator` | a made-up whole number |" in reference.schemas()
