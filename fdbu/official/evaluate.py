"""`fdbu evaluate`: the official rules on a reference tree, written to summary.json.

summary.json records the SHA-256 of the manifest.json and asr.json it was computed from;
`fdbu score` prints its numbers as the reference column only while both still match.
It is never used for scoring.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from dataclasses import dataclass

from .. import tasks
from . import rules as official
from ..version import __version__
from ..common.atomic import dumps
from ..common.outputs import Outputs
from ..common.audio import SAMPLE_RATE, read_wav
from ..errors import FdbuError
from .rules import GT_DISTRIBUTION
from .summary import SUMMARY
from ..tree.load import Tree, hashed, load_tree
from ..vad import SileroVAD

LEDGER = "judge-ledger.jsonl"


def _doc(sample, file: str):
    """A sample's JSON file as the official scripts read it (`json.load`, nulls kept); its bytes
    were hash-checked when the tree was loaded."""
    return json.loads((sample.folder / file).read_bytes())


def _backchannel_samples(tree: Tree, subset: str) -> list:
    """A subset without unified metrics is not read by `fdbu score`; here its eligible samples are
    hash-checked too."""
    receipts = tree.receipts.get(subset, {})
    out = []
    for s in tree.subset(subset):
        if not s.eligible:
            continue
        hashed(s.folder / "output.json", s.sample_id, "output.json", receipts.get(s.name), "asr.json", tree.root)
        hashed(s.wav_path, s.sample_id, "output.wav", tree.files[s.sample_id].get("output.wav"), "manifest.json",
               tree.root)
        out.append(s)
    return out


def interruption_samples(tree: Tree, subset: str) -> list[tuple[str, dict, list]]:
    """(sample id, output.json, interrupt.json) of the eligible samples in eval_user_interruption.py's
    order: `sorted` folder paths (line 65), all in one folder, so sorted by name."""
    eligible = sorted((s for s in tree.subset(subset) if s.eligible), key=lambda s: s.name)
    return [(s.sample_id, _doc(s, "output.json"), _doc(s, "interrupt.json")) for s in eligible]


def interruption(tree: Tree, subset: str, judge=None) -> dict:
    """The interruption rules; the judge is asked only when the script would get to a rating for
    every takeover (without one, a failure found first costs no request)."""
    samples = interruption_samples(tree, subset)
    numbers = official.user_interruption(samples)
    if judge is not None and not isinstance(numbers["take_turn_rate"], dict):
        numbers = official.user_interruption(samples, judge.rate)
    if judge is not None:
        rated = {e["sample_id"] for e in judge.ledger if e["status"] == "rated"}
        numbers["judge_failed_samples"] = sorted({e["sample_id"] for e in judge.ledger} - rated)
    return numbers


@dataclass
class Context:
    """What some official rules need beyond the samples."""

    gt_distribution: Path | None = None
    silero: SileroVAD | None = None
    judge: object = None
    pins: dict[str, str] | None = None
    probs_cache: Path | None = None  # get_timing.py's Silero by the batched path and its cache (None: the reference)
    progress: bool = False  # a bar on a terminal over the rules that read audio (the backchannel's Silero per file)


def pause_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    return official.pause_handling([(s.name, _doc(s, "output.json")) for s in tree.subset(subset) if s.eligible])


def turn_taking_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    return official.smooth_turn_taking([(s.name, _doc(s, "turn_taking.json"), _doc(s, "output.json"))
                                        for s in tree.subset(subset) if s.eligible])


def interruption_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    return interruption(tree, subset, ctx.judge)


def backchannel_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    speakers = backchannel_speakers(tree, subset, ctx.silero)
    if ctx.gt_distribution is None:
        return {"pending": "needs the official icc_gt_distribution.json: evaluate.gt_distribution=PATH "
                           "(or an evaluate.official_checkout holding it)"}
    from ..common.atomic import regular

    try:
        regular(Path(ctx.gt_distribution), "config", GT_DISTRIBUTION)  # a FIFO would block the read forever
        gt = json.loads(Path(ctx.gt_distribution).read_bytes())
    except (OSError, ValueError) as e:
        raise FdbuError("config", GT_DISTRIBUTION, f"cannot be read ({e})") from None
    from ..common.progress import Bar

    # the script's Silero runs file by file on the reference path (seconds per ten files): a bar, on a terminal only
    with Bar(speakers, desc=f"{subset} (official rule)", unit="sample",
              disable=None if ctx.progress else True) as bar:
        out = official.backchannel(bar, gt)
    lacking = [sp.name for sp in speakers if sp.name not in gt] if isinstance(gt, dict) else []
    failed = {id(v): v for v in out.values() if isinstance(v, dict)}  # one record may stand for several numbers
    for value in failed.values():  # the script's own failure kept (its exception first: run_official compares it),
        if lacking and str(value.get("unavailable", "")).startswith("KeyError:"):
            value["unavailable"] += (f"; the official {GT_DISTRIBUTION} lacks {len(lacking)} of this tree's "  # why
                                     f"{len(speakers)} speaker ids ({', '.join(lacking[:3])}"
                                     f"{', ...' if len(lacking) > 3 else ''}): the script stops at the first it needs")
    out[GT_DISTRIBUTION] = official.file_report(ctx.gt_distribution, GT_DISTRIBUTION,
                                                official.shipped_pins() if ctx.pins is None else ctx.pins)
    return out


def evaluate(root: Path | Tree, *, gt_distribution: Path | None = None, silero: SileroVAD | None = None,
             judge=None, pins: dict[str, str] | None = None, probs_cache: Path | None = None,
             progress: bool = False) -> dict:
    """The official rules on a tree (a path, or a tree already loaded and checked). Each rule
    runs over the subset's eligible samples (Definition 26); `pins` (file name -> SHA-256, default
    the shipped ones) only label the ground-truth distribution's hash as pinned or not."""
    tree = root if isinstance(root, Tree) else load_tree(root)
    result: dict[str, Any]
    families = tasks.family_of({s.subset for s in tree.samples})
    rules = (f"Full-Duplex-Bench {' and '.join(families or list(tasks.FAMILIES)[:1])} official evaluation scripts, "
             "re-implemented (fdbu.official)")
    result = {"generator": "fdbu", "kind": "reference-evaluation", "fdbu_version": __version__,
              "inputs": {"manifest.json": tree.manifest_sha256, "asr.json": tree.asr_sha256},
              "rules": rules,
              "judge": judge.identity() if judge is not None else None, "subsets": {}}
    ctx = Context(gt_distribution, silero, judge, pins, probs_cache, progress)
    for name, subset in tasks.SUBSETS.items():
        if tree.subset(name) and subset.task.official is not None and subset.task.official.rule is not None:
            result["subsets"][name] = subset.task.official.rule(tree, name, ctx)
    if judge is not None and hasattr(judge, "ledger"):
        from .judge import judged_something

        judged_something(judge)
    return result


