"""`fdbu export`: a reference tree from the Full-Duplex-Bench v1.0 release and a system's outputs.

The release layout is `<subset>/<id>/input.wav` plus the subset's annotation; outputs
follow the same `<subset>/<id>/output.wav` layout (often the dataset folder itself). T is
the input's length after normalising it to 16 kHz mono with torchaudio; each output is
normalised the same way and written as 16 kHz mono PCM16. Nothing is dropped silently:
a missing, unreadable, empty, non-finite or (by default) wrong-length output makes its
sample ineligible with a reason. The dataset and outputs are only read; the tree is built
in a temporary folder and renamed into place at the end.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio
from tqdm import tqdm

from . import faults, tasks
from .atomic import dumps, sha256_bytes
from .outputs import new_folder
from .audio import SAMPLE_RATE as SR, wav_bytes
from .errors import FdbuError
from .settings import LENGTH_POLICIES
from .tree import MANIFEST_KIND, SAFE_NAME, regular



def _sort_key(name: str):
    return (0, int(name), name) if name.isdigit() else (1, 0, name)


def discover(dataset: Path, only: list[str] | None) -> list[tuple[str, str]]:
    """(subset, id) of every release sample folder, in subset order then numeric id order."""
    found = []
    for subset in tasks.SUBSETS:
        folder = dataset / subset
        if not folder.is_dir():
            continue
        for d in sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
                        key=lambda p: _sort_key(p.name)):
            if not SAFE_NAME.match(d.name):
                raise FdbuError(f"{subset}/{d.name}", None, "is not a plain sample folder name")
            found.append((subset, d.name))
    if only is not None:
        wanted = list(dict.fromkeys(only))
        have = {f"{s}/{i}" for s, i in found}
        missing = [w for w in wanted if w not in have]
        if missing:
            raise FdbuError("config", None, f"export.only names samples the dataset does not have: {missing[:5]}")
        found = [(s, i) for s, i in found if f"{s}/{i}" in set(wanted)]
    if not found:
        raise FdbuError("dataset", None, f"{dataset} holds no <subset>/<id>/ sample folders of Full-Duplex-Bench v1.0")
    return found


def to_16k_mono(audio: np.ndarray, sr: int) -> np.ndarray:
    """(frames, channels) float -> mono 16 kHz float32: channel mean, then torchaudio's resampler."""
    mono = audio.mean(axis=1, dtype=np.float64).astype(np.float32) if audio.ndim == 2 else audio.astype(np.float32)
    if sr == SR:
        return mono
    with torch.no_grad():
        return torchaudio.functional.resample(torch.from_numpy(mono).unsqueeze(0), orig_freq=sr, new_freq=SR)[0].numpy()


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    regular(path, str(path.parent), path.name)  # a FIFO would block the read forever
    audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return audio, sr


def _load(dataset: Path, outputs: Path, subset: str, name: str):
    """Everything one sample needs from disk; output problems are returned as reasons, not raised."""
    sid = f"{subset}/{name}"
    src = dataset / subset / name
    try:
        inp, in_sr = read_audio(src / "input.wav")
    except Exception as e:
        raise FdbuError(sid, "input.wav", f"cannot be read from the dataset ({e})") from None
    ann_name = tasks.subset(subset).task.annotation
    ann = None
    if ann_name:
        try:
            regular(src / ann_name, sid, ann_name)
            ann = (src / ann_name).read_bytes()
        except OSError:
            raise FdbuError(sid, ann_name, f"is missing from the dataset ({src / ann_name})") from None
    out_path = outputs / subset / name / "output.wav"
    if not out_path.is_file():
        return sid, inp, in_sr, ann, None, None, "output.wav missing"
    try:
        out, out_sr = read_audio(out_path)
    except Exception as e:
        return sid, inp, in_sr, ann, None, None, f"output.wav unreadable ({str(e).splitlines()[0]})"
    return sid, inp, in_sr, ann, out, out_sr, None


def export(dataset: Path, outputs: Path | None, out: Path, *, length: str = "strict", only: list[str] | None = None,
           progress: bool = False, workers: int = 4) -> Path:
    dataset, outputs, out = Path(dataset), Path(outputs or dataset), Path(out)
    if length not in LENGTH_POLICIES:
        raise FdbuError("config", None, f"export.length={length!r}; choose strict or fit")
    for what, d in (("dataset", dataset), ("outputs", outputs)):
        if not d.is_dir():
            raise FdbuError(what, None, f"{d} is not a directory")
        if out.resolve().is_relative_to(d.resolve()):  # export only reads them; it never writes into them
            raise FdbuError("output", None, f"out={out} lies inside the {what} folder {d}; pick a folder outside it")
    with new_folder(out, "fdbu export") as tmp:  # out= is checked before the dataset is read
        found = discover(dataset, only)
        rows = []
        with ThreadPoolExecutor(max_workers=workers) as pool:
            loaded = pool.map(lambda job: _load(dataset, outputs, *job), found)
            for sid, inp, in_sr, ann, audio, out_sr, reason in tqdm(loaded, total=len(found), desc="export",
                                                                    unit="sample", disable=not progress):
                rows.append(_sample(tmp, sid, inp, in_sr, ann, audio, out_sr, reason, length))
                faults.point(f"export:sample:{len(rows)}")
        manifest = {"schema_version": 1, "kind": MANIFEST_KIND, "declared": dict(sorted(tasks.release_sizes().items())),
                    "samples": rows}
        (tmp / "manifest.json").write_text(dumps(manifest))
    return out


def _sample(tmp: Path, sid: str, inp, in_sr, ann, audio, out_sr, reason, length: str) -> dict:
    subset, name = sid.split("/")
    T = len(to_16k_mono(inp, in_sr))
    row = {"sample_id": sid, "subset": subset, "task": tasks.subset(subset).task.name, "sample_rate": SR, "input_samples": T,
           "input_s": T / SR, "source_sample_rate": {"input": in_sr}}
    flags = []
    if T == 0:  # the dataset's own input is empty: no window to score (and no T for the manifest)
        reason = "input.wav is empty"
    if reason is None:
        if len(audio) == 0:
            reason = "output.wav is empty"
        elif not np.all(np.isfinite(audio)):
            reason = "output.wav has non-finite samples"
    if reason is None:
        row["source_sample_rate"]["output"] = out_sr
        mono = to_16k_mono(audio, out_sr)
        if len(mono) != T:
            if length == "strict":
                reason = (f"output.wav is {len(mono)} samples ({len(mono) / SR:.6f} s) at 16 kHz; "
                          f"the input is {T} samples ({T / SR:.6f} s)")
            elif len(mono) < T:
                flags.append(f"padded with {T - len(mono)} samples of silence")
                mono = np.concatenate([mono, np.zeros(T - len(mono), np.float32)])
            else:
                flags.append(f"cropped {len(mono) - T} samples after T")
                mono = mono[:T]
    if reason is not None:
        row.update({"eligible": False, "reasons": [reason]})
        return row
    folder = tmp / subset / name
    folder.mkdir(parents=True)
    files = {}
    data = wav_bytes(mono)
    (folder / "output.wav").write_bytes(data)
    files["output.wav"] = sha256_bytes(data)
    ann_name = tasks.subset(subset).task.annotation
    if ann_name:
        (folder / ann_name).write_bytes(ann)
        files[ann_name] = sha256_bytes(ann)
    row.update({"eligible": True, "reasons": [], "files": files})
    if flags:
        row["flags"] = flags
    return row
