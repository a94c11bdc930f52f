"""Every command as one function: its checked config (`fdbu.config`) in, a `Ran` out.

The CLI (`fdbu.cli`: argv, Hydra, printing) and the Python API (`fdbu.api`: results in memory)
both call these, so a command's steps (check the outputs, build the detector, compute, write
as one unit) exist once; neither of them imports the other. Nothing here prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from . import registry
from .cachedir import ASR, CALIBRATION, VAD_PROBS


@dataclass
class Ran:
    """What a command computed (`value`), the files it wrote, and the lines the console shows after
    its result (detector statistics, stopped runs finished or removed, what was written)."""

    value: Any
    written: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    column: str | None = None          # score: the reference column, when asked for
    disagreements: list = field(default_factory=list)  # evaluate: official scripts that differ from fdbu


def make_detector(cfg, backend: str | None = None, shard: str | None = None, cores: int | None = None):
    """The speech detector a command's config asks for: Silero settings plus how to compute them (`cores`: the
    threads when vad.threads leaves them open, as a launcher's share of the machine)."""
    from .vad import SpeechDetector

    vad = cfg.vad
    threads = vad.threads if vad.threads is not None else cores
    return SpeechDetector(vad.settings(), backend=backend or vad.backend, device=cfg.device, cache=vad.cache,
                          cache_dir=cfg.cache_root() / VAD_PROBS, verify=vad.verify, threads=threads,
                          batch_seconds=vad.batch_seconds, progress=cfg.progress, shard=shard,
                          require_cached=vad.require_shards and shard is None)


def _bootstrap(cfg):
    from .metrics.stats import Bootstrap

    return Bootstrap(cfg.bootstrap.resamples, cfg.bootstrap.seed)


def _commit(outputs, files: dict) -> tuple[list, list]:
    """Write a command's files as one unit: (files written, the console's lines about them)."""
    if outputs is None:
        return [], []
    written = outputs.commit(files)
    return written, outputs.report(written)


@registry.command("score")
def score(cfg, write: bool = True, reference_column: bool = False, cores: int | None = None) -> Ran:
    """`fdbu score`: value is the `fdbu.pipeline.Scored`; with `reference_column`, the official rules'
    numbers for the console (computed before the commit, so they never stop it)."""
    from . import unified
    from .pipeline import score_path
    from .tree import require

    tree = Path(cfg.tree)
    require(tree)  # a wrong tree= is named for what it is, before out= is looked at
    outputs = unified.outputs(Path(cfg.out) if cfg.out is not None else tree, cfg.plot) if write else None
    detector = make_detector(cfg, cores=cores)
    scored = score_path(tree, detector, _bootstrap(cfg))
    column = None
    if reference_column:
        from .evaluate import reference_column as official_column

        inputs = scored.unified["inputs"]
        column = official_column(tree, inputs["manifest.json"], inputs["asr.json"])
    written, lines = _commit(outputs, unified.files(scored, cfg.plot, tree.resolve().name, cfg.width)
                             if outputs is not None else {})
    return Ran(scored, written, [detector.stats.line(), *lines], column=column)


@registry.command("sweep")
def sweep(cfg, write: bool = True, cores: int | None = None) -> Ran:
    """`fdbu sweep`: value is sweep.json as a dict."""
    from .sensitivity import check_size, files, outputs as sweep_outputs, sweep as run
    from .tree import require

    trees = [Path(t) for t in cfg.trees()]
    if write and cfg.out is None and len(trees) > 1:  # where would its outputs go? (computing alone needs none)
        from .errors import FdbuError

        raise FdbuError("config", None, "out=None: a sweep over several trees needs out=DIR for its outputs")
    for tree in trees:
        require(tree)
    points = cfg.sweep.points()
    check_size(trees, points, cfg.sweep.allow_large)
    outputs = sweep_outputs(Path(cfg.out) if cfg.out is not None else trees[0], len(trees), cfg.plot) if write \
        else None
    detector = make_detector(cfg, cores=cores)
    result = run(trees, detector, _bootstrap(cfg), points, names=cfg.system_names())
    written, lines = _commit(outputs, files(result, cfg.plot, cfg.width) if write else {})
    return Ran(result, written, [detector.stats.line(), *lines])


def _systems(cfg) -> list:
    """The scored trees of compare or report, read and checked, with their names."""
    from .comparison import load

    return [load(Path(t), name) for t, name in zip(cfg.trees, cfg.system_names())]


def _compared(cfg, systems: list, options, pairs: str = "baseline") -> dict:
    """compare.json of `systems` as `options` (a `PairingOptions`) ask."""
    from .comparison import compare as run

    return run(systems, baseline=cfg.baseline, pairs=pairs, allow_different_samples=options.allow_different_samples,
               allow_mixed_transcripts=options.allow_mixed_transcripts, alpha=options.alpha, progress=cfg.progress)