def overlap_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    """A v1.5 subset's reference column: get_timing.py's lists, and the behaviour judge's tags where one is given."""
    return {**timing_rule(tree, subset, ctx), "behaviour": behaviour(tree, subset, ctx.judge)}


BEHAVIOUR_PENDING = ("needs a judge: evaluate.judge.base_url=URL (OpenAI-compatible) and evaluate.judge.model "
                     "(the official one is gpt-4o-2024-08-06), with evaluate.official_checkout=DIR holding "
                     "eval_behavior.py and instruction/behavior.txt")


def behaviour(tree: Tree, subset: str, judge) -> dict:
    """eval_behavior.py on the eligible samples (fdbu.official.behavior), in manifest order: each sample's four
    transcripts (hash-checked against asr.json) sent to the judge as the script sends them, its tags shared out as
    the script prints them. A sample missing one of the four files is skipped, as the script skips it; one the judge
    never answered leaves the column waiting (the script would still be asking); where the script raises (a word
    with a null end in check_overlap, a tag not starting with C), the column says so."""
    from . import behavior

    if judge is None or getattr(judge, "behaviour", None) is None:
        return {"pending": BEHAVIOUR_PENDING}
    tags: dict[str, Any] = {}
    skipped, waiting = [], []
    at = None  # the sample being read, for the message where the script would raise
    try:
        for s in tree.subset(subset):
            at = s.sample_id
            if not s.eligible:
                continue
            if not all((s.folder / f).is_file() for f in behavior.FILES):
                skipped.append(s.sample_id)
                continue
            docs = {}
            for f in behavior.FILES:
                listed = (tree.receipts.get(subset, {}) if f == "output.json" else
                          tree.other_receipts.get(subset, {}).get(f, {}))
                docs[f] = json.loads(hashed(s.folder / f, s.sample_id, f, listed.get(s.name), "asr.json", tree.root))
            behavior.overlap(docs["input.json"]["chunks"], docs["output.json"]["chunks"])
            texts = {field: behavior.compact(docs[f]) for field, f in behavior.FIELDS.items()}
            result, _ = judge.tag(s.sample_id, texts)
            if result is None:
                waiting.append(s.sample_id)
            else:
                tags[s.name] = result
        if waiting:
            return {"waiting": f"the judge gave no tag for {len(waiting)} sample(s) in evaluate.judge.max_attempts "
                               f"tries ({', '.join(waiting[:3])}{', ...' if len(waiting) > 3 else ''}); the script "
                               "would still be asking", "skipped": skipped, "tags": tags}
        shared = behavior.shares(list(tags.values()))
    except official.SCRIPT_ERRORS as e:
        return {"unavailable": f"{type(e).__name__}: {e}" + (f" (at {at})" if at else ""), "skipped": skipped,
                "tags": tags}
    return {"script": behavior.BEHAVIOR_SCRIPT, "judged": len(tags), "skipped": skipped, **shared, "tags": tags}


