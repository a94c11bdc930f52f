"""Full-Duplex-Bench v2's official scripts, unchanged, against fdbu's re-implementation (issue 52): score.py and
score_time.py on the same processed judge files, and asr_batch.py's combine_transcripts on the same A.json/B.json."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from fdbu.families.v2.judge_scores import csv_cell, judge_scores
from official_scripts import OFFICIAL_V2, needs_official_v2


def _judge_doc(rng, *, messy: bool) -> dict:
    """A processed judge output: events on random windows with scores 1-5 (as ints or floats); `messy` adds what
    the two scripts read differently (string scores, reversed windows, short items, a missing task score)."""
    events = []
    t = float(rng.uniform(0, 5))
    for _ in range(int(rng.integers(0, 9))):
        end = round(t + float(rng.uniform(0.5, 25)), 2)
        tt, if_ = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        events.append([[round(t, 2), end], tt if rng.random() < 0.7 else float(tt) + 0.5, if_])
        t = end + float(rng.uniform(0, 8))
    if messy:
        events += [[[3.0, 1.0], 4, 4], [[1.0, 2.0], "5", 3], [[1.0, 2.0], 3], "text", [[130.0, 140.0], 2, 2]]
    doc: dict = {"Turn-taking event and score": events}
    if rng.random() < 0.85:
        doc["Task-specific score"] = int(rng.integers(1, 6)) if rng.random() < 0.8 else 2.5
    return doc


def _run(script: str, root, cwd) -> None:
    out = subprocess.run([sys.executable, str(OFFICIAL_V2 / "scoring" / script), "--root_dir", str(root)], cwd=cwd,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def _csv(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@needs_official_v2
@pytest.mark.parametrize("messy", [False, True])
def test_score_and_score_time_equal_fdbus_rows(tmp_path, messy):
    rng = np.random.default_rng(7)
    judged = {}
    root = tmp_path / "eval_results"
    for split in ("Daily", "Correction", "EntityTracking", "Safety"):
        (root / split).mkdir(parents=True)
        for i in range(6):
            task = f"{split}.t.{i:03d}"
            doc = _judge_doc(rng, messy=messy and i % 2 == 0)
            (root / split / f"{task}_processed.json").write_text(json.dumps(doc, indent=2))
            judged[(split, task)] = [doc]
    ours = judge_scores(judged)
    for script in ("score.py", "score_time.py"):  # each in its own folder: score_time.py writes judge_summary.csv too
        (tmp_path / script).mkdir()
        _run(script, root, tmp_path / script)
        for csv_name, table in ours[script].items():
            theirs = _csv(tmp_path / script / csv_name)
            assert theirs[0] == table["header"]
            assert theirs[1:] == [[csv_cell(x) for x in row] for row in table["rows"]], (script, csv_name)
            assert len(theirs) == 25
    # the two judge_summary.csv are equal where every event is one fdbu's reader takes, and differ where not
    assert (ours["score.py"]["judge_summary.csv"] == ours["score_time.py"]["judge_summary.csv"]) is not messy


@needs_official_v2
def test_on_events_fdbu_refuses_the_two_scripts_count_differently(tmp_path):
    """What the docstring says of the scripts, checked on them: score.py counts an event with a reversed window and
    score_time.py does not; a string score counts in score_time.py's first pass only."""
    root = tmp_path / "r"
    (root / "Daily").mkdir(parents=True)
    doc = {"Turn-taking event and score": [[[3.0, 1.0], 4, 4], [[1.0, 2.0], "5", 3], [[1.0, 2.0], 2, 2]],
           "Task-specific score": 3}
    (root / "Daily" / "Daily.x.001_processed.json").write_text(json.dumps(doc))
    _run("score.py", root, tmp_path)
    plain = _csv(tmp_path / "judge_summary.csv")
    _run("score_time.py", root, tmp_path)  # after score.py, as upstream's README runs them: it replaces that file
    timed, binned = _csv(tmp_path / "judge_summary.csv"), _csv(tmp_path / "judge_summary_binned.csv")
    ours = judge_scores({("Daily", "Daily.x.001"): [doc]})
    assert plain[1][3:5] == ["2", "3.0"] and timed[1][3:5] == ["2", "3.5"]  # the reversed window / the string "5"
    assert plain[1] == [csv_cell(x) for x in ours["score.py"]["judge_summary.csv"]["rows"][0]]
    assert timed[1] == [csv_cell(x) for x in ours["score_time.py"]["judge_summary.csv"]["rows"][0]]
    assert binned[1] == [csv_cell(x) for x in ours["score_time.py"]["judge_summary_binned.csv"]["rows"][0]]
    assert binned[1][4] == "2.0"  # the string-scored event adds to no bin


