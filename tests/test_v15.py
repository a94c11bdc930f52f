"""Full-Duplex-Bench v1.5 in the tree: the four overlap subsets registered, synthesized with both runs and real
synthetic user speech, read and checked, and scored by the official timing script's rule (fdbu evaluate), with
the script itself run unchanged and offline beside it; fdbu score says plainly what it does not compute yet."""
import hashlib
import json

import numpy as np
import pytest
import soundfile as sf

from builders import fdbu_main, needs_nemo
from fdbu import tasks
from fdbu.errors import FdbuError
from fdbu.version import DEFINITIONS_VERSION
from fdbu.tree.readers import read_event
from fdbu.synth import V15_SYSTEMS, bank, synthesize
from fdbu.vad.silero import SileroVAD
from official_scripts import OFFICIAL_V15, needs_official_v15

V15 = ("user_interruption", "user_backchannel", "talking_to_other", "background_speech")


def test_the_v15_subsets_are_registered_as_one_family():
    assert [s for s, sub in tasks.SUBSETS.items() if sub.family == "v1.5"] == list(V15)
    assert tasks.release_sizes("v1.5") == {"user_interruption": 200, "user_backchannel": 99, "talking_to_other": 100,
                                           "background_speech": 100}
    assert list(tasks.release_sizes("v1.0")) == ["synthetic_pause_handling", "candor_pause_handling",
                                                 "candor_turn_taking", "synthetic_user_interruption", "icc_backchannel"]
    task = tasks.subset("user_interruption").task
    assert task.annotation == "metadata.json" and task.scored and task.official.script == "get_timing.py"
    assert task.detected == ("output.wav", "clean_output.wav")
    assert set(task.transcribed) == {"output.wav", "clean_output.wav", "input.wav", "clean_input.wav"}


@pytest.mark.parametrize("doc,problem", [
    ({"timestamps": [7.275, 11.467]}, None),
    ({"timestamps": [0, 0]}, None),
    ({"timestamps": [3.0, 20.0]}, "the event's end 20.000000 s lies outside the window [0, 12.000000] s"),
    ({"timestamps": [5.0, 4.0]}, "the event starts at 5.000000 s, after its end 4.000000 s"),
    ({"timestamps": [-1, 4.0]}, "the event's start -1.000000 s lies outside the window"),
    ({"timestamps": [1.0]}, "has no two-element 'timestamps' list"),
    ({"context_text": "x"}, "has no two-element 'timestamps' list"),
    ({"timestamps": [1.0, "2"]}, "the event's end (timestamps[1])"),
])
def test_metadata_json_is_read_into_microseconds_and_checked(doc, problem):
    data = json.dumps(doc).encode()
    if problem is None:
        start, end = read_event(data, "user_interruption/0", 12_000_000)["event_us"]
        assert (start, end) == tuple(round(t * 1e6) for t in doc["timestamps"])
        return
    with pytest.raises(FdbuError, match=None) as e:
        read_event(data, "user_interruption/0", 12_000_000)
    assert str(e.value).startswith("user_interruption/0: metadata.json: ") and problem in str(e.value), str(e.value)


@pytest.fixture(scope="module")
def v15_tree(tmp_path_factory):
    return synthesize(tmp_path_factory.mktemp("v15") / "tree", n=3, seed=1, family="v1.5", ineligible=0.1)


@pytest.mark.slow
def test_videofdb_continue_speaking_on_the_v15_subsets(v15_tree, tmp_path):
    """Issue 53: on a v1.5 tree VideoFDB's continue-speaking is computed on user_backchannel and background_speech
    (with n and its interval), and TOR-Alignment names the classes and subsets it pools."""
    out = fdbu_main("score", f"tree={v15_tree}", "views=[videofdb]", f"out={tmp_path / 's'}", "progress=false")
    assert out.returncode == 0, out.stderr
    view = json.loads((tmp_path / "s" / "unified.json").read_text())["views"]["videofdb"]
    assert list(view["subsets"]) == ["user_backchannel", "background_speech"]
    for subset, entry in view["subsets"].items():
        m = entry["metrics"]["continue_speaking_rate"]
        assert m["n"] == entry["counts"]["eligible"] > 0 and len(m["interval"]) == 2, subset
        assert f"VideoFDB on {subset}: eligible" in out.stdout
    assert view["pooled"]["TOR_alignment"]["over"] == ["user_backchannel", "background_speech"]
    assert "VideoFDB pooled over continue-speaking (user_backchannel, background_speech):" in out.stdout
    assert "continue_speaking_rate      higher" in out.stdout


