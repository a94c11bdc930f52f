"""`fdbu COMMAND [hydra overrides]`: one Hydra app per command, configs in `fdbu.conf`.

The command word is taken off argv before Hydra parses the rest, so every Hydra
feature (`--cfg job`, `-m` multirun, overrides) works per command.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .errors import FdbuError

USAGE = """usage: fdbu COMMAND [key=value ...] [--cfg job] [-m]

commands:
  score   score a reference tree:            fdbu score tree=PATH [out=DIR] [plot=true]
  synth   write a synthetic reference tree:   fdbu synth out=PATH [n=5] [seed=0] [system=mixed]
  sweep   interruption metrics over VAD settings: fdbu sweep tree=PATH | tree=[A,B] out=DIR
  evaluate the official rules (reference column): fdbu evaluate tree=PATH [evaluate.official_checkout=DIR]
  export  a tree from the v1.0 release + outputs:  fdbu export dataset=DIR [outputs=DIR] out=DIR [export.length=fit]
  asr     transcripts with a local Parakeet .nemo:  fdbu asr tree=DIR asr.checkpoint=PATH.nemo [device=cuda]
  calibrate measure the batched VAD's guard margin on this device: fdbu calibrate [device=cuda]

Hydra: --cfg job shows the composed config; -m runs a sweep (fdbu score -m tree=A,B)."""


def _score(cfg) -> None:
    from .evaluate import reference_column
    from .report import summary, write
    from .score import score_path

    tree = Path(cfg.tree)
    out = Path(cfg.out) if cfg.out is not None else tree
    detector = make_detector(cfg)
    scored = score_path(tree, detector, make_bootstrap(cfg))
    unified, samples = write(scored, out)
    print(summary(scored.unified))
    inputs = scored.unified["inputs"]
    column = reference_column(tree, inputs["manifest.json"], inputs["asr.json"])
    if column:
        print("\n" + column)
    print(f"\n{detector.stats.line()}\nwrote {unified} and {samples}")
    if cfg.plot:
        from .plot import latency_curves

        print(f"wrote {latency_curves(scored.rows, out / 'latency-curves.png')}")


def make_bootstrap(cfg):
    """The bootstrap a config asks for (score and sweep report the same intervals)."""
    from .metrics.stats import Bootstrap

    if cfg.bootstrap.resamples < 1:
        raise FdbuError("config", None, "bootstrap.resamples must be at least 1")
    return Bootstrap(cfg.bootstrap.resamples, cfg.bootstrap.seed)


def make_detector(cfg, backend: str | None = None):
    """The speech detector a config asks for: Silero settings plus how to compute them."""
    from .vad import SileroSettings, SpeechDetector

    v = cfg.vad
    settings = SileroSettings(threshold=v.threshold, min_speech_duration_ms=v.min_speech_duration_ms,
                              min_silence_duration_ms=v.min_silence_duration_ms, speech_pad_ms=v.speech_pad_ms,
                              sampling_rate=v.sampling_rate)
    return SpeechDetector(settings, backend=backend or v.backend, device=cfg.device, cache=v.cache,
                          cache_dir=Path(v.cache_dir) if v.cache_dir else None, verify=v.verify, threads=v.threads,
                          batch_seconds=v.batch_seconds, progress=cfg.progress)


def _synth(cfg) -> None:
    from omegaconf import DictConfig

    from .synth import synthesize

    n = dict(cfg.n) if isinstance(cfg.n, DictConfig) else cfg.n
    tree = synthesize(Path(cfg.out), n=n, seed=cfg.seed, system=cfg.system, ineligible=cfg.ineligible,
                      interruption_tail_s=tuple(cfg.interruption_tail_s), progress=cfg.progress)
    print(f"wrote synthetic tree {tree} ({cfg.n} samples per subset, system={cfg.system}, seed={cfg.seed})")


def _sweep(cfg) -> None:
    from omegaconf import ListConfig

    from .sweep import grid, sweep, table, write

    trees = [Path(t) for t in cfg.tree] if isinstance(cfg.tree, ListConfig) else [Path(cfg.tree)]
    if cfg.out is None and len(trees) > 1:
        raise FdbuError("config", None, "a sweep over several trees needs out=DIR for its outputs")
    g = cfg.sweep
    points = grid(list(g.thresholds), list(g.min_silence_ms), list(g.neg_threshold_offset), list(g.min_speech_ms),
                  list(g.speech_pad_ms))
    detector = make_detector(cfg)
    result = sweep(trees, detector, make_bootstrap(cfg), points)
    written = write(result, Path(cfg.out) if cfg.out is not None else trees[0], plot=cfg.plot)
    print(table(result))
    print(f"\n{detector.stats.line()}\nwrote " + ", ".join(map(str, written)))


def _evaluate(cfg) -> None:
    from .evaluate import evaluate, write
    from .official import GT_DISTRIBUTION, SCRIPT_DIRS
    from .tree import load_tree

    e = cfg.evaluate
    checkout = Path(e.official_checkout) if e.official_checkout else None
    pins = dict(e.official_sha256 or {})
    gt = Path(e.gt_distribution) if e.gt_distribution else None
    if gt is None and checkout is not None:  # the one beside the scripts, where upstream runs them
        gt = next((checkout / d / GT_DISTRIBUTION for d in SCRIPT_DIRS if (checkout / d / GT_DISTRIBUTION).is_file()),
                  None)
    if e.run_official and checkout is None:
        raise FdbuError("config", None, "evaluate.run_official=true needs evaluate.official_checkout=DIR")
    judge = None
    if e.judge.base_url:
        import os

        from .judge import Judge, load_official

        if checkout is None or not e.judge.model:
            raise FdbuError("config", None, "a judge needs evaluate.official_checkout=DIR (for the official prompt) "
                            "and evaluate.judge.model")
        prompt = load_official(checkout, pins, e.allow_unpinned)
        judge = Judge(e.judge.base_url, e.judge.model, os.environ.get(e.judge.api_key_env), prompt,
                      max_attempts=e.judge.max_attempts, timeout_s=e.judge.timeout_s)
    tree = load_tree(Path(cfg.tree))
    lines, disagreements = [], []
    if e.run_official:  # the pins are checked before anything is computed
        from .official_run import check_files

        check_files(tree, checkout, gt, pins, e.allow_unpinned)
    result = evaluate(tree, gt_distribution=gt, judge=judge, pins=pins)
    if e.run_official:
        from .official_run import run_official

        result["official_run"], lines, disagreements = run_official(tree, checkout, result, gt_path=gt, pins=pins,
                                                                    allow_unpinned=e.allow_unpinned)
    path = write(result, Path(cfg.tree), judge.ledger if judge else None)
    for subset, numbers in result["subsets"].items():
        print(f"{subset}: {json.dumps(numbers)}")
    for text in lines:
        print(text)
    print(f"wrote {path}")
    if disagreements:
        print("official scripts disagree with fdbu's rules:\n  " + "\n  ".join(disagreements), file=sys.stderr)
        sys.exit(3)


def _export(cfg) -> None:
    from .export import export

    only = list(cfg.export.only) if cfg.export.only is not None else None
    tree = export(Path(cfg.dataset), Path(cfg.outputs) if cfg.outputs else None, Path(cfg.out),
                  length=cfg.export.length, only=only, progress=cfg.progress)
    rows = json.loads((tree / "manifest.json").read_text())["samples"]
    bad = [r for r in rows if not r["eligible"]]
    print(f"wrote {tree}: {len(rows)} samples, {len(rows) - len(bad)} eligible, {len(bad)} ineligible")
    for r in bad:
        print(f"  {r['sample_id']}: {'; '.join(r['reasons'])}")


def _asr(cfg) -> None:
    from .asr.stage import default_cache_dir, run
    from .device import resolve_device

    a = cfg.asr
    if not a.checkpoint:
        raise FdbuError("config", None, "fdbu asr needs asr.checkpoint=PATH.nemo (a local Parakeet checkpoint)")

    def model():
        from .asr.nemo_model import ParakeetASR

        return ParakeetASR(Path(a.checkpoint), sha256=a.sha256, device=resolve_device(cfg.device))

    cache = (Path(a.cache_dir) if a.cache_dir else default_cache_dir()) if a.cache else None
    path, counts = run(Path(cfg.tree), model, model_id=a.model_id, batch_size=a.batch_size,
                       max_batch_seconds=a.max_batch_seconds, resume=a.resume, cache_dir=cache, progress=cfg.progress)
    print(f"wrote {path}: {counts['transcribed']} transcribed, {counts['from_cache']} from the cache, "
          f"{counts['kept']} kept")


def _calibrate(cfg) -> None:
    from .vad.calibration import FLOOR, IMPLAUSIBLE, MULTIPLE

    detector = make_detector(cfg, backend="batched")
    cal = detector.calibration(force=True)
    ident = cal.identity["device"]
    print(f"device: {', '.join(f'{k} {v}' for k, v in ident.items() if v is not None)}")
    print(f"corpus: {cal.windows} windows, {cal.audio_s:.0f} s of audio (sha256:{cal.corpus_sha256[:12]})")
    print(f"largest |batched - reference| probability: {cal.deviation:.3e} (refused above {IMPLAUSIBLE:.0e})")
    print(f"guard margin: {cal.margin:.3e} = max({MULTIPLE} x deviation, {FLOOR:.0e}); {cal.seconds:.1f} s")
    stored = detector.cache_root / "calibration" / f"{cal.key}.json"
    print(f"stored as {stored}" if stored.is_file() else f"not stored: {stored.parent} is not writable")


COMMANDS = {"score": _score, "synth": _synth, "sweep": _sweep, "evaluate": _evaluate, "export": _export,
            "asr": _asr, "calibrate": _calibrate}


def _task(fn):
    def run(cfg) -> None:
        try:
            fn(cfg)
        except FdbuError as e:
            print(f"fdbu: error: {e}", file=sys.stderr)
            sys.exit(2)
    return run


def main(argv: list[str] | None = None) -> int:
    import hydra

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"fdbu: error: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    sys.argv = [f"fdbu-{command}"] + rest
    app = hydra.main(version_base="1.3", config_path="pkg://fdbu.conf", config_name=command)(_task(COMMANDS[command]))
    app()
    return 0


if __name__ == "__main__":
    sys.exit(main())
