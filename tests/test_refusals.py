"""Every expected failure is one line `fdbu: error: ...`, exit status 2, and nothing written or changed.

One test per class of failure that broke that promise before (numeric extremes, deep nesting,
file-system errors, cache problems, unwritable outputs, outputs written as a pair, failures after
writing, config values, export rows, ASR inputs), plus a fuzz test of the tree loader.
"""
import hashlib
import json
import os
import signal
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from builders import fdbu_main, interrupt_ann, pause_ann, sample, sha, turn_ann, untranscribed, write_tree, needs_nemo
from fdbu.errors import FdbuError
from fdbu.tree.load import load_tree
from unprivileged import public_folder, unreachable

FDBU = str(Path(sys.executable).parent / "fdbu")
ROOT = os.geteuid() == 0


def snapshot(*folders: Path) -> dict:
    """Every path under the folders with its bytes' hash, mode and kind: what 'nothing changed' compares."""
    out = {}
    for folder in folders:
        for p in sorted(Path(folder).rglob("*")) + [Path(folder)]:
            if p.is_symlink():
                out[str(p)] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p)] = ("file", p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
            elif p.is_dir():
                out[str(p)] = ("dir", p.stat().st_mode)
    return out


def fdbu(*args, unprivileged=False, env=None):
    """Run fdbu: in this process when it can (fast), as its own process when it needs another user,
    environment or signals."""
    if not unprivileged and env is None:
        return fdbu_main(*args)
    cmd = [FDBU, *args]
    if unprivileged and ROOT:  # root reads and writes anything: run as nobody to meet a permission error
        paths = [Path(a.split("=", 1)[1]) for a in args if "=" in a and a.split("=", 1)[1].startswith("/")]
        reason = unreachable(*paths)
        if reason:
            pytest.skip(reason)
        cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def refused(out, *fragments):
    """One line on stderr, `fdbu: error: ...` naming what it should, exit status 2."""
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and lines[0].startswith("fdbu: error: "), out.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def folder(path: Path, mode: int) -> Path:
    """A new folder with exactly `mode` (not narrowed by the umask): 0o777 for one an unprivileged run
    writes in, 0o555 for one nobody may write in."""
    path.mkdir()
    path.chmod(mode)
    return path


@pytest.fixture()
def tmp_path():
    """A temporary folder every user can enter (pytest's own is private to root), for runs as nobody."""
    with public_folder("fdbu-refusals-") as path:
        yield path


@pytest.fixture()
def tree(tmp_path):
    """A small valid tree of every scored task (silent outputs: fast to score)."""
    return write_tree(tmp_path / "tree", [
        sample("synthetic_pause_handling", 1, 10.0, [(4.0, 4.5)], pause_ann([(3.0, 3.5)])),
        sample("candor_turn_taking", 1, 10.0, [(6.0, 6.5)], turn_ann(5.0)),
        sample("synthetic_user_interruption", 1, 10.0, [(7.0, 7.5)], interrupt_ann(4.0, 6.0)),
    ])


def rewrite(tree: Path, sid: str, file: str, data: bytes) -> None:
    """Replace a sample's file and the hash recorded for it, so only its content is wrong."""
    (tree / sid / file).write_bytes(data)
    if file == "output.json":
        asr = json.loads((tree / "asr.json").read_text())
        subset, name = sid.split("/")
        asr["subsets"][subset]["transcripts"][name] = sha(data)
        (tree / "asr.json").write_text(json.dumps(asr))
    else:
        manifest = json.loads((tree / "manifest.json").read_text())
        next(r for r in manifest["samples"] if r["sample_id"] == sid)["files"][file] = sha(data)
        (tree / "manifest.json").write_text(json.dumps(manifest))


def manifest_row(tree: Path, sid: str, **changes) -> None:
    manifest = json.loads((tree / "manifest.json").read_text())
    next(r for r in manifest["samples"] if r["sample_id"] == sid).update(changes)
    (tree / "manifest.json").write_text(json.dumps(manifest))


# 1. numeric extremes, refused at parse time with the sample and file named
@pytest.mark.parametrize("value", ["1e20", "1e303", "1" + "0" * 400])
def test_numeric_extremes_in_a_transcript(tree, value):
    rewrite(tree, "candor_turn_taking/1", "output.json",
            f'{{"text": "w", "chunks": [{{"text": "w", "timestamp": [{value}, null]}}]}}'.encode())
    before = snapshot(tree)
    refused(fdbu("score", f"tree={tree}", "progress=false"), "candor_turn_taking/1: output.json: word 0 start")
    assert snapshot(tree) == before


def test_numeric_extremes_in_a_pause_and_the_manifest(tree):
    rewrite(tree, "synthetic_pause_handling/1", "pause.json", b'[{"text": "[PAUSE]", "timestamp": [1e20, 2e20]}]')
    refused(fdbu("score", f"tree={tree}"), "synthetic_pause_handling/1: pause.json: pause 0 start", "beyond any window")
    manifest_row(tree, "synthetic_pause_handling/1", input_samples=10**30)
    before = snapshot(tree)
    refused(fdbu("score", f"tree={tree}"), "synthetic_pause_handling/1: manifest.json: input_samples is",
            "not a whole number from 1 to")
    assert snapshot(tree) == before


# 2. deep nesting
@pytest.mark.parametrize("sid,file", [(None, "manifest.json"), ("candor_turn_taking/1", "output.json"),
                                      ("synthetic_pause_handling/1", "pause.json")])
def test_deeply_nested_json(tree, sid, file):
    deep = b"[" * 100000 + b"]" * 100000
    if sid is None:
        (tree / file).write_bytes(deep)
    else:
        rewrite(tree, sid, file, deep)
    before = snapshot(tree)
    refused(fdbu("score", f"tree={tree}"), f"{file}: is nested too deeply")
    assert snapshot(tree) == before


# 3. file-system errors: an unreadable annotation or wav, a link loop
@pytest.mark.slow
@pytest.mark.parametrize("file", ["pause.json", "output.wav"])
def test_an_unreadable_file_is_named(tree, tmp_path, file):
    sid = "synthetic_pause_handling/1" if file == "pause.json" else "synthetic_user_interruption/1"
    target = tree / sid / file
    target.chmod(0)
    tree.chmod(0o777)  # outputs could be written: the refusal must be the unreadable file
    cache = folder(tmp_path / "cache", 0o777)
    before = snapshot(tree)
    line = refused(fdbu("score", f"tree={tree}", f"cache_dir={cache}", unprivileged=True, env={
        "XDG_CACHE_HOME": str(cache)}), f"{sid}: {file}:")
    assert "Permission denied" in line or "readable" in line
    assert snapshot(tree) == before


def test_a_link_loop_is_named(tree):
    target = tree / "candor_turn_taking" / "1" / "output.json"
    target.unlink()
    os.symlink("loop-b", target.parent / "loop-a")
    os.symlink("loop-a", target.parent / "loop-b")
    os.symlink("loop-a", target)
    refused(fdbu("score", f"tree={tree}"), "candor_turn_taking/1: output.json: is a link that leads nowhere")


def test_a_manifest_linked_from_outside_the_tree_is_refused(tree, tmp_path):
    outside = tmp_path / "elsewhere.json"
    shutil.move(tree / "manifest.json", outside)
    os.symlink(outside, tree / "manifest.json")
    refused(fdbu("score", f"tree={tree}"), "tree: manifest.json: resolves to", "outside the tree")


# 4. caches that cannot be used are refused up front; broken entries are recomputed
@pytest.mark.slow
def test_a_cache_dir_that_is_a_file_or_read_only_is_refused(tree, tmp_path):
    (tmp_path / "a-file").write_text("x")
    before = snapshot(tree)
    refused(fdbu("score", f"tree={tree}", f"cache_dir={tmp_path / 'a-file'}"), "cache_dir", "is not a folder")
    ro = folder(tmp_path / "read-only", 0o555)
    out = folder(tmp_path / "out", 0o777)
    refused(fdbu("score", f"tree={tree}", f"out={out}", f"cache_dir={ro}", unprivileged=True,
                 env={"XDG_CACHE_HOME": str(ro)}), "cache_dir", "cannot write in")
    assert snapshot(tree) == before


@pytest.mark.slow
def test_cache_entries_that_are_folders_or_lack_keys_are_recomputed(tree, tmp_path):
    cache = tmp_path / "cache"
    ref = "vad.backend=reference"  # the cache under test holds exact entries
    assert fdbu("score", f"tree={tree}", f"cache_dir={cache}", ref).returncode == 0
    want = (tree / "unified.json").read_bytes()
    entry = next(cache.glob("vad-probs/*/*.probs"))
    head, payload = entry.read_bytes().split(b"\n", 1)
    header = json.loads(head)
    del header["exact"]
    entry.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    out = fdbu("score", f"tree={tree}", f"cache_dir={cache}", ref)
    assert out.returncode == 0 and "1 stale or corrupt cache entries recomputed" in out.stdout
    entry.unlink()
    entry.mkdir()  # a folder where the entry belongs: recomputed, not cached, not an error
    out = fdbu("score", f"tree={tree}", f"cache_dir={cache}", ref)
    assert out.returncode == 0, out.stderr
    assert (tree / "unified.json").read_bytes() == want


# 5. outputs that cannot be written are found before the work; a missing out= is created
@pytest.mark.slow
def test_unwritable_out_is_refused_before_any_work(tree, tmp_path):
    ro = folder(tmp_path / "ro", 0o555)
    cache = folder(tmp_path / "cache", 0o777)
    refused(fdbu("score", f"tree={tree}", f"out={ro}", unprivileged=True, env={"XDG_CACHE_HOME": str(cache)}),
            f"out= {ro}: cannot write in")
    assert list(ro.iterdir()) == []


def test_a_missing_out_is_created(tree, tmp_path):
    # the reference backend: what is tested is out=, not a calibration (which a fresh cache would run first)
    out = fdbu("score", f"tree={tree}", f"out={tmp_path / 'reports' / 'modelA'}", "vad.backend=reference")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "reports" / "modelA" / "unified.json").is_file()