@pytest.mark.slow
def test_synth_builds_both_runs_with_real_user_speech(v15_tree):
    manifest = json.loads((v15_tree / "manifest.json").read_text())
    truth = json.loads((v15_tree / "synth.json").read_text())["samples"]
    assert manifest["declared"] == {s: 3 for s in V15}
    vad = SileroVAD()
    longest = max(len(clip) for clip in bank()[1]) / 16000
    checked = 0
    for row in manifest["samples"]:
        if not row["eligible"]:
            continue
        folder = v15_tree / row["sample_id"]
        assert set(row["files"]) == {"output.wav", "clean_output.wav", "input.wav", "clean_input.wav", "metadata.json"}
        n = row["input_samples"]
        assert row["clean_input_samples"] == n == sf.info(folder / "clean_output.wav").frames
        intended = truth[row["sample_id"]]["intended"]
        o_s, o_e = json.loads((folder / "metadata.json").read_text())["timestamps"]
        assert intended["event"] == [o_s, o_e] and intended["behaviour"] in V15_SYSTEMS
        # the user speaks in both inputs; only input.wav has speech at the event
        user = [(a / 16000, b / 16000) for a, b in vad.segment_samples(sf.read(folder / "input.wav", dtype="float32")[0])]
        clean = [(a / 16000, b / 16000) for a, b in vad.segment_samples(sf.read(folder / "clean_input.wav",
                                                                                   dtype="float32")[0])]
        assert user and clean
        mid = (o_s + o_e) / 2
        assert any(a <= mid <= b for a, b in user) and not any(a <= mid <= b for a, b in clean), row["sample_id"]
        # the event run stops where the behaviour says, the clean run as built
        stop = intended["event_run_stop_s"]
        if intended["behaviour"] in ("yields", "same_stop", "clean_silent"):
            # cut after the word running at o_s + u, u <= 0.3 s: it starts by then and lasts at most the bank's
            # longest word; times are rounded to 1 ms (synth is numpy's PCG64: the same samples on every machine)
            assert o_s <= stop <= o_s + 0.3 + longest + 0.001, (row["sample_id"], o_s, stop)
        if intended["behaviour"] == "same_stop":
            assert (folder / "output.wav").read_bytes() == (folder / "clean_output.wav").read_bytes()
        if intended["behaviour"] == "clean_silent":
            assert not np.any(sf.read(folder / "clean_output.wav", dtype="int16")[0])
        checked += 1
    assert checked >= 9
    asr = json.loads((v15_tree / "asr.json").read_text())["subsets"]["user_interruption"]
    assert set(asr["other_transcripts"]) == {"clean_output.json", "input.json", "clean_input.json"}


@pytest.mark.slow
def test_the_default_family_is_v10_and_a_system_of_the_other_family_is_refused(tmp_path):
    tree = synthesize(tmp_path / "v10", n=1, seed=0)
    assert set(json.loads((tree / "manifest.json").read_text())["declared"]) == set(tasks.release_sizes("v1.0"))
    out = fdbu_main("synth", f"out={tmp_path / 'x'}", "system=yields")
    assert out.returncode == 2 and "system='yields' is a Full-Duplex-Bench v1.5 system" in out.stderr, out.stderr
    out = fdbu_main("synth", f"out={tmp_path / 'y'}", "family=v1.5", "system=prompt")
    assert out.returncode == 2 and "system='prompt' is a Full-Duplex-Bench v1.0 system" in out.stderr, out.stderr
    out = fdbu_main("synth", f"out={tmp_path / 'z'}", "family=v3")
    assert out.returncode == 2 and "family='v3': choose v1.0 or v1.5 or v2" in out.stderr, out.stderr


