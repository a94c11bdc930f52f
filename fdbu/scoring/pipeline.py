"""The scoring pipeline: tree -> samples -> speech segments -> outcomes -> aggregates -> report."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from ..common import faults
from .. import tasks
from ..version import DEFINITIONS_VERSION, VIEWS_DEFINITIONS, __version__
from ..errors import FdbuError
from ..family import Family
from ..metrics.base import Runs
from ..metrics.stats import Z_975, Bootstrap
from ..tree.load import Tree, check_output_audio, load_tree
from ..config.settings import changed
from ..vad import Job, SpeechDetector


@dataclass(frozen=True)
class Views:
    """The other benchmarks' views a score computes (fdbu.views.VIEWS names) and each one's settings."""

    names: tuple[str, ...] = ()
    settings: dict = field(default_factory=dict)


NO_VIEWS = Views()


@dataclass
class Scored:
    unified: dict
    rows: list[dict]
    unscored: dict[str, str] = field(default_factory=dict)  # a subset in the tree without unified metrics -> why


def non_default(vad: SpeechDetector | None, boot: Bootstrap) -> list[str]:
    """Every setting that differs from the spec's (Silero's defaults without padding; 2000 resamples, seed 0)."""
    out = []
    if vad is not None:
        out += [f"vad.{k}={getattr(vad.silero.settings, k)}" for k in changed(vad.silero.settings)]
    out += [f"bootstrap.{k}={v}" for k, v in asdict(boot).items() if getattr(Bootstrap(), k) != v]
    return out


def signature(vad: SpeechDetector, boot: Bootstrap, inputs: dict | None = None, *, vad_settings: bool = True,
              transcripts: dict | None = None) -> dict:
    """The reproducibility header of unified.json and sweep.json (sacrebleu's signature). `settings` says
    whether every setting is the spec's; if not, `non_default` lists those that differ."""
    head: dict[str, Any] = {"generator": "fdbu", "fdbu_version": __version__, "definitions": DEFINITIONS_VERSION}
    changed = non_default(vad if vad_settings else None, boot)
    head["settings"] = "non-default" if changed else "spec"
    if changed:
        head["non_default"] = changed
    if inputs is not None:
        head["inputs"] = inputs
    if transcripts is not None:  # where the words came from (fdbu asr, adopted, synthetic): compare checks it
        head["transcripts"] = transcripts
    head.update({
        "speech_detection": vad.signature(),
        "bootstrap": {"method": "percentile over whole samples", "resamples": boot.resamples, "seed": boot.seed,
                      "confidence": 0.95,
                      "draw": "numpy.random.default_rng(seed).integers(0, n, size=(resamples, n)), fresh per metric"},
        "share_interval": {"method": "wilson", "z": Z_975},
        "quantile_rule": "ceil(qN)-th smallest, no interpolation; +infinity reads 'not reached'",
    })
    return head


def _not_the_spec(head: dict, changed: list[str]) -> None:
    """Settings beyond the signature's own (a family's group, the views'), in its `settings` and `non_default`."""
    if changed:
        head["settings"] = "non-default"
        head["non_default"] = [*head.get("non_default", []), *changed]


def family_settings(family: Family, groups: dict):
    """The settings of `family`'s own group in `groups` (group key -> settings; its defaults where absent), or None
    for a family without one."""
    group = family.settings
    return None if group is None else groups.get(group.key, group.default)


def family_header(head: dict, families: list[Family], groups: dict, definitions: bool = True) -> None:
    """What each family adds to the header of a score (or, without `definitions`, a sweep) over its subsets: its
    definitions' name, its group's settings (under the group's key) and those that are not the defaults. A group
    changed from its defaults whose family has no subset here would change nothing: refused, not ignored (as a
    view's settings without the view are)."""
    read = {f.settings.key for f in families if f.settings is not None}
    for key, settings in groups.items():
        changed = [] if key in read or settings is None else settings.non_default()
        if changed:
            owner = next(f.name for f in tasks.FAMILIES.values() if f.settings is not None and f.settings.key == key)
            here = ", ".join(f.name for f in families) or "no family"
            raise FdbuError("config", None, f"{changed[0]}: {key}.* is read only on {owner} subsets, and this "
                            f"{'score' if definitions else 'sweep'} has {here}'s only; leave it out")
    for family in families:
        if family.definitions and definitions:
            head["definitions"] = f"{head['definitions']}+{family.definitions}"
        settings = family_settings(family, groups)
        if settings is not None:
            head[cast(Any, family.settings).key] = settings.header()
            _not_the_spec(head, settings.non_default())


def detect_speech(samples, vad: SpeechDetector, kind: tasks.Task | None = None, subset: str = "",
                  segments: dict | None = None):
    """Each sample's speech segments in the file its task segments (a list, one (k, 2) array per sample), or in
    each of its runs (`Runs`, v1.5: output.wav and clean_output.wav), in one batched call. `segments` (sample id,
    or (sample id, file) for a file other than output.wav -> segments) replaces Silero."""
    files = kind.detected if kind is not None else ("output.wav",)
    if segments is not None:
        found = [segments[s.sample_id if f == "output.wav" else (s.sample_id, f)] for f in files for s in samples]
    else:
        found = vad.segments(detection_jobs(files, samples))
    return by_file(found, files, len(samples), subset)


def detection_jobs(files: tuple[str, ...], samples) -> list[Job]:
    """One job per sample and file its task segments, file by file (v1.5: both runs, in one batch)."""
    return [Job.of(s, f) for f in files for s in samples]


def by_file(found: list, files: tuple[str, ...], n: int, subset: str):
    """The segments of `detection_jobs` back per file: one file's list as it is, several as `Runs`."""
    per = [found[j * n:(j + 1) * n] for j in range(len(files))]
    return per[0] if len(files) == 1 else Runs(subset, dict(zip(files, per)))


def score_subset(kind: tasks.Task, selected: list, boot: Bootstrap, segs=None, groups: dict | None = None) -> tuple:
    """One subset's per-sample components and aggregates (metrics, extra counts): what score and each
    point of the sweep compute. `segs` are the eligible samples' speech segments (a task with speech
    detection; `Runs` for one that segments several runs); every task's `components(samples, segments, settings)`
    gets its family's settings group (from `groups`, group key -> settings; None where it has none)."""
    eligible = [s for s in selected if s.eligible]
    task = kind.metric_module
    own = family_settings(tasks.FAMILIES[kind.family], groups or {})
    comps = task.components(eligible, segs if kind.speech_detection else None, own)
    metrics, extra = task.aggregate(comps, selected=len(selected), ineligible=len(selected) - len(eligible), boot=boot)
    return comps, metrics, extra


def score(tree: Tree, vad: SpeechDetector, boot: Bootstrap, *, segments=None, groups: dict | None = None,
          views: Views = NO_VIEWS) -> Scored:
    """Score every scored subset present in the tree.

    `segments` (sample_id -> (k, 2) microseconds; (sample_id, file) for another file a task segments, v1.5's
    clean_output.wav) replaces speech detection, for callers that already have the segments; by default Silero
    runs on every file each eligible sample's task segments (Task.detected); `groups` holds the families' settings
    (group key -> settings: v1.5's overlap.*; the defaults where absent); `views` the other benchmarks' numbers
    asked for (fdbu.views), in their own section.
    """
    unscored = _unscored(tree)
    unified = signature(vad, boot, {"manifest.json": tree.manifest_sha256, "asr.json": tree.asr_sha256},
                        transcripts=tree.transcripts)
    groups = groups or {}
    family_header(unified, tasks.families_of(n for n in tasks.scored() if tree.subset(n)), groups)
    if views.names:
        unified["definitions"] += f"+{VIEWS_DEFINITIONS}"
        _not_the_spec(unified, [c for n in views.names for c in views.settings[n].non_default()])
    unified["subsets"] = {}
    per_sample: dict[str, dict] = {}
    viewed: dict[str, tuple] = {}  # subset -> what the views read (fdbu.views.score_views)
    for subset in tasks.scored():
        selected = tree.subset(subset)
        if not selected:
            continue
        eligible = [s for s in selected if s.eligible]
        kind = tasks.subset(subset).task
        segs = detect_speech(eligible, vad, kind, subset, segments) if kind.speech_detection else None
        comps, metrics, extra = score_subset(kind, selected, boot, segs, groups)
        own = {e.key: extra.pop(e.key) for e in tasks.FAMILIES[kind.family].entries if e.key in extra}  # after the metrics
        subset_rows = kind.metric_module.rows(eligible, comps)
        for s, row in zip(eligible, subset_rows):
            per_sample[s.sample_id] = row
        view_segs = _view_segments(tree, eligible, vad, kind, subset, segments, segs, views) if views.names else None
        viewed[subset] = (kind.name, eligible, comps, subset_rows, len(selected), view_segs)
        unified["subsets"][subset] = _entry(tree, subset, kind, selected, metrics, extra, own)
    if views.names:
        from ..views import score_views

        unified["views"] = score_views(list(views.names), viewed, boot, views.settings)
    return Scored(unified=unified, rows=_rows(tree, per_sample), unscored=unscored)


def _unscored(tree: Tree) -> dict[str, str]:
    """The subsets present without unified metrics, each with why; refused where no subset has them (never an
    empty unified.json with exit 0)."""
    present = sorted({s.subset for s in tree.samples})
    unscored = {n: cast(str, tasks.subset(n).task.unscored) for n in tasks.SUBSETS
                if n in present and not tasks.subset(n).task.scored}
    if not any(tree.subset(name) for name in tasks.scored()):
        why = "; ".join(f"{', '.join(k for k in unscored if unscored[k] == w)}: {w}" for w in dict.fromkeys(
            unscored.values())) or "it holds no sample"
        raise FdbuError("tree", None, f"{tree.root} holds no subset with unified metrics (those with them: "
                        f"{', '.join(tasks.scored())}); {why}; fdbu evaluate tree={tree.root} gives the official "
                        "numbers of what it holds")
    return unscored


def _view_segments(tree: Tree, eligible: list, vad: SpeechDetector, kind: tasks.Task, subset: str, segments,
                   segs, views: Views):
    """The segments a view reads on this subset (fdbu.views): the task's, or detected for it; None where none."""
    from ..views import segmented

    if isinstance(segs, list):
        return segs
    if segs is not None or not segmented(views.names, kind.name):
        return None
    if segments is None:
        check_output_audio(tree, eligible)
    try:
        return detect_speech(eligible, vad, None, subset, segments)
    except FdbuError as e:  # vad.require_shards: these files are sharded only when fdbu vad is told
        if e.where != "cache":
            raise
        raise FdbuError("cache", None, f"{e.problem}; {subset}'s outputs are segmented for views= only: "
                        f"fdbu vad views=[{','.join(views.names)}] shards them") from None


def _entry(tree: Tree, subset: str, kind: tasks.Task, selected: list, metrics: dict, extra: dict, own: dict) -> dict:
    """A subset's entry in unified.json: its counts, coverage, metrics and its family's entries."""
    eligible = sum(s.eligible for s in selected)
    reasons = Counter(r for s in selected if not s.eligible for r in s.reasons)
    counts = {"declared": tree.declared[subset], "selected": len(selected), "eligible": eligible,
              "ineligible": len(selected) - eligible, "ineligible_reasons": dict(sorted(reasons.items()))}
    counts.update({k: v for k, v in extra.items() if k != "min_observable_s"})
    entry = {"task": kind.name, "counts": counts, "coverage": eligible / len(selected)}
    if "min_observable_s" in extra:
        entry["min_observable_s"] = extra["min_observable_s"]
    entry["metrics"] = metrics
    entry.update(own)
    return entry


def _rows(tree: Tree, per_sample: dict[str, dict]) -> list[dict]:
    """unified-samples.jsonl: a row per sample of a scored subset, in the tree's order (an ineligible one's
    reasons instead of its fields)."""
    rows = []
    for s in tree.samples:
        if not s.kind.scored:
            continue
        row = {"sample_id": s.sample_id, "subset": s.subset, "task": s.task, "eligible": s.eligible}
        if s.eligible:
            row.update(per_sample[s.sample_id])
        else:
            row["reasons"] = s.reasons
        rows.append(row)
    return rows


def score_path(root: Path, vad: SpeechDetector, boot: Bootstrap, groups: dict | None = None,
               views: Views = NO_VIEWS) -> Scored:
    tree = load_tree(root)
    faults.point("score:loaded")
    return score(tree, vad, boot, groups=groups, views=views)