def test_export_out_below_a_file_is_refused(tmp_path):
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "data").mkdir()
    refused(fdbu("export", f"dataset={tmp_path / 'data'}", f"out={tmp_path / 'a-file' / 'x'}"), "is not a folder")


# 6. outputs as one unit: a run killed between its writes is finished by the next (test_kill.py), and a
# write that fails changes nothing
@pytest.mark.slow
def test_a_full_disk_is_one_line_and_changes_nothing(tree):
    before = snapshot(tree)
    # the reference backend: no calibration to measure and announce first (whether one is cached depends on
    # which tests ran before), so stderr holds the refusal alone
    out = subprocess.run(["bash", "-c", f"ulimit -f 1; exec {FDBU} score tree={tree} vad.backend=reference "
                          "progress=false"], capture_output=True, text=True)
    refused(out, "output: cannot write the outputs in", "no file there was changed")
    assert snapshot(tree) == before


# 7. nothing that can fail after the outputs are written does
def test_a_broken_summary_or_a_folder_in_place_of_the_curves(tree):
    (tree / "summary.json").write_text("[" * 5000 + "]" * 5000)
    out = fdbu("score", f"tree={tree}")
    assert out.returncode == 0 and "reference column left out" in out.stdout
    (tree / "latency-curves.png").mkdir()
    before = snapshot(tree)
    refused(fdbu("score", f"tree={tree}", "plot=true"), "latency-curves.png", "is a folder")
    assert snapshot(tree) == before


