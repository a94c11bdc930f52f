"""Real outputs in: the official per-task folders (export.roots), the official asr.py's transcripts
(export.transcripts=adopt), synth in that layout, and what a wrong tree= is told."""
import hashlib
import json
import math
from pathlib import Path

import pytest

from builders import fdbu_main
import soundfile as sf

from fdbu.synth import OFFICIAL_REASON, synthesize
from fdbu.tasks import SUBSETS, release_sizes

V10 = list(release_sizes("v1.0"))  # synth's official folders here are v1.0's

PH, CPH, TT, UI = "synthetic_pause_handling", "candor_pause_handling", "candor_turn_taking", \
    "synthetic_user_interruption"
SCORED = (PH, CPH, TT, UI)
SEED, N = 4, 6


def digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def roots(folder: Path, subsets=SCORED) -> str:
    return "export.roots={" + ", ".join(f"{s}: {folder / s}" for s in subsets) + "}"


def refused(args, where: Path, *fragments) -> str:
    """`fdbu ARGS` stops with one line, exit 2, and leaves `where` (the folder it would write in) as it was."""
    before = digest(where)
    out = fdbu_main(*args)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("fdbu: error: "), out.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    assert digest(where) == before
    return lines[0]


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    """The same synthetic samples as official per-task folders and as a native tree (one seed)."""
    root = tmp_path_factory.mktemp("official")
    folders = synthesize(root / "official", n=N, seed=SEED, ineligible=0.25, layout="official")
    native = synthesize(root / "native", n=N, seed=SEED, ineligible=0.25)
    return folders, native


def test_official_layout_holds_what_asr_py_leaves(official):
    folders, native = official
    rows = {r["sample_id"]: r for r in json.loads((native / "manifest.json").read_text())["samples"]}
    reasons = set()
    for sid, row in rows.items():
        d = folders / sid
        ann = SUBSETS[row["subset"]].task.annotation
        assert (d / "input.wav").is_file() and (ann is None or (d / ann).is_file())
        if row["eligible"]:
            assert ann is None or (d / ann).read_bytes() == (native / sid / ann).read_bytes()
            assert (d / "output.wav").read_bytes() == (native / sid / "output.wav").read_bytes()
            doc = json.loads((d / "output.json").read_text())
            assert doc == json.loads((native / sid / "output.json").read_text())
            assert (d / "output.json").read_text() == json.dumps(doc, indent=4)  # asr.py's json.dump(..., indent=4)
        else:  # a capture cut at half its input (the official scripts run on it), with asr.py's words of it
            reasons |= set(row["reasons"])
            n = sf.info(str(d / "output.wav")).frames
            assert n == sf.info(str(native / sid / "output.wav")).frames // 2 if (native / sid).exists() else n > 0
            doc = json.loads((d / "output.json").read_text())
            assert all(c["timestamp"][1] <= n / 16000 + 5e-4 for c in doc["chunks"])
            truth = json.loads((folders / "synth.json").read_text())["samples"][sid]
            assert truth["reason"] == OFFICIAL_REASON
    assert reasons == {"output.wav missing", "output.wav is empty"}  # both native faults are exercised


@pytest.mark.slow
def test_synth_official_then_export_adopt_then_score_equals_the_native_tree(official, tmp_path):
    folders, native = official
    out = fdbu_main("export", roots(folders, V10), "export.transcripts=adopt", f"out={tmp_path / 'tree'}",
                    "progress=false")
    assert out.returncode == 0, out.stderr
    assert "transcripts adopted: written by the official Full-Duplex-Bench get_transcript/asr.py" in out.stdout
    scored = {}
    for name, tree in (("adopted", tmp_path / "tree"), ("native", native)):
        res = fdbu_main("score", f"tree={tree}", f"out={tmp_path / name}", "progress=false")
        assert res.returncode == 0, res.stderr
        scored[name] = (json.loads((tmp_path / name / "unified.json").read_text()),
                        (tmp_path / name / "unified-samples.jsonl").read_bytes(), res.stdout)
    (a, a_rows, a_out), (b, b_rows, _) = scored["adopted"], scored["native"]
    # every per-sample value, byte for byte, but the reason of an ineligible sample: the official folder's
    # capture is cut short (the official scripts run on it), the native tree's is missing or empty
    a_rows, b_rows = ([json.loads(line) for line in rows.splitlines()] for rows in (a_rows, b_rows))
    for x, y in zip(a_rows, b_rows):
        if not x["eligible"]:
            assert x.pop("reasons") == [OFFICIAL_REASON] and y.pop("reasons")[0] in ("output.wav missing",
                                                                                    "output.wav is empty")
    assert a_rows == b_rows
    for subset in SCORED:  # every metric, byte for byte
        assert json.dumps(a["subsets"][subset]["metrics"]) == json.dumps(b["subsets"][subset]["metrics"])
    # only provenance differs: the inputs' hashes, where the transcripts came from, and the declared sizes
    # (export declares the v1.0 release's, synth the sizes it wrote)
    assert a["transcripts"] == {"source": "adopted", "model": "nvidia/parakeet-tdt-0.6b-v2"}
    assert b["transcripts"]["source"] == "synthetic"
    for u in (a, b):
        u.pop("inputs"), u.pop("transcripts"), u.pop("samples_sha256")  # the rows' reasons differ (above)
        for entry in u["subsets"].values():
            entry["counts"].pop("declared"), entry["counts"].pop("ineligible_reasons")
    assert a == b
    assert "transcripts: adopted (nvidia/parakeet-tdt-0.6b-v2; made by the official asr.py, not by fdbu)" in a_out


