"""The last fault cases of round three (issue 39): nothing written through a link, no multirun job writing over
another, nothing read unchecked, no read that never returns, a notes folder skipped, no code run from a config
file. Each case is one `fdbu: error:` line and exit 2 (or the right result), with nothing outside touched."""
import json
import os
import shutil
import time

import pytest

from builders import fdbu_main, untranscribed
from fdbu.errors import FdbuError
from fdbu.synth import synthesize

UI, TT, PH = "synthetic_user_interruption", "candor_turn_taking", "candor_pause_handling"


def one_line(out, *fragments) -> str:
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("fdbu: error: "), out.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def scored(tmp_path_factory, calibrated):
    root = tmp_path_factory.mktemp("links")
    a = synthesize(root / "A", n={UI: 3, PH: 3}, seed=2, ineligible=0.0)
    b = synthesize(root / "B", n={UI: 3, PH: 3}, seed=2, ineligible=0.0, system="prompt")
    for t in (a, b):
        assert fdbu_main("score", f"tree={t}", "progress=false").returncode == 0
    return a, b


# 1. writes never follow a final symbolic link

@pytest.mark.parametrize("dangling", [False, True])
def test_the_asr_journal_as_a_link_is_refused_and_its_target_untouched(scored, tmp_path, dangling):
    tree = untranscribed(scored[0], tmp_path / "t")
    target = tmp_path / "outside" / "victim.txt"
    target.parent.mkdir()
    if not dangling:
        target.write_text("mine\n")
    os.symlink(target, tree / ".fdbu-asr.journal")
    out = fdbu_main("asr", f"tree={tree}", "asr.resume=true", f"asr.checkpoint={tmp_path / 'none.nemo'}",
                    "progress=false", "device=cpu")
    one_line(out, "tree: .fdbu-asr.journal: is a symbolic link", "fdbu writes no file through a link")
    assert (target.read_text() == "mine\n") if not dangling else not target.exists()


def test_a_calibration_lock_as_a_link_is_refused_and_its_target_not_created(tmp_path):
    from fdbu.common.cachedir import CALIBRATION
    from fdbu.vad import SpeechDetector
    from fdbu.vad import calibration as calib

    det = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path / "cache", threads=1)
    folder = det.cache_root / CALIBRATION
    folder.mkdir(parents=True)
    lock = calib.lock_path(folder, calib.identity(det.silero, det.batched))
    target = tmp_path / "outside" / "created.txt"
    os.symlink(target, lock)
    with pytest.raises(FdbuError, match=r"^cache: .*\.lock: is a symbolic link"):
        det.calibration(force=True)
    assert not target.exists() and not target.parent.exists()


def test_an_output_lock_as_a_link_is_refused(scored, tmp_path):
    from fdbu.common.outputs import LOCK, _lock

    (tmp_path / "stage").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "stage" / LOCK)
    with pytest.raises(FdbuError, match="is a symbolic link"):
        _lock(tmp_path / "stage")
    assert not (tmp_path / "elsewhere").exists()


# 2. no two jobs of a multirun write into one folder; -m with a config file

def test_a_multirun_whose_jobs_share_a_folder_is_refused_before_any_runs(scored, tmp_path):
    a, b = scored
    o1, o2 = tmp_path / "O1", tmp_path / "O2"
    one_line(fdbu_main("score", "-m", f"tree={a},{b}", f"out={o1},{o2}"),
             f"-m: job 0 (tree={a} out={o1}) and job 2 (tree={b} out={o1}) would both write into {o1}",
             "out=A,B beside tree=X,Y is four jobs")
    one_line(fdbu_main("score", "-m", f"tree={a}", "vad.threshold=0.5,0.8", f"out={o1},{o2}"),
             "job 0 (vad.threshold=0.5", "and job 2 (vad.threshold=0.8")
    before = sorted(p.name for p in a.iterdir())
    one_line(fdbu_main("evaluate", "-m", f"tree={a}", "evaluate.allow_unpinned=true,false"),
             f"would both write into {a}", "fdbu evaluate writes into the tree")
    one_line(fdbu_main("score", "-m", f"tree={a},{a}"), f"would both write into {a}")
    assert not o1.exists() and not o2.exists() and sorted(p.name for p in a.iterdir()) == before