# 8. config values of the wrong type or size
@pytest.mark.parametrize("args,fragment", [
    (["vad.threshold=abc"], "vad.threshold"), (["bootstrap.resamples=abc"], "bootstrap.resamples"),
    (["bootstrap.resamples=10.5"], "bootstrap.resamples"), (["bootstrap.resamples=1000000000000"], "1 to 100000"),
    (["bootstrap.seed=-1"], "bootstrap.seed=-1"), (["tree=[A,B]"], "tree"), (["plot=maybe"], "plot"),
    (["vad.threshold=1.5"], "vad.threshold=1.5: a number in (0, 1)"), (["vad.thrshold=0.4"], "did you mean vad.threshold"),
    ([], "tree is required")])
def test_config_values(tree, args, fragment):
    args = args if any(a.startswith("tree=") for a in args) or not args else [f"tree={tree}", *args]
    before = snapshot(tree)
    refused(fdbu("score", *args), "config:", fragment)
    assert snapshot(tree) == before


def test_sweep_config_values(tree):
    refused(fdbu("sweep", f"tree={tree}", "sweep.threshold=1.5"), "sweep.threshold")  # (0.5 alone: [0.5])
    refused(fdbu("sweep", f"tree=[{tree},{tree}]"), "needs out=DIR")


# names every output prints as written (issue 55, item 1: a newline in a name ended leaderboard.tex's comment line)
@pytest.mark.parametrize("name", ["x\n\\input{/etc/passwd}\n", "a\rb", "nul\x00", "esc\x1b[2J", "ls\u2028"])
def test_a_name_holding_a_control_character_is_refused_before_anything_is_read(tree, tmp_path, name):
    out = tmp_path / "R"
    for command in ("report", "compare"):
        refused(fdbu(command, f"trees=[{tree},{tree}]", f"names=['{name}',b]", f"out={out}", "report.format=[tex]"
                     if command == "report" else "plot=false"), "config:", "names:", repr(name), "control character")
    refused(fdbu("sweep", f"tree=[{tree},{tree}]", f"names=['{name}',b]", f"out={out}"), "names:", repr(name))
    if "\x00" not in name:  # the default names: the folders' own (a path holds no NUL)
        folder = tmp_path / f"y{name}".replace("/", "_")
        folder.mkdir()
        refused(fdbu("report", f"trees=['{folder}',{tree}]", f"out={out}"), "trees: the folder name",
                repr(folder.name), "give names=[...]")
    with pytest.raises(FdbuError, match="control character"):  # the API: the same rule
        __import__("fdbu").report([str(tree), str(tree)], str(out), names=[name, "b"])
    assert not out.exists()


