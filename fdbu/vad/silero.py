"""The one module that calls silero-vad: every parameter passed explicitly (the lhotse way).

The reference path is the spec's call, `load_silero_vad()` and `get_speech_timestamps(...)`
on the whole output.wav, one file at a time. It is split at silero-vad's own seam: the
window probabilities (`reference_probs`, the same model calls in the same order) and
silero-vad's `get_speech_timestamps_from_probs`, so the probabilities can be cached.
`segment_samples` is the literal one-call form, used to verify the split and the batched path.
"""
from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..common.atomic import sha256_file
from ..common.device import held_import, load_torch, package_folder, torch_literal
from ..errors import FdbuError
from ..config.settings import SegmentRule, SileroSettings  # noqa: F401  (re-exported)
from ..common.timebase import to_us

MODEL_PACKAGE = "silero_vad"  # its data/ folder holds the model file
MODEL_FILE = "silero_vad.jit"


@contextlib.contextmanager
def torch_threads(n: int):
    """Run with n intra-op threads, then restore (silero-vad sets 1 globally when imported)."""
    torch = load_torch()
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _one_thread():
    """The reference path: one thread, as silero-vad runs; the window loop gains nothing from more."""
    return torch_threads(1)


STOPPING = threading.Event()  # set while a pool's work is abandoned (an error, a Ctrl-C): its loops end early


class Abandoned(Exception):
    """Raised inside a worker whose pool's work was abandoned: nothing it computes would be used."""


def abandoned() -> None:
    """Called every few hundred steps by the long loops workers run (a batch's LSTM steps, a file's windows): a Ctrl-C
    in the main thread then ends the running work within a few steps, so its line comes at once, not after every
    running file (7-8 s during the calibration or the guard)."""
    if STOPPING.is_set():
        raise Abandoned()


@contextlib.contextmanager
def one_thread_workers(workers: int, name: str, one_thread: Callable[[], contextlib.AbstractContextManager] | None = None):
    """A pool of `workers` threads that each compute on one thread of the math library (torch's, or what
    `one_thread` limits: numpy's BLAS). The count is process-wide, so it is set once around them all (a worker
    setting it would change the others'); on an error or an interrupt the work not started is cancelled and the
    running work is abandoned (`abandoned`), then waited for."""
    with (one_thread or _one_thread)():
        pool = ThreadPoolExecutor(workers, thread_name_prefix=name)
        try:
            yield pool
        except BaseException:
            STOPPING.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            STOPPING.clear()


def model_path() -> Path:
    """The JIT model silero-vad ships (silero_vad/data/silero_vad.jit, what `load_silero_vad` loads)."""
    return package_folder(MODEL_PACKAGE) / "data" / MODEL_FILE


@functools.lru_cache(maxsize=1)
def torch_version() -> str:
    """`torch.__version__` without importing torch: the literal torch's own version.py holds, as torch reads it
    (with the build's local tag, `2.9.1+cu128`, which the package metadata leaves out)."""
    if "torch" in sys.modules:
        return str(sys.modules["torch"].__version__)
    try:
        return str(torch_literal("__version__"))
    except LookupError:
        return str(load_torch().__version__)  # a torch laid out otherwise: asked the slow way


@functools.lru_cache(maxsize=1)
def _model_sha256() -> str:
    return sha256_file(model_path())


def silero_vad():
    """The silero_vad package (it imports torch), imported with Ctrl-C held (`fdbu.common.device.interrupts_held`)."""
    return held_import("silero_vad")


@functools.lru_cache(maxsize=None)
def _load_model(worker: int = 0):
    """The packaged JIT model, loaded once per process and worker (it is reset before every file; a worker computing
    files beside others needs its own, since the model holds one file's streaming state)."""
    return silero_vad().load_silero_vad(onnx=False, opset_version=16, sequence=False, sampling_rate=16000, max_frames=512)


