"""The task registry and the declared metric tables: one place per subset, one place per metric."""
import dataclasses
import json

import numpy as np
import pytest

from fdbu import tasks
from fdbu.asr.stage import _jobs
from fdbu.official.evaluate import evaluate
from fdbu.metrics.table import KINDS, declared
from fdbu.figures.plot import latency_curves
from fdbu.scoring.unified import write
from fdbu.scoring.pipeline import score_path
from fdbu.synth import synthesize
from fdbu.vad import SpeechDetector


@pytest.fixture()
def made_up():
    """Two subsets that exist nowhere but here: copies of the turn-taking and interruption tasks."""
    added = [tasks.Subset("my_turn_taking", tasks.task("turn_taking"), 40),
             tasks.Subset("my_user_interruption", tasks.task("user_interruption"), 30)]
    for s in added:
        tasks.register(s)
    yield added
    for s in added:
        tasks.unregister(s.name)


def test_a_made_up_subset_scores_end_to_end_with_no_other_edit(made_up, tmp_path, boot):
    tree = synthesize(tmp_path / "tree", n={"my_turn_taking": 6, "my_user_interruption": 6}, seed=4,
                      ineligible=0.0)
    det = SpeechDetector(backend="batched", device="cpu", cache=False)
    scored = score_path(tree, det, boot)
    write(scored, tree)
    unified = json.loads((tree / "unified.json").read_text())
    assert list(unified["subsets"]) == ["my_turn_taking", "my_user_interruption"]
    for s in made_up:
        entry = unified["subsets"][s.name]
        assert entry["task"] == s.task.name and entry["counts"]["selected"] == 6
        assert list(entry["metrics"]) == [m.name for m in s.task.metrics.METRICS]
    truth = json.loads((tree / "synth.json").read_text())["samples"]
    rows = [r for r in scored.rows if r["subset"] == "my_user_interruption"]
    assert [r["outcome"] for r in rows] == [truth[r["sample_id"]]["intended"]["outcome"] for r in rows]
    assert det.stats.files == 6  # speech detection ran on the new interruption subset, and only there
    # the ASR stage cuts the new interruption subset at R, the turn-taking one not at all
    cuts = {j.sample_id: j.offset for j in _jobs(tree)}
    for sid, offset in cuts.items():
        ann = json.loads((tree / sid / ("interrupt.json" if "interruption" in sid else "turn_taking.json")).read_text())
        assert offset == (ann[0]["timestamp"][1] if "interruption" in sid else 0.0)
    # the reference column and the plot read the registry too
    reference = evaluate(tree)["subsets"]
    assert set(reference) == {"my_turn_taking", "my_user_interruption"} and reference["my_turn_taking"]["samples"] == 6
    figure = latency_curves(scored.rows)
    assert figure["png"].startswith(b"\x89PNG") and figure["pdf"].startswith(b"%PDF")


def test_every_declared_metric_is_computed_and_nothing_else(synth_tree, boot):
    unified = score_path(synth_tree, SpeechDetector(backend="batched", device="cpu", cache=False), boot).unified
    assert set(unified["subsets"]) == set(tasks.scored()) & set(tasks.release_sizes("v1.0"))  # a v1.0 tree
    for name, entry in unified["subsets"].items():
        table = tasks.metric_table(name)
        assert list(entry["metrics"]) == [m.name for m in table]
        for m in table:
            record = entry["metrics"][m.name]
            assert (record["kind"], record["better"]) == (m.kind, m.better)


def test_tables_are_well_formed():
    for task in tasks.TASKS.values():
        if not task.scored:
            continue
        table = task.metrics.METRICS
        names = [m.name for m in table]
        assert len(names) == len(set(names)) and all(m.kind in KINDS for m in table)
        assert set(declared(table)) == set(names)
    interruption = declared(tasks.task("user_interruption").metrics.METRICS)
    assert interruption["exercised_rate"]["unknown"] == "ineligible samples"
    assert interruption["restart_rate"]["unknown"] == "ineligible samples and eligible samples not exercised"


def test_a_subset_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="already registered"):
        tasks.register(tasks.Subset("candor_turn_taking", tasks.task("turn_taking"), 1))
    assert np.all([s.task.name in tasks.TASKS for s in tasks.SUBSETS.values()])