def test_score_says_plainly_what_it_does_not_compute(tmp_path):
    only = synthesize(tmp_path / "only", n={"icc_backchannel": 2}, seed=0, ineligible=0.0)
    out = fdbu_main("score", f"tree={only}", "progress=false")
    assert out.returncode == 2 and "holds no subset with unified metrics" in out.stderr
    assert "icc_backchannel: the spec defines no unified metric for it" in out.stderr and \
        f"fdbu evaluate tree={only}" in out.stderr
    both = synthesize(tmp_path / "both", n={"candor_turn_taking": 2, "icc_backchannel": 2}, seed=0, ineligible=0.0)
    out = fdbu_main("score", f"tree={both}", "progress=false", "vad.threads=1")
    assert out.returncode == 0, out.stderr
    assert "not scored: icc_backchannel (the spec defines no unified metric" in out.stdout
    unified = json.loads((both / "unified.json").read_text())
    assert list(unified["subsets"]) == ["candor_turn_taking"]
    assert unified["definitions"] == DEFINITIONS_VERSION and "overlap" not in unified  # a v1.0 tree's header


@pytest.mark.slow
def test_get_timings_lists_by_the_batched_path_equal_the_reference_paths(v15_tree, tmp_path, calibrated):
    """Issue 58, item 3: fdbu evaluate on v1.5 segmented every input.wav and output.wav on the reference path, one
    file at a time (most of its 17.7 s); it now takes the batched path under its guard, with the cache. The lists
    are the reference path's, byte for byte (and get_timing.py itself agrees with fdbu on the docs' v1.5 tree:
    test_readme's v1.5 section)."""
    from fdbu.common.atomic import dumps
    from fdbu.official.evaluate import evaluate

    reference = evaluate(v15_tree)
    batched = evaluate(v15_tree, probs_cache=tmp_path / "cache")
    assert dumps(batched) == dumps(reference)
    assert any(reference["subsets"][s]["with_stop_interval"] for s in V15)  # lists that say something
    assert any((tmp_path / "cache").rglob("*"))  # computed once, kept: the next evaluate reads them


def test_a_changed_v15_file_is_refused_naming_it(v15_tree, tmp_path):
    import shutil

    tree = tmp_path / "t"
    shutil.copytree(v15_tree, tree)
    row = next(r for r in json.loads((tree / "manifest.json").read_text())["samples"] if r["eligible"])
    (tree / row["sample_id"] / "input.wav").write_bytes((tree / row["sample_id"] / "clean_input.wav").read_bytes())
    out = fdbu_main("evaluate", f"tree={tree}")
    assert out.returncode == 2
    assert out.stderr.startswith(f"fdbu: error: {row['sample_id']}: input.wav: SHA-256 ") and \
        "differs from manifest.json" in out.stderr, out.stderr


def v15_roots(folders) -> str:
    return "export.roots={" + ", ".join(f"{s}: {folders}/{s}" for s in V15) + "}"


@pytest.fixture(scope="module")
def official_v15(tmp_path_factory):
    """Synthetic v1.5 samples in the official layout: each folder with both inputs, both runs and the four
    transcripts a user of the official pipeline has."""
    return synthesize(tmp_path_factory.mktemp("off15") / "folders", n=3, seed=2, family="v1.5", ineligible=0.0,
                      layout="official")


# official folders exported with adopt, then evaluate with get_timing.py itself agreeing byte for byte: the v1.5
# block of the docs runs exactly that (tests/test_readme.py::test_the_v15_section_runs_as_written)


