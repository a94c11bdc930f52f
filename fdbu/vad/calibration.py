"""The batched backend's guard margin, measured on the device that computes, not assumed.

The guard (`kernels/segments.py`) makes batched segments equal the reference path's as long
as every batched probability lies within its margin of the reference path's. That deviation
is float rounding, and it depends on the device: the CPU's instruction set and thread count,
or the GPU and its CUDA libraries. So on first use on a device both paths run on a shipped
calibration corpus, and the margin is `max(MULTIPLE x largest deviation, FLOOR)`. The result
is stored beside the probability cache under the device's identity (hardware, torch,
silero-vad and model hash, the batched code's own hash, the corpus), so any change in those
calibrates again. A deviation beyond float rounding (`IMPLAUSIBLE`) means the batched path
is broken on this device, and the batched backend is refused.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..common import device as devices, faults
from ..common.atomic import dumps, open_own, regular_bytes, write_bytes, write_text
from ..common.cachedir import CALIBRATION, VAD_PROBS, cache_root
from ..errors import FdbuError
from ..common.log import note

MULTIPLE = 8         # margin = MULTIPLE x the largest deviation measured on the device ...
FLOOR = 1e-4         # ... and never less than this
IMPLAUSIBLE = 1e-3   # float rounding stays far below this; a deviation above it is a broken path
CORPUS_FILES, CORPUS_SEED = 48, 20261130
SR = 16000
FORMAT = "fdbu-vad-calibration-2"


def corpus_lengths() -> list[int]:
    """4 to 44 s (24 s on average), none a whole number of windows: computed in one batched call,
    the files drop out of the LSTM's steps one by one, as the files of a real batch do, and each
    ends in a zero-padded short window."""
    return [SR * (4 + (17 * f) % 41) + 1 + (37 * f) % 511 for f in range(CORPUS_FILES)]


def corpus() -> list[np.ndarray]:
    """The calibration corpus: 48 files of 4 to 44 s built from the shipped word bank.

    Words at five levels (gain 1 to 1/16) with gaps of 20-500 ms walk the probabilities through
    both thresholds; each sixth of the files is clean, has added noise at one of three levels,
    or its gain changed by x3 (clipped) or /5. Only integer arithmetic on PCM16 values and
    integer draws of numpy's PCG64, so the corpus is the same samples on every machine.
    """
    from ..synth.speech import bank

    _, clips = bank()
    rng = np.random.default_rng(CORPUS_SEED)
    out = []
    for f, n in enumerate(corpus_lengths()):
        x = np.zeros(n, np.int64)
        pos = int(rng.integers(0, SR))
        while pos < n:
            clip = clips[int(rng.integers(len(clips)))].astype(np.int64) >> int(rng.integers(0, 5))
            end = min(pos + len(clip), n)
            x[pos:end] += clip[:end - pos]
            pos = end + int(rng.integers(SR // 50, SR // 2))
        variant = f % 6
        if variant in (1, 2, 3):
            a = (30, 300, 1200)[variant - 1]
            x += rng.integers(-a, a + 1, n) + rng.integers(-a, a + 1, n) + rng.integers(-a, a + 1, n)
        elif variant == 4:
            x *= 3
        elif variant == 5:
            x //= 5
        out.append(np.clip(x, -32768, 32767).astype(np.float32) / np.float32(32768))
    return out


def corpus_sha256(audios: list[np.ndarray]) -> str:
    h = hashlib.sha256()
    for a in audios:
        h.update(np.ascontiguousarray(a, "<f4").tobytes())
    return h.hexdigest()


BATCHED_CODE = ("batched.py", "batched_numpy.py", "weights.py")  # the batched paths' source (read, not imported)


def batched_code_sha256() -> str:
    """The batched paths' version: the SHA-256 of their source, so any change to it calibrates again."""
    h = hashlib.sha256()
    for name in BATCHED_CODE:
        h.update(Path(__file__).with_name(name).read_bytes())
    return h.hexdigest()


@dataclass
class Calibration:
    identity: dict
    key: str
    deviation: float      # largest |batched - reference| window probability on the corpus
    margin: float         # the guard margin used on this device
    windows: int
    audio_s: float
    corpus_sha256: str
    seconds: float        # how long the calibration took

    def line(self) -> str:
        return (f"guard margin {self.margin:.1e} = max({MULTIPLE} x {self.deviation:.2e}, {FLOOR:.0e}), calibrated on "
                f"{devices.describe(self.identity['device'])} over {self.windows} windows")