def test_latex_text_has_no_placeholder_a_name_can_forge():
    """tex() once marked <= and >= with a NUL placeholder, so a name holding NUL + "le" printed a relation."""
    from fdbu.reporting.tables import tex

    assert tex("a\x00le b<=c") == r"a le b$\le$c"
    assert tex("50% of {x}\f") == r"50\% of \{x\} "


# Hydra's own settings checked before Hydra runs them (issue 55, item 4: each was a "bug in fdbu" traceback)
@pytest.mark.parametrize("override,fragment", [
    ("hydra.sweeper=5", "hydra.sweeper is a group of Hydra's settings, not a value"),
    ("hydra.launcher=5", "or pick another with hydra/launcher=..."),
    ("hydra.run=x", "hydra.run.<key>=..., listed by fdbu score --cfg hydra"),
    ("hydra.sweeper.params.tree='A,B'", "fdbu sweeps the keys given after -m"),
    ('hydra.sweeper.params={tree:"A,B"}', "give them there, not in Hydra's sweeper"),
    ("hydra.sweeper={params:{tree:1}}", "fdbu sweeps the keys given after -m")])
def test_hydras_own_settings_are_checked_before_hydra_runs(tree, tmp_path, override, fragment):
    out = tmp_path / "O"
    line = refused(fdbu("score", "-m", f"tree={tree},{tree}", f"out={out}", override), "config:", fragment)
    assert line.startswith(f"fdbu: error: config: {override}: ")
    assert not out.exists() and not (tmp_path / "multirun").exists()


# issue 55, item 5: settings accepted and ignored, or accepted and surprising
def test_a_views_settings_without_the_view_are_refused(tree, tmp_path):
    for args, fragment in ((["fdbench.early_reply_s=2"], "fdbench.early_reply_s=2.0: the fdbench view is not "
                                                           "computed; add views=[fdbench]"),
                           (["views=[fdbench]", "videofdb.yield_within_s=2"], "add views=[fdbench,videofdb]")):
        refused(fdbu("score", f"tree={tree}", f"out={tmp_path / 'o'}", *args), "config:", fragment)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value", ["bogus", "JIT", "aot"])
