"""Silero speech probabilities for many files at once, in torch: the GPU's batched path (on a CPU, fdbu computes
with `batched_numpy.py`, which loads no torch; this one runs on a CPU too, and its tests do).

The streaming model sees each 512-sample window with the 64 samples before it (zeros
before the first), runs a frame-independent front end (STFT magnitude, four conv
blocks) and then one LSTM step. Here the front end runs on every frame of every file in
one batched call; only the LSTM runs step by step, across all files of the batch at
once (sorted longest first, so the active files are always a prefix). The weights are
the packaged JIT model's own.

On a CPU with several threads, the files are split into one group per thread (balanced by
audio length) and each group is computed on one torch thread of its own: the LSTM's per-step
products (some dozens of rows) gain little from a second intra-op thread, two such loops
side by side use both cores. On a CPU, a window of digital silence takes the silent frame's
front end, computed once (on a GPU the front end of every frame costs less than finding them).

The probabilities differ from the reference path's by float rounding only (the STFT is
an FFT of the same Hann-windowed frames). `fdbu.vad.detect` guards the comparisons that
segments depend on, so the segments are the reference path's, bit for bit.
"""
from __future__ import annotations

import os

import numpy as np
import torch

from ..errors import FdbuError
from .batched_numpy import (CONTEXT, FRAME, GATES, HOP, N_FFT, NOT_THE_NETWORK, STRIDES, WINDOW,  # noqa: F401
                            Layout, groups, hann, hann_dft, in_groups)  # (the constants re-exported)
from .silero import abandoned, torch_threads