def identity(silero, batched) -> dict:
    """The calibration's key: the batched path's device identity (its engine, numpy or torch, and what its float
    results depend on there), the model, the batched code, the corpus and the rule."""
    from .silero import torch_version

    # the reference half runs silero-vad's model in torch on this CPU: its version, and the instruction set a user
    # may force on torch's CPU kernels (the CPU's own is in the device identity: its model and numpy's SIMD targets)
    reference_path = {"torch": torch_version(), "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY")}
    return {"format": FORMAT, "device": batched.identity(), "reference": reference_path,
            "silero_vad_version": silero.version, "model_sha256": silero.model_sha256,
            "batched_code_sha256": batched_code_sha256(),
            "corpus": {"files": CORPUS_FILES, "samples": sum(corpus_lengths()), "seed": CORPUS_SEED,
                       "numpy": np.__version__},
            "rule": {"multiple": MULTIPLE, "floor": FLOOR, "implausible": IMPLAUSIBLE}}


def _key(ident: dict) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()


def reference(folder: Path | None, silero, audios: list[np.ndarray], bar=None, workers: int = 1) -> list[np.ndarray]:
    """The reference path's probabilities of the corpus on this CPU: the expensive half of a
    calibration, kept so that another thread count or a GPU on the same host costs only the
    batched pass. Keyed by the CPU identity (the reference runs on one CPU thread per file;
    `workers` files at a time give the same bits)."""
    ident = {"format": FORMAT, "cpu": devices.identity("cpu"), "silero_vad_version": silero.version,
             "model_sha256": silero.model_sha256, "corpus_sha256": corpus_sha256(audios)}
    name = f"reference-{_key(ident)}.f32"
    path = Path(folder) / name if folder else None
    sizes = [(len(a) + 511) // 512 for a in audios]
    stored = _stored_reference(path, name, ident, sizes)
    if stored is not None:
        return stored
    # calibrations at other thread counts sharing this folder (a fixed vad.threads and the cores free, shards started
    # together) need the same pass: the first computes it, the others wait and read it
    with _one_at_a_time(path.with_suffix(".lock") if path is not None else None,
                        f"computing the calibration corpus' reference pass on this CPU ({ident['cpu']['name']})"):
        stored = _stored_reference(path, name, ident, sizes)
        if stored is not None:
            return stored
        probs = silero.reference_many([(lambda a=a: a) for a in audios], workers,
                                      None if bar is None else (lambda i, _: bar.update(len(audios[i]) / SR)))
        if path is not None:
            payload = np.concatenate(probs).astype("<f4").tobytes()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_bytes(path, json.dumps({**ident, "payload_sha256": hashlib.sha256(payload).hexdigest()}).encode()
                            + b"\n" + payload)
            except OSError:
                pass
    return probs


def _stored_reference(path: Path | None, name: str, ident: dict, sizes: list[int]) -> list[np.ndarray] | None:
    """The reference pass stored in this folder, or in the default cache root's (the same CPU computed it: another
    cache_dir need not redo it); None where neither holds it whole."""
    for candidate in (path, cache_root() / VAD_PROBS / CALIBRATION / name):
        try:
            data = regular_bytes(candidate) if candidate is not None else None  # a FIFO would block the read
            if data is None:
                continue
            head, payload = data.split(b"\n", 1)
            if json.loads(head) == {**ident, "payload_sha256": hashlib.sha256(payload).hexdigest()} \
                    and len(payload) == 4 * sum(sizes):
                return np.split(np.frombuffer(payload, "<f4"), np.cumsum(sizes)[:-1])
        except (AttributeError, OSError, ValueError, RecursionError):
            continue
    return None


def measure(silero, batched, ident: dict, folder: Path | None = None, progress: bool = False) -> Calibration:
    """Run both paths over the corpus and derive the margin (refusing a broken batched path)."""
    from ..common.progress import Bar

    t0 = time.perf_counter()
    audios = corpus()
    audio_s = sum(len(a) for a in audios) / SR
    deviation, windows = 0.0, 0
    # a microsecond of slack: the per-file additions may sum a rounding past 2 x audio_s, and tqdm warns at once
    # ("clamping frac") when its count passes the total
    total = 2 * audio_s + 1e-6
    with Bar(total=total, unit="audio s", desc="calibration", disable=not progress,
              bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} audio s [{elapsed}<{remaining}]") as bar:
        batched_probs = batched.probabilities(audios)
        bar.update(audio_s)
        faults.point("calibrate:batched")  # the reference pass next
        refs = reference(folder, silero, audios, bar,
                         batched.threads if ident["device"]["type"] == "cpu" else devices.free_cores())
        bar.update(max(0.0, total - bar.n))  # a stored reference pass costs nothing
    for probs, ref in zip(batched_probs, refs):
        deviation = max(deviation, float(np.abs(probs.astype(np.float64) - ref.astype(np.float64)).max()))
        windows += len(ref)
    return Calibration(ident, _key(ident), deviation, max(MULTIPLE * deviation, FLOOR), windows,
                       audio_s, corpus_sha256(audios), time.perf_counter() - t0)


def check(cal: Calibration) -> Calibration:
    if not cal.deviation <= IMPLAUSIBLE:
        raise FdbuError("vad", None, f"the batched backend's probabilities differ from the reference path's by up to "
                        f"{cal.deviation:.1e} on {devices.describe(cal.identity['device'])}, beyond float rounding "
                        f"({IMPLAUSIBLE:.0e}): the batched path is broken on this device; use vad.backend=reference")
    return cal


def path_for(folder: Path, ident: dict) -> Path:
    return Path(folder) / f"{_key(ident)}.json"


def load(folder: Path, ident: dict) -> Calibration | None:
    """A stored calibration for exactly this identity, or None (missing, unreadable or for something else)."""
    try:
        data = regular_bytes(path_for(folder, ident))  # a FIFO would block the read
        if data is None:
            return None
        doc = json.loads(data)
        cal = Calibration(**doc)
    except (OSError, ValueError, TypeError):
        return None
    if cal.identity != json.loads(json.dumps(ident)) or cal.key != _key(ident):
        return None
    if not (isinstance(cal.deviation, float) and cal.margin == max(MULTIPLE * cal.deviation, FLOOR)):
        return None
    return cal


def store(folder: Path, ident: dict, cal: Calibration) -> bool:
    """Keep it for later runs; a cache folder that cannot be written only costs a recalibration."""
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        write_text(path_for(folder, ident), dumps(asdict(cal)))
        return True
    except OSError:
        return False


def lock_path(folder: Path, ident: dict) -> Path:
    return Path(folder) / f"{_key(ident)}.lock"


def one_at_a_time(folder: Path, ident: dict):
    """Processes sharing a cache (shards started together) calibrate a device once: the first takes this
    lock and calibrates, the others wait for it, then read its result. A folder that cannot hold the
    lock only costs calibrating more than once."""
    return _one_at_a_time(lock_path(folder, ident), f"calibrating {devices.describe(ident['device'])} in this cache")


@contextlib.contextmanager
def _one_at_a_time(path: Path | None, what: str):
    """An exclusive lock on `path` while the body runs, waited for with a note saying `what` the holder does; no
    path, or a lock that cannot be opened, only costs doing the work twice."""
    if path is None:
        yield
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_own(path, os.O_WRONLY | os.O_CREAT, 0o644, where="cache")  # a link is refused by name
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            note(f"fdbu: waiting for another process {what} (lock {path})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def calibration(folder: Path, silero, batched, *, force: bool = False, progress: bool = False) -> Calibration:
    """The stored calibration for this device, or a new one (stored when the folder is writable),
    announced in a note (`fdbu.common.log`): it runs both paths over the corpus, once per device and cache."""
    ident = identity(silero, batched)
    cal = None if force else load(folder, ident)
    if cal is None:
        with one_at_a_time(folder, ident):
            cal = None if force else load(folder, ident)  # made by the process this one waited for
            if cal is None:
                note(f"fdbu: calibrating the batched backend on this device ({devices.describe(ident['device'])}), "
                    f"once per device and cache: both paths over {CORPUS_FILES} files, "
                    f"{sum(corpus_lengths()) / SR:.0f} s of audio")
                cal = measure(silero, batched, ident, folder, progress)
                store(folder, ident, cal)
    return check(cal)