def test_an_unknown_kernels_choice_is_refused(tree, value):
    before = snapshot(tree)
    line = refused(fdbu("score", f"tree={tree}", env={"FDBU_KERNELS": value}), f"FDBU_KERNELS={value!r}: compiled")
    assert "jit (numba's JIT kernels always), or unset" in line
    assert snapshot(tree) == before


@pytest.mark.parametrize("text", ['evaluate:\n  judge:\n    base_url: "http://example.org/${oc.env:HOME}"\n',
                                  "names: ['${oc.decode:x}']\n", "tree: ${oc.env:HOME}\n"])
def test_a_config_file_cannot_read_the_environment(tree, tmp_path, text):
    (tmp_path / "sent.yaml").write_text(text)
    command = "evaluate" if "judge" in text else "score" if "tree" in text else "report"
    refused(fdbu(command, "--config-dir", str(tmp_path), "--config-name", "sent", f"out={tmp_path / 'o'}"),
            f"the config file {tmp_path / 'sent.yaml'} sets ", "by an interpolation", "never the environment")
    assert not (tmp_path / "o").exists()


def test_a_multirun_is_bounded_so_every_collision_is_checked(tree, tmp_path):
    """Past 100,000 jobs the collision check was skipped; now such a multirun is refused before Hydra expands it."""
    refused(fdbu("score", "-m", "tree=range(0,1001)", "out=range(0,1000)"), "-m: more than 100,000 jobs")
    refused(fdbu("score", "-m", "tree=A", "bootstrap.seed=range(0,100000000)", "out=O"), "-m: more than 100,000 jobs")  # one
    # out= for all (each job a subfolder) is bounded too, and a range of 10^8 is refused without being built


def test_non_finite_audio_is_refused_by_name(tmp_path):
    """Audio holding NaN or infinity (a float WAV) is refused where it is read, by name: a dataset's input at export
    (it was copied), and any WAV the stages read (the numpy engine gave NaN probabilities for it)."""
    import soundfile as sf

    from fdbu.common.audio import read_wav

    audio = np.zeros(48000, np.float32)
    audio[40000], audio[40001] = np.nan, np.inf
    sf.write(tmp_path / "nan.wav", audio, 16000, subtype="FLOAT")
    with pytest.raises(FdbuError, match=r"^x/1: nan.wav: holds 2 non-finite samples \(NaN or infinity\), the first "
                                        r"at 2.500 s: not a recording$"):
        read_wav(tmp_path / "nan.wav", "x/1")
    data = tmp_path / "data" / "synthetic_user_interruption"
    (data / "1").mkdir(parents=True)
    sf.write(data / "1" / "input.wav", audio, 16000, subtype="FLOAT")
    (data / "1" / "interrupt.json").write_text(json.dumps(interrupt_ann(1.0, 2.0)))
    sf.write(data / "1" / "output.wav", np.zeros(48000), 16000, subtype="PCM_16")
    refused(fdbu("export", f"dataset={tmp_path / 'data'}", f"out={tmp_path / 'tree'}", "progress=false"),
            "synthetic_user_interruption/1: input.wav: holds 2 non-finite samples", "in the dataset")
    assert not (tmp_path / "tree").exists()


# issue 56, item 2: the habits people bring from other command lines, in fdbu's words, each suggestion run
def test_flags_as_other_tools_write_them_are_settings(tree, tmp_path):
    """--key=value, --key value and --flag (a true/false setting) read as key=value; -m before the command too."""
    out = tmp_path / "o"
    ran = fdbu("score", f"--tree={tree}", "--plot", "--out", str(out), "progress=false")
    assert ran.returncode == 0, ran.stderr
    assert (out / "unified.json").is_file() and (out / "latency-curves.png").is_file()  # --plot: plot=true
    ran = fdbu("-m", "score", f"tree={tree}", f"out={tmp_path / 'm'}", "progress=false")
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("args,suggested", [
    (["score", "tree=[{t},{t}]"], "-m tree={t},{t}"),
    (["score", "tree={t}", "plot=ture"], "plot=true"),
    (["score", "tree={t}", "plot"], "plot=true"),
    (["compare", "{t}", "{t}"], "trees=[{t},{t}]")])