@pytest.mark.slow
def test_m_anywhere_and_with_a_config_file(scored, tmp_path):
    a, b = scored
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "mine.yaml").write_text("progress: false\nvad:\n  threshold: 0.5\n")
    for k, args in enumerate((["--config-dir", str(conf), "--config-name", "mine", "-m"],
                              ["progress=false", "-m"])):  # -m last, after the overrides
        out = fdbu_main("score", *args, f"tree={a},{b}", f"out={tmp_path / str(k)}")
        assert out.returncode == 0, out.stderr
        assert sorted(p.name for p in (tmp_path / str(k)).iterdir()) == [f"0-{a.name}", f"1-{b.name}"]


# 3. reads that skip no check

def test_the_report_refuses_a_transcript_changed_after_scoring(scored, tmp_path):
    a, b = scored
    copy = tmp_path / "A"
    shutil.copytree(a, copy)
    sid = next(p for p in sorted((copy / UI).iterdir()) if (p / "output.json").exists())
    doc = json.loads((sid / "output.json").read_text())
    doc["chunks"].append({"text": "added", "timestamp": [0.5, 0.6]})
    (sid / "output.json").write_text(json.dumps(doc))
    one_line(fdbu_main("report", f"trees=[{copy}]", f"out={tmp_path / 'site'}", "plot=false"),
             "output.json: SHA-256", "differs from asr.json")
    assert not (tmp_path / "site").exists()
    # a link out of the tree in its place, with the very bytes asr.json records, is refused too
    outside = tmp_path / "outside.json"
    shutil.copy(a / sid.relative_to(copy) / "output.json", outside)
    (sid / "output.json").unlink()
    os.symlink(outside, sid / "output.json")
    one_line(fdbu_main("report", f"trees=[{copy}]", f"out={tmp_path / 'site'}", "plot=false"),
             "output.json: resolves to", "outside the tree")


@pytest.mark.parametrize("value", ["adopted", 3, ["adopted"], None, {"source": 1}])
def test_unified_json_transcripts_of_any_type_is_one_line(scored, tmp_path, value):
    a, b = scored
    copy = tmp_path / "A"
    shutil.copytree(a, copy)
    unified = json.loads((copy / "unified.json").read_text())
    unified["transcripts"] = value
    (copy / "unified.json").write_text(json.dumps(unified))
    for args in (["compare", f"trees=[{copy},{b}]"], ["report", f"trees=[{copy},{b}]", f"out={tmp_path / 's'}"]):
        one_line(fdbu_main(*args), f"{copy}: unified.json: transcripts")


