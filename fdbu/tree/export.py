"""`fdbu export`: a reference tree from the Full-Duplex-Bench v1.0 release and a system's outputs.

The release layout is `<subset>/<id>/input.wav` plus the subset's annotation; outputs
follow the same `<subset>/<id>/output.wav` layout (often the dataset folder itself). The
official scripts' layout is one folder per task (`<root>/<id>/input.wav`, `output.wav` and
`output.json` beside it): `roots` maps each subset to its folder, and any subset may be left
out. With `transcripts="adopt"` each sample's official asr.py output.json is checked and
becomes its transcript (`fdbu.tree.adopt`). T is
the input's length after normalising it to 16 kHz mono with torchaudio; each output is
normalised the same way and written as 16 kHz mono PCM16. Nothing is dropped silently:
a missing, unreadable, empty, non-finite or (by default) wrong-length output makes its
sample ineligible with a reason. The dataset and outputs are only read; the tree is built
in a temporary folder and renamed into place at the end.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import numpy as np
import soundfile as sf
from ..common.progress import Bar

from . import adopt, layout
from ..common import faults
from .. import tasks
from ..common.atomic import dumps, sha256_bytes
from ..common.outputs import new_folder
from ..common.audio import SAMPLE_RATE as SR, non_finite, wav_bytes
from ..errors import FdbuError
from ..config.settings import CROP_MAX_MS, LENGTH_POLICIES, NOT_T, PAD_MAX_MS, TOO_LONG, TOO_SHORT, TRANSCRIPTS
from ..common.timebase import window_us
from ..common.atomic import kind_of, regular
from .export_sources import discover, folders
from .load import MANIFEST_KIND



def to_16k_mono(audio: np.ndarray, sr: int) -> np.ndarray:
    """(frames, channels) float -> mono 16 kHz float32: channel mean, then torchaudio's resampler (imported only for
    audio at another rate: a release at 16 kHz is exported without torch's seconds of imports)."""
    from ..common.device import held_import

    mono = audio.mean(axis=1, dtype=np.float64).astype(np.float32) if audio.ndim == 2 else audio.astype(np.float32)
    if sr == SR:
        return mono
    torch, torchaudio = held_import("torch"), held_import("torchaudio")
    with torch.no_grad():
        return torchaudio.functional.resample(torch.from_numpy(mono).unsqueeze(0), orig_freq=sr, new_freq=SR)[0].numpy()


def read_audio(path: Path) -> tuple[np.ndarray, int]:
    regular(path, str(path.parent), path.name)  # a FIFO would block the read forever
    audio, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return audio, sr


def dataset_audio(path: Path, sid: str) -> tuple[np.ndarray, int]:
    """A dataset's input (input.wav, v1.5's clean_input.wav): unreadable or non-finite is refused, naming it."""
    try:
        audio, sr = read_audio(path)
    except Exception as e:
        raise FdbuError(sid, path.name, f"cannot be read from the dataset ({e})") from None
    problem = non_finite(audio, sr)
    if problem:
        raise FdbuError(sid, path.name, f"{problem} in the dataset ({path})")
    return audio, sr


def _load(source: Path, outputs: Path, subset: str, name: str, adopting: bool):
    """Everything one sample needs from disk; output problems are returned as reasons, not raised."""
    sid = f"{subset}/{name}"
    src = source / name
    inp, in_sr = dataset_audio(src / "input.wav", sid)
    ann_name = tasks.subset(subset).task.annotation
    ann = None
    if ann_name:
        try:
            regular(src / ann_name, sid, ann_name)
            ann = (src / ann_name).read_bytes()
        except OSError:
            raise FdbuError(sid, ann_name, f"is missing from the dataset ({src / ann_name})") from None
    more = _load_more(src, outputs / name, subset, sid, adopting)
    out_path = outputs / name / "output.wav"
    absent = _absent(out_path, "output.wav")
    if absent:
        return sid, inp, in_sr, ann, None, None, absent, None, more
    try:
        out, out_sr = read_audio(out_path)
    except Exception as e:
        return sid, inp, in_sr, ann, None, None, f"output.wav unreadable ({str(e).splitlines()[0]})", None, more
    adopted: tuple[bytes, bytes | None] | None = None
    if adopting:  # (output.wav's bytes, output.json's bytes or None) as asr.py left them
        try:
            regular(outputs / name / "output.json", sid, "output.json")  # a FIFO is refused, not read forever
            adopted = (out_path.read_bytes(), (outputs / name / "output.json").read_bytes())
        except FileNotFoundError:
            adopted = (out_path.read_bytes(), None)
        except OSError as e:
            raise FdbuError(sid, "output.json", f"cannot be read: {e.strerror or e}") from None
    return sid, inp, in_sr, ann, out, out_sr, None, adopted, more