def test_a_habit_is_answered_with_a_command_that_works(tree, tmp_path, args, suggested):
    args = [a.format(t=tree) for a in args]
    line = refused(fdbu(*args), "config:")
    want = suggested.format(t=tree)
    assert want in line, (want, line)
    fixed = [a for a in args if a.startswith("tree=") and "[" not in a and "ture" not in a] + want.split()
    if args[0] == "compare":
        fixed = [want, "names=[a,b]"]
    ran = fdbu(args[0], *fixed, f"out={tmp_path / 'o'}", "progress=false", *(["plot=false"] if args[0] == "compare" else []))
    # the suggestion passes the config (compare then needs scored trees: the refusal names unified.json)
    assert ran.returncode == 0 or "unified.json" in ran.stderr, ran.stderr


def test_a_reference_tree_given_to_export_is_named_with_the_command_that_reads_it(tree, tmp_path):
    """Issue 56, item 4: dataset= pointed at a reference tree said "input.wav: cannot be read ... Errno 2"."""
    for folder, what in ((tree, "dataset="), (tree / "synthetic_user_interruption", "dataset="),
                         (tree / "synthetic_user_interruption", "roots")):
        arg = f"dataset={folder}" if what == "dataset=" else f"export.roots={{synthetic_user_interruption: {folder}}}"
        line = refused(fdbu("export", arg, f"out={tmp_path / 'x'}"), "a reference tree (its manifest.json), not a "
                       "Full-Duplex-Bench release: score it with fdbu score tree=")
        assert line.endswith(f"fdbu score tree={tree}") and not (tmp_path / "x").exists()
    ran = fdbu("score", f"tree={tree}", f"out={tmp_path / 's'}", "progress=false")  # the command it names works
    assert ran.returncode == 0, ran.stderr


# a setting the command cannot honour is refused, not ignored
@pytest.mark.parametrize("args,fragment", [
    (["sweep", "vad.threshold=0.4"], "vad.threshold=0.4: a sweep's segment settings are its axes: use sweep.threshold"),
    (["sweep", "vad.speech_pad_ms=30"], "use sweep.speech_pad_ms"),
    (["sweep", "vad.min_silence_duration_ms=50"], "use sweep.min_silence_duration_ms"),
    (["calibrate", "vad.backend=reference"], "vad.backend='reference': fdbu calibrate does not use it (it measures "
                                             "the batched backend against the reference)"),
    (["calibrate", "vad.speech_pad_ms=30"], "vad.speech_pad_ms=30: the calibration measures probabilities"),
    (["evaluate", "device=cuda"], "device='cuda': fdbu evaluate runs nothing on a device"),
    (["export", "dataset=d", "out=o", "device=cpu"], "device='cpu': fdbu export runs nothing on a device")])
def test_settings_a_command_would_ignore(tree, tmp_path, args, fragment):
    command, *rest = args
    if command in ("sweep", "evaluate"):
        rest.insert(0, f"tree={tree}")
    before = snapshot(tree, tmp_path)
    refused(fdbu(command, *rest, f"cache_dir={tmp_path / 'cache'}"), "config:", fragment)
    assert snapshot(tree, tmp_path) == before


# 9. export never writes an eligible row it cannot score
def test_an_empty_input_makes_its_sample_ineligible(tmp_path):
    from builders import wav_bytes

    data = tmp_path / "data" / "candor_turn_taking" / "1"
    data.mkdir(parents=True)
    (data / "input.wav").write_bytes(wav_bytes(np.zeros(0, np.int16)))
    (data / "output.wav").write_bytes(wav_bytes(np.zeros(16000, np.int16)))
    (data / "turn_taking.json").write_text(json.dumps(turn_ann(0.5)))
    out = fdbu("export", f"dataset={tmp_path / 'data'}", f"out={tmp_path / 'tree'}", "export.length=fit")
    assert out.returncode == 0, out.stderr
    row = json.loads((tmp_path / "tree" / "manifest.json").read_text())["samples"][0]
    assert row["eligible"] is False and row["reasons"] == ["input.wav is empty"]