def test_adopted_asr_json_records_the_source_and_the_hashes_not_a_run(official, tmp_path):
    folders, _ = official
    out = fdbu_main("export", roots(folders, (TT, UI)), "export.transcripts=adopt", "export.model=my/parakeet",
                    f"out={tmp_path / 't'}", "progress=false")
    assert out.returncode == 0, out.stderr
    tree = tmp_path / "t"
    manifest = json.loads((tree / "manifest.json").read_text())
    assert {r["subset"] for r in manifest["samples"]} == {TT, UI}  # the other subsets are simply left out
    asr = json.loads((tree / "asr.json").read_text())
    assert asr["config"] == {"source": "adopted", "model_id": "my/parakeet", "checkpoint_sha256": None,
                             "made_by": "the official Full-Duplex-Bench get_transcript/asr.py, not fdbu"}
    assert asr["subsets"][UI]["task"] == "user_interruption" and asr["subsets"][TT]["task"] == "default"
    for subset, entry in asr["subsets"].items():
        for name, digest_ in entry["transcripts"].items():
            src = folders / subset / name
            assert digest_ == hashlib.sha256((src / "output.json").read_bytes()).hexdigest()
            assert (tree / subset / name / "output.json").read_bytes() == (src / "output.json").read_bytes()
            assert entry["adopted_from"][name] == {
                "output.wav": hashlib.sha256((src / "output.wav").read_bytes()).hexdigest(), "output.json": digest_}
    assert all("output.json" not in r.get("files", {}) for r in manifest["samples"])


@pytest.mark.slow
def test_outputs_elsewhere_in_the_subset_layout(official, tmp_path):
    """outputs=DIR: the outputs (and asr.py's output.json) in DIR/<subset>/<id>/, the inputs in the mapped folders."""
    import shutil

    folders, _ = official
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    for d in sorted((folders / TT).iterdir()):
        (inputs / TT / d.name).mkdir(parents=True)
        (outputs / TT / d.name).mkdir(parents=True)
        for f in d.iterdir():
            shutil.copy(f, (outputs if f.name.startswith("output") else inputs) / TT / d.name / f.name)
    out = fdbu_main("export", f"export.roots={{{TT}: {inputs / TT}}}", f"outputs={outputs}",
                    "export.transcripts=adopt", f"out={tmp_path / 't'}", "progress=false")
    assert out.returncode == 0, out.stderr
    want = fdbu_main("export", f"export.roots={{{TT}: {folders / TT}}}", "export.transcripts=adopt",
                     f"out={tmp_path / 'u'}", "progress=false")
    assert want.returncode == 0 and digest(tmp_path / "t") == digest(tmp_path / "u")


