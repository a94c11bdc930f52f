"""fdbu export: a tree from a v1.0-like dataset folder and a folder of outputs."""
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
import torchaudio

from builders import fdbu_main, wav_bytes
from fdbu.errors import FdbuError
from fdbu.tree.export import export
from fdbu.config.settings import NOT_T
from fdbu.synth import synthesize
from fdbu.tasks import SUBSETS, release_sizes

V10 = list(release_sizes("v1.0"))  # the release this file's folders are laid out as

UI, TT, PH = "synthetic_user_interruption", "candor_turn_taking", "candor_pause_handling"


def digest(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A dataset folder (inputs at 16 or 48 kHz, annotations) and an outputs folder with every kind of fault."""
    root = tmp_path_factory.mktemp("release")
    synth = synthesize(root / "synth", n=4, seed=6, ineligible=0.0)
    dataset, outputs = root / "dataset", root / "outputs"
    for subset in V10:
        for d in sorted((synth / subset).iterdir()):
            audio, _ = sf.read(str(d / "output.wav"), dtype="int16")
            src = dataset / subset / d.name
            src.mkdir(parents=True)
            if int(d.name) % 2:  # a 48 kHz input of exactly 3T samples
                sf.write(str(src / "input.wav"), np.repeat(audio, 3), 48000, subtype="PCM_16")
            else:
                sf.write(str(src / "input.wav"), audio[::-1], 16000, subtype="PCM_16")
            if SUBSETS[subset].task.annotation:
                shutil.copy(d / SUBSETS[subset].task.annotation, src / SUBSETS[subset].task.annotation)
            dst = outputs / subset / d.name
            dst.mkdir(parents=True)
            shutil.copy(d / "output.wav", dst / "output.wav")
    ui = outputs / UI
    audio, _ = sf.read(str(ui / "0" / "output.wav"), dtype="float32")
    sf.write(str(ui / "0" / "output.wav"), np.stack([np.repeat(audio, 3)] * 2, 1), 48000, subtype="FLOAT")
    audio, _ = sf.read(str(ui / "1" / "output.wav"), dtype="int16")
    (ui / "1" / "output.wav").write_bytes(wav_bytes(audio[:-800]))      # short
    audio, _ = sf.read(str(ui / "2" / "output.wav"), dtype="int16")
    (ui / "2" / "output.wav").write_bytes(wav_bytes(np.concatenate([audio, audio[:1600]])))  # long
    (ui / "3" / "output.wav").unlink()                                     # missing
    (outputs / TT / "0" / "output.wav").write_bytes(b"RIFF\x00\x00garbage")  # corrupt
    bad = np.zeros(16000, np.float32)
    bad[5] = np.nan
    sf.write(str(outputs / TT / "1" / "output.wav"), bad, 16000, subtype="FLOAT")  # non-finite
    sf.write(str(outputs / PH / "0" / "output.wav"), np.zeros(0, np.int16), 16000, subtype="PCM_16")  # empty
    return synth, dataset, outputs


def rows(tree):
    return {r["sample_id"]: r for r in json.loads((tree / "manifest.json").read_text())["samples"]}


def test_strict_export(release, tmp_path):
    synth, dataset, outputs = release
    before = digest(dataset), digest(outputs)
    tree = export(dataset, outputs, tmp_path / "tree", length="strict")
    assert (digest(dataset), digest(outputs)) == before  # never modified
    r = rows(tree)
    manifest = json.loads((tree / "manifest.json").read_text())
    assert manifest["declared"] == release_sizes("v1.0") and len(r) == 20
    assert r[f"{UI}/3"]["reasons"] == ["output.wav missing"]
    assert r[f"{TT}/0"]["reasons"][0].startswith("output.wav unreadable (")
    assert r[f"{TT}/1"]["reasons"] == ["output.wav has non-finite samples"]
    assert r[f"{PH}/0"]["reasons"] == ["output.wav is empty"]
    T = r[f"{UI}/1"]["input_samples"]
    assert r[f"{UI}/1"]["reasons"] == [NOT_T] and r[f"{UI}/1"]["output_samples"] == T - 800
    assert not r[f"{UI}/2"]["eligible"] and r[f"{UI}/2"]["output_samples"] == r[f"{UI}/2"]["input_samples"] + 1600
    # a 48 kHz input of 3T samples gives T; a PCM16 16 kHz output comes back bit for bit
    src, _ = sf.read(str(synth / PH / "1" / "output.wav"), dtype="int16")
    assert r[f"{PH}/1"]["input_samples"] == len(src) and r[f"{PH}/1"]["source_sample_rate"]["input"] == 48000
    got, _ = sf.read(str(tree / PH / "1" / "output.wav"), dtype="int16")
    assert np.array_equal(got, src)
    # a 48 kHz stereo float output is averaged and resampled by torchaudio
    audio, _ = sf.read(str(outputs / UI / "0" / "output.wav"), dtype="float32", always_2d=True)
    want = torchaudio.functional.resample(torch.from_numpy(audio.mean(1)).unsqueeze(0), 48000, 16000)[0].numpy()
    got, _ = sf.read(str(tree / UI / "0" / "output.wav"), dtype="int16")
    assert np.array_equal(got, np.clip(np.round(want.astype(np.float64) * 32768), -32768, 32767).astype(np.int16))
    ann = tree / UI / "0" / "interrupt.json"
    assert ann.read_bytes() == (dataset / UI / "0" / "interrupt.json").read_bytes()
    assert r[f"{UI}/0"]["files"]["interrupt.json"] == hashlib.sha256(ann.read_bytes()).hexdigest()


def test_fit_pads_and_crops_with_flags(release, tmp_path):
    _, dataset, outputs = release
    r = rows(export(dataset, outputs, tmp_path / "tree", length="fit"))
    assert r[f"{UI}/1"]["eligible"] and r[f"{UI}/1"]["length_fit"] == {"action": "padded", "samples": 800}
    assert r[f"{UI}/1"]["flags"] == ["padded 800 samples (50.0 ms) of silence at the end (export.length=fit)"]
    assert r[f"{UI}/2"]["length_fit"] == {"action": "cropped", "samples": 1600}
    assert r[f"{UI}/2"]["flags"] == ["cropped 1600 samples (100.0 ms) after T (export.length=fit)"]
    assert sf.info(str(tmp_path / "tree" / UI / "2" / "output.wav")).frames == r[f"{UI}/2"]["input_samples"]


def test_only_and_refusals(release, tmp_path):
    _, dataset, outputs = release
    r = rows(export(dataset, outputs, tmp_path / "a", only=[f"{TT}/2", f"{UI}/0"]))
    assert list(r) == [f"{TT}/2", f"{UI}/0"]
    with pytest.raises(FdbuError, match="already exists"):
        export(dataset, outputs, tmp_path / "a")
    with pytest.raises(FdbuError, match="export.only names samples the dataset does not have"):
        export(dataset, outputs, tmp_path / "b", only=[f"{TT}/99"])
    with pytest.raises(FdbuError, match="export.length='loose'"):
        export(dataset, outputs, tmp_path / "c", length="loose")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_export_then_transcripts_then_evaluate_then_score(release, tmp_path):
    synth, dataset, outputs = release
    out = fdbu_main("export", f"dataset={dataset}", f"outputs={outputs}", f"out={tmp_path / 'tree'}",
                    "progress=false")
    assert out.returncode == 0, out.stderr
    # the default export.length=tolerant keeps the output 50 ms short and the one 100 ms long
    assert "20 samples, 16 eligible, 4 ineligible" in out.stdout
    assert f"2 outputs fitted to T (export.length=tolerant; manifest.json length_fit): {UI}/1 padded 50.0 ms, " \
           f"{UI}/2 cropped 100.0 ms" in out.stdout
    tree = tmp_path / "tree"
    receipts = {s: {} for s in SUBSETS}
    for sid, row in rows(tree).items():  # the ASR stage's part, synthesized: the generator's transcripts
        if row["eligible"]:
            data = (synth / sid / "output.json").read_bytes()
            (tree / sid / "output.json").write_bytes(data)
            receipts[row["subset"]][sid.split("/")[1]] = hashlib.sha256(data).hexdigest()
    (tree / "asr.json").write_text(json.dumps({"config": {"model_id": "synthetic"}, "subsets": {
        s: {"task": SUBSETS[s].task.asr_task, "transcripts": t} for s, t in receipts.items()}}))
    for args in (["evaluate", f"tree={tree}"], ["score", f"tree={tree}", "progress=false", "vad.cache=false"]):
        out = fdbu_main(*args)
        assert out.returncode == 0, out.stderr
    assert "reference column (official rules, from summary.json):" in out.stdout
    unified = json.loads((tree / "unified.json").read_text())
    assert unified["subsets"][UI]["counts"]["ineligible_reasons"]["output.wav missing"] == 1
    assert unified["subsets"][TT]["counts"]["ineligible"] == 2