def test_a_sample_id_with_a_trailing_newline_is_refused(scored, tmp_path):
    a, _ = scored
    copy = tmp_path / "A"
    shutil.copytree(a, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["samples"][0]["sample_id"] += "\n"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    one_line(fdbu_main("score", f"tree={copy}", "progress=false"), "is not a plain name inside the tree")


# 4. reads that would never return, and a config file bounded before it is parsed

def test_fifos_are_refused_at_once(scored, tmp_path):
    a, b = scored
    (tmp_path / "conf").mkdir()
    os.mkfifo(tmp_path / "conf" / "c.yaml")
    os.mkfifo(tmp_path / "gt.json")
    start = time.monotonic()
    one_line(fdbu_main("score", "--config-dir", str(tmp_path / "conf"), "--config-name", "c", f"tree={a}"),
             "is a FIFO (named pipe)")
    assert time.monotonic() - start < 30  # (reading a FIFO would block for ever)
    bc = synthesize(tmp_path / "bc", n={"icc_backchannel": 1}, seed=0, ineligible=0.0)
    one_line(fdbu_main("evaluate", f"tree={bc}", f"evaluate.gt_distribution={tmp_path / 'gt.json'}"),
             "icc_gt_distribution.json: is a FIFO (named pipe)")


def test_a_fifo_cache_entry_is_recomputed_not_read(scored, tmp_path):
    from fdbu.vad.cache import ProbabilityCache

    cache = ProbabilityCache(tmp_path, "6.2.3", "0" * 64)
    path = cache._path("0" * 64)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    start = time.monotonic()
    assert cache.get("0" * 64, 10) is None and cache.rejected == 1
    assert time.monotonic() - start < 20  # (reading the FIFO would block for ever)


def test_the_ground_truth_as_a_fifo_is_refused(tmp_path):
    from fdbu.official import rules as official

    os.mkfifo(tmp_path / "gt.json")
    with pytest.raises(FdbuError, match="is a FIFO"):
        official.file_report(tmp_path / "gt.json", official.GT_DISTRIBUTION, {})


@pytest.mark.parametrize("kind", ["alias bomb", "oversized", "hydra key", "_target_ deep"])
def test_config_files_are_bounded_and_run_no_code(scored, tmp_path, kind):
    a, _ = scored
    conf = tmp_path / "conf"
    conf.mkdir()
    marker = tmp_path / "ran"
    text = {
        "alias bomb": "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8)),
        "oversized": "progress: false\n" + "# padding\n" * 200_000,
        "hydra key": "+hydra:\n  callbacks:\n    x:\n      _target_: os.system\n      command: touch " + str(marker) + "\n",
        "_target_ deep": "vad:\n  threshold:\n    _target_: os.system\n    command: touch " + str(marker) + "\n",
    }[kind]
    (conf / "c.yaml").write_text(text)
    start = time.monotonic()
    out = fdbu_main("score", "--config-dir", str(conf), "--config-name", "c", f"tree={a}", "progress=false")
    assert time.monotonic() - start < 20  # (an expanded bomb ran for minutes; speed itself: benchmarks)
    want = {"alias bomb": "expands to more than 100000 values", "oversized": "is larger than 1 MiB",
            "hydra key": "sets +hydra: a config file holds the command's settings only",
            "_target_ deep": "sets vad.threshold._target_"}[kind]
    one_line(out, want)
    assert not marker.exists()


# 5. a notes folder inside a per-task folder is skipped, as the official scripts skip it

def test_a_notes_folder_in_a_per_task_folder_is_skipped(tmp_path):
    folders = synthesize(tmp_path / "official", n={TT: 3}, seed=1, ineligible=0.0, layout="official")
    (folders / TT / "notes.md").mkdir()
    (folders / TT / "notes.md" / "todo.txt").write_text("x")
    out = fdbu_main("export", f"export.roots={{{TT}: {folders / TT}}}", "export.transcripts=adopt",
                    f"out={tmp_path / 'tree'}", "progress=false")
    assert out.returncode == 0 and "3 samples, 3 eligible" in out.stdout, out.stdout + out.stderr


# found by review: each a traceback or a silent overwrite before

def test_a_sample_folder_as_the_working_folder_is_named(tmp_path, monkeypatch):
    """tree=. in a folder holding input.wav directly: named as one sample's folder (its parent recursed once),
    not a RecursionError."""
    import numpy as np
    import soundfile as sf

    sf.write(str(tmp_path / "input.wav"), np.zeros(160, np.int16), 16000, subtype="PCM_16")
    monkeypatch.chdir(tmp_path)
    one_line(fdbu_main("score", "tree=.", "progress=false"), "is one sample's folder (input.wav directly in it)")


def test_info_keeps_working_wherever_it_stands(scored):
    """--info anywhere on the line; Hydra's report leaves the root logger as it found it (Hydra sets it to DEBUG
    with a handler of its own: a caller in the same process would then pay for Hydra's debug report on every
    later command)."""
    import logging

    a, _ = scored
    root = logging.getLogger()
    before = root.level, list(root.handlers)
    for args in (["--info", f"tree={a}"], [f"tree={a}", "--info"], [f"tree={a}", "--info", "config"]):
        out = fdbu_main("score", *args)
        assert out.returncode == 0 and "Defaults List" in out.stdout, out.stderr
        assert (root.level, root.handlers) == before


def test_a_model_name_that_is_a_path_is_one_line(tmp_path):
    from fdbu.asr.nemo_model import available

    for name in ("/models/x.nemo", "a/b/c", "nvidia/"):
        with pytest.raises(FdbuError, match="is not a model name"):
            available(name)


def test_out_null_is_no_out_for_the_multirun_check(scored):
    a, _ = scored
    one_line(fdbu_main("score", "-m", f"tree={a}", "vad.threshold=0.4,0.5", "out=null"), f"would both write into {a}")


def test_a_config_file_choosing_a_hydra_group_is_refused(scored, tmp_path):
    a, _ = scored
    (tmp_path / "c.yaml").write_text("hydra/launcher: slurm_cpu\n")
    one_line(fdbu_main("score", "--config-dir", str(tmp_path), "--config-name", "c", f"tree={a}"),
             "sets hydra/launcher")


def test_a_fifo_where_fdbu_writes_is_refused_not_waited_on(scored, tmp_path):
    tree = untranscribed(scored[0], tmp_path / "t")
    os.mkfifo(tree / ".fdbu-asr.journal")
    start = time.monotonic()
    one_line(fdbu_main("asr", f"tree={tree}", "asr.resume=true", f"asr.checkpoint={tmp_path / 'none.nemo'}",
                       "progress=false", "device=cpu"), ".fdbu-asr.journal: is not a regular file")
    assert time.monotonic() - start < 30  # (reading a FIFO would block for ever)