@pytest.mark.slow
def test_a_folder_that_is_not_what_the_mapping_says_is_refused(official, tmp_path):
    folders, native = official
    (tmp_path / "empty").mkdir()
    cases = [
        (f"export.roots={{{TT}: {folders / PH}}}",
         f"export.roots.{TT}: {folders / PH}: expected <id>/input.wav and <id>/turn_taking.json (a {TT} folder); "
         f"found 0/pause.json (a {PH} or {CPH} sample)"),
        (f"export.roots={{icc_backchannel: {folders / UI}}}",
         "expected <id>/input.wav without a task annotation (a icc_backchannel folder); found 0/interrupt.json"),
        (f"export.roots={{{TT}: {folders}}}",
         f"expected <id>/input.wav and <id>/turn_taking.json (a {TT} folder); found a Full-Duplex-Bench v1.0 release "
         f"(<subset>/<id>/input.wav for {', '.join(V10)})"),
        (f"export.roots={{{TT}: {tmp_path / 'empty'}}}", "found an empty folder"),
        (f"export.roots={{{TT}: {native}}}", f"{native} is a reference tree (its manifest.json), not a "
                                             f"Full-Duplex-Bench release: score it with fdbu score tree={native}"),
        (f"export.roots={{{TT}: {tmp_path / 'nowhere'}}}", "found nothing: it does not exist"),
        (f"export.roots={{candor_turntaking: {folders / TT}}}", "'candor_turntaking' is not a subset; known: "),
        (f"export.roots={{{TT}: {folders / TT}, {CPH}: {folders / TT}}}", "to the same folder"),
    ]
    for mapping, message in cases:
        refused(["export", mapping, f"out={tmp_path / 'tree'}", "progress=false"], tmp_path, message)
    refused(["export", f"dataset={folders / UI}", f"out={tmp_path / 'tree'}", "progress=false"], tmp_path,
            f"dataset: {folders / UI}: expected a Full-Duplex-Bench release (<subset>/<id>/input.wav for subsets of v1.0",
            f"found an official per-task folder of {UI} samples (<id>/input.wav, interrupt.json); "
            f"map it instead: \"export.roots={{{UI}: {folders / UI}}}\"")
    refused(["export", f"dataset={folders}", roots(folders, (TT,)), f"out={tmp_path / 'tree'}"], tmp_path,
            "give the release as dataset=DIR or the per-task folders as export.roots={subset: DIR}, one of them")


def _broken(folders: Path, tmp_path: Path, subset: str, change) -> Path:
    """A copy of one per-task folder whose first sample with words is changed by `change(doc, folder)`."""
    import shutil

    dest = tmp_path / "copy" / subset
    shutil.copytree(folders / subset, dest)
    first = next(d for d in sorted(dest.iterdir(), key=lambda p: int(p.name)) if (d / "output.json").exists()
                 and any(c["timestamp"][1] > c["timestamp"][0]
                         for c in json.loads((d / "output.json").read_text())["chunks"]))
    doc = json.loads((first / "output.json").read_text())
    data = change(doc, first)
    if data is None:
        (first / "output.json").unlink()
    else:
        (first / "output.json").write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return dest


def _with(doc, word, key, value):
    doc["chunks"][word]["timestamp"][key] = value
    return doc


def _first_long(doc):
    return next(i for i, c in enumerate(doc["chunks"]) if c["timestamp"][1] > c["timestamp"][0])