@registry.command("compare")
def compare(cfg, write: bool = True) -> Ran:
    """`fdbu compare`: value is compare.json as a dict; written only where cfg.out names a folder."""
    from .comparison import files, outputs as compare_outputs

    outputs = compare_outputs(Path(cfg.out), cfg.plot) if write and cfg.out is not None else None
    systems = _systems(cfg)
    result = _compared(cfg, systems, cfg.compare, cfg.compare.pairs)
    written, lines = _commit(outputs, files(result, systems, cfg.plot, cfg.width, cfg.progress)
                             if outputs is not None else {})
    return Ran(result, written, lines)


@registry.command("report")
def report(cfg) -> Ran:
    """`fdbu report`: value is the compare result the leaderboard's decisions come from (None for one tree):
    made here as `fdbu compare` makes it, or read from `report.compare`, refused unless it compares exactly
    these trees."""
    from .readers import parse_json
    from .site import build, outputs as report_outputs

    r = cfg.report
    systems = _systems(cfg)
    compare_path = Path(r.compare) / "compare.json" if r.compare else None
    outputs = report_outputs(Path(cfg.out), len(systems), r.formats(), cfg.plot, len(systems) > 1 and not compare_path)
    if compare_path is not None:
        from .errors import FdbuError

        from .comparison import read_result
        from .tree import regular

        try:
            regular(compare_path, r.compare, "compare.json")  # a FIFO would block the read forever
            result = parse_json(compare_path.read_bytes(), r.compare, "compare.json")
        except OSError as e:
            raise FdbuError(r.compare, "compare.json", f"cannot be read: {e.strerror or e}") from None
        result = read_result(result, systems, r.compare)
    else:
        result = _compared(cfg, systems, r) if len(systems) > 1 else None
    written, lines = _commit(outputs, build(systems, result, Path(cfg.out), formats=r.formats(), plot=cfg.plot,
                                            width=cfg.width, compare_path=compare_path, progress=cfg.progress))
    return Ran(result, written, lines)


@registry.command("evaluate")
def evaluate(cfg) -> Ran:
    """`fdbu evaluate`: value is summary.json as a dict; `disagreements` lists where the official
    scripts, when run, differ from fdbu's rules."""
    import os

    from . import evaluate as ev
    from .official import GT_DISTRIBUTION, SCRIPT_DIRS
    from .tree import load_tree, require

    e = cfg.evaluate
    checkout = Path(e.official_checkout) if e.official_checkout else None
    pins = dict(e.official_sha256)
    beside = None  # without evaluate.gt_distribution: the one beside the scripts, where upstream runs them
    if not e.gt_distribution and checkout is not None:
        beside = next((checkout / d / GT_DISTRIBUTION for d in SCRIPT_DIRS
                       if (checkout / d / GT_DISTRIBUTION).is_file()), None)
    gt = Path(e.gt_distribution) if e.gt_distribution else beside
    judge = None
    if e.judge.base_url:
        from .judge import Judge, load_official

        prompt = load_official(cast(Path, checkout), pins, e.allow_unpinned)  # the config asks for one
        judge = Judge(e.judge.base_url, e.judge.model, os.environ.get(e.judge.api_key_env), prompt,
                      max_attempts=e.judge.max_attempts, timeout_s=e.judge.timeout_s)
    require(Path(cfg.tree))
    outputs = ev.outputs(Path(cfg.tree), judge is not None)
    tree = load_tree(Path(cfg.tree))
    if checkout is not None:
        _checkout_used(checkout, e, tree, beside is not None)
    lines: list[str] = []
    disagreements: list[str] = []
    if e.run_official:  # the pins are checked before anything is computed
        from .official_run import check_files

        check_files(tree, cast(Path, checkout), gt, pins, e.allow_unpinned)  # the config asks for one
    result = ev.evaluate(tree, gt_distribution=gt, judge=judge, pins=pins)
    if e.run_official:
        from .official_run import run_official

        result["official_run"], lines, disagreements = run_official(tree, cast(Path, checkout), result, gt_path=gt, pins=pins,
                                                                    allow_unpinned=e.allow_unpinned)
    written, report = _commit(outputs, ev.files(result, judge.ledger if judge else None))
    return Ran(result, written, [*lines, *report], disagreements=disagreements)


