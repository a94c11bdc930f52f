"""ASR throughput: the official one-file-at-a-time way against fdbu's ASR stage, same captures.

    python -m benchmarks.asr_throughput [--model tiny|tiny-tdt|parakeet-size] [--checkpoint PATH.nemo]
                                        [--files N] [--device cpu|cuda] [--batch-sizes 1,4,16,32]
                                        [--bounds 1] [--workdir DIR]

Which way the model is loaded: from the checkpoint file (`asr.checkpoint`, NeMo's restore_from).
Loading by name (`asr.model`, NeMo's from_pretrained from the Hugging Face cache) restores the
same kind of file, so only the load differs, not the transcription measured here. Adopting the
official asr.py's transcripts (`export.transcripts=adopt`) runs no model: the `adopt` line times
reading, checking and copying the official way's output.json files, the work that replaces the
stage there.

Models: `tiny` (the default; 64 files) and `tiny-tdt` are the random test models (their speed says
nothing about Parakeet's, only about the ways of calling NeMo); `parakeet-size` (16 files) is
Parakeet-TDT-0.6B-v2's architecture at its published dimensions with random weights, built from
benchmarks/parakeet_tdt_0.6b_v2.yaml into the workdir (reuse it with --workdir); --checkpoint
takes a real .nemo file.

The captures are interruption outputs (20-30 s), transcribed from R on as the stage cuts them.
  official: each output.wav read, cut, written to a temporary WAV and transcribed alone
            (v1_v1.5/get_transcript/asr.py);
  before:   (TDT) the stage as it was before NeMo's batched TDT loop got fdbu's durations fix:
            one file per NeMo call (`asr.batch_size` only groups the reading), as it still is when
            the fix cannot apply;
  stage:    `fdbu.asr.stage.run` on a copy of the tree, at each batch size (sizes at or above the
            number of files make one call of all files, so only the first of them is run), with
            the sentinel at its default (`asr.verify=auto`: no file under 50 files).
Each way: wall time, audio seconds per second, RTF, CPU seconds per wall second (about the
number of cores it had; less means another process took some), peak memory (CPU: resident set
of the process; CUDA: allocated), the split of its time (reading audio; mel front end; encoder;
decoding with word timestamps; the rest: NeMo's data loader, temporary files, writing
transcripts), and whether its words and times equal the official way's.

Decoding bound (TDT, with --bounds 1). Random weights decode another number of steps than trained ones. Greedy
TDT decoding is a loop whose every step does the same fixed-shape work whatever the weights; a
step moves at most 4 frames on (the longest duration), and at most max_symbols tokens are
emitted per frame. So any weights, trained Parakeet's included, decode in between two runs of
the loop on the same encoder outputs with a constant joint: `fewest` (blank, jump 4: T/4 blank
steps, no token) and `most` (a token of duration 0 every step: max_symbols tokens per frame,
with their word timestamps). Both decode the encoder outputs of the stage's own NeMo calls
(kept while it ran; `most` on the first two calls, scaled by its token steps), and the stage
total is re-stated with each in place of the measured decoding. With a cap on the tokens per
second of audio, every frame scanned by at most one blank step and every token costing one
token step gives a tighter upper estimate, printed for 4 and 8 tokens per second.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import soundfile as sf

from fdbu.asr import stage
from fdbu.asr.nemo_model import ParakeetASR

from .common import Timer, captures, machine, parse, untranscribed

HERE = Path(__file__).resolve().parent
PARTS = ("read", "mel", "encoder", "decode", "rest")


def checkpoint_for(args, work: Path) -> Path:
    if args.checkpoint:
        return Path(args.checkpoint)
    sys.path.insert(0, str(HERE.parent / "tests"))
    import tiny_asr

    if args.model == "parakeet-size":
        path = work / "parakeet-size" / "parakeet_tdt_0.6b_v2.nemo"
        return path if path.is_file() else tiny_asr.build_from_config(path.parent, HERE / "parakeet_tdt_0.6b_v2.yaml")
    if args.model in ("tiny", "tiny-tdt"):
        return tiny_asr.build(work / args.model, kind="tdt" if args.model == "tiny-tdt" else "rnnt")
    raise SystemExit(f"--model must be tiny, tiny-tdt or parakeet-size, not {args.model!r}")


class Probe:
    """Seconds spent in each part while a way runs, and its peak memory."""

    def __init__(self, asr: ParakeetASR):
        import torch

        self.torch, self.asr, self.cuda = torch, asr, str(asr.device).startswith("cuda")
        self.spent = dict.fromkeys(PARTS, 0.0)
        self._t0 = {}
        self.encoded = None  # a list while the encoder's outputs are kept (for the decoding bound)
        nemo = asr.model
        for name, module in (("mel", nemo.preprocessor), ("encoder", nemo.encoder)):
            module.register_forward_pre_hook(lambda *_, n=name: self._start(n))
            module.register_forward_hook(lambda *_, n=name: self._stop(n))
        nemo.encoder.register_forward_hook(self._keep)

    def _keep(self, _module, _inputs, output):
        if self.encoded is not None:
            self.encoded.append((output[0].detach(), output[1].detach()))

    def watch_decoding(self):
        """Time the decoding object NeMo uses for timestamped transcription (made on first use)."""
        decoding = self.asr.model.decoding
        real = decoding.rnnt_decoder_predictions_tensor

        def timed(*a, **k):
            self._start("decode")
            try:
                return real(*a, **k)
            finally:
                self._stop("decode")

        decoding.rnnt_decoder_predictions_tensor = timed

    def _sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def _start(self, name):
        self._sync()
        self._t0[name] = time.perf_counter()

    def _stop(self, name):
        self._sync()
        self.spent[name] += time.perf_counter() - self._t0.pop(name)

    @contextmanager
    def reading(self):
        self._start("read")
        try:
            yield
        finally:
            self._stop("read")

    @contextmanager
    def way(self):
        """Reset the parts and measure wall time and peak memory of one way."""
        self.spent = dict.fromkeys(PARTS, 0.0)
        peak, stop = [rss()], threading.Event()
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()
        else:
            def sample():
                while not stop.wait(0.01):
                    peak[0] = max(peak[0], rss())

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
        self._sync()
        result = {"t0": time.perf_counter(), "rss0": rss()}
        cpu0 = os.times()
        try:
            yield result
        finally:
            self._sync()
            result["wall"] = time.perf_counter() - result["t0"]
            cpu1 = os.times()
            result["cpu"] = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
            if self.cuda:
                result["peak"] = self.torch.cuda.max_memory_allocated()
            else:
                stop.set()
                sampler.join()
                result["peak"] = max(peak[0], rss())
            self.spent["rest"] = result["wall"] - sum(v for k, v in self.spent.items() if k != "rest")
            result["parts"] = dict(self.spent)


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def official(asr: ParakeetASR, probe: Probe, jobs) -> dict:
    """One file at a time through a temporary WAV; words with R added back, by sample id."""
    out = {}
    for j in jobs:
        with probe.reading():
            waveform, sr = sf.read(str(j.folder / "output.wav"))
            tmp = tempfile.NamedTemporaryFile(suffix=".wav", delete=False)
            sf.write(tmp.name, waveform[j.start:], sr)
        hyp = asr.model.transcribe([tmp.name], timestamps=True, verbose=False)[0]
        os.unlink(tmp.name)
        out[j.sample_id] = [(w["word"], w["start"] + j.offset, w["end"] + j.offset) for w in hyp.timestamp["word"]]
    return out


def staged(asr: ParakeetASR, probe: Probe, tree: Path, batch_size: int) -> dict:
    """The stage's output.json words by sample id, its audio reading timed."""
    real = stage.read_wav

    def timed_read(*a, **k):
        with probe.reading():
            return real(*a, **k)

    stage.read_wav = timed_read
    try:
        stage.run(tree, lambda: asr, batch_size=batch_size, max_batch_seconds=3600.0, cache_dir=None)
    finally:
        stage.read_wav = real
    return {j.sample_id: [(c["text"], *c["timestamp"]) for c in
                          json.loads((j.folder / "output.json").read_text())["chunks"]] for j in stage._jobs(tree)}