@pytest.fixture()
def cue_reply():
    """The made-up task of tests/made_up_task.py (its own reader, metric module and generator), registered."""
    import made_up_task

    tasks.register(made_up_task.SUBSET)
    yield made_up_task
    tasks.unregister(made_up_task.SUBSET.name)
    assert "cue_reply" not in tasks.TASKS


@pytest.mark.slow
def test_a_made_up_task_goes_through_synth_score_compare_and_report(cue_reply, tmp_path):
    """A task no file of fdbu names: its subset registered, the CLI (in process) synthesizes, scores, compares and
    reports it, and the API reads it, each from the task's declared parts. The sweep, which re-derives speech
    detection only, leaves a task without it alone (its table lists the interruption subset only)."""
    from builders import fdbu_main

    sub = cue_reply.SUBSET.name
    n = f"n={{{sub}: 8, synthetic_user_interruption: 2}}"
    for name, system in (("A", "prompt"), ("B", "silent")):
        # every sample eligible, whatever else the registry holds (a plugin's subsets draw from the same stream)
        assert fdbu_main("synth", f"out={tmp_path / name}", n, "seed=5", f"system={system}",
                         "ineligible=0").returncode == 0
        done = fdbu_main("score", f"tree={tmp_path / name}", "progress=false", "plot=true")
        assert done.returncode == 0, done.stderr
        assert "reply_rate" in done.stdout and sub in done.stdout
    unified = json.loads((tmp_path / "A" / "unified.json").read_text())
    entry = unified["subsets"][sub]
    assert entry["task"] == "cue_reply" and list(entry["metrics"]) == ["reply_rate", "reply_latency_s"]
    assert entry["metrics"]["reply_rate"]["value"] == 1.0  # every prompt sample replies
    truth = json.loads((tmp_path / "A" / "synth.json").read_text())["samples"]
    rows = [json.loads(line) for line in (tmp_path / "A" / "unified-samples.jsonl").read_text().splitlines()]
    mine = [r for r in rows if r["subset"] == sub]
    assert len(mine) == 8 and all(r["outcome"] == truth[r["sample_id"]]["intended"]["outcome"] for r in mine)
    assert (tmp_path / "A" / "latency-curves.png").is_file()  # its latency metric is drawn (Task.latency)

    trees = f"trees=[{tmp_path / 'A'},{tmp_path / 'B'}]"
    compared = fdbu_main("compare", trees, "names=[a,b]", f"out={tmp_path / 'cmp'}")
    assert compared.returncode == 0, compared.stderr
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    lines = result["pairs"][0]["subsets"][sub]["metrics"]
    assert lines["reply_rate"]["difference"]["value"] == -1.0  # b (silent) never replies
    reported = fdbu_main("report", trees, "names=[a,b]", f"out={tmp_path / 'site'}", f"report.compare={tmp_path / 'cmp'}")
    assert reported.returncode == 0, reported.stderr
    drill = (tmp_path / "site" / "samples-0-0.js").read_text()
    assert "reply: the first word after the cue C = " in drill and '"C":' in drill  # explain and marks
    _drawn_in_a_browser(tmp_path / "site", f"{sub}/0", tmp_path / "profile")
    assert "made\\_up\\_cue\\_reply (cue reply (from C))" in (tmp_path / "site" / "leaderboard.md").read_text()

    import fdbu

    scored = fdbu.score(str(tmp_path / "A"), write=False)
    frame = scored.to_pandas()["cue_reply"]  # typed by the task's declared row (ROW)
    assert set(frame["outcome"]) == {"reply"} and str(frame["latency_s"].dtype) == "float64"
    assert set(scored.metrics().query(f"subset == '{sub}'")["metric"]) == {"reply_rate", "reply_latency_s"}
    swept = fdbu_main("sweep", f"tree={tmp_path / 'A'}", f"out={tmp_path / 'sw'}", "sweep.threshold=[0.5]",
                      "sweep.min_silence_duration_ms=[100,200]", "progress=false")
    assert swept.returncode == 0, swept.stderr
    assert {t["subset"] for t in json.loads((tmp_path / "sw" / "sweep.json").read_text())["trees"]} == \
        {"synthetic_user_interruption"}