def test_export_reads_metadata_json_as_score_does_and_names_a_fifo_for_what_it_is(official_v15, tmp_path):
    """Issue 55, item 5: a metadata.json score would refuse is refused at export (it was copied and the sample
    called eligible), while the folder can still be fixed; a FIFO in place of clean_output.wav is said to be one
    (it was reported as missing)."""
    import os
    import shutil

    folders = tmp_path / "folders"
    shutil.copytree(official_v15, folders)
    ui = folders / "user_interruption"
    meta = json.loads((ui / "1" / "metadata.json").read_text())
    meta["timestamps"] = meta["timestamps"][::-1]
    (ui / "1" / "metadata.json").write_text(json.dumps(meta))
    out = fdbu_main("export", f"export.roots={{user_interruption: {ui}}}", f"out={tmp_path / 'bad'}", "progress=false")
    assert out.returncode == 2 and out.stderr.startswith("fdbu: error: user_interruption/1: metadata.json: the event "
                                                         "starts at "), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()
    shutil.copy(official_v15 / "user_interruption" / "1" / "metadata.json", ui / "1" / "metadata.json")
    (ui / "2" / "clean_output.wav").unlink()
    os.mkfifo(ui / "2" / "clean_output.wav")
    out = fdbu_main("export", f"export.roots={{user_interruption: {ui}}}", f"out={tmp_path / 'tree'}", "progress=false")
    assert out.returncode == 0, out.stderr
    rows = {r["sample_id"]: r for r in json.loads((tmp_path / "tree" / "manifest.json").read_text())["samples"]}
    assert rows["user_interruption/2"]["reasons"] == ["clean_output.wav is a FIFO (named pipe), not a file"]
    assert rows["user_interruption/1"]["eligible"]


@pytest.mark.slow
@needs_official_v15
def test_official_folders_export_then_fdbu_asr_writes_the_four_transcripts(official_v15, tmp_path, built):
    """Without adopt: fdbu asr transcribes output.wav, clean_output.wav, input.wav and clean_input.wav of every
    sample (uncut), resumably, and asr.json says so; evaluate runs on the result."""
    needs_nemo()
    tree = tmp_path / "tree"
    assert fdbu_main("export", v15_roots(official_v15), f"out={tree}", "progress=false").returncode == 0
    args = [f"asr.checkpoint={built('rnnt')[0]}", f"cache_dir={tmp_path / 'cache'}", "asr.batch_size=4",
            "progress=false", "device=cpu"]
    out = fdbu_main("asr", f"tree={tree}", *args)
    assert out.returncode == 0, out.stderr
    assert "48 transcribed" in out.stdout  # 12 samples x 4 files
    asr = json.loads((tree / "asr.json").read_text())
    for subset in V15:
        entry = asr["subsets"][subset]
        assert entry["cut"].startswith("none: v1.5 has no cut point") and len(entry["transcripts"]) == 3
        for file, by in entry["other_transcripts"].items():
            for name, digest in by.items():
                doc = (tree / subset / name / file).read_bytes()
                assert hashlib.sha256(doc).hexdigest() == digest and set(json.loads(doc)) == {"text", "chunks"}
    again = fdbu_main("asr", f"tree={tree}", *args, "asr.resume=true")
    assert again.returncode == 0 and "48 kept" in again.stdout, again.stdout + again.stderr
    assert json.loads((tree / "asr.json").read_text()) == asr
    # the reference column reads the four transcripts (the official timing script reads only the audio, the same as
    # the adopted tree's, where test_official_folders_export_adopt_evaluate_... runs it)
    out = fdbu_main("evaluate", f"tree={tree}")
    assert out.returncode == 0 and out.stdout.count("get_timing.py on 3 samples") == 4, out.stdout


def test_each_run_is_fitted_to_its_own_input(official_v15, tmp_path):
    """export.length applies to the clean run too: 20 ms short is padded (recorded), 2 s short or missing makes the
    sample ineligible with a reason naming clean_output.wav; a missing clean_output.json under adopt is refused."""
    import shutil

    folders = tmp_path / "folders"
    shutil.copytree(official_v15, folders)
    ui = folders / "user_interruption"
    for name, cut in (("0", 320), ("1", 32000)):
        audio, sr = sf.read(ui / name / "clean_output.wav", dtype="int16")
        sf.write(ui / name / "clean_output.wav", audio[:-cut], sr, subtype="PCM_16")
    (ui / "2" / "clean_output.wav").unlink()
    tree = tmp_path / "tree"
    out = fdbu_main("export", f"export.roots={{user_interruption: {ui}}}", f"out={tree}", "progress=false")
    assert out.returncode == 0, out.stderr
    rows = {r["sample_id"]: r for r in json.loads((tree / "manifest.json").read_text())["samples"]}
    assert rows["user_interruption/0"]["eligible"]
    assert rows["user_interruption/0"]["other_length_fit"] == {"clean_output.wav": {"action": "padded", "samples": 320}}
    assert sf.info(tree / "user_interruption/0/clean_output.wav").frames == rows["user_interruption/0"][
        "clean_input_samples"]
    assert rows["user_interruption/1"]["reasons"] == ["clean_output.wav is shorter than its input by more than 80 ms "
                                                      "(export.length=tolerant)"]
    assert rows["user_interruption/2"]["reasons"] == ["clean_output.wav missing"]
    assert "  user_interruption/1: clean_output.wav is 2000.0 ms shorter than its input (" in out.stdout and \
        "export.length=fit pads it with silence (check that it is this sample's capture)" in out.stdout
    (ui / "0" / "clean_output.json").unlink()
    out = fdbu_main("export", f"export.roots={{user_interruption: {ui}}}", "export.transcripts=adopt",
                    f"out={tmp_path / 'adopted'}", "progress=false")
    assert out.returncode == 2 and out.stderr.startswith("fdbu: error: user_interruption/0: clean_output.json: is "
                                                         "missing beside clean_output.wav"), out.stderr
    assert not (tmp_path / "adopted").exists()