def adopted(ref: dict, tree: Path, work: Path) -> float:
    """Seconds to adopt the official way's transcripts as export.transcripts=adopt does: each output.json (written
    first, as asr.py leaves it) read, checked against its sample's T and R, and copied into a tree."""
    from fdbu.tree import adopt
    from fdbu.tree.load import read_manifest

    samples = {s.sample_id: s for s in read_manifest(tree).samples}
    src, dst = work / "adopt-src", work / "adopt-dst"
    for sid, words in ref.items():
        (src / sid).mkdir(parents=True, exist_ok=True)
        (src / sid / "output.json").write_text(json.dumps({"text": " ".join(w[0] for w in words), "chunks": [
            {"text": w[0], "timestamp": [w[1], w[2]]} for w in words]}, indent=4))
    t0 = time.perf_counter()
    for sid in ref:
        s = samples[sid]
        data = (src / sid / "output.json").read_bytes()
        adopt.check(data, sid, s.T_us, (s.folder / s.kind.annotation).read_bytes())
        (dst / sid).mkdir(parents=True, exist_ok=True)
        (dst / sid / "output.json").write_bytes(data)
    return time.perf_counter() - t0


def decoding_ways(asr: ParakeetASR, probe: Probe, encoded: list) -> list[tuple]:
    """The ways to get batched TDT durations right, on the same encoder outputs (the one-file calls'
    own, padded into one batch): NeMo's loop as installed, fdbu's fix of it, and NeMo's
    `greedy.preserve_alignments` option (its loop then records every step, with the right
    durations, and the logits). Each: (name, decoding seconds, peak memory above the start in
    bytes, tokens whose duration differs from decoding the file alone)."""
    import torch
    from omegaconf import open_dict

    from fdbu.asr.nemo_model import _tdt_loop, fix_tdt_durations

    nemo = asr.model
    frames = max(int(n) for _, lengths in encoded for n in lengths)
    batch = torch.zeros(len(encoded), encoded[0][0].shape[1], frames)
    for i, (enc, lengths) in enumerate(encoded):
        batch[i, :, :int(lengths[0])] = enc[0, :, :int(lengths[0])]
    lengths = torch.tensor([int(n) for _, n in encoded])

    def steps(hyps):
        return [[(int(t), int(f), int(d)) for t, f, d in zip(h.y_sequence, h.timestamp["timestep"], h.token_duration)]
                for h in hyps]

    def decode(enc, n):
        with torch.inference_mode():
            return steps(nemo.decoding.rnnt_decoder_predictions_tensor(enc, n, return_hypotheses=True))

    def set_alignments(on):
        with open_dict(nemo.cfg.decoding):
            nemo.cfg.decoding.greedy.preserve_alignments = on
        nemo.change_decoding_strategy(nemo.cfg.decoding, verbose=False)

    out = []
    try:
        for name in ("NeMo 3.0.0's loop as installed", "fdbu's fix of that loop", "NeMo option greedy.preserve_alignments"):
            set_alignments(name.startswith("NeMo option"))
            alone = [s[0] for s in (decode(enc[:, :, :int(n[0])], n) for enc, n in encoded)]
            if name.startswith("fdbu"):
                fix_tdt_durations(_tdt_loop(nemo))
            with probe.way() as res:
                together = decode(batch, lengths)
            differ = sum(a != b for x, y in zip(together, alone) for a, b in zip(x, y))
            out.append((name, res["wall"], res["peak"] - res["rss0"], differ,
                        sum(map(len, alone))))
    finally:
        set_alignments(False)
    return out