def timing_rule(tree: Tree, subset: str, ctx: Context) -> dict:
    """Full-Duplex-Bench v1.5's get_timing.py on each eligible sample (fdbu.official.timing): the script's two
    lists, per sample id, from Silero at the script's settings on input.wav and output.wav (the reference path,
    one file at a time, as the script runs it; with `probs_cache`, the batched path under its guard, which gives the
    reference's segments, in one call and cached), and how many samples have a non-empty list. No aggregate: the
    official evaluation has none."""
    from . import timing
    from ..tree.load import load_audio_sample

    eligible = [load_audio_sample(tree, s) for s in tree.subset(subset) if s.eligible]
    lists: dict[str, dict] = {}
    if ctx.probs_cache is not None:  # the batched path under its guard: the reference's segments, in one call, cached
        from ..vad import SpeechDetector
        from ..vad.detect import Job

        detector = SpeechDetector(timing.SETTINGS, backend="batched", device="cpu", cache=True,
                                  cache_dir=ctx.probs_cache)
        jobs = [Job(s.sample_id, s.folder / "input.wav", tree.files[s.sample_id]["input.wav"], s.input_samples,
                    "input.wav") for s in eligible] + [Job.of(s) for s in eligible]
        found = detector.sample_segments(jobs)
        for k, s in enumerate(eligible):
            lists[s.name] = timing.intervals(found[k], found[len(eligible) + k])
    else:  # the reference path, one file at a time, as the script runs it
        silero = SileroVAD(timing.SETTINGS)
        for s in eligible:
            user = read_wav(s.folder / "input.wav", s.sample_id, s.sample_rate)
            system = read_wav(s.wav_path, s.sample_id, s.sample_rate)
            lists[s.name] = timing.intervals(silero.segment_samples(user), silero.segment_samples(system))
    out = {"script": timing.SCRIPT, "samples": len(lists),
           "with_stop_interval": sum(bool(v["latency_stop_list"]) for v in lists.values()),
           "with_response_interval": sum(bool(v["latency_resp_list"]) for v in lists.values()),
           "latency_intervals": lists}
    originals = _originals(tree, subset)
    if originals:
        out["originals"] = originals
    return out


def _originals(tree: Tree, subset: str) -> dict:
    """Where the script on the user's own folder would not compute what it computes on the tree: the eligible samples
    whose original input.wav or output.wav was not 16 kHz (get_timing.py:53-57 resamples the float audio; export
    resampled it too, then wrote it as PCM16, so the lists may differ) or not mono (get_timing.py:57 keeps both
    channels and silero-vad raises ValueError), from what export recorded in manifest.json (Sample.source)."""
    resampled, not_mono = [], []
    for s in tree.subset(subset):
        row = s.source if s.eligible else {}
        rates, channels = row.get("source_sample_rate") or {}, row.get("source_channels") or {}
        if any(rates.get(k, SAMPLE_RATE) != SAMPLE_RATE for k in ("input", "output")):
            resampled.append(s.sample_id)
        if any(channels.get(k, 1) != 1 for k in ("input", "output")):
            not_mono.append(s.sample_id)
    out: dict[str, Any] = {}
    if resampled:
        out["resampled"] = {"samples": resampled, "why": "the original input.wav or output.wav was not 16 kHz: the "
                            "script resamples it as float audio, fdbu reads export's 16 kHz PCM16, so its lists on "
                            "the original may differ"}
    if not_mono:
        out["not_mono"] = {"samples": not_mono, "why": "the original input.wav or output.wav had more than one "
                           "channel: the script keeps them (squeeze(0)) and silero-vad raises ValueError on it; "
                           "fdbu reads export's mono mix"}
    return out


def backchannel_speakers(tree: Tree, subset: str, silero: SileroVAD | None = None) -> list[official.Speaker]:
    """The eligible backchannel samples as eval_backchannel.py reads them, in manifest order (the
    script's `os.listdir` order is the file system's; it changes only the float summation order).
    The audio is decoded and Silero run only for the speakers the rule reads."""
    samples = _backchannel_samples(tree, subset)
    if samples and silero is None:
        silero = SileroVAD()

    def listen(s):
        audio = read_wav(s.wav_path, s.sample_id, s.sample_rate)
        return silero.official_backchannel_segments(audio), len(audio), s.sample_rate

    def transcript(s):
        try:
            return _doc(s, "output.json")
        except ValueError as e:  # scored subsets are checked by the tree reader; this one only here
            raise FdbuError(s.sample_id, "output.json", f"is not valid JSON ({e})") from None

    return [official.Speaker(s.name, transcript(s), partial(listen, s)) for s in samples]


def outputs(root: Path, judge: bool) -> Outputs:
    """summary.json, and beside it the judge's ledger (every request and reply) when a judge runs."""
    return Outputs(root, "evaluate", [SUMMARY] + ([LEDGER] if judge else []), head=SUMMARY)


def files(result: dict, ledger: list[dict] | None = None) -> dict[str, bytes]:
    out = {SUMMARY: dumps(result).encode()}
    if ledger is not None:
        out[LEDGER] = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in ledger).encode()
    return out


def write(result: dict, root: Path, ledger: list[dict] | None = None) -> Path:
    outputs(root, ledger is not None).commit(files(result, ledger))
    return Path(root) / SUMMARY