def _absent(path: Path, file: str) -> str | None:
    """Why an output cannot be read (the sample's reason), or None for a regular file: missing, or a FIFO, folder or
    device in its place (said as what it is, never "missing", and never opened: a FIFO would block)."""
    try:
        kind = kind_of(path.stat().st_mode)
    except OSError:
        return f"{file} missing"
    return None if kind is None else f"{file} is {kind}, not a file"


def _load_more(src: Path, outs: Path, subset: str, sid: str, adopting: bool) -> dict:
    """A v1.5 sample's other files (Task.audio): each input from the dataset folder (unreadable: refused, as
    input.wav is), each other output of the system from its outputs folder (a problem: its reason), and with
    adopting, the transcript beside each (X.json for X.wav; None where there is none)."""
    task = tasks.subset(subset).task
    outputs = dict(task.runs)
    more: dict[str, Any] = {"audio": {}, "json": {}}
    for file in task.audio:
        if file == "input.wav":  # read with the sample
            continue
        home = outs if file in outputs else src
        path = home / file
        if file not in outputs:
            more["audio"][file] = dataset_audio(path, sid)
            continue
        absent = _absent(path, file)
        if absent:
            more["audio"][file] = absent
            continue
        try:
            more["audio"][file] = read_audio(path)
        except Exception as e:
            more["audio"][file] = f"{file} unreadable ({str(e).splitlines()[0]})"
    if adopting:
        more["source"] = {}  # the SHA-256 of each adopted file and of the audio it transcribes, as found
        for file in task.transcribed:
            if file == "output.wav":  # read with output.wav
                continue
            name = file.replace(".wav", ".json")
            # an output's transcript beside it; an input's beside it in the dataset, or where asr.py ran (outputs)
            found = next((d / name for d in ((outs,) if file in outputs else (src, outs)) if (d / name).exists()),
                         None)
            if found is None:
                more["json"][name] = None
                continue
            path = found
            try:
                regular(path, sid, path.name)
                more["json"][name] = path.read_bytes()
                more["source"][name] = sha256_bytes(more["json"][name])
                wav = (outs if file in outputs else src) / file  # the audio it transcribes (an input: the dataset's)
                if wav.is_file():
                    more["source"][file] = sha256_bytes(wav.read_bytes())
            except OSError as e:
                raise FdbuError(sid, path.name, f"cannot be read: {e.strerror or e}") from None
    return more


def said(dataset: Path | None, tree: Path) -> list[str]:
    """What the console adds about a tree exported from a family's own run layout (`Layout.said`), else nothing."""
    run = layout.family_run(Path(dataset)) if dataset is not None else None
    return run[0].layout.said(tree) if run is not None and run[0].layout.said is not None else []


