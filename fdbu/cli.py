"""`fdbu COMMAND [key=value ...]`: one Hydra app per command, typed configs in `fdbu.config`.

The command word is taken off argv before Hydra parses the rest, so every Hydra feature
(`--cfg job`, `-m` multirun, launchers, overrides) works per command. Every expected
failure (input, file system, cache, output, config) is one line `fdbu: error: ...` and exit
status 2; Ctrl-C is exit 130; anything else is a bug: its traceback, and a line asking to
report it.
"""
from __future__ import annotations

import difflib
import os
import sys
import traceback
from pathlib import Path

from . import __version__
from .errors import FdbuError

USAGE = """usage: fdbu COMMAND [key=value ...] [--cfg job] [-m]      fdbu COMMAND --help: every key

commands:
  score     score a reference tree:               fdbu score tree=PATH [out=DIR] [plot=true]
  sweep     interruption metrics over VAD settings: fdbu sweep tree=PATH | "tree=[A,B]" out=DIR
  compare   scored systems, pair by pair:          fdbu compare "trees=[A,B]" [names=[a,b]] [out=DIR]
  report    a site (leaderboard, drill-downs) + tables: fdbu report "trees=[A,B]" [names=[a,b]] out=DIR
  evaluate  the official rules (reference column): fdbu evaluate tree=PATH [evaluate.official_checkout=DIR]
  export    a tree from the v1.0 release + outputs: fdbu export dataset=DIR [outputs=DIR] out=DIR
  asr       transcripts with a local Parakeet .nemo: fdbu asr tree=DIR asr.checkpoint=PATH.nemo [device=cuda]
  vad       speech probabilities into the cache:  fdbu vad tree=DIR [shard=K shards=N] (then score assembles)
  synth     write a synthetic reference tree:     fdbu synth out=PATH [n=5] [seed=0] [system=mixed]
  calibrate the batched VAD's guard margin here:  fdbu calibrate [device=cuda]

Hydra: --cfg job shows the composed config; -m runs several jobs (fdbu score -m tree=A,B).
Python: import fdbu; fdbu.score("runs/modelA").to_pandas()  (see the README)."""