@pytest.mark.slow
@needs_official_v15
def test_the_behaviour_judge_tags_every_sample_as_the_script_asks_for_them(v15_tree, tmp_path):
    """With a judge (fdbu's loopback stub), each eligible sample's four transcripts go out as eval_behavior.py sends
    them; a reply without the JSON is asked again with the next seed, as the script does; the tag shares are the
    script's; every request and reply is in the ledger. Without a judge the column says what it needs."""
    import shutil

    from fdbu.official.runner import StubJudge

    tree = tmp_path / "t"
    shutil.copytree(v15_tree, tree)
    with StubJudge() as stub:
        out = fdbu_main("evaluate", f"tree={tree}", f"evaluate.official_checkout={OFFICIAL_V15}",
                        f"evaluate.judge.base_url={stub.url}", "evaluate.judge.model=gpt-4o-2024-08-06")
    assert out.returncode == 0, out.stderr
    summary = json.loads((tree / "summary.json").read_text())
    ledger = [json.loads(line) for line in (tree / "judge-ledger.jsonl").read_text().splitlines()]
    assert summary["judge"]["official_model"] == "gpt-4o-2024-08-06" and summary["judge"]["seed"] == 1
    assert set(summary["judge"]["official_file"]) == {"eval_behavior.py", "instruction/behavior.txt"}
    retried = [e for e in ledger if e["attempt"] == 2]
    assert retried and all(e["request"]["seed"] == 2 for e in retried)
    assert all(e["status"] == "tagged" for e in retried)
    for subset in V15:
        b = summary["subsets"][subset]["behaviour"]
        assert b["judged"] == len(b["tags"]) == sum(b["counts"].values()) and not b["skipped"]
        # at most 4 tags: 4 divisions and 3 additions in IEEE-754 doubles (Python floats, on any CPU) err by
        # at most 7 x 2^-53 < 1e-15 relative, so 1e-12 is a bound, not a measurement
        assert abs(sum(b["shares"].values()) - 1) < 1e-12
        assert b["printed"] == {t: round(v, 2) for t, v in b["shares"].items()}
        for name, result in b["tags"].items():  # the reply the stub gives to exactly these messages
            sent = next(e for e in ledger if e["sample_id"] == f"{subset}/{name}" and e["status"] == "tagged")
            digest = hashlib.sha256(json.dumps(sent["request"]["messages"], sort_keys=True).encode()).digest()
            assert result == {"behaviour": [StubJudge.TAGS[digest[0] % 4]]}
            user = sent["request"]["messages"][1]["content"]
            doc = json.loads((tree / subset / name / "clean_output.json").read_text())
            assert f'"output_clean": {json.dumps(doc, separators=(",", ":"), ensure_ascii=False)},' in user
    assert "behaviour tags (eval_behavior.py) over" in out.stdout
    plain = fdbu_main("evaluate", f"tree={tree}")
    assert plain.returncode == 0 and "behaviour tags (eval_behavior.py): pending: needs a judge" in plain.stdout


