"""Silero speech probabilities for many files at once on a CPU, in numpy: no torch loaded.

The same network and batch layout as `batched.py` (which computes on a GPU): each 512-sample window
with the 64 samples before it, a frame-independent front end (the model's STFT, whose basis is checked to be the
Hann-windowed DFT, as a real FFT; four conv blocks as im2col products) on every frame of every file, then one LSTM step at a
time across all files of the batch (longest first, so the active files are always a prefix). The
weights are the packaged JIT model's own, read from its archive (`weights.py`).

Why numpy on a CPU: `import torch` is most of a small job's start-up (about 2 s of a shard's 2.8 s on
the reference machine), and numpy's OpenBLAS products run this network as fast as torch's CPU
kernels (benchmarks/RESULTS.md). On a CPU with several threads, the files are split into one group
per thread (balanced by audio length), each computed on a thread of its own with one BLAS thread, as
`batched.py` does with torch threads.

The probabilities differ from the reference path's by float rounding only; `detect.py` guards the
comparisons segments depend on, with a margin calibrated for this implementation on this CPU.
"""
from __future__ import annotations

import importlib
import os
import platform
import re
import zipfile
from pathlib import Path

import numpy as np

from ..errors import FdbuError
from . import weights
from .silero import abandoned, model_path, one_thread_workers

WINDOW, CONTEXT, FRAME = 512, 64, 576
N_FFT, HOP = 256, 128
STRIDES = (1, 2, 2, 1)  # the four conv blocks' strides (kernel 3, padding 1)
GATES = np.concatenate([np.arange(0, 256), np.arange(384, 512), np.arange(256, 384)])  # (i, f, g, o) -> (i, f, o, g)


NOT_THE_NETWORK = ("this Silero model is not the network the batched backend computes (Hann STFT, four k=3 conv "
                   "blocks, LSTM); use vad.backend=reference")