def launcher_share() -> int | None:
    """Under Hydra's joblib launcher the jobs are parallel processes on this machine: each gets its
    share of the cores (cores // workers), so they do not start on the same free cores and fight."""
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ImportError, ValueError):
        return None
    if "JoblibLauncher" not in str(launcher.get("_target_", "")):
        return None
    from .device import allowed_cores

    cores, n = allowed_cores(), int(launcher.get("n_jobs") or -1)
    return max(1, cores // (cores if n < 1 else min(n, cores)))


def make_detector(cfg, backend: str | None = None, shard: str | None = None):
    """The speech detector a command's config asks for: Silero settings plus how to compute them."""
    from .vad import SpeechDetector

    vad = cfg.vad
    threads = vad.threads if vad.threads is not None else launcher_share()
    return SpeechDetector(vad.settings(), backend=backend or vad.backend, device=cfg.device, cache=vad.cache,
                          cache_dir=cfg.cache_root() / "vad-probs", verify=vad.verify, threads=threads,
                          batch_seconds=vad.batch_seconds, progress=cfg.progress, shard=shard)


def _score(cfg) -> None:
    from . import report
    from .evaluate import reference_column
    from .pipeline import score_path

    tree = Path(cfg.tree)
    outputs = report.outputs(Path(cfg.out) if cfg.out is not None else tree, cfg.plot)
    detector = make_detector(cfg)
    scored = score_path(tree, detector, cfg.bootstrap.make())
    files = report.files(scored, cfg.plot, name=tree.resolve().name)
    inputs = scored.unified["inputs"]
    column = reference_column(tree, inputs["manifest.json"], inputs["asr.json"])  # never fails: before the commit
    written = outputs.commit(files)
    print(report.summary(scored.unified))
    if column:
        print("\n" + column)
    print("\n".join(["", detector.stats.line(), *outputs.report(written)]))


def _sweep(cfg) -> None:
    from .sensitivity import files, outputs as sweep_outputs, sweep, table

    trees = [Path(t) for t in cfg.trees()]
    outputs = sweep_outputs(Path(cfg.out) if cfg.out is not None else trees[0], len(trees), cfg.plot)
    detector = make_detector(cfg)
    result = sweep(trees, detector, cfg.bootstrap.make(), cfg.sweep.points(), names=cfg.system_names())
    written = outputs.commit(files(result, cfg.plot))
    print(table(result))
    print("\n".join(["", detector.stats.line(), *outputs.report(written)]))


def _compare(cfg) -> None:
    from .comparison import compare, files, leaderboard, load, outputs as compare_outputs

    outputs = compare_outputs(Path(cfg.out), cfg.plot) if cfg.out is not None else None
    systems = [load(Path(t), name) for t, name in zip(cfg.trees, cfg.system_names())]
    result = compare(systems, baseline=cfg.baseline, pairs=cfg.compare.pairs,
                     allow_different_samples=cfg.compare.allow_different_samples)
    written = outputs.commit(files(result, systems, cfg.plot)) if outputs is not None else []
    print(leaderboard(result))
    tail = outputs.report(written) if outputs is not None else \
        ["pass out=DIR to write compare.json, compare.csv and the figures"]
    print("\n".join(["", *tail]))


def _report(cfg) -> None:
    from .comparison import compare, load
    from .readers import parse_json
    from .site import build, check_compare, outputs as report_outputs

    r = cfg.report
    systems = [load(Path(t), name) for t, name in zip(cfg.trees, cfg.system_names())]
    compare_path = Path(r.compare) / "compare.json" if r.compare else None
    outputs = report_outputs(Path(cfg.out), len(systems), r.formats(), cfg.plot, len(systems) > 1 and not compare_path)
    if compare_path is not None:
        try:
            result = parse_json(compare_path.read_bytes(), r.compare, "compare.json")
        except OSError as e:
            raise FdbuError(r.compare, "compare.json", f"cannot be read: {e.strerror or e}") from None
        check_compare(result, systems, r.compare)
    else:
        result = compare(systems, baseline=cfg.baseline, allow_different_samples=r.allow_different_samples) \
            if len(systems) > 1 else None
    written = outputs.commit(build(systems, result, Path(cfg.out), formats=r.formats(), plot=cfg.plot,
                                   width=r.width, compare_path=compare_path))
    print("\n".join(outputs.report(written)))
    if "html" in r.formats():
        print(f"open {(Path(cfg.out) / 'index.html').resolve()}")


def _evaluate(cfg) -> None:
    from . import evaluate as ev
    from .official import GT_DISTRIBUTION, SCRIPT_DIRS
    from .tree import load_tree

    e = cfg.evaluate
    checkout = Path(e.official_checkout) if e.official_checkout else None
    pins = dict(e.official_sha256)
    gt = Path(e.gt_distribution) if e.gt_distribution else None
    if gt is None and checkout is not None:  # the one beside the scripts, where upstream runs them
        gt = next((checkout / d / GT_DISTRIBUTION for d in SCRIPT_DIRS if (checkout / d / GT_DISTRIBUTION).is_file()),
                  None)
    judge = None
    if e.judge.base_url:
        from .judge import Judge, load_official

        prompt = load_official(checkout, pins, e.allow_unpinned)
        judge = Judge(e.judge.base_url, e.judge.model, os.environ.get(e.judge.api_key_env), prompt,
                      max_attempts=e.judge.max_attempts, timeout_s=e.judge.timeout_s)
    outputs = ev.outputs(Path(cfg.tree), judge is not None)
    tree = load_tree(Path(cfg.tree))
    lines, disagreements = [], []
    if e.run_official:  # the pins are checked before anything is computed
        from .official_run import check_files

        check_files(tree, checkout, gt, pins, e.allow_unpinned)
    result = ev.evaluate(tree, gt_distribution=gt, judge=judge, pins=pins)
    if e.run_official:
        from .official_run import run_official

        result["official_run"], lines, disagreements = run_official(tree, checkout, result, gt_path=gt, pins=pins,
                                                                    allow_unpinned=e.allow_unpinned)
    written = outputs.commit(ev.files(result, judge.ledger if judge else None))
    print(ev.table(result))
    for text in lines:
        print(text)
    print("\n".join(outputs.report(written)))
    if disagreements:
        print("official scripts disagree with fdbu's rules:\n  " + "\n  ".join(disagreements), file=sys.stderr)
        sys.exit(3)


def _export(cfg) -> None:
    import json

    from .export import export

    tree = export(Path(cfg.dataset), Path(cfg.outputs) if cfg.outputs else None, Path(cfg.out),
                  length=cfg.export.length, only=cfg.export.only, progress=cfg.progress)
    rows = json.loads((tree / "manifest.json").read_text())["samples"]
    bad = [r for r in rows if not r["eligible"]]
    print(f"wrote {tree}: {len(rows)} samples, {len(rows) - len(bad)} eligible, {len(bad)} ineligible")
    for r in bad:
        print(f"  {r['sample_id']}: {'; '.join(r['reasons'])}")


def _asr(cfg) -> None:
    from .asr import stage
    from .asr.nemo_model import ParakeetASR
    from .device import resolve_device

    a = cfg.asr
    models = []
    share = launcher_share()
    if share is not None:
        import torch

        torch.set_num_threads(share)

    def model():  # made once, after the trees are checked; its weights load only if something is transcribed
        if not models:
            models.append(ParakeetASR(Path(a.checkpoint), sha256=a.sha256, device=resolve_device(cfg.device),
                                      verbose=a.verbose))
        return models[0]

    cache = cfg.cache_root() / "asr" if a.cache else None
    if cfg.sharded:
        print(stage.run_shard(cfg.roots(), model, cache, cfg.shard, cfg.shards, batch_size=a.batch_size,
                              max_batch_seconds=a.max_batch_seconds, progress=cfg.progress))
        return
    for root in cfg.roots():
        path, counts = stage.run(root, model, batch_size=a.batch_size, max_batch_seconds=a.max_batch_seconds,
                                 resume=a.resume, cache_dir=cache, progress=cfg.progress)
        print(f"wrote {path}: {counts['transcribed']} transcribed, {counts['from_cache']} from the cache"
              f"{stage.by_shards(counts)}, {counts['kept']} kept")


def _vad(cfg) -> None:
    from .shard import label
    from .vad import stage

    detector = make_detector(cfg, shard=label(cfg.shard, cfg.shards) if cfg.sharded else None)
    rules = [cfg.vad.settings().rule] + ([p.rule for p in cfg.sweep.points()] if cfg.for_sweep else [])
    print(stage.run(cfg.roots(), detector, rules, cfg.shard, cfg.shards))
    print(detector.stats.line())


def _synth(cfg) -> None:
    from .synth import synthesize

    tree = synthesize(Path(cfg.out), n=cfg.n, seed=cfg.seed, system=cfg.system, ineligible=cfg.ineligible,
                      interruption_tail_s=tuple(cfg.interruption_tail_s), progress=cfg.progress)
    print(f"wrote synthetic tree {tree} ({cfg.n} samples per subset, system={cfg.system}, seed={cfg.seed})")


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


COMMANDS = {"score": _score, "sweep": _sweep, "compare": _compare, "report": _report, "evaluate": _evaluate, "export": _export,
            "asr": _asr, "vad": _vad, "synth": _synth, "calibrate": _calibrate}


def error(message: str, status: int = 2):
    print(f"fdbu: error: {message}", file=sys.stderr)
    sys.exit(status)


def _task(fn):
    """Run one command on its composed config: validated into its dataclass first, errors as one line."""
    def run(cfg) -> None:
        from omegaconf import OmegaConf
        from omegaconf.errors import OmegaConfBaseException

        from .config import composition_error

        try:
            try:
                obj = OmegaConf.to_object(cfg)
            except OmegaConfBaseException as e:
                raise FdbuError("config", None, composition_error(e)) from None
            fn(obj)
        except FdbuError as e:
            error(str(e).splitlines()[0])
        except KeyboardInterrupt:
            error("interrupted (Ctrl-C); nothing half-written was left behind", 130)
        except RecursionError:
            error("a JSON file is nested too deeply to read")
    return run


def _command_help(command: str) -> str:
    from .config import help_text

    return (f"usage: fdbu {command} [key=value ...] [--cfg job] [-m]\n\n{help_text(command)}\n\n"
            f"Hydra: --cfg job shows the composed config; -m runs several jobs; hydra/launcher=... picks a launcher.")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # printing into a reader that stopped (`| head`): what SIGPIPE would end with
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] in ("--version", "-V", "version"):
        print(f"fdbu {__version__}")
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        near = difflib.get_close_matches(command, COMMANDS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        print(f"fdbu: error: unknown command {command!r}{hint}\n\n{USAGE}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in rest):
        print(_command_help(command))
        return 0
    import hydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from .config import composition_error, register

    register()
    os.environ["HYDRA_FULL_ERROR"] = "1"  # composition errors reach this function, which prints one line
    sys.argv = [f"fdbu-{command}"] + rest
    app = hydra.main(version_base="1.3", config_path="pkg://fdbu.conf", config_name=command)(_task(COMMANDS[command]))
    try:
        app()
    except KeyboardInterrupt:
        error("interrupted (Ctrl-C); nothing half-written was left behind", 130)
    except (HydraException, OmegaConfBaseException) as e:  # composing the config, parsing the overrides
        error(f"config: {composition_error(e)}")
    except BrokenPipeError:
        raise
    except Exception:
        traceback.print_exc()
        print(f"fdbu {__version__}: this is a bug in fdbu, not a problem with your input; please report it with "
              "the command and the traceback above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
