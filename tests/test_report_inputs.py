"""`fdbu report report.compare=DIR` reads the compare.json it is given as strictly as `fdbu compare` reads a scored
tree (issue 38, item 1): every mutation of a real compare.json is a one-line refusal naming the file and the key,
or a correct report."""
import copy
import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from builders import fdbu_main
from fdbu.reporting import site
from fdbu.comparison.pairwise import compare
from fdbu.comparison.systems import load
from fdbu.comparison.compared import read_result
from fdbu.comparison.files import FIGURE_FILES, drawn_record
from fdbu.errors import FdbuError
from report_trees import scored_pair


@pytest.fixture(scope="module")
def case(vad, boot, tmp_path_factory):
    root = tmp_path_factory.mktemp("report-inputs")
    a, b = scored_pair(root, vad, boot, n=20)
    systems = [load(a, "mixed"), load(b, "prompt")]
    return root, (a, b), systems, compare(systems)


def marked_line(result) -> list:
    """The key path of a line compare marks (the trees are built so that some are)."""
    for k, pair in enumerate(result["pairs"]):
        for subset, entry in pair["subsets"].items():
            for name, line in entry.get("metrics", {}).items():
                if line["marker"]:
                    return ["pairs", k, "subsets", subset, "metrics", name]
    raise AssertionError("no marked line")


def at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


ISSUE = {  # the cases the issue names: each was a traceback
    "systems a number": lambda r: r.update(systems=3),
    "systems [1, 2]": lambda r: r.update(systems=[1, 2]),
    "pairs a string": lambda r: r.update(pairs="x"),
    "no comparison": lambda r: r.pop("comparison"),
    "a marked line's p_holm NaN": lambda r: at(r, marked_line(r)).update(p_holm=math.nan),
    "a difference value that is a string": lambda r: at(r, marked_line(r))["difference"].update(value="0.1"),
    "a marker without a p below alpha": lambda r: at(r, marked_line(r)).update(p_holm=0.5),
    "a flag that is no flag": lambda r: at(r, marked_line(r))["difference"].update(value_flag="inf"),
    "an unknown subset": lambda r: r["pairs"][0]["subsets"].update(made_up={"metrics": {}}),
    "a metric left out": lambda r: at(r, marked_line(r)[:-1]).pop(marked_line(r)[-1]),
    "another baseline": lambda r: r["comparison"].update(baseline="nobody"),
    "the pairs swapped": lambda r: r["pairs"][0].update(a=r["pairs"][0]["b"], b=r["pairs"][0]["a"]),
    "an infinite alpha": lambda r: r["comparison"].update(alpha=math.inf),
    "another bootstrap": lambda r: r["bootstrap"].update(seed=1),
    # undefined (no pairs, or both medians not reached) is what compare writes with no value, interval, p or marker
    "undefined beside a value and a marker": lambda r: at(r, marked_line(r))["difference"].update(value_flag="undefined"),
}


def test_an_undefined_difference_as_compare_writes_it_is_read(case):
    """No value, no interval, no p, no marker: read (a report of a subset without pairs once refused it)."""
    _, _, systems, result = case
    doc = copy.deepcopy(result)
    line = at(doc, marked_line(doc))
    line.update(p=None, p_holm=None, marker=False, reason="no pairs")
    line["difference"].update(value=None, value_flag="undefined", interval=None, interval_flags=None)
    assert read_result(doc, systems, "given") is not None


def test_a_compare_json_whose_lines_are_not_in_the_family_it_names_is_refused(case):
    """Issue 54, item 2: the report says what the marks hold from comparison.holm_family, so the lines' own families
    must be the ones it names; an older compare.json without the key was decided per subset and is read so."""
    _, _, systems, result = case
    for family, words in (("leaderboard", "not 'every subset, all pairs' (comparison.holm_family leaderboard)"),
                          ("family", "comparison.holm_family is \"family\", not one of")):
        doc = copy.deepcopy(result)
        doc["comparison"]["holm_family"] = family
        with pytest.raises(FdbuError, match=re.escape(words)):
            read_result(doc, systems, "given")
    doc = copy.deepcopy(result)
    del doc["comparison"]["holm_family"]
    assert read_result(doc, systems, "given")["comparison"]["holm_family"] == "subset"


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(ISSUE))
def test_a_broken_compare_json_is_one_line_naming_the_key(case, kind, tmp_path):
    root, (a, b), systems, result = case
    given_dir = tmp_path / "given"
    given_dir.mkdir()
    broken = copy.deepcopy(result)
    ISSUE[kind](broken)
    (given_dir / "compare.json").write_text(json.dumps(broken, allow_nan=True))
    out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / 'site'}",
                    f"report.compare={given_dir}")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert lines[0].startswith(f"fdbu: error: {given_dir}: compare.json: "), lines[0]
    assert "Traceback" not in out.stderr and not (tmp_path / "site").exists()