def hann() -> np.ndarray:
    """The periodic Hann window of the STFT, float64."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)


def hann_dft() -> np.ndarray:
    """The Hann-windowed real DFT basis, (258, 256) float64: cos rows then -sin rows, as silero's STFT holds it (each
    engine checks the model's basis against it)."""
    n = np.arange(N_FFT, dtype=np.float64)
    k = np.arange(N_FFT // 2 + 1, dtype=np.float64)[:, None]
    return np.concatenate([np.cos(2 * np.pi * k * n / N_FFT), -np.sin(2 * np.pi * k * n / N_FFT)]) * hann()


def groups(lengths: list[int], n: int) -> list[list[int]]:
    """The files each CPU thread computes: longest first, each to the group with the least audio so far."""
    out: list[list[int]] = [[] for _ in range(max(1, n))]
    load = [0] * len(out)
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        k = load.index(min(load))
        out[k].append(i)
        load[k] += lengths[i]
    return [g for g in out if g]


def in_groups(audios: list[np.ndarray], parts: list[list[int]], compute, every_thread, one_thread=None
              ) -> list[np.ndarray]:
    """`compute(files)` over one group of files per thread (`parts`, from `groups`), in the input order: a single
    group under `every_thread()` (all the math library's threads), several each on a worker of its own under
    `one_thread()` (the library's thread count is process-wide, so it is set once around them all)."""
    if len(parts) <= 1:
        with every_thread():
            return compute(audios)
    out: list[np.ndarray] = [np.zeros(0, np.float32)] * len(audios)
    with one_thread_workers(len(parts), "fdbu-batched", one_thread) as pool:
        for part, probs in zip(parts, pool.map(compute, [[audios[i] for i in g] for g in parts])):
            for i, p in zip(part, probs):
                out[i] = p
    return out


class Layout:
    """A batch in time-major order: step t holds frame t of every file that long, longest files first, so each
    LSTM step reads and writes one contiguous block of rows (`block[t]:block[t] + active[t]`)."""

    def __init__(self, audios: list[np.ndarray]):
        self.counts = np.array([(len(a) + WINDOW - 1) // WINDOW for a in audios], np.int64)
        self.order = np.argsort(-self.counts, kind="stable")
        self.sorted_counts = self.counts[self.order]
        steps = int(self.sorted_counts[0]) if len(audios) else 0
        self.active = (self.sorted_counts[None, :] > np.arange(steps)[:, None]).sum(1)
        self.block = np.concatenate([[0], np.cumsum(self.active)]).astype(np.int64)

    def frames(self, audios: list[np.ndarray]) -> np.ndarray:
        """(windows, 576): each window with the 64 samples before it (zeros before the first), the last one
        zero-padded as the reference path pads it."""
        frames = np.empty((int(self.block[-1]), FRAME), np.float32)
        for k, i in enumerate(self.order):
            n = int(self.sorted_counts[k])
            if n == 0:
                continue
            padded = np.zeros(CONTEXT + n * WINDOW, np.float32)
            padded[CONTEXT:CONTEXT + len(audios[i])] = audios[i]
            frames[self.block[:n] + k] = np.lib.stride_tricks.sliding_window_view(padded, FRAME)[::WINDOW]
        return frames

    def unpack(self, probs: np.ndarray) -> list[np.ndarray]:
        """Each file's probabilities, in the input order, from the time-major rows."""
        out: list[np.ndarray] = [np.zeros(0, np.float32)] * len(self.counts)
        for k, i in enumerate(self.order):
            out[i] = probs[self.block[:-1][:self.sorted_counts[k]] + k]
        return out


def _reflect_pad(path: Path, module: str) -> str | None:
    """The STFT's reflection padding as the archive's code declares it (a class constant, not pickled data)."""
    with zipfile.ZipFile(path) as z:
        root = z.namelist()[0].split("/")[0]
        name = f"{root}/code/{module.replace('.', '/')}.py"
        code = z.read(name).decode() if name in z.namelist() else ""
    found = re.search(r"padding\s*:\s*Final\[Tuple\[int, int\]\]\s*=\s*\((\d+), (\d+)\)", code)
    return f"({found[1]}, {found[2]})" if found else None


def blas() -> dict:
    """The BLAS numpy computes with, as loaded: library, version, the kernels it chose for this CPU."""
    from threadpoolctl import threadpool_info

    for lib in threadpool_info():
        if lib.get("user_api") == "blas" and "numpy" in str(lib.get("filepath", "")):
            return {"library": lib.get("internal_api"), "version": lib.get("version"),
                    "architecture": lib.get("architecture")}
    config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return {"library": config.get("name"), "version": config.get("version"), "architecture": None}


def simd() -> list[str]:
    """numpy's runtime-dispatched SIMD targets this CPU has (its float32 exp and tanh kernels follow them)."""
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")  # numpy 2
    except ImportError:  # numpy 1.26
        umath = importlib.import_module("numpy.core._multiarray_umath")
    return [k for k in umath.__cpu_dispatch__ if umath.__cpu_features__.get(k)]


class NumpyBatchedSilero:
    device = "cpu"

    def __init__(self, path: Path | None = None, threads: int | None = None, frame_chunk: int = 256):
        path = Path(path or model_path())
        self.threads = threads or len(os.sched_getaffinity(0))
        self.frame_chunk = frame_chunk  # frames per front-end product: small enough to stay in cache
        m: dict = {}
        try:
            m = weights.read(path)["_model"]
            stft, encoder, decoder = m["stft"], m["encoder"], m["decoder"]
            basis = stft["forward_basis_buffer"][:, 0, :].astype(np.float64)
            blocks = [encoder[str(i)] for i in range(4)]
            convs = [b["reparam_conv"] for b in blocks]
            rnn, out = decoder["rnn"], decoder["decoder"]["2"]
            shape = (m["sample_rate"], m["context_size_samples"], stft["filter_length"], stft["hop_length"],
                     stft["window"], _reflect_pad(path, stft["padding"].module),
                     [(b["stride"], b["kernel_size"], b["groups"], b["dilation"], list(c["_reversed_padding_repeated_twice"]))
                      for b, c in zip(blocks, convs)], rnn["weight_hh"].shape, out["weight"].shape)
        except (KeyError, TypeError, AttributeError, IndexError):
            shape = None
        want = (16000, CONTEXT, N_FFT, HOP, "hann", f"(0, {CONTEXT})", [(s, 3, 1, 1, [1, 1]) for s in STRIDES],
                (4 * 128, 128), (1, 128, 1))
        if shape != want or np.abs(basis - hann_dft()).max() > 1e-6:
            raise FdbuError("vad", None, NOT_THE_NETWORK)
        from scipy import fft

        self.rfft, self.window = fft.rfft, hann().astype(np.float32)
        # conv weights (C_out, C_in, 3) as (3 * C_in, C_out): the im2col rows hold the 3 taps one after another
        self.convs = [(s, np.ascontiguousarray(c["weight"].transpose(2, 1, 0).reshape(-1, c["weight"].shape[0])),
                       c["bias"]) for s, c in zip(STRIDES, convs)]
        self.w_ih = np.ascontiguousarray(rnn["weight_ih"][GATES].T)
        self.w_hh = np.ascontiguousarray(rnn["weight_hh"][GATES].T)
        self.b = (rnn["bias_ih"] + rnn["bias_hh"])[GATES]
        self.w_out = np.ascontiguousarray(out["weight"].reshape(-1, 1))
        self.b_out = out["bias"]
        self._silence: np.ndarray | None = None

    def identity(self) -> dict:
        """What this path's float results can depend on (the calibration's key): the CPU, numpy's BLAS and the
        kernels it chose, numpy's SIMD targets, scipy's version (its FFT), and the thread count."""
        import scipy

        from ..common.device import cpu_model

        lib = blas()
        return {"type": "cpu", "name": cpu_model(), "machine": platform.machine(),
                "capability": f"numpy {np.__version__}, {lib['library']} {lib['version']} {lib['architecture']}",
                "engine": "numpy", "blas": lib, "simd": simd(), "fft": f"scipy {scipy.__version__} (pocketfft)",
                "threads": self.threads}

    def _front_end(self, frames: np.ndarray) -> np.ndarray:
        """(N, 576) frames -> (N, 512) LSTM input gates, a chunk at a time."""
        out = np.empty((frames.shape[0], 4 * 128), np.float32)
        for a in range(0, frames.shape[0], self.frame_chunk):
            x = frames[a:a + self.frame_chunk]
            n = x.shape[0]
            # the STFT's four frames of 256 every 128 over the 576 samples reflected by 64 at the right edge
            st = np.empty((n, 4, N_FFT), np.float32)
            for f in range(3):
                st[:, f] = x[:, f * HOP:f * HOP + N_FFT]
            st[:, 3, :FRAME - 3 * HOP] = x[:, 3 * HOP:]
            st[:, 3, FRAME - 3 * HOP:] = x[:, FRAME - 2:FRAME - 2 - CONTEXT:-1]
            st *= self.window
            # the real FFT of the windowed frames: the product with the model's (checked) Hann-DFT basis, in about
            # a twentieth of its arithmetic (pocketfft, float32, SIMD over several frames)
            z = self.rfft(st.reshape(n * 4, N_FFT), axis=1)
            re, im = z.real, z.imag  # the magnitude as IEEE sqrt(re^2 + im^2), not libm's hypot (np.abs)
            x = np.sqrt(re * re + im * im).reshape(n, 4, -1)  # channel-last magnitude
            length = 4
            for stride, w, b in self.convs:
                channels = x.shape[2]
                out_len = (length - 1) // stride + 1
                cols = np.zeros((n, out_len, 3, channels), np.float32)  # output t, tap k reads t * stride + k - 1
                for tap in range(3):
                    ts = [t for t in range(out_len) if 0 <= t * stride + tap - 1 < length]
                    if ts:
                        cols[:, ts[0]:ts[-1] + 1, tap] = x[:, ts[0] * stride + tap - 1:ts[-1] * stride + tap:stride]
                y = cols.reshape(n * out_len, 3 * channels) @ w
                y += b
                x = np.maximum(y, 0, out=y).reshape(n, out_len, -1)
                length = out_len
            np.matmul(x.reshape(n, -1), self.w_ih, out=out[a:a + n])
            out[a:a + n] += self.b
        return out

    @property
    def silence(self) -> np.ndarray:
        """The front end's result for a silent frame, (1, 512): computed once, in a whole chunk of silent frames."""
        if self._silence is None:
            self._silence = self._front_end(np.zeros((self.frame_chunk, FRAME), np.float32))[:1].copy()
        return self._silence

    def _gates(self, frames: np.ndarray) -> np.ndarray:
        """The front end of every frame; digital silence (576 zeros: a model's output between its turns) given
        the silent frame's result, computed once."""
        loud = np.flatnonzero(frames.any(axis=1))
        if len(loud) == len(frames):
            return self._front_end(frames)
        gates = np.empty((len(frames), 4 * 128), np.float32)
        gates[:] = self.silence
        step = 16 * self.frame_chunk  # the loud frames gathered a block at a time, not copied whole
        for a in range(0, len(loud), step):
            rows = loud[a:a + step]
            gates[rows] = self._front_end(frames[rows])
        return gates

    def probabilities(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        """Window probabilities (float32) of each mono 16 kHz float waveform, as the streaming model gives them."""
        from threadpoolctl import threadpool_limits

        self.silence  # computed here, before any worker starts  # noqa: B018
        return in_groups(audios, groups([len(a) for a in audios], min(self.threads, len(audios))), self._probabilities,
                         lambda: threadpool_limits(self.threads, user_api="blas"),
                         lambda: threadpool_limits(1, user_api="blas"))

    def _probabilities(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        with np.errstate(over="ignore"):  # exp(-x) of a gate far below 0 overflows to inf: its sigmoid is 0
            return self._computed(audios)

    def _computed(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        layout = Layout(audios)
        if not len(audios) or layout.block[-1] == 0:
            return [np.zeros(0, np.float32) for _ in audios]
        gates = self._gates(layout.frames(audios))
        hidden = np.empty((len(gates), 128), np.float32)
        c = np.zeros((len(audios), 128), np.float32)
        h = np.zeros_like(c)
        g_all, t_all = np.empty((len(audios), 4 * 128), np.float32), np.empty_like(c)
        for step, (a, n) in enumerate(zip(layout.block[:-1].tolist(), layout.active.tolist())):
            if not step & 255:
                abandoned()  # a Ctrl-C in the main thread ends this worker's batch within 256 steps
            g, t, cn = g_all[:n], t_all[:n], c[:n]
            np.matmul(h[:n], self.w_hh, out=g)
            g += gates[a:a + n]
            s = g[:, :384]  # input, forget, output gates: sigmoid(x) = 1 / (1 + exp(-x))
            np.negative(s, out=s)
            np.exp(s, out=s)  # (inf for x < -88: the sigmoid's 0, as torch's; the warning is off)
            s += 1
            np.reciprocal(s, out=s)
            np.tanh(g[:, 384:], out=g[:, 384:])
            cn *= s[:, 128:256]
            np.multiply(s[:, :128], g[:, 384:], out=t)
            cn += t
            np.tanh(cn, out=t)
            h = np.multiply(s[:, 256:], t, out=hidden[a:a + n])
        logits = np.maximum(hidden, 0, out=hidden) @ self.w_out + self.b_out
        return layout.unpack((1 / (1 + np.exp(-logits))).reshape(-1).astype(np.float32))