def test_a_null_or_bad_reply_is_asked_again_with_the_next_seed():
    """A judge's reply with no content (a refusal) or no JSON holding behaviour is what the script's parse raises on:
    fdbu asks again with the next seed, as the script does, and stops after max_attempts."""
    from fdbu.official.judge import BehaviourPrompt, Judge

    prompt = BehaviourPrompt({}, "system", ["x=", ("input_clean_text",)], "gpt-4o-2024-08-06", 1)
    replies = iter([None, "no json here", '{"other": 1} {"behaviour": ["C_RESUME"]}'])
    judge = Judge("http://127.0.0.1:9/v1", "m", None, None, max_attempts=3, backoff_s=0, behaviour=prompt)
    judge._post = lambda body: next(replies)
    result, attempts = judge.tag("user_interruption/0", {"input_clean_text": "[]"})
    assert result == {"behaviour": ["C_RESUME"]} and attempts == 3
    assert [e["request"]["seed"] for e in judge.ledger] == [1, 2, 3]
    assert [e["status"] for e in judge.ledger] == ["unparsable", "unparsable", "tagged"]
    assert judge.ledger[0]["request"]["messages"][1]["content"] == "x=[]"
    judge.ledger.clear()
    judge._post = lambda body: None
    assert judge.tag("user_interruption/0", {"input_clean_text": "[]"}) == (None, 3)


@pytest.mark.slow
@needs_official_v15
def test_originals_the_script_would_read_otherwise_are_named(official_v15, tmp_path):
    """fdbu's column is the script's on the tree's 16 kHz mono audio; where the user's original was stereo or at
    another rate the column says so (the script itself raises on the stereo file: shown by running it there)."""
    import shutil

    from fdbu.official.runner import offline_hub, run_script

    folders = tmp_path / "folders"
    shutil.copytree(official_v15, folders)
    bc = folders / "user_backchannel"
    audio, sr = sf.read(bc / "0" / "output.wav", dtype="int16")
    sf.write(bc / "0" / "output.wav", np.stack([audio, audio], 1), sr, subtype="PCM_16")  # stereo
    audio, sr = sf.read(bc / "1" / "input.wav", dtype="int16")
    sf.write(bc / "1" / "input.wav", np.repeat(audio, 3), 48000, subtype="PCM_16")  # 48 kHz, the same T
    tree = tmp_path / "tree"
    assert fdbu_main("export", f"export.roots={{user_backchannel: {bc}}}", "export.transcripts=adopt", f"out={tree}",
                     "progress=false").returncode == 0
    out = fdbu_main("evaluate", f"tree={tree}")
    assert out.returncode == 0, out.stderr
    originals = json.loads((tree / "summary.json").read_text())["subsets"]["user_backchannel"]["originals"]
    assert originals["not_mono"]["samples"] == ["user_backchannel/0"]
    assert originals["resampled"]["samples"] == ["user_backchannel/1"]
    assert "originals not 16 kHz mono, where the script on your folder would differ: 1 resampled, 1 with several " \
           "channels" in out.stdout
    hub = offline_hub(tmp_path / "hub")
    alone = tmp_path / "alone"
    shutil.copytree(bc / "0", alone / "0")
    status, _, err = run_script("timing", OFFICIAL_V15 / "get_timing.py", alone, tmp_path, str(hub))
    assert status != 0 and "ValueError" in err and "channels" in err


def test_a_v15_release_with_outputs_elsewhere_exports_as_the_folders_do(official_v15, tmp_path):
    """dataset=<the v1.5 release> (inputs and metadata.json only, as upstream ships it) with outputs=DIR holding
    each sample's two runs and their transcripts (and, where asr.py ran there, the inputs' transcripts): the same
    tree as exporting the folders that hold everything."""
    import shutil

    dataset, outputs = tmp_path / "v1_5", tmp_path / "outputs"
    for d in sorted(official_v15.glob("*/*")):
        if not d.is_dir():
            continue
        rel = d.relative_to(official_v15)
        (dataset / rel).mkdir(parents=True)
        (outputs / rel).mkdir(parents=True)
        for f in ("input.wav", "clean_input.wav", "metadata.json"):
            shutil.copy(d / f, dataset / rel / f)
        for f in ("output.wav", "clean_output.wav", "output.json", "clean_output.json", "input.json",
                  "clean_input.json"):
            shutil.copy(d / f, outputs / rel / f)
    a, b = tmp_path / "a", tmp_path / "b"
    out = fdbu_main("export", f"dataset={dataset}", f"outputs={outputs}", "export.transcripts=adopt", f"out={a}",
                    "progress=false")
    assert out.returncode == 0, out.stderr
    assert fdbu_main("export", v15_roots(official_v15), "export.transcripts=adopt", f"out={b}",
                     "progress=false").returncode == 0
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and len(files) == 12 * 9 + 2
    assert json.loads((a / "manifest.json").read_text()) == json.loads((b / "manifest.json").read_text())
    for f in files:
        if f.name != "asr.json":  # (the adopted-from hashes are the same files; asr.json is equal too)
            assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert json.loads((a / "asr.json").read_text()) == json.loads((b / "asr.json").read_text())