def decoding_bounds(asr: ParakeetASR, encoded: list, most_calls: int = 2) -> dict:
    """Decoding seconds of the stage's own NeMo calls (their encoder outputs, kept) with the model's
    joint and with the `fewest` joint, and seconds per token step of the `most` joint (timed on the
    first `most_calls` calls: a step's cost does not depend on the weights)."""
    import torch

    nemo = asr.model
    out_layer = nemo.joint.joint_net[-1]
    vocab = nemo.tokenizer.vocab_size
    durations = list(nemo.cfg.decoding.durations)
    max_symbols = int(nemo.cfg.decoding.greedy.max_symbols)
    saved = (out_layer.weight.detach().clone(), out_layer.bias.detach().clone())
    frames = [int(n) for _, lengths in encoded for n in lengths]
    out = {"frames": sum(frames), "blank_steps": sum(-(-n // max(durations)) for n in frames),
           "max_symbols": max_symbols}

    def decode(calls):
        t0 = time.perf_counter()
        hyps = [h for enc, lengths in calls for h in nemo.decoding.rnnt_decoder_predictions_tensor(enc, lengths)]
        if str(asr.device).startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter() - t0, sum(len(h.y_sequence) for h in hyps)

    with torch.no_grad():
        out["model"], out["model_tokens"] = decode(encoded)
        for name in ("fewest", "most"):
            out_layer.weight.zero_()
            out_layer.bias.fill_(-1e4)
            if name == "fewest":  # blank, and the longest jump
                out_layer.bias[vocab] = 0.0
                out_layer.bias[vocab + 1 + durations.index(max(durations))] = 0.0
                out["fewest"], _ = decode(encoded)
            else:  # a token (never blank) of duration 0: max_symbols per frame
                out_layer.bias[1] = 0.0
                out_layer.bias[vocab + 1 + durations.index(0)] = 0.0
                seconds, tokens = decode(encoded[:most_calls])
                out["label_step"] = seconds / tokens
            out_layer.weight.copy_(saved[0])
            out_layer.bias.copy_(saved[1])
    out["most"] = out["frames"] * max_symbols * out["label_step"]
    return out


def main() -> None:
    args, work = parse(__doc__, files=0, model=(str, "tiny"), checkpoint=(str, None), batch_sizes=(str, "1,4,16,32"),
                       bounds=(int, 0))
    files = args.files or (16 if args.model == "parakeet-size" else 64)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    sizes = [b for b in sizes if b < files] + [b for b in sizes if b >= files][:1]  # one row of all files
    checkpoint = checkpoint_for(args, work)
    load = os.getloadavg()
    with Timer() as t_load:
        asr = ParakeetASR(checkpoint, device=args.device)
    params = sum(p.numel() for p in asr.model.parameters())
    tree = captures(work, files)
    jobs = stage._jobs(tree)
    audio_s = sum(j.samples for j in jobs) / 16000
    probe = Probe(asr)
    asr.transcribe([jobs[0].audio()[:16000 * 5]], 1)  # warm-up; makes NeMo's timestamped decoding
    probe.watch_decoding()
    tdt = asr.model.cfg.decoding.get("model_type") == "tdt"
    print(f"machine: {machine()}; device {args.device}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"model loaded by {asr.loaded_by}; "
          f"checkpoint {checkpoint.name}: {params / 1e6:.1f} M parameters, {'TDT' if tdt else 'RNNT'}, "
          f"loaded (hashed and restored) in {t_load.s:.1f} s, process resident {rss() / 1e9:.2f} GB; "
          f"NeMo decoding on this path: {asr.decoding}")
    print(f"{len(jobs)} interruption captures, {audio_s:.0f} s of audio after the cut at R\n")
    print("| way | wall s | audio s/s | RTF | CPU s / wall s | peak memory GB | read | mel | encoder | decode | rest "
          "| same as official |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")

    def row(name, res, same):
        p = res["parts"]
        print(f"| {name} | {res['wall']:.1f} | {audio_s / res['wall']:.2f} | {res['wall'] / audio_s:.4f} | "
              f"{res['cpu'] / res['wall']:.2f} | {res['peak'] / 1e9:.2f} | "
              + " | ".join(f"{p[k]:.1f}" for k in PARTS) + f" | {same} |", flush=True)

    def compare(got, ref):
        if got == ref:
            return "yes"
        texts = sum([w[0] for w in got[k]] != [w[0] for w in ref[k]] for k in ref)
        same = [k for k in ref if [w[0] for w in got[k]] == [w[0] for w in ref[k]]]
        starts = sum(a[1] != b[1] for k in same for a, b in zip(got[k], ref[k]))
        ends = sum(a[2] != b[2] for k in same for a, b in zip(got[k], ref[k]))
        return (f"words differ in {texts} of {len(ref)} files; in the others {starts} starts and {ends} ends "
                f"of {sum(len(ref[k]) for k in same)} words differ")

    def stage_row(name, bs, keep=False):
        copy = untranscribed(tree, work / "stage-tree")
        probe.encoded = [] if keep else None
        with probe.way() as res:
            got = staged(asr, probe, copy, bs)
        row(name, res, compare(got, ref))
        kept, probe.encoded = probe.encoded, None
        return res, kept

    with probe.way() as res:
        ref = official(asr, probe, jobs)
    row("official: temp WAV, one file per call", res, "(reference)")
    stage_total = encoded = None
    if tdt:  # the stage before the fix: one file per call, whatever the batch size
        asr.files_per_call = lambda batch_size: 1
        try:
            stage_total, encoded = stage_row("before: stage, one file per NeMo call (TDT)", max(sizes), keep=True)
        finally:
            del asr.files_per_call
    for bs in sizes:
        res, kept = stage_row(f"stage, batch_size {bs}" + (f" (all {files} files per call)" if bs >= files else "")
                              + (f": {asr.decoding}" if bs > 1 else ""), bs, keep=stage_total is None)
        if stage_total is None:
            stage_total, encoded = res, kept
    secs = adopted(ref, tree, work)
    print(f"\nadopt (export.transcripts=adopt: the official way's output.json read, checked and copied; no model): "
          f"{secs:.3f} s for {len(ref)} files, RTF {secs / audio_s:.6f}, {stage_total['wall'] / secs:.0f}x faster "
          f"than the stage")
    if tdt:
        print(f"\nbatched TDT decoding, the ways to keep durations right: {len(encoded)} files in one call, on the "
              "encoder outputs of the one-file row")
        print("| way | decoding s | peak memory above the start, MB | durations differing from alone |")
        print("|---|---:|---:|---:|")
        for name, seconds, peak, differ, tokens in decoding_ways(asr, probe, encoded):
            print(f"| {name} | {seconds:.2f} | {peak / 1e6:.0f} | {differ} of {tokens} |", flush=True)
    if tdt and args.bounds:
        b = decoding_bounds(asr, encoded)
        base = stage_total["wall"] - stage_total["parts"]["decode"]
        blank_step = b["fewest"] / b["blank_steps"]
        print(f"\ndecoding the stage's calls again ({b['frames']} encoder frames): these random weights "
              f"{b['model']:.1f} s ({b['model_tokens']} tokens); fewest steps (blank, jump 4) {b['fewest']:.1f} s "
              f"= {1e3 * blank_step:.2f} ms per blank step; most steps ({b['max_symbols']} tokens per frame) "
              f"{b['most']:.1f} s = {1e3 * b['label_step']:.2f} ms per token step")
        print(f"stage total with any weights: RTF {(base + b['fewest']) / audio_s:.4f} to {(base + b['most']) / audio_s:.4f}"
              f" ({audio_s / (base + b['most']):.2f} to {audio_s / (base + b['fewest']):.2f} audio s/s; "
              f"measured with these random weights: RTF {stage_total['wall'] / audio_s:.4f})")
        for rate in (4, 8):
            decode = b["frames"] * blank_step + rate * audio_s * b["label_step"]
            print(f"  with at most {rate} tokens per second of audio (and every frame scanned): decoding at most "
                  f"{decode:.1f} s, RTF at most {(base + decode) / audio_s:.4f}")
    load = os.getloadavg()
    print(f"\nload average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
