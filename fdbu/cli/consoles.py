"""What the CLI prints for each command: its registered console (`@registry.console`), or the lines its `Ran`
returns; every command called with a `Call` for a person (the launcher's share of the cores, what only a console
shows). The CLI (`fdbu.cli.main`) imports this module, which attaches the consoles to the registry."""
from __future__ import annotations

import sys

from .. import commands, registry
from ..registry import Call
from .terminal import show, teller


@registry.console("score")
def _score(cfg) -> None:
    from pathlib import Path

    from ..scoring import unified
    from ..tree.load import require

    require(Path(cfg.tree))  # a wrong tree= is its one line, before anything else is said
    say = teller("score", cfg.progress)
    if say:  # the seconds before the first bar: torch, Silero, the kernels load
        say(f"loading the VAD and the kernels; then reading {cfg.tree}")
    ran = commands.score.run(cfg, _call())
    show(unified.summary(ran.value.unified))
    if ran.column:
        show("\n" + ran.column)
    show("\n".join(["", *ran.lines]))


@registry.console("sweep")
def _sweep(cfg) -> None:
    from ..scoring.sweep import table

    ran = commands.sweep.run(cfg, _call())
    show(table(ran.value, cfg.trees()))
    show("\n".join(["", *ran.lines]))


@registry.console("compare")
def _compare(cfg) -> None:
    from ..comparison.files import leaderboard

    ran = commands.compare.run(cfg, _call())
    show(leaderboard(ran.value))
    show("\n".join(["", *(ran.lines or ["pass out=DIR to write compare.json, compare.csv and the figures"])]))


@registry.console("report")
def _report(cfg) -> None:
    from pathlib import Path

    ran = commands.report.run(cfg, _call())
    show("\n".join(ran.lines))
    if "html" in cfg.report.formats():
        show(f"open {(Path(cfg.out) / 'index.html').resolve()}")


@registry.console("evaluate")
def _evaluate(cfg) -> None:
    from ..official.summary import table

    ran = commands.evaluate.run(cfg, _call())
    show(table(ran.value))
    show("\n".join(ran.lines))
    if ran.disagreements:
        print("official scripts disagree with fdbu's rules:\n  " + "\n  ".join(ran.disagreements), file=sys.stderr)
        sys.exit(3)


@registry.console("export")
def _export(cfg) -> None:
    import json

    tree = commands.export.run(cfg, _call()).value
    rows = json.loads((tree / "manifest.json").read_text())["samples"]
    bad = [r for r in rows if not r["eligible"]]
    made_by = json.loads((tree / "asr.json").read_text())["config"].get("made_by") \
        if cfg.export.transcripts == "adopt" and (tree / "asr.json").is_file() else None
    adopted = f" (transcripts adopted: written by {made_by})" if made_by else ""
    fitted = [r for r in rows if r.get("length_fit")]
    show(f"wrote {tree}: {len(rows)} samples, {len(rows) - len(bad)} eligible, {len(bad)} ineligible{adopted}")
    from ..tree.export import said

    for line in said(cfg.dataset, tree):
        show(f"  {line}")
    if fitted:
        shown = ", ".join(f"{r['sample_id']} {r['length_fit']['action']} {r['length_fit']['samples'] / 16:.1f} ms"
                          for r in fitted[:5])
        show(f"  {len(fitted)} output{'s' if len(fitted) > 1 else ''} fitted to T (export.length="
             f"{cfg.export.length}; manifest.json length_fit): {shown}{', ...' if len(fitted) > 5 else ''}")
    dropped = sum(r.get("dropped_words", 0) for r in rows)
    if dropped:
        show(f"  {dropped} transcript words starting after T dropped from cropped outputs (manifest.json dropped_words)")
    if bad:
        from ..tree.export import keeps

        show("  ineligible (not scored; counted in unified.json's ineligible_reasons):")
    for r in bad:
        show(f"  {r['sample_id']}: {keeps(r)}")


def _lines(command):
    """A command whose console output is its lines."""
    def run(cfg) -> None:
        show("\n".join(command(cfg, _call()).lines))
    return run


def _call() -> Call:
    """How the CLI calls a command: for a person, with the launcher's share of the cores."""
    return Call(cores=launcher_share(), console=True)