def export(dataset: Path | None, outputs: Path | None, out: Path, *, roots: dict | None = None,
           transcripts: str = "none", model: str = adopt.OFFICIAL_MODEL, length: str = "tolerant",
           only: list[str] | None = None, progress: bool = False, workers: int = 4, judge: Path | None = None) -> Path:
    """A tree at `out` from a release (`dataset`) or per-task folders (`roots`, subset -> folder); outputs
    `<outputs>/<subset>/<id>/output.wav`, or beside the inputs without `outputs`. A family's own run layout
    (`Family.layout`: v2's output root, with its `judge` outputs) is handed to that family's export."""
    out = Path(out)
    run = layout.family_run(Path(dataset)) if dataset is not None else None
    if run is not None:
        family = run[0]
        if outputs is not None:
            raise FdbuError("outputs", None, f"{dataset} is {run[1]}, which holds the system's outputs itself; "
                            "drop outputs=")
        if length != "tolerant":
            raise FdbuError("config", None, f"export.length={length}: a Full-Duplex-Bench {family.name} run's two "
                            "channels are fitted by their own rule (docs: Full-Duplex-Bench v2)")
        return family.layout.export(Path(cast(Path, dataset)), out, judge=judge, transcripts=transcripts, model=model,
                                    only=only, progress=progress)
    if judge is not None:
        raise FdbuError("config", None, "export.judge reads a run layout's per-session judge outputs (Full-Duplex-Bench "
                        f"v2's eval_results); {dataset or 'export.roots'} is not such a run")
    _check_settings(transcripts, length)
    _check_request(dataset, outputs, out, roots)
    with new_folder(out, "fdbu export") as tmp:  # out= is checked before the dataset is read
        sources = folders(Path(dataset) if dataset is not None else None, roots)
        found = discover(sources, only, Path(dataset) if dataset is not None else None)
        outs = {s: Path(outputs) / s if outputs is not None else sources[s] for s in sources}
        for subset in dict.fromkeys(sub for sub, _ in found):  # outputs= forgotten or wrong: say where it looked
            names = [name for sub, name in found if sub == subset]
            if not any((outs[subset] / name / "output.wav").exists() for name in names):
                raise FdbuError("outputs", None, f"no sample of {subset} has an output.wav (looked for "
                                f"{outs[subset]}/<id>/output.wav, e.g. {outs[subset] / names[0] / 'output.wav'}); give "
                                "the system's outputs as outputs=DIR (DIR/<subset>/<id>/output.wav)")
        rows: list[dict] = []
        receipts: dict[str, dict[str, str]] = {}
        adopted_from: dict[str, dict[str, dict]] = {}
        others: dict[str, dict[str, dict[str, str]]] = {}  # v1.5: subset -> X.json -> id -> SHA-256
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            loaded = pool.map(lambda job: _load(sources[job[0]], outs[job[0]], job[0], job[1], transcripts == "adopt"),
                              found)
            with Bar(loaded, total=len(found), desc="export", unit="sample", disable=not progress) as bar:
                for sid, inp, in_sr, ann, audio, out_sr, reason, adopted, more in bar:
                    row = _sample(tmp, sid, inp, in_sr, ann, audio, out_sr, reason, length, adopted, more)
                    rows.append(row)
                    if adopted is not None and row["eligible"]:
                        _adopted(sid, row, adopted, more, receipts, others, adopted_from)
                    faults.point(f"export:sample:{len(rows)}")
        finally:  # after a Ctrl-C or an error the files not yet read are not read (pool.map queued every one)
            pool.shutdown(cancel_futures=True)
        declared = {k: v for f in tasks.family_of(sources) for k, v in tasks.release_sizes(f).items()}
        manifest = {"schema_version": 1, "kind": MANIFEST_KIND, "declared": dict(sorted(declared.items())),
                    "samples": rows}
        (tmp / "manifest.json").write_text(dumps(manifest))
        if transcripts == "adopt":
            (tmp / "asr.json").write_text(dumps(adopt.receipt(model, receipts, adopted_from, others)))
    return out


def _no_tree_as_release(read: dict[str, Path]) -> None:
    """A reference tree given as the release is refused: what it is, and the command that reads it."""
    for what, d in read.items():
        tree = next((t for t in (d, d.parent) if layout.not_a_tree(t, transcribed=False) is None), None)
        if tree is not None:
            raise FdbuError(what, None, f"{d} is {'a subset of ' if tree != d else ''}a reference tree (its "
                            f"manifest.json), not a Full-Duplex-Bench release: score it with fdbu score tree={tree}")