def _drawn_in_a_browser(site, sample_id: str, profile):
    """The made-up task's drill-down in headless Chromium: its rule text, and its own mark (C) drawn on the
    timeline (skipped without Chromium)."""
    from browser import Chromium, executable

    exe = executable()
    if exe is None:
        return
    chrome = Chromium(exe, profile)
    try:
        chrome.open((site / "index.html").resolve().as_uri())
        chrome.eval(f"location.hash = 'sample=0/{sample_id}'")
        rule = chrome.wait("document.getElementById('rule') && document.getElementById('rule').textContent")
        assert rule.startswith("reply: the first word after the cue C = "), rule
        marks = chrome.eval("Array.from(document.querySelectorAll('#timeline text')).map(t => t.textContent)"
                            ".filter(t => t.includes(' = '))")
        assert len(marks) == 1 and marks[0].startswith("C = "), marks
        assert chrome.eval("document.querySelectorAll('#timeline .mark').length") == 1
        assert chrome.errors() == []
    finally:
        chrome.close()


def test_a_new_task_breaking_the_contract_is_refused_when_registered(cue_reply):
    """Registered, not discovered mid-score: a latency that is not a metric, a missing part, no generator."""
    import dataclasses

    bad = dataclasses.replace(cue_reply.TASK, name="bad_cue", latency="no_such_metric", generator=None)
    with pytest.raises(ValueError, match="latency='no_such_metric' is not one of its METRICS .*no generator"):
        tasks.register(tasks.Subset("bad_cue_subset", bad, 1))
    assert "bad_cue_subset" not in tasks.SUBSETS and "bad_cue" not in tasks.TASKS


@pytest.fixture()
def made_up_family():
    """The made-up family of tests/made_up_family.py (its settings group, entry, figure and task), registered."""
    import made_up_family

    plugged = "vX" in tasks.FAMILIES  # already registered as a plugin (FDBU_PLUGINS=made_up_plugin)
    if not plugged:
        made_up_family.register()
    yield made_up_family
    if not plugged:
        made_up_family.unregister()
        assert "vX" not in tasks.FAMILIES and "hold" not in tasks.TASKS