def _checkout_used(checkout: Path, e, tree, gives_gt: bool) -> None:
    """evaluate.official_checkout is honoured or refused, never ignored: it must be a folder, and something must
    read it (the official scripts run, the judge's prompt, or icc_backchannel's ground truth beside the scripts)."""
    from .errors import FdbuError

    if not checkout.is_dir():
        raise FdbuError("config", None, f"evaluate.official_checkout={checkout}: "
                        f"{'is not a folder' if checkout.exists() else 'does not exist'}")
    from .official import GT_DISTRIBUTION

    backchannel = any(s.kind.official.runner == "backchannel" for s in tree.samples)
    if not (e.run_official or e.judge.base_url or (backchannel and gives_gt)):
        raise FdbuError("config", None, f"evaluate.official_checkout={checkout} would not be read: it is used by "
                        "evaluate.run_official=true (run the official scripts and compare), by a judge "
                        "(evaluate.judge.base_url) and for icc_backchannel's ground truth (the "
                        f"{GT_DISTRIBUTION} beside its scripts); add "
                        "evaluate.run_official=true, or leave it out")


@registry.command("export")
def export(cfg) -> Ran:
    """`fdbu export`: value is the new tree's path."""
    from .export import export as run

    e = cfg.export
    tree = run(Path(cfg.dataset) if cfg.dataset else None, Path(cfg.outputs) if cfg.outputs else None, Path(cfg.out),
               roots=e.roots, transcripts=e.transcripts, model=e.model, length=e.length, only=e.only,
               progress=cfg.progress)
    return Ran(tree, [tree])


@registry.command("asr")
def asr(cfg, cores: int | None = None) -> Ran:
    """`fdbu asr`: transcripts of every tree (or of one shard of their files, into the cache)."""
    from .asr import stage
    from .asr.nemo_model import ParakeetASR
    from .device import resolve_device

    a = cfg.asr
    models: list = []
    if cores is not None:  # a launcher's share of this machine
        import torch

        torch.set_num_threads(cores)

    def model():  # made once, after the trees are checked; its weights load only if something is transcribed
        if not models:
            models.append(ParakeetASR(Path(a.checkpoint) if a.checkpoint else None, model=a.model, sha256=a.sha256,
                                      device=resolve_device(cfg.device), verbose=a.verbose))
        return models[0]

    cache = cfg.cache_root() / ASR if a.cache else None
    if cfg.sharded:
        return Ran(None, lines=[stage.run_shard(cfg.roots(), model, cast(Path, cache), cfg.shard, cfg.shards,
                                                batch_size=a.batch_size, max_batch_seconds=a.max_batch_seconds,
                                                verify=a.verify, progress=cfg.progress)])
    written, lines = [], []
    for root in cfg.roots():
        path, counts = stage.run(root, model, batch_size=a.batch_size, max_batch_seconds=a.max_batch_seconds,
                                 resume=a.resume, cache_dir=cache, verify=a.verify, progress=cfg.progress,
                                 require_shards=a.require_shards)
        written.append(path)
        if "completed" in counts:
            lines.append(f"finished {path}: a stopped run had left all {counts['completed']} transcripts and "
                         "asr.json complete (its journal removed; nothing transcribed)")
            continue
        lines.append(f"wrote {path}: {counts['transcribed']} transcribed, {counts['from_cache']} from the cache"
                     f"{stage.by_shards(counts)}, {counts['kept']} kept{stage.decoding_note(counts)}")
    return Ran(None, written, lines)


@registry.command("vad")
def vad(cfg, cores: int | None = None) -> Ran:
    """`fdbu vad`: speech probabilities into the cache, for score and sweep to assemble from."""
    from .shard import label
    from .vad import stage

    detector = make_detector(cfg, shard=label(cfg.shard, cfg.shards) if cfg.sharded else None, cores=cores)
    rules = [cfg.vad.settings().rule] + ([p.rule for p in cfg.sweep.points()] if cfg.for_sweep else [])
    return Ran(None, lines=[stage.run(cfg.roots(), detector, rules, cfg.shard, cfg.shards), detector.stats.line()])


@registry.command("synth")
def synth(cfg) -> Ran:
    """`fdbu synth`: value is the new tree's path."""
    from .synth import synthesize

    tree = synthesize(Path(cfg.out), n=cfg.n, seed=cfg.seed, system=cfg.system, ineligible=cfg.ineligible,
                      interruption_tail_s=tuple(cfg.interruption_tail_s), progress=cfg.progress, layout=cfg.layout)
    return Ran(tree, [tree])


@registry.command("calibrate")
def calibrate(cfg, cores: int | None = None) -> Ran:
    """`fdbu calibrate`: value is the `fdbu.vad.calibration.Calibration`; written: where it is stored
    (nothing where the cache is not writable)."""
    detector = make_detector(cfg, backend="batched", cores=cores)
    cal = detector.calibration(force=True)
    stored = detector.cache_root / CALIBRATION / f"{cal.key}.json"
    if stored.is_file():
        return Ran(cal, [stored], [f"stored as {stored}"])
    return Ran(cal, [], [f"not stored: {stored.parent} is not writable"])