@pytest.mark.slow
def test_the_compare_json_fdbu_wrote_is_read_and_the_report_equals_its_own(case, tmp_path):
    root, (a, b), systems, result = case
    first = fdbu_main("compare", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / 'cmp'}", "plot=false")
    assert first.returncode == 0, first.stderr
    for name, extra in (("own", []), ("given", [f"report.compare={tmp_path / 'cmp'}"])):
        out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / name}",
                        "report.format=md", *extra)
        assert out.returncode == 0, out.stderr
    assert (tmp_path / "own" / "leaderboard.md").read_bytes() == (tmp_path / "given" / "leaderboard.md").read_bytes()


@pytest.mark.slow
def test_the_report_takes_compare_s_figures_where_they_are_its_bytes(case, tmp_path, monkeypatch):
    """compare.json records the figures compare drew (width, SHA-256); a report given that folder at that width
    takes them as they are, drawing nothing; a figure changed since is drawn again, and the changed file never
    reaches the site."""
    import fdbu.comparison.files as files

    root, (a, b), systems, result = case
    cmp = tmp_path / "cmp"
    assert fdbu_main("compare", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={cmp}").returncode == 0
    drawn = {name: (cmp / name).read_bytes() for name in FIGURE_FILES}
    assert json.loads((cmp / "compare.json").read_text())["figures"] == drawn_record(drawn, "page")
    calls = []
    draw = files.figures
    monkeypatch.setattr(files, "figures", lambda *args, **kw: calls.append(1) or draw(*args, **kw))

    def report(name: str) -> dict[str, bytes]:
        out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / name}",
                        f"report.compare={cmp}", "report.format=html", "progress=false")
        assert out.returncode == 0, out.stderr
        return {n: (tmp_path / name / n).read_bytes() for n in drawn}

    assert report("taken") == drawn and calls == []
    (cmp / "compare-forest.png").write_bytes(b"not what compare drew")
    assert report("changed") == drawn and calls == [1]  # drawn again: the bytes compare drew


def test_compare_s_figures_are_taken_only_all_at_the_width_asked_and_as_recorded(case, tmp_path):
    """`taken` gives nothing (the report draws) for another width, an older compare.json without the record, a
    figure missing or not a regular file; a record that is not what compare writes is refused in one line."""
    import os

    from fdbu.comparison.files import taken

    root, (a, b), systems, result = case
    drawn = {name: name.encode() for name in FIGURE_FILES}
    for name, data in drawn.items():
        (tmp_path / name).write_bytes(data)
    doc = {**copy.deepcopy(result), "figures": drawn_record(drawn, "page")}
    assert taken(doc, tmp_path, "page") == drawn
    assert taken(doc, tmp_path, "column") is None and taken(result, tmp_path, "page") is None
    (tmp_path / "compare-forest.pdf").unlink()
    assert taken(doc, tmp_path, "page") is None
    os.mkfifo(tmp_path / "compare-forest.pdf")  # never opened: it would block the read
    assert taken(doc, tmp_path, "page") is None
    record = doc["figures"]
    for broken, key in (({**record, "width": "wide"}, "figures.width"),
                        ({**record, "sha256": {"compare-forest.png": "0" * 64}}, "figures.sha256"),
                        ({**record, "sha256": dict.fromkeys(drawn, "0" * 63 + "G")}, "figures.sha256")):
        with pytest.raises(FdbuError, match=re.escape(f"given: compare.json: {key} is ")):
            read_result(json.loads(json.dumps({**doc, "figures": broken})), systems, "given")


@pytest.mark.parametrize("setting,fragment,honour", [
    ("report.alpha=0.01", "decided at alpha 0.05", "compare.alpha=0.01"),
    ("baseline=prompt", "compares against mixed", "baseline=prompt"),
    ("report.family=pair", "decided with Holm per subset and pair (compare.family=subset)",
     "compare.family=pair"),
    ("report.allow_different_samples=true", None, "leave report.allow_different_samples out"),
    ("report.allow_mixed_transcripts=true", None, "leave report.allow_mixed_transcripts out")])
def test_a_report_setting_compare_json_decided_otherwise_is_refused_with_the_command_that_honours_it(
        case, tmp_path, setting, fragment, honour):
    """Issue 54, item 1: with report.compare= the marks are compare.json's; report.alpha=0.01 was ignored (two lines
    with Holm p 0.0234 marked at 0.01). A setting that would decide otherwise is refused, naming the compare command
    that honours it (another alpha changes which lines can decide, so Holm's family: not a threshold to re-apply);
    the same setting equal to compare.json's is accepted."""
    root, (a, b), systems, result = case
    given = tmp_path / "given"
    given.mkdir()
    (given / "compare.json").write_text(json.dumps(result))
    out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / 'site'}",
                    f"report.compare={given}", setting)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    if fragment is None:  # compare.json does not record the permission: the key is to be left out
        assert lines[0] == (f"fdbu: error: config: {setting}: with report.compare= the comparison is {given}/"
                            f"compare.json's, made by fdbu compare (which takes compare.{setting[7:-5]}=true); "
                            f"{honour}"), lines[0]
    else:
        assert lines[0].startswith(f"fdbu: error: config: {setting}: {given}/compare.json {fragment}"), lines[0]
        assert f'run fdbu compare "trees=[{a},{b}]" "names=[mixed,prompt]" {honour} out=DIR' in lines[0]
    assert not (tmp_path / "site").exists()
    same = {"report.alpha=0.01": "report.alpha=0.05", "baseline=prompt": "baseline=mixed",
            "report.family=pair": "report.family=subset"}.get(setting)
    if same:
        out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / 'site'}",
                        f"report.compare={given}", same, "report.format=md")
        assert out.returncode == 0, out.stderr