def _check_settings(transcripts: str, length: str) -> None:
    """export's own settings' values, refused in one line before anything is read."""
    if length not in LENGTH_POLICIES:
        raise FdbuError("config", None, f"export.length={length!r}; choose {', '.join(LENGTH_POLICIES)}")
    if transcripts not in TRANSCRIPTS:
        raise FdbuError("config", None, f"export.transcripts={transcripts!r}; choose none or adopt")


def _check_request(dataset: Path | None, outputs: Path | None, out: Path, roots: dict | None) -> None:
    """What export was asked to read, refused in one line before anything is read: one source (a release or per-task
    folders), a reference tree given as a release (with the command that reads it), a folder that is not one, and
    out= inside a folder export reads."""
    if (dataset is None) == (roots is None):
        raise FdbuError("config", None, "give the release as dataset=DIR or per-task folders as "
                        "export.roots={subset: DIR, ...}, one of them")
    read = {"dataset": Path(dataset)} if dataset is not None else {f"export.roots.{s}": Path(d)  # roots given
                                                                    for s, d in cast(dict, roots).items()}
    if outputs is not None:
        read["outputs"] = Path(outputs)
    _no_tree_as_release({what: d for what, d in read.items() if what != "outputs"})
    for what, d in read.items():
        if what == "outputs" or what == "dataset":
            if not d.is_dir():
                raise FdbuError(what, None, f"{d} is not a directory")
        if out.resolve().is_relative_to(d.resolve()):  # export only reads them; it never writes into them
            raise FdbuError("output", None, f"out={out} lies inside the {what} folder {d}; pick a folder outside it")


def _adopted(sid: str, row: dict, adopted: tuple, more: dict, receipts: dict, others: dict,
             adopted_from: dict) -> None:
    """An eligible sample's adopted transcripts into asr.json's records (out of the manifest's files): output.json
    (`receipts`), v1.5's other transcripts (`others`), and what each was adopted from (`adopted_from`)."""
    subset, name = sid.split("/")
    receipts.setdefault(subset, {})[name] = row["files"].pop("output.json")
    for json_name in more["json"]:  # v1.5's other transcripts, adopted beside output.json
        if json_name in row["files"]:
            others.setdefault(subset, {}).setdefault(json_name, {})[name] = row["files"].pop(json_name)
    source = {"output.wav": sha256_bytes(adopted[0]), "output.json": sha256_bytes(adopted[1])}
    if row.get("dropped_words"):  # the tree's output.json is the adopted one less its words after T
        source["dropped_after_T"] = row["dropped_words"]
    source.update(more.get("source", {}))  # v1.5: the other runs' and the inputs' files
    if row.get("other_dropped_words"):
        source["other_dropped_after_T"] = row["other_dropped_words"]
    adopted_from.setdefault(subset, {})[name] = source


def _length(mono: np.ndarray, T: int, policy: str, pad_max: int, crop_max: int):
    """(audio of exactly T samples or None, reason or None, {"action", "samples"} or None): the length policy
    (Definition 44). Reasons are stable categories, so unified.json counts them; the numbers go in the row."""
    n = len(mono)
    if n == T:
        return mono, None, None
    short = n < T
    if policy == "strict":
        return None, NOT_T, None
    if policy == "tolerant" and short and T - n > pad_max:
        return None, TOO_SHORT, None
    if policy == "tolerant" and not short and n - T > crop_max:
        return None, TOO_LONG, None
    if short:
        return np.concatenate([mono, np.zeros(T - n, np.float32)]), None, {"action": "padded", "samples": T - n}
    return mono[:T], None, {"action": "cropped", "samples": n - T}


def _about(reason: str, file: str) -> str:
    """A length or fault reason of output.wav, said of another output (v1.5's clean_output.wav)."""
    return reason.replace("output.wav", file, 1)


