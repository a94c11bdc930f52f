"""The task registry and the declared metric tables: one place per subset, one place per metric."""
import json

import numpy as np
import pytest

from fdbu import tasks
from fdbu.asr.stage import _jobs
from fdbu.evaluate import evaluate
from fdbu.metrics.table import KINDS, declared
from fdbu.plot import latency_curves
from fdbu.unified import write
from fdbu.pipeline import score_path
from fdbu.synth import synthesize
from fdbu.vad import SpeechDetector


@pytest.fixture()
def made_up():
    """Two subsets that exist nowhere but here: copies of the turn-taking and interruption tasks."""
    added = [tasks.Subset("my_turn_taking", tasks.TURN_TAKING, 40),
             tasks.Subset("my_user_interruption", tasks.USER_INTERRUPTION, 30)]
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
    assert set(unified["subsets"]) == set(tasks.scored())
    for name, entry in unified["subsets"].items():
        table = tasks.subset(name).task.metrics.METRICS
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
    interruption = declared(tasks.USER_INTERRUPTION.metrics.METRICS)
    assert interruption["exercised_rate"]["unknown"] == "ineligible samples"
    assert interruption["restart_rate"]["unknown"] == "ineligible samples and eligible samples not exercised"


def test_a_subset_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="already registered"):
        tasks.register(tasks.Subset("candor_turn_taking", tasks.TURN_TAKING, 1))
    assert np.all([s.task.name in tasks.TASKS for s in tasks.SUBSETS.values()])