class BatchedSilero:
    def __init__(self, jit_model, device: str = "cpu", frame_chunk: int | None = None, threads: int | None = None):
        m = jit_model._model
        self.device = torch.device(device)
        self.threads = threads or len(os.sched_getaffinity(0))
        # CPU: chunks small enough for the front end's intermediates to stay in cache
        self.frame_chunk = frame_chunk or (32768 if self.device.type == "cuda" else 256)
        basis = m.stft.forward_basis_buffer[:, 0, :].double()
        convs = [getattr(m.encoder, str(i)).reparam_conv for i in range(4)]
        if (tuple(m.stft.padding.padding) != (0, CONTEXT) or (basis - torch.from_numpy(hann_dft())).abs().max() > 1e-6
                or [(c.stride[0], c.padding[0], c.weight.shape[-1]) for c in convs] != [(s, 1, 3) for s in STRIDES]):
            raise FdbuError("vad", None, NOT_THE_NETWORK)
        dev = self.device
        self.window = torch.from_numpy(hann()).float().to(dev)
        # conv weights as (C_in * 3, C_out) matrices for channel-last im2col products
        self.convs = [(c.stride[0], c.weight.detach().permute(1, 2, 0).reshape(-1, c.weight.shape[0]).to(dev),
                       c.bias.detach().to(dev)) for c in convs]
        rnn = m.decoder.rnn
        # gates reordered from torch's (i, f, g, o) to (i, f, o, g): the three sigmoid gates one contiguous block
        gates = torch.from_numpy(GATES)
        self.w_ih = rnn.weight_ih.detach()[gates].T.contiguous().to(dev)
        self.w_hh = rnn.weight_hh.detach()[gates].T.contiguous().to(dev)
        self.b = (rnn.bias_ih + rnn.bias_hh).detach()[gates].to(dev)
        conv = dict(m.decoder.decoder.named_children())["2"]
        self.w_out = conv.weight.detach().reshape(-1, 1).to(dev)
        self.b_out = conv.bias.detach().to(dev)
        self._silence: torch.Tensor | None = None

    def _front_end(self, frames: torch.Tensor) -> torch.Tensor:
        """(N, 576) frames -> (N, 512) LSTM input gates, in chunks to bound memory."""
        out = torch.empty(frames.shape[0], 4 * 128, device=self.device)
        for a in range(0, frames.shape[0], self.frame_chunk):
            x = frames[a:a + self.frame_chunk]
            n = x.shape[0]
            x = torch.nn.functional.pad(x.unsqueeze(1), (0, CONTEXT), mode="reflect").squeeze(1)
            z = torch.view_as_real(torch.fft.rfft(x.unfold(1, N_FFT, HOP) * self.window, dim=-1))
            re, im = z[..., 0], z[..., 1]  # (a sum over the last axis of 2, or a complex abs, is 2-4x slower)
            x = torch.sqrt(re * re + im * im)  # (n, L=4, 129): channel-last magnitude
            for stride, w, b in self.convs:
                x = torch.nn.functional.pad(x, (0, 0, 1, 1))  # pad time by 1 on both sides
                cols = x.unfold(1, 3, stride)  # (n, L_out, C, 3)
                L = cols.shape[1]
                x = torch.relu(torch.addmm(b, cols.reshape(n * L, -1), w)).reshape(n, L, -1)
            torch.addmm(self.b, x.reshape(n, -1), self.w_ih, out=out[a:a + n])
        return out

    def _gates(self, frames: np.ndarray) -> torch.Tensor:
        """The front end of every frame; on a CPU, digital silence (a frame of 576 zeros: a model's output between its
        turns) given the silent frame's result, computed once, instead of being computed again for each."""
        silent = None if self._cuda else ~frames.any(axis=1)
        if silent is None or not silent.any():
            return self._front_end(torch.from_numpy(frames).to(self.device))
        # (copy_ from the expanded row: 5x faster on a CPU than clone() of the expanded view)
        gates = torch.empty(len(frames), 4 * 128, device=self.device).copy_(self.silence.expand(len(frames), -1))
        loud = np.flatnonzero(~silent)
        step = 16 * self.frame_chunk  # the loud frames gathered a block at a time, not copied whole
        for a in range(0, len(loud), step):
            rows = loud[a:a + step]
            gates.index_copy_(0, torch.from_numpy(rows), self._front_end(torch.from_numpy(frames[rows])))
        return gates

    @property
    def silence(self) -> torch.Tensor:
        """The front end's result for a silent frame, (1, 512): computed on first use, once per instance (a detector
        has one), in a whole chunk of silent frames (the products a frame's row gets in a batch, not a single row's)."""
        if self._silence is None:
            with torch.no_grad(), torch_threads(1):
                self._silence = self._front_end(torch.zeros(self.frame_chunk, FRAME, device=self.device))[:1].clone()
        return self._silence

    @torch.no_grad()
    def probabilities(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        """Window probabilities (float32) of each mono 16 kHz float waveform, as the streaming model gives them."""
        if self._cuda:
            tf32 = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        try:
            if not self._cuda:
                self.silence  # computed here, before any worker starts  # noqa: B018
            return in_groups(audios, self._groups(audios), self._group, lambda: torch_threads(self.threads))
        finally:
            if self._cuda:
                torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32

    def _groups(self, audios: list[np.ndarray]) -> list[list[int]]:
        """The files each CPU thread computes (`groups`; one group on a GPU, on one thread, or for one file)."""
        return groups([len(a) for a in audios], 1 if self._cuda else min(self.threads, len(audios)))

    def _group(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        with torch.no_grad():  # thread-local: a worker thread starts with gradients on
            return self._probabilities(audios)

    @property
    def _cuda(self) -> bool:
        return self.device.type == "cuda"

    def identity(self) -> dict:
        """What float results on this device can depend on (the calibration's key)."""
        from ..common.device import identity

        return {**identity(self.device.type, self.threads if not self._cuda else None), "engine": "torch"}

    def _probabilities(self, audios: list[np.ndarray]) -> list[np.ndarray]:
        layout = Layout(audios)
        if not len(audios) or layout.block[-1] == 0:
            return [np.zeros(0, np.float32) for _ in audios]
        gates = self._gates(layout.frames(audios))
        hidden = torch.empty(gates.shape[0], 128, device=self.device)
        h = torch.zeros(len(audios), 128, device=self.device)
        c = torch.zeros_like(h)
        for step, (a, n) in enumerate(zip(layout.block[:-1].tolist(), layout.active.tolist())):
            if not step & 255:
                abandoned()  # a Ctrl-C in the main thread ends this worker's batch within 256 steps
            g = torch.addmm(gates[a:a + n], h[:n], self.w_hh)
            s = torch.sigmoid(g[:, :384])  # input, forget, output gates
            c = torch.addcmul(s[:, 128:256] * c[:n], s[:, :128], torch.tanh(g[:, 384:]))
            h = torch.mul(s[:, 256:], torch.tanh(c), out=hidden[a:a + n])
        return layout.unpack(torch.sigmoid(torch.addmm(self.b_out, torch.relu(hidden), self.w_out)).reshape(-1).cpu().numpy())