class SileroVAD:
    """The packaged JIT model, loaded once, and the settings every call passes."""

    def __init__(self, settings: SileroSettings = SileroSettings()):
        self.settings = settings
        self.version = importlib.metadata.version("silero-vad")
        self.model_file = MODEL_FILE
        self.model_sha256 = _model_sha256()

    @property
    def model(self):
        return _load_model(0)

    def signature(self) -> dict:
        """What the segments depend on. No backend or device: those must not change a segment."""
        return {
            "silero_vad_version": self.version,
            "model_file": self.model_file,
            "model_sha256": self.model_sha256,
            "torch_version": torch_version(),
            "settings": self.settings.as_dict(),
        }

    def segment_samples(self, audio: np.ndarray) -> list[tuple[int, int]]:
        """The spec's literal call: `get_speech_timestamps` on the whole waveform, [start, end) samples."""
        _finite(audio, self.settings.sampling_rate)
        torch = load_torch()
        with _one_thread():
            stamps = silero_vad().get_speech_timestamps(torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32)),
                                           self.model, progress_tracking_callback=None, window_size_samples=512,
                                           **self.settings.rule.call_kwargs())
        return [(int(t["start"]), int(t["end"])) for t in stamps]

    def official_backchannel_segments(self, audio: np.ndarray) -> list[tuple[float, float]]:
        """eval_backchannel.py's call: silero-vad's defaults (30 ms padding), seconds to 0.1 s."""
        _finite(audio, 16000)
        torch = load_torch()
        with _one_thread():
            stamps = silero_vad().get_speech_timestamps(
                torch.from_numpy(np.asarray(audio, dtype=np.float64)).float().unsqueeze(0), self.model,
                threshold=0.5, sampling_rate=16000, min_speech_duration_ms=250, max_speech_duration_s=float("inf"),
                min_silence_duration_ms=100, speech_pad_ms=30, return_seconds=True, time_resolution=1,
                visualize_probs=False, progress_tracking_callback=None, neg_threshold=None, window_size_samples=512,
                min_silence_at_max_speech=98, use_max_poss_sil_at_max_speech=True)
        return [(float(t["start"]), float(t["end"])) for t in stamps]

    def reference_probs(self, audio: np.ndarray, windows: int | None = None) -> np.ndarray:
        """The window probabilities `get_speech_timestamps` computes: same model calls, same order (with
        `windows`, the first ones only)."""
        _finite(audio, self.settings.sampling_rate)
        with _one_thread():
            return self._probs(audio, self.model, windows)

    def _probs(self, audio: np.ndarray, model, windows: int | None = None) -> np.ndarray:
        """reference_probs on `model`, under the caller's thread setting (one thread: `_one_thread`); with
        `windows`, only the first ones (the model is streaming: they are the same as the whole file's)."""
        torch = load_torch()
        x = torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))
        n = (len(x) + 511) // 512 if windows is None else min(windows, (len(x) + 511) // 512)
        out = np.empty(n, np.float64)
        with torch.inference_mode():  # no_grad's results, 7% sooner: no autograd bookkeeping per op
            model.reset_states()
            for k, start in enumerate(range(0, n * 512, 512)):
                if not k & 255:
                    abandoned()
                chunk = x[start:start + 512]
                if len(chunk) < 512:
                    chunk = torch.nn.functional.pad(chunk, (0, 512 - len(chunk)))
                out[k] = model(chunk, self.settings.sampling_rate).item()
        return out.astype(np.float32)

    def reference_many(self, audios: Sequence[Callable[[], np.ndarray]], workers: int,
                       done: Callable[[int, np.ndarray], None] | None = None,
                       windows: Sequence[int | None] | None = None) -> list[np.ndarray]:
        """reference_probs of many files, `workers` files at a time (each `audios[i]()` reads file i), in order
        (with `windows`, file i's first windows[i] windows only, None: all).

        A file's windows are one sequence, but files are independent: each worker holds a model of its own and
        every worker runs on one torch thread, as the reference path does, so each file's probabilities are the same
        bits as one file at a time. `done(i, probs)` is called in order as files finish. An interrupt or error
        cancels the files not started and waits only for those running."""
        workers = max(1, min(workers, len(audios)))
        upto = list(windows) if windows is not None else [None] * len(audios)
        out: list[np.ndarray] = []
        if workers == 1:
            for i, read in enumerate(audios):
                out.append(self.reference_probs(read(), upto[i]))
                if done:
                    done(i, out[-1])
            return out
        models: queue.SimpleQueue = queue.SimpleQueue()
        for k in range(workers):
            models.put(_load_model(k))

        def one(read: Callable[[], np.ndarray], n: int | None) -> np.ndarray:
            audio = read()
            model = models.get()
            try:
                return self._probs(audio, model, n)
            finally:
                models.put(model)

        with one_thread_workers(workers, "fdbu-reference") as pool:
            futures = [pool.submit(one, read, n) for read, n in zip(audios, upto)]
            for i, future in enumerate(futures):
                out.append(future.result())
                if done:
                    done(i, out[-1])
        return out

    def segments_from_probs(self, probs: np.ndarray, audio_length: int,
                            rule: SegmentRule | None = None) -> list[tuple[int, int]]:
        """silero-vad's own probabilities -> segments step, as `get_speech_timestamps` ends
        (under `rule`, by default this adapter's settings)."""
        kw = (rule or self.settings.rule).call_kwargs()
        stamps = silero_vad().get_speech_timestamps_from_probs([float(p) for p in probs], audio_length_samples=audio_length,
                                                  step=1, **kw)
        return [(int(t["start"]), int(t["end"])) for t in stamps]


def _finite(audio: np.ndarray, sr: int) -> None:
    """Audio handed in from Python (the CLI's reader refuses a file's NaN or infinity where it reads it): Silero would
    answer NaN for every window after the first such sample, and no segment; refused as the CLI refuses it."""
    from ..common.audio import non_finite

    problem = non_finite(np.asarray(audio), sr)
    if problem:
        raise ValueError(f"the audio {problem}: not a recording")


def samples_to_us(stamps: list[tuple[int, int]], sampling_rate: int) -> np.ndarray:
    """Sample indices / rate, rounded to the microsecond (docs: Definition 1)."""
    out = np.array([(to_us(a / sampling_rate), to_us(b / sampling_rate)) for a, b in stamps], np.int64).reshape(-1, 2)
    if out.size and (np.any(out[:, 0] >= out[:, 1]) or np.any(out[1:, 0] < out[:-1, 1])):
        raise FdbuError("vad", None, f"Silero returned segments that are not sorted and disjoint: {stamps}")
    return out