def _other_runs(sid: str, row: dict, mono_input, more: dict, length: str, flags: list, written: dict,
                adopting: bool) -> str | None:
    """v1.5: input.wav and the clean run's input written as 16 kHz mono, and each other output checked and fitted
    to its own input (export.length applies to each run; a problem makes the sample ineligible, its reason naming
    the file), their transcripts adopted with output.json's checks. Fills `written` (file -> bytes) and the row;
    returns the reason the sample is ineligible, or None."""
    task = tasks.subset(row["subset"]).task
    inputs = {"input.wav": mono_input}
    for file, loaded in more["audio"].items():
        if file not in dict(task.runs):  # another input of the dataset (input.wav is read with the sample)
            audio, sr = loaded
            inputs[file] = to_16k_mono(audio, sr)
            row["source_sample_rate"][file.removesuffix(".wav")] = sr
            row["source_channels"][file.removesuffix(".wav")] = audio.shape[1] if audio.ndim == 2 else 1
            row[f"{file.removesuffix('.wav')}_samples"] = len(inputs[file])
            if len(inputs[file]) == 0:
                return f"{file} is empty"
    for file, answers in task.runs:
        if file == "output.wav":
            continue
        loaded, n = more["audio"][file], len(inputs[answers])
        if isinstance(loaded, str):
            return loaded
        audio, sr = loaded
        if len(audio) == 0:
            return f"{file} is empty"
        if not np.all(np.isfinite(audio)):
            return f"{file} has non-finite samples"
        row["source_sample_rate"][file.removesuffix(".wav")] = sr
        row["source_channels"][file.removesuffix(".wav")] = audio.shape[1] if audio.ndim == 2 else 1
        mono = to_16k_mono(audio, sr)
        observed_us = window_us(len(mono), SR)
        if len(mono) != n:
            row.setdefault("other_output_samples", {})[file] = len(mono)
        mono, reason, fitted = _length(mono, n, length, PAD_MAX_MS * SR // 1000, CROP_MAX_MS * SR // 1000)
        if reason is not None:
            return _about(reason, file)
        if fitted is not None:
            row.setdefault("other_length_fit", {})[file] = fitted
            flags.append(f"{file} {fitted['action']} {fitted['samples']} samples (export.length={length})")
        written[file] = wav_bytes(mono)
        json_name = file.replace(".wav", ".json")
        if adopting:
            data = more["json"].get(json_name)
            if data is None:
                raise FdbuError(sid, json_name, f"is missing beside {file}: export.transcripts=adopt takes the "
                                "transcripts of both runs (the behaviour judge reads them); transcribe it, or export "
                                "without adopt and run fdbu asr")
            written[json_name], dropped = adopt.check(data, sid, window_us(n, SR), None, observed_us=observed_us,
                                                      file=json_name)
            if dropped:  # as for output.json: words starting after the cropped run's end
                row.setdefault("other_dropped_words", {})[json_name] = dropped
                flags.append(f"{dropped} {json_name} word{'s' if dropped > 1 else ''} starting after its run's end "
                             f"dropped ({file} cropped)")
    for file, audio in inputs.items():
        written[file] = wav_bytes(audio)
        json_name = file.replace(".wav", ".json")
        if adopting and more["json"].get(json_name) is not None:  # an input's transcript, where there is one
            written[json_name], _ = adopt.check(more["json"][json_name], sid, window_us(len(audio), SR), None,
                                                file=json_name)
        elif adopting:  # the behaviour judge skips a sample without it (eval_behavior.py skips it too)
            flags.append(f"no {json_name} to adopt (beside {file} or in the outputs): fdbu asr can transcribe it")
    return None


def keeps(row: dict) -> str:
    """For an ineligible row: what it is, with its numbers, and what would keep it (export's console). A length
    reason is said of the output it names (output.wav, or v1.5's clean_output.wav against clean_input.wav)."""
    reason = "; ".join(row["reasons"])
    lengths = {_about(r, f): f for f in ("output.wav", "clean_output.wav") for r in (NOT_T, TOO_SHORT, TOO_LONG)}
    if len(row["reasons"]) != 1 or row["reasons"][0] not in lengths:
        return reason
    file = lengths[row["reasons"][0]]
    if file == "output.wav":
        n, T = row.get("output_samples"), row.get("input_samples")
    else:  # the clean run: its own input's length
        n, T = row.get("other_output_samples", {}).get(file), row.get("clean_input_samples")
    if n is None or T is None or n == T:
        return reason
    # in ms to a tenth: a sample past the bound (81 ms read 0.080 s) must not look like the bound itself
    side = f"{(T - n) * 1000 / SR:.1f} ms shorter" if n < T else f"{(n - T) * 1000 / SR:.1f} ms longer"
    what = f"{file} is {side} than its input ({n} vs {T} samples at 16 kHz)"
    if row["reasons"][0] == _about(NOT_T, file):
        return f"{what}; the default export.length=tolerant keeps it if it is at most {PAD_MAX_MS} ms short or " \
               f"{CROP_MAX_MS} ms long, export.length=fit at any length"
    return f"{what}; export.length=fit {'pads it with silence' if n < T else 'crops it at T'} " \
           "(check that it is this sample's capture)"


def _sample(tmp: Path, sid: str, inp, in_sr, ann, audio, out_sr, reason, length: str, adopted=None,
            more: dict | None = None) -> dict:
    subset, name = sid.split("/")
    mono_input = to_16k_mono(inp, in_sr)
    T = len(mono_input)
    row: dict[str, Any]
    row = {"sample_id": sid, "subset": subset, "task": tasks.subset(subset).task.name, "sample_rate": SR, "input_samples": T,
           "input_s": T / SR, "source_sample_rate": {"input": in_sr}}
    flags, fitted = [], None
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
            row["output_samples"] = len(mono)
        observed_us = window_us(len(mono), SR)
        mono, reason, fitted = _length(mono, T, length, PAD_MAX_MS * SR // 1000, CROP_MAX_MS * SR // 1000)
        if fitted is not None:
            row["length_fit"] = fitted
            flags.append(f"{fitted['action']} {fitted['samples']} samples ({fitted['samples'] / SR * 1000:.1f} ms) "
                         f"{'of silence at the end' if fitted['action'] == 'padded' else 'after T'} "
                         f"(export.length={length})")
    if reason is not None:
        row.update({"eligible": False, "reasons": [reason]})
        return row
    task = tasks.subset(subset).task
    if ann is not None and task.read is not None:  # read as score reads it: refused here, while the dataset's folder
        task.read(ann, sid, window_us(T, SR))       # can still be fixed, not copied and refused by score later
    transcript, dropped = None, 0
    if adopted is not None:  # refused here, before anything of the sample is written
        if adopted[1] is None:
            raise FdbuError(sid, "output.json", "is missing beside output.wav: export.transcripts=adopt takes the "
                            "official asr.py's output.json; run it on this folder, or export without adopt and "
                            "run fdbu asr")
        transcript, dropped = adopt.check(adopted[1], sid, window_us(T, SR), ann, observed_us=observed_us)
        if dropped:
            flags.append(f"{dropped} transcript word{'s' if dropped > 1 else ''} starting after T dropped "
                         "(output.wav cropped)")
    written: dict[str, bytes] = {}
    if more and more["audio"]:  # v1.5: the inputs and the clean run, each output fitted to its input
        row["source_channels"] = {"input": inp.shape[1] if inp.ndim == 2 else 1,
                                  "output": audio.shape[1] if audio.ndim == 2 else 1}
        reason = _other_runs(sid, row, mono_input, more, length, flags, written, adopted is not None)
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
    if transcript is not None:  # copied unchanged unless words after T were dropped; its hash goes to asr.json
        (folder / "output.json").write_bytes(transcript)
        files["output.json"] = sha256_bytes(transcript)
    for file, data in written.items():
        (folder / file).write_bytes(data)
        files[file] = sha256_bytes(data)
    row.update({"eligible": True, "reasons": [], "files": files})
    if dropped:
        row["dropped_words"] = dropped
    if flags:
        row["flags"] = flags
    return row