MALFORMED = {
    "not JSON": (TT, lambda d, f: b"{\"text\": ", "output.json: is not valid JSON (line 1 column 10"),
    "no text": (TT, lambda d, f: {"chunks": d["chunks"]},
                "is not the official asr.py's shape: an object with 'text' (a string) and 'chunks' (a list)"),
    "chunks not a list": (TT, lambda d, f: {**d, "chunks": {"0": 1}}, "is not the official asr.py's shape"),
    "word without text": (TT, lambda d, f: {**d, "chunks": [{"timestamp": [1.0, 1.2]}]},
                          "word 0 is not an object with 'text' (a string) and 'timestamp'"),
    "no timestamp": (TT, lambda d, f: {**d, "chunks": [{"text": "a", "timestamp": [1.0]}]},
                     "word 0 has no two-element 'timestamp' list"),
    "NaN start": (TT, lambda d, f: json.dumps(_with(d, 0, 0, math.nan)).encode(),
                  "word 0 start is nan; times must be finite"),
    "infinite end": (TT, lambda d, f: json.dumps(_with(d, 0, 1, math.inf)).encode(),
                     "word 0 end is inf; times must be finite"),
    "text time": (TT, lambda d, f: _with(d, 0, 0, "1.0"), "word 0 start is '1.0', not a number of seconds"),
    "end before start": (TT, lambda d, f: _with(d, _first_long(d), 1, d["chunks"][_first_long(d)]["timestamp"][0] - 0.01),
                         "ends at", "before its start"),
    "start after T": (TT, lambda d, f: _with(d, 0, 0, 1000.0), "word 0 start 1000.000000 s lies outside the window",
                      "transcribe this audio again (export without export.transcripts=adopt, then fdbu asr) or leave "
                      "the sample out (export.only"),
    "negative start": (TT, lambda d, f: _with(d, 0, 0, -0.5), "word 0 start -0.500000 s lies outside the window"),
    "word before R": (UI, lambda d, f: {**d, "chunks": [{"text": "early", "timestamp": [
        json.loads((f / "interrupt.json").read_text())[0]["timestamp"][1] - 0.001, None]}] + d["chunks"]},
        "word 0 starts at", "not the official asr.py --task user_interruption's output"),
    "missing": (TT, lambda d, f: None, "output.json: is missing beside output.wav: export.transcripts=adopt takes"),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_output_json_stops_the_export_in_one_line(official, tmp_path, kind):
    folders, _ = official
    subset, change, *fragments = MALFORMED[kind]
    broken = _broken(folders, tmp_path, subset, change)
    line = refused(["export", f"export.roots={{{subset}: {broken}}}", "export.transcripts=adopt",
                    f"out={tmp_path / 'tree'}", "progress=false"], tmp_path, *fragments)
    assert line.startswith(f"fdbu: error: {subset}/"), line
    assert not (tmp_path / "tree").exists()


@pytest.mark.slow
def test_compare_refuses_adopted_against_other_transcripts_unless_told(official, tmp_path):
    folders, native = official
    assert fdbu_main("export", roots(folders, (TT,)), "export.transcripts=adopt", f"out={tmp_path / 'a'}",
                     "progress=false").returncode == 0
    b = synthesize(tmp_path / "b", n={TT: N}, seed=SEED, ineligible=0.25, system="prompt")
    for tree in (tmp_path / "a", b):
        assert fdbu_main("score", f"tree={tree}", "progress=false").returncode == 0
    trees = f"trees=[{tmp_path / 'a'},{b}]"
    refused(["compare", trees, "compare.allow_different_samples=true"], tmp_path,
            f"{b}: unified.json: its transcripts are 'synthetic', a's", "'adopted'",
            "pass compare.allow_mixed_transcripts=true")
    out = fdbu_main("compare", trees, "compare.allow_different_samples=true", "compare.allow_mixed_transcripts=true",
                    f"out={tmp_path / 'c'}", "plot=false")  # what compare.json says, not its figures
    assert out.returncode == 0, out.stderr
    assert "mixed transcripts: a adopted, b synthetic" in out.stdout
    result = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert result["mixed_transcripts"] is True
    assert [s["transcripts"]["source"] for s in result["systems"]] == ["adopted", "synthetic"]


@pytest.mark.slow
def test_a_wrong_tree_is_named_for_what_it_is_with_the_command_that_fixes_it(official, tmp_path):
    folders, native = official
    (tmp_path / "empty").mkdir()
    exported = tmp_path / "exported"
    assert fdbu_main("export", roots(folders, (TT,)), f"out={exported}", "progress=false").returncode == 0
    cases = {
        tmp_path / "empty": f"tree: {tmp_path / 'empty'} is an empty folder, not a reference tree; make one with "
                            "fdbu export dataset=DIR out=TREE",
        folders: f"tree: {folders} is a Full-Duplex-Bench v1.0 release (<subset>/<id>/input.wav for "
                 f"{', '.join(V10)}), not a reference tree; export it first: fdbu export dataset={folders} out=TREE",
        folders / UI: f"tree: {folders / UI} is an official per-task folder of {UI} samples (<id>/input.wav, "
                      f"interrupt.json), not a reference tree; export it first: fdbu export "
                      f"\"export.roots={{{UI}: {folders / UI}}}\" export.transcripts=adopt out=TREE, then fdbu score "
                      "tree=TREE",
        native / TT: f"tree: {native / TT} is the {TT} folder of the reference tree {native}; give the tree: "
                     f"tree={native}",
        native / "manifest.json": f"tree: {native / 'manifest.json'} is a file of the reference tree {native}; "
                                  f"give the folder: tree={native}",
        folders / UI / "0" / "input.wav": f"tree: {folders / UI / '0' / 'input.wav'} is the input.wav of the sample "
                                          f"folder {folders / UI / '0'}, not a reference tree folder",
        exported: f"tree: {exported} was exported but not transcribed (manifest.json, no asr.json); run fdbu asr "
                  f"tree={exported}, or export again with export.transcripts=adopt",
    }
    before = digest(folders), digest(native)
    for tree, message in cases.items():
        line = refused(["score", f"tree={tree}", "progress=false"], tmp_path, "fdbu: error: " + message)
        assert "out=" not in line.split(";")[0]  # never the out= message for a tree= problem
    assert (digest(folders), digest(native)) == before


def test_an_output_json_that_is_a_fifo_is_refused_not_read(official, tmp_path):
    """Adopting reads output.json beside output.wav: a named pipe there is refused by its kind before it is
    opened (reading it would wait forever), as every other file fdbu reads is."""
    import os

    folders, _ = official
    chosen = []
    broken = _broken(folders, tmp_path, TT, lambda doc, folder: chosen.append(folder))  # None: the file removed
    os.mkfifo(chosen[0] / "output.json")
    refused(["export", f"export.roots={{{TT}: {broken}}}", "export.transcripts=adopt", f"out={tmp_path / 'tree'}",
             "progress=false"], tmp_path, f"{TT}/{chosen[0].name}: output.json: is a FIFO (named pipe)")
    assert not (tmp_path / "tree").exists()