def test_a_fifo_as_compare_json_is_refused_at_once(case, tmp_path):
    import os

    root, (a, b), systems, result = case
    (tmp_path / "given").mkdir()
    os.mkfifo(tmp_path / "given" / "compare.json")
    out = fdbu_main("report", f"trees=[{a},{b}]", "names=[mixed,prompt]", f"out={tmp_path / 'site'}",
                    f"report.compare={tmp_path / 'given'}")
    assert out.returncode == 2 and "compare.json: is a FIFO (named pipe)" in out.stderr, out.stderr


def paths(doc, prefix=()):
    """Every key path of a JSON document, containers and leaves."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for k, v in enumerate(doc):
            yield from paths(v, prefix + (k,))


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                   st.text(max_size=8), st.lists(st.integers(0, 3), max_size=3),
                   st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


@pytest.fixture(scope="module")
def drilled(case, tmp_path_factory):
    """The drill-downs of the case's systems, made once: they are read from the trees, never from compare.json, so
    the fuzz below rebuilds only what a compare result changes (the board, the tables, the page)."""
    from fdbu.reporting import drilldown

    _, _, systems, _ = case
    out = tmp_path_factory.mktemp("fuzz")
    return out, {s.name: drilldown._index(s, out) for s in systems}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_mutation_is_a_refusal_or_a_correct_report(case, drilled, monkeypatch, data):
    """A random key of a real compare.json replaced (or removed): read_result refuses it with an FdbuError, or the
    report's files (leaderboard, md, tex, csv, the page) are all built from it; never another exception. (The
    drill-downs, which no compare result reaches, are each system's own, made once.)"""
    root, (a, b), systems, result = case
    out, details = drilled
    monkeypatch.setattr(site, "_index", lambda system, where, bar=None: details[system.name])
    doc = copy.deepcopy(result)  # with the figures compare records when it draws them (the bytes made up here)
    doc["figures"] = drawn_record({name: name.encode() for name in FIGURE_FILES}, "page")
    everything = [p for p in paths(doc) if p]
    path = data.draw(st.sampled_from(everything))
    parent = at(doc, path[:-1])
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(VALUES)
    doc = json.loads(json.dumps(doc, allow_nan=True))  # as parse_json reads it back
    try:
        read = read_result(doc, systems, "given")
    except FdbuError as e:
        assert "\n" not in str(e) and str(e).startswith("given: compare.json: ")
        return
    built = site.files(systems, read, out, formats=("html", "md", "tex", "csv"))
    assert {"index.html", "leaderboard.md", "leaderboard.tex", "leaderboard.csv"} <= set(built)


@pytest.mark.slow
def test_the_forest_draws_every_value_the_reader_accepts(case):
    """The figure reads the same keys: the edge values the reader lets through (an infinite difference, no
    interval, a p of exactly 0 or 1) draw without error."""
    from fdbu.figures.forest import compare_forest

    root, (a, b), systems, result = case
    doc = copy.deepcopy(result)
    lines = [line for p in doc["pairs"] for e in p["subsets"].values() for line in e.get("metrics", {}).values()]
    lines[0]["difference"].update(value=None, value_flag="+inf", interval=None)
    lines[1]["difference"].update(interval=[None, 0.5], interval_flags=["-inf", None])
    lines[2].update(p=0.0, p_holm=None, marker=False)
    read = read_result(json.loads(json.dumps(doc)), systems, "given")
    assert compare_forest(read, width="column")["png"][:4] == b"\x89PNG"


def test_a_key_the_reader_does_not_check_never_reaches_the_page(case, tmp_path):
    """The page carries a line's paired n, difference and p, only the keys read_result checks: an infinite
    excludes_zero (unchecked, unused) once made index.html's JSON fail (found by the fuzz test above)."""
    _, _, systems, result = case
    doc = copy.deepcopy(result)
    at(doc, marked_line(doc))["difference"]["excludes_zero"] = math.inf
    read = read_result(json.loads(json.dumps(doc, allow_nan=True)), systems, "given")
    built = site.files(systems, read, tmp_path, formats=("html",))
    assert b'"paired":{"n":' in built["index.html"]  # built: its data is strict JSON (no infinity allowed)