def test_a_clean_run_as_captures_come_keeps_every_sample_or_says_why(official_v15, tmp_path):
    """The clean run as a codec leaves it: 20 ms (one Opus/EnCodec frame) long is cropped at its input's end and the
    transcript words starting after it are dropped and recorded; a 48 kHz clean input is resampled to its own T; a
    clean output 1.5 s long is ineligible, and export's console says by how much and what keeps it."""
    import shutil

    folders = tmp_path / "folders"
    shutil.copytree(official_v15, folders)
    bc = folders / "user_backchannel"
    audio, sr = sf.read(bc / "0" / "clean_output.wav", dtype="int16")
    sf.write(bc / "0" / "clean_output.wav", np.concatenate([audio, audio[:320]]), sr, subtype="PCM_16")  # +20 ms
    doc = json.loads((bc / "0" / "clean_output.json").read_text())
    end = len(audio) / sr
    doc["chunks"].append({"text": "late", "timestamp": [round(end + 0.01, 3), round(end + 0.02, 3)]})
    (bc / "0" / "clean_output.json").write_text(json.dumps(doc, indent=4))
    clean, sr = sf.read(bc / "1" / "clean_input.wav", dtype="int16")
    sf.write(bc / "1" / "clean_input.wav", np.repeat(clean, 3), 48000, subtype="PCM_16")
    audio, sr = sf.read(bc / "2" / "clean_output.wav", dtype="int16")
    sf.write(bc / "2" / "clean_output.wav", np.concatenate([audio, audio[:24000]]), sr, subtype="PCM_16")
    tree = tmp_path / "tree"
    out = fdbu_main("export", f"export.roots={{user_backchannel: {bc}}}", "export.transcripts=adopt", f"out={tree}",
                    "progress=false")
    assert out.returncode == 0, out.stderr
    rows = {r["sample_id"]: r for r in json.loads((tree / "manifest.json").read_text())["samples"]}
    first = rows["user_backchannel/0"]
    assert first["eligible"] and first["other_length_fit"] == {"clean_output.wav": {"action": "cropped",
                                                                                     "samples": 320}}
    assert first["other_dropped_words"] == {"clean_output.json": 1}
    kept = json.loads((tree / "user_backchannel/0/clean_output.json").read_text())
    assert [c["text"] for c in kept["chunks"]] == [c["text"] for c in doc["chunks"][:-1]]
    adopted = json.loads((tree / "asr.json").read_text())["subsets"]["user_backchannel"]["adopted_from"]["0"]
    assert adopted["other_dropped_after_T"] == {"clean_output.json": 1}
    assert adopted["clean_output.json"] == hashlib.sha256((bc / "0" / "clean_output.json").read_bytes()).hexdigest()
    second = rows["user_backchannel/1"]
    assert second["eligible"] and second["source_sample_rate"]["clean_input"] == 48000
    assert second["clean_input_samples"] == len(clean) == sf.info(tree / "user_backchannel/1/clean_output.wav").frames
    assert rows["user_backchannel/2"]["reasons"] == ["clean_output.wav is longer than its input by more than 1000 ms "
                                                     "(export.length=tolerant)"]
    assert "  user_backchannel/2: clean_output.wav is 1500.0 ms longer than its input (" in out.stdout and \
        "export.length=fit crops it at T" in out.stdout
