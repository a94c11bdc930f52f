"""Writing a synthetic tree (or the official per-task folders of the same samples) at once or not at all, from
the registry's generators: `synthesize`, and `check` of its settings."""
from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import numpy as np
from ..common.progress import Bar

from ..common import faults
from .. import tasks
from ..common.atomic import dumps, sha256_bytes
from ..common.audio import wav_bytes
from ..errors import FdbuError
from ..config.settings import TOO_SHORT, refuse
from ..common.outputs import new_folder
from ..tree.load import MANIFEST_KIND
from .speech import SR, Capture

# what fdbu export says of the same captures (no output.wav; an empty one), so that an official-layout
# synth tree exports to the same rows
REASONS = ("output.wav missing", "output.wav is empty")
DRAW = 5  # system=mixed draws one of 5 (a family's systems, cyclically): the draw every sample takes, whatever system
# in layout=official an ineligible sample's output.wav is cut at half its input instead: the official scripts read
# every sample folder, and would raise on a missing or empty output where a real folder has a capture
OFFICIAL_REASON = TOO_SHORT


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return sha256_bytes(data)


LAYOUTS = ("tree", "official")


def _official_sample(folder: Path, cap: Capture, annotation_file: str | None, annotation, transcript: dict | None,
                     reason: str | None, more: dict | None = None) -> None:
    """One sample as the official inference and asr.py leave it: input.wav (v1.0: T samples of silence, the
    synthetic user is not rendered; v1.5: the user's speech, and the task's other audio files), the annotation,
    output.wav and asr.py's output.json (`indent=4`; v1.5: a JSON beside every audio file, as the behaviour judge
    reads them). An ineligible sample's capture stops at half its input (fdbu export: OFFICIAL_REASON), a fault
    the official scripts still run on, as they would on a real folder; a missing or empty output.wav would make
    them raise."""
    folder.mkdir(parents=True)
    if not more or "input.wav" not in more:
        (folder / "input.wav").write_bytes(wav_bytes(np.zeros(cap.n, np.int16)))
    for name, other in (more or {}).items():
        (folder / name).write_bytes(other.wav())
        (folder / name.replace(".wav", ".json")).write_text(json.dumps(other.transcript(), indent=4))
    if annotation is not None:
        (folder / cast(str, annotation_file)).write_bytes((json.dumps(annotation) + "\n").encode())  # given with it
    audio = cap.audio
    if reason is not None:  # a capture cut at half its input, and asr.py's words of what is left
        audio = cap.audio[:cap.n // 2]
        half = round(len(audio) / SR, 3)
        chunks = [c for c in cast(dict, transcript)["chunks"] if c["timestamp"][1] <= half]
        transcript = {"text": " ".join(c["text"] for c in chunks), "chunks": chunks}
    (folder / "output.wav").write_bytes(wav_bytes(audio))
    (folder / "output.json").write_text(json.dumps(transcript, indent=4))


def check(n, system: str, ineligible: float, options: dict | None = None, layout: str = "tree",
          family: str = "v1.0") -> dict[str, int]:
    """Refuse settings synth cannot honour; returns the samples per subset."""
    if layout not in LAYOUTS:
        raise FdbuError("config", None, f"layout={layout!r}: choose tree (a reference tree) or official (the "
                        "official per-task folders)")
    if family not in tasks.FAMILIES:
        raise FdbuError("config", None, f"family={family!r}: choose {' or '.join(tasks.FAMILIES)}")
    of_family = [s for s, sub in tasks.SUBSETS.items() if sub.family == family]
    sizes = (dict(sorted(tasks.release_sizes(family).items())) if n == "release" else dict(n) if isinstance(n, dict)
             else dict.fromkeys(of_family, n))
    systems = {name: f for f in tasks.FAMILIES.values() for name in f.systems}  # each system's family
    if system not in systems and system != "mixed":
        raise FdbuError("config", None, f"system={system!r}: choose one of " + ", ".join(
            f"{', '.join(f.systems)} ({f.name})" for f in tasks.FAMILIES.values()) + " or mixed")
    if (any(s not in tasks.SUBSETS for s in sizes)
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100_000 for v in sizes.values())
            or not any(sizes.values())):
        raise FdbuError("config", None, f"n={n!r}: give a number of samples from 1 to 100000, 'release', or "
                        f"{{subset: number}} over {', '.join(tasks.SUBSETS)}")
    chosen = tasks.family_of(s for s, k in sizes.items() if k)
    wrong = systems[system].name if system in systems else None
    if wrong is not None and (wrong not in chosen or len(chosen) > 1):
        raise FdbuError("config", None, f"system={system!r} is a Full-Duplex-Bench {wrong} system, and the samples "
                        f"asked for are {' and '.join(chosen)} ones; choose system=mixed or one of "
                        f"{', '.join(tasks.FAMILIES[chosen[0]].systems)}")
    if not (_is_number(ineligible) and 0.0 <= ineligible < 1.0):
        raise FdbuError("config", None, f"ineligible={ineligible!r}: a share in [0, 1)")
    for option in tasks.synth_options():  # the releases' own settings (fdbu.family.SynthOption), by key
        value = (options or {}).get(option.key, option.default)
        problem = option.check(value)
        if problem is not None:
            refuse(option.key, list(value), problem)
    return sizes


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def synthesize(out: Path, *, n: int | str | dict = 5, seed: int = 0, system: str = "mixed", ineligible: float = 0.05,
               progress: bool = False, layout: str = "tree", family: str = "v1.0", **options) -> Path:
    """Write a synthetic tree at `out` (which must not exist), all at once or not at all.

    `layout="official"` writes the same samples as official per-task folders instead
    (`out/<subset>/<id>/`: input.wav, output.wav, the annotation, asr.py's output.json), with
    no manifest.json or asr.json: what `fdbu export` with `export.transcripts=adopt` reads; a family with a run
    layout of its own (`Family.layout`, v2) writes its runs as that family's upstream leaves them.

    `n` is samples per subset of `family` (a release: fdbu.tasks.FAMILIES): a number, "release" (the release's sizes, a
    full-size tree), or a dict subset -> number (0 leaves a subset out). `options`: the releases' settings of synth
    by key (fdbu.family.SynthOption: v1.0's interruption_tail_s=(lo, hi), the range of T - R for interruption
    samples; v2's session_turns=(lo, hi), of examiner turns in a session), the defaults where not given; every
    generator gets each as its `name` (tail=, turns=), and the sample's index.
    """
    out = Path(out)
    SUBSETS = tasks.SUBSETS
    unknown = [k for k in options if k not in {o.key for o in tasks.synth_options()}]
    if unknown:
        raise TypeError(f"synthesize() got settings no release declares: {', '.join(unknown)}")
    sizes = check(n, system, ineligible, options, layout, family)
    official = layout == "official"
    given = {o.name: tuple(options.get(o.key, o.default)) for o in tasks.synth_options()}
    with new_folder(out, "fdbu synth") as tmp:
        transcripts: dict[str, dict[str, str]]
        samples, truth, transcripts = [], {}, {s: {} for s in SUBSETS}
        others: dict[str, dict[str, dict[str, str]]] = {}  # subset -> X.json -> id -> SHA-256 (v1.5's other files)
        jobs = [(subset, i) for subset in SUBSETS for i in range(sizes.get(subset, 0))]
        with Bar(jobs, desc="synth", unit="sample", disable=not progress) as bar:  # closed before a Ctrl-C's message
            for k, (subset, i) in enumerate(bar):
                faults.point(f"synth:sample:{k}")
                rng = np.random.default_rng([seed, list(SUBSETS).index(subset), i])
                drawn = int(rng.integers(DRAW))  # drawn for every system: the dataset part
                own = tasks.FAMILIES[SUBSETS[subset].family].systems  # (T, annotation, eligibility) stays the same
                behaviour = own[drawn % len(own)] if system == "mixed" else system
                name = str(i)
                kind = SUBSETS[subset].task
                generate = cast(tasks.Ref, kind.generator)  # every registered task has one
                row = {"sample_id": f"{subset}/{name}", "subset": subset, "task": kind.name}
                runs = tasks.FAMILIES[SUBSETS[subset].family].layout  # a family with a run layout of its own (v2)
                kwargs = dict(index=i, **given, **SUBSETS[subset].synth)
                if rng.random() < ineligible:
                    if official and runs is not None:  # a session never run: no folder at all
                        truth[row["sample_id"]] = {"system": behaviour, "eligible": False, "reason": "not run"}
                        continue
                    row.update({"eligible": False, "reasons": [REASONS[int(rng.integers(len(REASONS)))]]})
                    samples.append(row)
                    truth[row["sample_id"]] = {"system": behaviour, "eligible": False}
                    if official:  # its dataset part still exists; the capture is cut short (OFFICIAL_REASON)
                        _, cap, annotation, transcript, _, *rest = generate(rng, behaviour, **kwargs)
                        _official_sample(tmp / subset / name, cap, kind.annotation, annotation, transcript, OFFICIAL_REASON,
                                         rest[0] if rest else None)
                        truth[row["sample_id"]]["reason"] = OFFICIAL_REASON
                    continue
                T, cap, annotation, transcript, intended, *extra = generate(rng, behaviour, **kwargs)
                more: dict[str, Capture] = extra[0] if extra else {}  # the task's other audio files (Task.audio)
                truth[row["sample_id"]] = {"system": behaviour, "eligible": True, "intended": intended}
                if official and runs is not None and runs.synth is not None:  # as that family's runs leave it
                    sid = runs.synth(tmp, subset, i, cap, annotation, transcript, intended, more)
                    truth[sid] = truth.pop(row["sample_id"])  # the sample id its export gives
                    continue
                if official:
                    _official_sample(tmp / subset / name, cap, kind.annotation, annotation, transcript, None, more)
                    continue
                row.update(_tree_sample(tmp / subset / name, kind, cap, annotation, transcript, more,
                                        others.setdefault(subset, {}), transcripts[subset]))
                if "clean_input.wav" in more:  # v1.5: the clean run's window
                    row["clean_input_samples"] = more["clean_input.wav"].n
                samples.append(row)
        truth_file = {"generator": "fdbu synth", "seed": seed, "n": sizes, "system": system, "ineligible": ineligible,
                      "samples": truth}
        if official:
            (tmp / "synth.json").write_text(dumps({**truth_file, "layout": "official"}))
            return out
        _receipts(tmp, sizes, samples, transcripts, {k: v for k, v in others.items() if v})
        (tmp / "synth.json").write_text(dumps(truth_file))
    return out