def test_export_refuses_out_inside_the_dataset(tmp_path):
    (tmp_path / "data").mkdir()
    before = snapshot(tmp_path / "data")
    refused(fdbu("export", f"dataset={tmp_path / 'data'}", f"out={tmp_path / 'data' / 'tree'}"), "inside the dataset")
    assert snapshot(tmp_path / "data") == before


# 10. ASR inputs: a broken annotation, a file that is no checkpoint
@pytest.mark.slow
@pytest.mark.parametrize("data", [b"{}", b"{not json"])
def test_asr_refuses_a_broken_interruption_annotation(tree, tmp_path, data):
    needs_nemo()
    rewrite(tree, "synthetic_user_interruption/1", "interrupt.json", data)
    untranscribed(tree)
    (tmp_path / "x.nemo").write_bytes(b"garbage")
    before = snapshot(tree)
    refused(fdbu("asr", f"tree={tree}", f"asr.checkpoint={tmp_path / 'x.nemo'}"),
            "synthetic_user_interruption/1: interrupt.json:")
    assert snapshot(tree) == before


@pytest.mark.slow
def test_asr_refuses_a_file_that_is_no_checkpoint(tree, tmp_path):
    needs_nemo()
    untranscribed(tree)
    (tmp_path / "x.nemo").write_bytes(b"garbage")
    refused(fdbu("asr", f"tree={tree}", f"asr.checkpoint={tmp_path / 'x.nemo'}"), "is not a NeMo checkpoint")


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="runs fdbu as another user to meet a permission error")
def test_asr_refuses_a_tree_it_cannot_write_before_loading_the_model(tree, tmp_path):
    needs_nemo()
    untranscribed(tree)
    (tmp_path / "x.nemo").write_bytes(b"garbage")  # never opened: the tree is checked first
    cache = folder(tmp_path / "cache", 0o777)
    before = snapshot(tree)
    refused(fdbu("asr", f"tree={tree}", f"asr.checkpoint={tmp_path / 'x.nemo'}", f"cache_dir={cache}",
                 unprivileged=True), f"asr: transcripts and asr.json go into {tree}: cannot write in {tree}")
    assert snapshot(tree) == before


def test_ctrl_c_is_exit_130_without_a_traceback(tree):
    proc = subprocess.Popen([FDBU, "score", f"tree={tree}", "vad.backend=reference", "vad.cache=false"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "FDBU_INTERRUPT_AT": "score:loaded"},
                            # a shell's background job inherits SIGINT ignored; Ctrl-C reaches a foreground one
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err and err.startswith("fdbu: error: interrupted")


@pytest.mark.slow
def test_ctrl_c_in_speech_detection_says_what_the_rerun_resumes_from(tmp_path, calibrated):
    """Issue 56, item 3: Ctrl-C after the first batch says how many files' probabilities the cache keeps and that the
    same command resumes from them; the rerun takes them from the cache (its own line says so)."""
    from fdbu.common.cachedir import cache_root

    quiet = [np.zeros(160000, np.int16) for _ in (1, 2)]
    for k, a in enumerate(quiet):
        a[k] = 1  # two files, two cache entries
    tree = write_tree(tmp_path / "two", [sample("synthetic_user_interruption", k + 1, 10.0, [(7.0, 7.5)],
                                                interrupt_ann(4.0, 6.0), audio=quiet[k]) for k in (0, 1)])
    cache = tmp_path / "cache"
    shutil.copytree(cache_root() / "vad-probs" / "calibration", cache / "vad-probs" / "calibration")
    args = [FDBU, "score", f"tree={tree}", f"cache_dir={cache}", "vad.batch_seconds=10", f"out={tmp_path / 'o'}",
            "progress=false"]
    first = subprocess.run(args, capture_output=True, text=True, timeout=300,  # before the first batch: nothing kept
                           env={**os.environ, "FDBU_INTERRUPT_AT": "vad:batch:0"},
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert first.returncode == 130 and first.stderr.strip().splitlines()[-1] == (
        "fdbu: error: interrupted (Ctrl-C); nothing half-written was left behind; no speech probabilities were in the "
        "cache yet: the same command starts again"), first.stderr
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FDBU_INTERRUPT_AT": "vad:batch:1"},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == 130 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "fdbu: error: interrupted (Ctrl-C); nothing half-written was left behind; the speech probabilities of 1 "
        "file are in the cache (1 computed in this run): the same command resumes from them")
    again = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "1 computed, 1 from cache" in again.stdout, again.stdout + again.stderr


# the fuzz test: whatever the JSON files of a tree hold, loading it raises FdbuError or nothing
VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                                st.text(max_size=5)),
                      lambda inner: st.one_of(st.lists(inner, max_size=3),
                                              st.dictionaries(st.sampled_from(
                                                  ["timestamp", "chunks", "text", "samples", "sample_id", "subset",
                                                   "task", "eligible", "input_samples", "sample_rate", "files",
                                                   "declared", "subsets", "transcripts", "reasons"]), inner,
                                                  max_size=4)), max_leaves=12)