def launcher_share() -> int | None:
    """Under a launcher whose jobs are parallel processes on this machine (it declares `n_jobs`, as
    Hydra's joblib launcher does) each job gets its share of the cores (cores // workers), so they do
    not start on the same free cores and fight."""
    try:
        from hydra.core.hydra_config import HydraConfig

        launcher = HydraConfig.get().launcher
    except (ImportError, ValueError):
        return None
    if "n_jobs" not in launcher:
        return None
    from ..common.device import allowed_cores

    cores, n = allowed_cores(), int(launcher.get("n_jobs") or -1)
    return max(1, cores // (cores if n < 1 else min(n, cores)))


@registry.console("synth")
def _synth(cfg) -> None:
    tree = commands.synth.run(cfg, _call()).value
    what = "official per-task folders" if cfg.layout == "official" else "tree"
    n = cfg.n if isinstance(cfg.n, int) else "the release's" if cfg.n == "release" else \
        ", ".join(f"{k} {v}" for k, v in dict(cfg.n).items())
    show(f"wrote synthetic {what} {tree} ({n} samples{' per subset' if not isinstance(cfg.n, dict) else ''}, "
         f"system={cfg.system}, seed={cfg.seed})")


@registry.console("calibrate")
def _calibrate(cfg) -> None:
    from ..vad.calibration import FLOOR, IMPLAUSIBLE, MULTIPLE

    ran = commands.calibrate.run(cfg, _call())
    cal = ran.value
    ident = cal.identity["device"]
    show(f"device: {', '.join(f'{k} {v}' for k, v in ident.items() if v is not None)}")
    show(f"corpus: {cal.windows} windows, {cal.audio_s:.0f} s of audio (sha256:{cal.corpus_sha256[:12]})")
    show(f"largest |batched - reference| probability: {cal.deviation:.3e} (refused above {IMPLAUSIBLE:.0e})")
    show(f"guard margin: {cal.margin:.3e} = max({MULTIPLE} x deviation, {FLOOR:.0e}); {cal.seconds:.1f} s")
    show("\n".join(ran.lines))


def _tree_list(cfg) -> list:
    return list(cfg.trees() if callable(getattr(cfg, "trees", None)) else getattr(cfg, "trees", None) or [cfg.tree])


def _trees(cfg) -> str:
    return ", ".join(map(str, _tree_list(cfg)))


def _trees_are(transcribed: bool):
    """Whether every tree= is a tree (`transcribed`: with its asr.json), what the command refuses first otherwise,
    in its own line (`fdbu.tree.load.require`)."""
    def ready(cfg) -> bool:
        from pathlib import Path

        from ..tree.layout import not_a_tree

        return not any(not_a_tree(Path(t), transcribed) for t in _tree_list(cfg))
    return ready


def _new_out(cfg) -> bool:
    """Whether out= names a folder the command can create (synth, export write new folders only)."""
    from pathlib import Path

    return cfg.out is not None and not Path(cfg.out).exists()


def _report_text(cfg) -> str:
    steps = ["the comparison"] if len(_tree_list(cfg)) > 1 and cfg.report.compare is None else []
    steps += ["the figures"] if cfg.plot and "html" in cfg.report.formats() else []
    return f"reading {_trees(cfg)}; then {', '.join(steps)}{' and ' if steps else ''}the site"


def _export_text(cfg) -> str:
    read = f"the release layout at {cfg.dataset}" if cfg.dataset is not None else \
        f"the per-task folders of {', '.join(dict(cfg.export.roots))}"
    return f"reading {read}; then writing {cfg.out}"


# what a command says first on a terminal, before the imports and reading that precede its first bar (issue 56: never
# a silent screen): (whether its inputs pass the checks it makes first: otherwise it says nothing and the command
# refuses in its one line; the text). score says its own after checking its tree; compare starts with its bar
ANNOUNCE = {
    "report": (_trees_are(True), _report_text),
    "sweep": (_trees_are(True), lambda cfg: f"loading the VAD and the kernels; then {_trees(cfg)} over "
                                       f"{len(cfg.sweep.points())} settings" + (", then the heatmaps" if cfg.plot else "")),
    "evaluate": (_trees_are(True), lambda cfg: f"reading {cfg.tree}; then the reference column (the official rules)"
                 + ("; then the official scripts, each named as it runs" if cfg.evaluate.run_official else "")),
    "export": (_new_out, _export_text),
    "asr": (_trees_are(False), lambda cfg: f"loading NeMo and the model (seconds on a CPU); then transcribing {_trees(cfg)}"),
    "vad": (_trees_are(False), lambda cfg: f"loading the VAD and the kernels; then speech detection on {_trees(cfg)}"),
    "synth": (_new_out, lambda cfg: f"writing {cfg.out}"),
    "calibrate": (lambda cfg: True, lambda cfg: "loading silero-vad and the batched backend; then both paths over the "
                                                "calibration corpus"),
}


def announce(command: str | None, cfg) -> None:
    """On a terminal (with progress on), what `command` is doing, before the imports that precede its first bar
    (`ANNOUNCE`): called by the CLI before torch loads; nothing where the command is about to refuse its input."""
    if command not in ANNOUNCE:
        return
    say = teller(command, getattr(cfg, "progress", True))
    if say is None:
        return
    ready, text = ANNOUNCE[command]
    if ready(cfg):
        say(text(cfg))


def console_of(command: str):
    """What runs `command` and prints: its registered console, or (a command that registers none, as asr and vad)
    its lines."""
    c = registry.COMMANDS[command]
    return c.show or _lines(c.run)