def _tree_sample(folder: Path, kind, cap, annotation, transcript: dict, more: dict, others: dict,
                 transcripts: dict) -> dict:
    """One eligible sample's folder of a reference tree: output.wav, the task's other audio (and the transcripts of
    those it transcribes, into `others`: X.json -> id -> SHA-256), the annotation and output.json (into
    `transcripts`); -> its manifest row's fields."""
    name = folder.name
    folder.mkdir(parents=True)
    files = {"output.wav": _write(folder / "output.wav", cap.wav())}
    for audio_name, other in more.items():
        files[audio_name] = _write(folder / audio_name, other.wav())
        if audio_name in kind.transcribed:
            json_name = audio_name.replace(".wav", ".json")
            others.setdefault(json_name, {})[name] = _write(
                folder / json_name, (json.dumps(other.transcript()) + "\n").encode())
    if annotation is not None:
        ann = cast(str, kind.annotation)  # a task with an annotation names its file
        files[ann] = _write(folder / ann, (json.dumps(annotation) + "\n").encode())
    transcripts[name] = _write(folder / "output.json", (json.dumps(transcript) + "\n").encode())
    return {"sample_rate": SR, "input_samples": cap.n, "input_s": cap.n / SR, "eligible": True, "reasons": [],
            "files": files}


def _receipts(tmp: Path, sizes: dict, samples: list, transcripts: dict, others: dict) -> None:
    """manifest.json and asr.json of a synthetic reference tree (its transcripts placed by the generator)."""
    SUBSETS = tasks.SUBSETS
    manifest = {"schema_version": 1, "kind": MANIFEST_KIND,
                "declared": {s: sizes[s] for s in SUBSETS if sizes.get(s)},
                "samples": samples}
    asr = {"config": {"source": "synthetic", "model_id": "fdbu-synth (transcripts placed by the generator)",
                      "checkpoint_sha256": None, "device_type": "none"},
           "subsets": {s: {"task": SUBSETS[s].task.asr_task, "transcripts": t,
                           **({"other_transcripts": others[s]} if s in others else {})}
                       for s, t in transcripts.items() if sizes.get(s)}}
    (tmp / "manifest.json").write_text(dumps(manifest))
    (tmp / "asr.json").write_text(dumps(asr))