@pytest.fixture(scope="module")
def fuzz_tree(tmp_path_factory):
    return write_tree(tmp_path_factory.mktemp("fuzz") / "tree", [
        sample("synthetic_pause_handling", 1, 10.0, [(4.0, 4.5)], pause_ann([(3.0, 3.5)])),
        sample("candor_turn_taking", 1, 10.0, [(6.0, 6.5)], turn_ann(5.0)),
        sample("synthetic_user_interruption", 1, 10.0, [(7.0, 7.5)], interrupt_ann(4.0, 6.0))])


FILES = ["manifest.json", "asr.json", "synthetic_pause_handling/1/output.json",
         "synthetic_pause_handling/1/pause.json", "candor_turn_taking/1/turn_taking.json",
         "synthetic_user_interruption/1/interrupt.json"]


def _mutate(doc, path, value):
    """Replace the node at `path` (a list of choices) in a JSON document."""
    if not path or not isinstance(doc, (dict, list)) or not doc:
        return value
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    k = keys[path[0] % len(keys)]
    doc[k] = _mutate(doc[k], path[1:], value)
    return doc


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FILES), st.lists(st.integers(0, 7), max_size=4), VALUES, st.booleans())
def test_the_tree_loader_raises_only_fdbu_errors(fuzz_tree, tmp_path, file, path, value, keep_hashes):
    tree = tmp_path / "t"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(fuzz_tree, tree)
    doc = _mutate(json.loads((tree / file).read_text()), path, value)
    data = json.dumps(doc).encode()
    if keep_hashes and "/" in file:
        sid, name = file.rsplit("/", 1)
        rewrite(tree, sid, name, data)
    else:
        (tree / file).write_bytes(data)
    try:
        load_tree(tree)
    except FdbuError:
        pass


CONFIG_KEYS = ["source", "model_id", "checkpoint_sha256", "made_by", "nemo_version", "device_type"]


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.sampled_from(CONFIG_KEYS), st.text(max_size=4)), VALUES, st.booleans())
def test_asr_json_config_is_read_key_by_key(fuzz_tree, tmp_path, key, value, whole):
    """Issue 38, item 6: asr.json's `config` (where the transcripts came from) is read like every other key:
    any value of any of its keys, or the config itself replaced, is a one-line FdbuError or a correct load (a
    list as config.source was a TypeError)."""
    tree = tmp_path / "t"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(fuzz_tree, tree)
    asr = json.loads((tree / "asr.json").read_text())
    if whole:
        asr["config"] = value
    else:
        asr.setdefault("config", {})[key] = value
    (tree / "asr.json").write_text(json.dumps(asr))
    try:
        loaded = load_tree(tree)
    except FdbuError as e:
        assert "\n" not in str(e) and str(e).startswith("tree: asr.json: config")
        return
    assert loaded.transcripts["source"] in ("fdbu asr", "adopted", "synthetic", "unrecorded")


def test_a_list_as_the_transcripts_source_is_one_line(fuzz_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(fuzz_tree, tree)
    asr = json.loads((tree / "asr.json").read_text())
    asr.setdefault("config", {})["source"] = ["adopted"]
    (tree / "asr.json").write_text(json.dumps(asr))
    with pytest.raises(FdbuError, match=r"^tree: asr.json: config.source is \['adopted'\], not null or one of "):
        load_tree(tree)