def _asr_batch():
    """The unchanged eval/asr_batch.py as a module, its NeMo import answered by an empty module (combine_transcripts
    and what it calls use no NeMo): the script's own code, not a copy."""
    import importlib.util
    import types

    saved = {k: sys.modules.get(k) for k in ("nemo", "nemo.collections", "nemo.collections.asr")}
    for k in saved:
        sys.modules[k] = types.ModuleType(k)
    sys.modules["nemo"].collections = sys.modules["nemo.collections"]  # type: ignore[attr-defined]
    sys.modules["nemo.collections"].asr = sys.modules["nemo.collections.asr"]  # type: ignore[attr-defined]
    try:
        spec = importlib.util.spec_from_file_location("asr_batch_v2", OFFICIAL_V2 / "eval" / "asr_batch.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def _words(rng, t: float, until: float) -> list[dict]:
    out = []
    while t < until:
        d = round(float(rng.uniform(0.1, 0.6)), 2)
        out.append({"text": f"w{len(out)}", "timestamp": [round(t, 2), round(t + d, 2)]})
        t += d + float(rng.choice([0.05, 0.3, 1.2, 1.25, 2.0]))  # gaps at and around the 1.2 s threshold
    return out


@needs_official_v2
@pytest.mark.parametrize("max_time", [60.0, 120.0])
def test_combine_transcripts_byte_for_byte(tmp_path, max_time):
    from fdbu.families.v2.files import combine_transcripts

    script = _asr_batch()
    rng = np.random.default_rng(3)
    for k in range(20):
        a = {"text": "", "chunks": _words(rng, float(rng.uniform(0, 2)), 130)}
        b = {"text": "", "chunks": _words(rng, float(rng.uniform(0, 2)), 130) if k % 5 else []}
        if k % 4 == 0 and b["chunks"]:  # a tie between the channels' sentence starts: A's first
            b["chunks"][0]["timestamp"][0] = a["chunks"][0]["timestamp"][0]
        (tmp_path / "A.json").write_text(json.dumps(a, indent=4))
        (tmp_path / "B.json").write_text(json.dumps(b, indent=4))
        theirs = script.combine_transcripts(str(tmp_path / "A.json"), str(tmp_path / "B.json"), max_time=max_time)
        ours = combine_transcripts(a, b, max_time=max_time)
        assert json.dumps(ours, indent=2) == json.dumps(theirs, indent=2), k
        assert ours  # something was combined


@needs_official_v2
@pytest.mark.slow
def test_run_official_runs_score_py_and_score_time_py_unchanged_and_compares_every_row(tmp_path, monkeypatch):
    """`fdbu evaluate evaluate.run_official=true` on a v2 tree: the pinned scripts themselves (no allow_unpinned),
    offline, on the tree's judge files laid out as upstream's eval_results; every CSV they write equals fdbu's
    rows: agreed, exit 0. A reference column off by 0.001 in one row: differs, exit 3, naming the file."""
    from builders import fdbu_main
    from fdbu.families.v2 import judge_scores as js

    monkeypatch.chdir(tmp_path)
    for line in ("synth out=run family=v2 layout=official n=2 system=attentive",
                 "export dataset=run export.transcripts=adopt export.judge=run/eval_results out=tree"):
        out = fdbu_main(*line.split())
        assert out.returncode == 0, out.stderr
    run = ("evaluate", "tree=tree", f"evaluate.official_checkout={OFFICIAL_V2}", "evaluate.run_official=true")
    out = fdbu_main(*run)
    assert out.returncode == 0, out.stderr
    runs = json.loads((tmp_path / "tree/summary.json").read_text())["official_run"]
    assert set(runs["subsets"]) == {"v2_daily", "v2_correction", "v2_entity_tracking", "v2_safety"}
    for record in runs["subsets"].values():
        assert record["status"] == "agreed" and len(record["numbers"]) == 3, record
        assert all(n["official"] == "2 rows" for n in record["numbers"].values())
    assert all(f["pinned"] for f in runs["files"].values()) and set(runs["files"]) == {"scoring/score.py",
                                                                                       "scoring/score_time.py"}
    real = js.summary_row
    monkeypatch.setattr(js, "summary_row", lambda *a: [*real(*a)[:4], real(*a)[4] + 0.001, *real(*a)[5:]])
    out = fdbu_main(*run)
    assert out.returncode == 3
    assert "official scoring/score.py and scoring/score_time.py on v2_daily: differs" in out.stdout + out.stderr
    printed = out.stdout + out.stderr
    theirs, ours = re.search(r"score.py's judge_summary.csv official (\S+), fdbu \"(\S+)\"", printed).groups()
    assert theirs.split(",")[:4] == ours.split(",")[:4] and float(ours.split(",")[4]) == pytest.approx(
        float(theirs.split(",")[4]) + 0.001)  # the row that differs, both sides


@needs_official_v2
@pytest.mark.slow
def test_the_judge_runs_eval_single_item_unchanged_when_given_a_key(tmp_path, monkeypatch):
    """v2's judge (eval/eval_single_item.py, Gemini) runs only with a key: without one, one line naming the variable
    and nothing written; with one, the pinned script itself per session against the stub's generateContent on
    loopback (its requests sent to evaluate.judge.base_url), parse.py over its answers (the first fenced in ```json),
    and the reference column made from them, which score.py and score_time.py themselves agree with. The key reaches
    the endpoint and no file; a session whose task has no staged goals is named, not judged."""
    from builders import fdbu_main
    from fdbu.official.stub_judge import StubJudge

    monkeypatch.chdir(tmp_path)
    for line in ("synth out=run family=v2 layout=official n=2 system=attentive",
                 "export dataset=run export.transcripts=adopt out=tree"):
        out = fdbu_main(*line.split())
        assert out.returncode == 0, out.stderr
    tasks = [f"{split}.synthetic.{i:03d}" for split in ("Daily", "Correction", "EntityTracking", "Safety")
             for i in (1, 2)]
    goals = {f"T{k}": f"goal {k}" for k in range(1, 5)}
    blocked = {**goals, "T1": StubJudge.NO_ANSWER}  # the stub answers this task's prompt as a safety block does
    (tmp_path / "staged.json").write_text(json.dumps({"tasks": [
        {"id": t, "staged_reveal": blocked if t == "Correction.synthetic.002" else goals}
        for t in tasks if t != "Safety.synthetic.002"]}))
    monkeypatch.delenv("FDBU_TEST_GEMINI_KEY", raising=False)
    out = fdbu_main("evaluate", "tree=tree", f"evaluate.judge.staged_files=[{tmp_path / 'staged.json'}]")
    assert out.returncode == 2 and "evaluate.judge.staged_files is read only by a judge" in out.stderr  # not ignored
    with StubJudge() as stub:
        run = ("evaluate", "tree=tree", f"evaluate.official_checkout={OFFICIAL_V2}", f"evaluate.judge.base_url={stub.root}",
               "evaluate.judge.model=gemini-2.5-pro", "evaluate.judge.api_key_env=FDBU_TEST_GEMINI_KEY",
               f"evaluate.judge.staged_files=[{tmp_path / 'staged.json'}]", "evaluate.run_official=true")
        out = fdbu_main(*run)
        assert out.returncode == 2 and "$FDBU_TEST_GEMINI_KEY is not set" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and not (tmp_path / "tree/summary.json").exists()
        assert stub.requests == 0
        for bad in ("fdbu-test-key-7f3a\r", "fdbu-test- key-7f3a"):  # a .env file with CRLF line ends; a space inside
            monkeypatch.setenv("FDBU_TEST_GEMINI_KEY", bad)
            out = fdbu_main(*run)
            assert out.returncode == 2 and "holds whitespace or a control character" in out.stderr, out.stderr
            assert "key-7f3a" not in out.stderr and stub.requests == 0
        monkeypatch.setenv("FDBU_TEST_GEMINI_KEY", "fdbu-test-key-7f3a")
        # the request limits fdbu's own judges honour, refused where only the script sends (issue 76)
        for setting, said in (("timeout_s=3.0", "waits 120 s for each reply"), ("max_attempts=2", "5 times")):
            out = fdbu_main(*run, f"evaluate.judge.{setting}")
            assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
            assert f"evaluate.judge.{setting} is not read by the v2 judge" in out.stderr and said in out.stderr
            assert stub.requests == 0
        out = fdbu_main(*[a if not a.startswith("evaluate.judge.model=") else
                          f"evaluate.judge.model={StubJudge.UNKNOWN_MODEL}" for a in run])
        assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert "the judge answered none of v2_daily's 2 sessions" in out.stderr and "Gemini API returned 404" in \
            out.stderr and "is not found" in out.stderr and not (tmp_path / "tree/summary.json").exists()
        requests_before = stub.requests
        out = fdbu_main(*run)
        assert out.returncode == 0, out.stderr
        assert stub.keys == {"fdbu-test-key-7f3a"} and stub.requests - requests_before == 7  # a session with goals
        one_by_one, ledger_one = ((tmp_path / "tree" / n).read_bytes() for n in ("summary.json", "judge-ledger.jsonl"))
        again = fdbu_main(*run, "evaluate.judge.workers=4")  # four sessions at once: the same file, in the same order
        assert again.returncode == 0, again.stderr
        assert (tmp_path / "tree/summary.json").read_bytes() == one_by_one
        assert [json.loads(x)["session"] for x in (tmp_path / "tree/judge-ledger.jsonl").read_text().splitlines()] == \
            [json.loads(x)["session"] for x in ledger_one.decode().splitlines()]
        (tmp_path / "tree/judge-ledger.jsonl").write_bytes(ledger_one)
    for name in ("summary.json", "judge-ledger.jsonl"):
        assert "fdbu-test-key-7f3a" not in (tmp_path / "tree" / name).read_text()
    summary = json.loads((tmp_path / "tree/summary.json").read_text())
    assert summary["judge"]["official_file"]["eval/eval_single_item.py"] == "90fc9a97c75ba0e71d04a5fd19099d02fb01ceb3" \
                                                                           "e601472e4f94539aaa6f662c"
    for subset, entry in summary["subsets"].items():
        run_ = entry["judge_run"]
        assert entry["judged"] == len(run_["processed"]) == (1 if subset in ("v2_safety", "v2_correction") else 2)
        for doc in run_["processed"].values():  # the stub's events, on the system's segments, through parse.py
            events = doc["Turn-taking event and score"]
            assert events and all(1 <= tt <= 5 and 1 <= if_ <= 5 and s < e for (s, e), tt, if_ in events)
    failed = summary["subsets"]["v2_safety"]["judge_run"]["failed"]
    assert list(failed) == ["Safety.synthetic.002"] and "not found in staged files" in failed["Safety.synthetic.002"]
    assert "Safety.synthetic.002: not judged: eval_single_item.py failed: FileNotFoundError" in out.stdout + out.stderr
    assert "the judge's answer is empty" in summary["subsets"]["v2_correction"]["judge_run"]["failed"][
        "Correction.synthetic.002"]  # a safety block is not a judged session with no events
    # score.py and score_time.py themselves, on the judge's answers: every row fdbu's
    assert {r["status"] for r in summary["official_run"]["subsets"].values()} == {"agreed"}
    # the answers beside the timing: export again with the summary.json as the judge's outputs, then score
    for line in ("export dataset=run export.transcripts=adopt export.judge=tree/summary.json out=judged",
                 "score tree=judged"):
        done = fdbu_main(*line.split())
        assert done.returncode == 0, done.stderr
        if line.startswith("export"):  # the two sessions the judge did not answer, said
            assert "2 of 8 sessions have no judge answer in export.judge" in done.stdout and \
                "v2_correction/Correction.synthetic.002" in done.stdout, done.stdout
    # the answers are checked against what they were made on: another run's sessions under the same task ids (here
    # one sample of one system track changed: the same length, so every answer still fits its session) are refused,
    # naming the session and the file, and nothing is written
    import shutil

    shutil.copytree(tmp_path / "run", tmp_path / "other")
    track = next((tmp_path / "other").glob("*/Daily.synthetic.001/B.wav"))
    data = bytearray(track.read_bytes())
    data[-2:] = bytes([data[-2] ^ 1, data[-1]])
    track.write_bytes(bytes(data))
    (track.parent / "combined.wav").unlink(missing_ok=True)  # optional; would be refused as not A.wav and B.wav
    out = fdbu_main(*"export dataset=other export.transcripts=adopt export.judge=tree/summary.json out=mixed "
                     "progress=false".split())
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.startswith("fdbu: error: Daily/Daily.synthetic.001: B.wav: is not the B.wav the judge's "
                                 "answer in tree/summary.json was made on"), out.stderr
    assert not (tmp_path / "mixed").exists() and not list(tmp_path.glob(".mixed*"))
    # the same tracks with another examiner transcript (one word changed): adopted, it is not what the judge read
    shutil.copytree(tmp_path / "run", tmp_path / "retold")
    transcript = next((tmp_path / "retold").glob("*/Daily.synthetic.001/A.json"))
    doc = json.loads(transcript.read_text())
    doc["chunks"][0]["text"] += "s"
    transcript.write_text(json.dumps(doc))
    out = fdbu_main(*"export dataset=retold export.transcripts=adopt export.judge=tree/summary.json out=mixed "
                     "progress=false".split())
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert out.stderr.startswith("fdbu: error: Daily/Daily.synthetic.001: A.json: as adopted is not the transcript the "
                                 "judge read"), out.stderr
    assert fdbu_main(*"export dataset=retold export.judge=tree/summary.json out=tracks-only "
                     "progress=false".split()).returncode == 0  # without adopt: the tracks are checked, and agree
    older = json.loads((tmp_path / "tree/summary.json").read_text())  # as an fdbu that did not record it wrote it
    for entry in older["subsets"].values():
        del entry["judge_run"]["made_on"]
    (tmp_path / "older.json").write_text(json.dumps(older))
    out = fdbu_main(*"export dataset=run export.judge=older.json out=nope".split())
    assert out.returncode == 2 and "does not say what the judge's answer for" in out.stderr and \
        "run fdbu evaluate with the judge" in out.stderr, out.stderr
    renamed = json.loads((tmp_path / "tree/summary.json").read_text())  # a split named as upstream's folder is not
    entry = renamed["subsets"]["v2_daily"]["judge_run"]
    entry["processed"] = {k.replace("Daily/", "daily/"): v for k, v in entry["processed"].items()}
    (tmp_path / "renamed.json").write_text(json.dumps(renamed))
    out = fdbu_main(*"export dataset=run export.judge=renamed.json out=nope".split())
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and \
        "names a session 'daily/Daily.synthetic.001' that is not <split>/<task id>" in out.stderr, out.stderr
    judged = json.loads((tmp_path / "judged/unified.json").read_text())
    answers = {k: v for e in summary["subsets"].values() for k, v in e["judge_run"]["processed"].items()}
    for key, answer in answers.items():
        split, task = key.split("/")
        session = json.loads(next((tmp_path / "judged").glob(f"*/{task}/session.json")).read_text())
        assert session["judged"] and [[s, e, tt, if_] for (s, e), tt, if_ in answer[
            "Turn-taking event and score"]] == session["judge"]["events"], key
    assert all("judge" in e for e in judged["subsets"].values())
    out = fdbu_main("export", "dataset=run", "export.judge=staged.json", "out=nope")
    assert out.returncode == 2 and "is neither a folder of judge outputs nor a summary.json" in out.stderr
    ledger = [json.loads(line) for line in (tmp_path / "tree/judge-ledger.jsonl").read_text().splitlines()]
    assert len(ledger) == 7 and all(e["status"] == 200 and e["url"].startswith(stub.root) for e in ledger)
    assert sum(e["reply"].count("```json") for e in ledger) == 6  # each first answer fenced; the script strips it