@pytest.mark.slow
def test_a_made_up_family_goes_through_synth_score_compare_report_and_the_api(made_up_family, tmp_path):
    """A family no file of fdbu names, registered in one call as v1.0 and v1.5 are: its settings group is a config
    group of score (on the command line, in --help, recorded in unified.json and its signature), its entry is in
    each of its subsets' entries (printed by score, checked by the reader, shown as rows by the report, a frame of
    the API), its figure is drawn; compare and the report read its trees, and the sweep refuses them."""
    from builders import fdbu_main

    sub = made_up_family.SUBSET.name
    assert "hold.window_s" in fdbu_main("score", "--help").stdout
    # its generator's setting of synth, declared by the family (SynthOption): in --help, checked, handed to it
    assert "the made-up family's range of H" in fdbu_main("synth", "--help").stdout
    bad = fdbu_main("synth", f"out={tmp_path / 'bad'}", "family=vX", "hold_s=[5,1]")
    assert bad.returncode == 2 and "hold_s=[5.0, 1.0]: a range [lo, hi]" in bad.stderr, bad.stderr
    fixed = fdbu_main("synth", f"out={tmp_path / 'fixed'}", "family=vX", "n=3", "hold_s=[3,3]", "ineligible=0")
    assert fixed.returncode == 0, fixed.stderr
    assert {json.loads(p.read_text())[0]["timestamp"][0] for p in (tmp_path / "fixed").rglob("hold.json")} == {3.0}
    for name, system in (("A", "patient"), ("B", "eager")):
        done = fdbu_main("synth", f"out={tmp_path / name}", "family=vX", "n=8", "seed=2", f"system={system}")
        assert done.returncode == 0, done.stderr
        done = fdbu_main("score", f"tree={tmp_path / name}", "hold.window_s=0.8", "plot=true", "progress=false")
        assert done.returncode == 0, done.stderr
        assert "  hold entry: late_reply_rate over 8 samples" in done.stdout
    unified = json.loads((tmp_path / "A" / "unified.json").read_text())
    assert unified["hold"] == {"window_s": 0.8} and unified["non_default"] == ["hold.window_s=0.8"]
    assert unified["definitions"].endswith("+made-up-hold-1") and "overlap" not in unified
    entry = unified["subsets"][sub]
    assert entry["metrics"]["held_rate"]["value"] == 1.0  # patient: 1.2-2 s of silence after H, the window 0.8 s
    rows = [json.loads(line) for line in (tmp_path / "A" / "unified-samples.jsonl").read_text().splitlines()]
    late = [r["latency_s"] < 1.6 for r in rows if r["eligible"]]
    assert entry["hold"]["n"] == len(late) and entry["hold"]["late_reply_rate"]["difference"]["value"] == \
        pytest.approx(sum(late) / len(late))  # within 2 x 0.8 s, minus within 0.8 s (none)
    assert (tmp_path / "A" / "hold-curves.png").stat().st_size > 10_000
    assert not (tmp_path / "A" / "latency-curves.png").exists()  # the task names no latency: the family's figure only

    from fdbu.scoring import scored
    from fdbu.common.atomic import dumps
    from fdbu.errors import FdbuError

    broken = json.loads((tmp_path / "A" / "unified.json").read_text())
    broken["subsets"][sub]["hold"]["late_reply_rate"]["marker"] = "yes"
    (tmp_path / "A" / "unified.json").write_text(dumps(broken))
    with pytest.raises(FdbuError, match=f"subsets.{sub}.hold.late_reply_rate.marker is 'yes', not true or false"):
        scored.read(tmp_path / "A")  # the family's own check
    (tmp_path / "A" / "unified.json").write_text(dumps(unified))

    trees = f"trees=[{tmp_path / 'A'},{tmp_path / 'B'}]"
    compared = fdbu_main("compare", trees, "names=[a,b]", f"out={tmp_path / 'cmp'}", "progress=false")
    assert compared.returncode == 0, compared.stderr
    lines = json.loads((tmp_path / "cmp" / "compare.json").read_text())["pairs"][0]["subsets"][sub]["metrics"]
    assert lines["held_rate"]["difference"]["value"] == -1.0  # eager never holds
    reported = fdbu_main("report", trees, "names=[a,b]", f"out={tmp_path / 'site'}", "progress=false",
                         f"report.compare={tmp_path / 'cmp'}", "report.format=[md]")
    assert reported.returncode == 0, reported.stderr
    assert "late\\_reply\\_rate (made up)" in (tmp_path / "site" / "leaderboard.md").read_text()  # the entry's rows
    one = fdbu_main("report", f"trees=[{tmp_path / 'A'}]", f"out={tmp_path / 'one'}", "progress=false")
    assert one.returncode == 0 and (tmp_path / "one" / "hold-curves.png").is_file(), one.stderr

    import fdbu

    frame = fdbu.score(str(tmp_path / "A"), write=False, hold={"window_s": 0.8}).hold()
    assert list(frame["line"]) == ["late_reply_rate"] and list(frame["n"]) == [entry["hold"]["n"]]
    swept = fdbu_main("sweep", f"tree={tmp_path / 'A'}", "progress=false")
    assert swept.returncode == 2 and "to sweep" in swept.stderr  # no speech detection: nothing to sweep


def test_a_grouped_config_is_found_by_its_name_and_a_group_key_must_be_free(made_up_family):
    """score's config has a field per family's group registered now; a job pickled with it unpickles by its name
    (made again on demand), and a group whose key is a config key is refused naming it."""
    import pickle

    from fdbu.config import store as config
    from made_up_family import FAMILY, GROUP

    cls = config.CONFIGS["score"]
    assert {"hold", "overlap", "fdbench"} <= {f.name for f in dataclasses.fields(cls)}
    assert {"overlap", "fdbench"} <= {f.name for f in dataclasses.fields(config.ScoreConfig)}
    data = pickle.dumps(cls(tree="t"))
    vars(config).pop(cls.__name__)  # as in a process where the module was imported before the family registered
    assert pickle.loads(data).hold == cls(tree="t").hold
    with pytest.raises(AttributeError, match="no attribute 'ScoreConfig__nothing'"):
        config.ScoreConfig__nothing  # noqa: B018
    tasks.register_family(dataclasses.replace(FAMILY, name="vY", settings=dataclasses.replace(GROUP, key="vad"),
                                              subsets=()))
    try:
        with pytest.raises(ValueError, match="fdbu score: the settings group 'vad' is taken"):
            config.CONFIGS["score"]
    finally:
        tasks.unregister_family("vY")
