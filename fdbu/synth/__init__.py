"""Synthetic captures: complete, valid reference trees from real synthetic speech.

Each sample's output.wav is built from the shipped word bank (espeak-ng words, 16 kHz),
its output.json lists exactly the words placed, and `synth.json` records the system
behaviour and the outcome the sample was built to have, so tests can check the scorer
against ground truth. Sample i of a subset depends only on (seed, subset, i), and its dataset
part (T, annotation, eligibility) not on the system, so trees of several systems built with one
seed hold the same samples and can be compared pair by pair (`fdbu compare`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import numpy as np
import soundfile as sf
from tqdm import tqdm

from .. import tasks
from ..atomic import dumps, sha256_bytes
from ..outputs import new_folder
from ..audio import SAMPLE_RATE as SR, wav_bytes
from ..errors import FdbuError
from ..settings import TOO_SHORT
from ..tree import MANIFEST_KIND

GAP_S = 0.05  # between words of one utterance: far below Silero's 100 ms minimum silence
SYSTEMS = tasks.V10.systems  # v1.0's generators' systems
BANK = Path(__file__).parent / "bank"
# what fdbu export says of the same captures (no output.wav; an empty one), so that an official-layout
# synth tree exports to the same rows
REASONS = ("output.wav missing", "output.wav is empty")
DRAW = 5  # system=mixed draws one of 5 (a family's systems, cyclically): the draw every sample takes, whatever system
# in layout=official an ineligible sample's output.wav is cut at half its input instead: the official scripts read
# every sample folder, and would raise on a missing or empty output where a real folder has a capture
OFFICIAL_REASON = TOO_SHORT


@lru_cache(maxsize=1)
def bank() -> tuple[list[str], list[np.ndarray]]:
    index = json.loads((BANK / "words.json").read_text())
    audio, sr = sf.read(str(BANK / "words.flac"), dtype="int16")
    assert sr == SR
    words = index["words"]
    return [w["word"] for w in words], [audio[w["offset"]:w["offset"] + w["samples"]] for w in words]


@dataclass
class Capture:
    """One sample's output being built: audio samples and the transcript words placed."""

    n: int
    rng: np.random.Generator
    audio: np.ndarray = field(init=False)
    words: list[tuple[str, int, int]] = field(default_factory=list)  # (text, start, end) in samples

    def __post_init__(self):
        self.audio = np.zeros(self.n, np.int16)

    def _word(self) -> tuple[str, np.ndarray]:
        names, clips = bank()
        k = int(self.rng.integers(len(names)))
        return names[k], clips[k]

    def place(self, start: int, name: str, clip: np.ndarray) -> int:
        """Put one word at `start` (cut at T); returns the sample after it."""
        end = min(start + len(clip), self.n)
        if end > start:
            self.audio[start:end] = clip[:end - start]
            self.words.append((name, start, end))
        return end

    def say(self, start_s: float, *, words: int | None = None, until_s: float | None = None) -> float:
        """Speak from start_s: `words` words, or words until one ends at or after until_s (or T)."""
        pos, said = int(round(start_s * SR)), 0
        limit = self.n if until_s is None else int(round(until_s * SR))
        while pos < self.n and (said < words if words is not None else pos < limit):
            pos = self.place(pos, *self._word()) + int(GAP_S * SR)
            said += 1
        return pos / SR

    def say_backwards(self, end_s: float, from_s: float) -> None:
        """Fill [from_s, end_s) with words placed right to left, ending at end_s."""
        end = int(round(end_s * SR))
        while True:
            name, clip = self._word()
            start = end - len(clip)
            if start < int(round(from_s * SR)):
                return
            self.place(start, name, clip)
            end = start - int(GAP_S * SR)

    def transcript(self, from_s: float = 0.0) -> dict:
        """output.json in the Full-Duplex-Bench format, words starting at or after from_s."""
        chunks: list[dict[str, Any]]
        chunks = [{"text": t, "timestamp": [round(a / SR, 3), round(b / SR, 3)]}
                  for t, a, b in sorted(self.words, key=lambda w: w[1]) if round(a / SR, 3) >= from_s]
        return {"text": " ".join(c["text"] for c in chunks), "chunks": chunks}

    def wav(self) -> bytes:
        return wav_bytes(self.audio)


def _u(rng, lo, hi) -> float:
    return round(float(rng.uniform(lo, hi)), 3)


def pause_sample(rng, system: str, *, candor: bool = False, **_):
    p0 = _u(rng, 3.0, 5.0)
    pauses, t = [], p0
    for _k in range(int(rng.integers(1, 4))):
        b = round(t + _u(rng, 0.8, 1.5), 3)
        pauses.append([t, b])
        t = round(b + _u(rng, 2.0, 3.0), 3)
    T = round(pauses[-1][1] + _u(rng, 2.5, 4.0) + (1.0 if candor else 0.0), 3)
    cap = Capture(int(round(T * SR)), rng)
    a0, b0 = pauses[0]
    intended = dict(pause_intrusion=True, inside_pause_onset=True, pre_pause_speech=False, carry_in=False,
                    any_speech=True)
    if system == "prompt":  # turn-based: answers after 500 ms of silence, inside the first pause
        cap.say(a0 + 0.5, words=int(rng.integers(3, 7)))
    elif system == "slow":  # answers once the user has resumed, before the next pause
        cap.say(b0 + _u(rng, 0.3, 0.6), words=2)
        intended["inside_pause_onset"] = False
    elif system == "overlap":  # talks over the user before the first pause, then stops
        cap.say_backwards(a0 - 0.1, a0 - _u(rng, 1.5, 2.5))
        intended.update(pause_intrusion=False, inside_pause_onset=False, pre_pause_speech=True)
    elif system == "never_stops":  # one word straddles the first pause start, speech runs to T
        name, clip = cap._word()
        cap.place(int(round((a0 - 0.1) * SR)), name, clip)
        cap.say_backwards(a0 - 0.1 - GAP_S, 0.5)
        cap.say(a0 - 0.1 + len(clip) / SR + GAP_S)
        intended.update(pre_pause_speech=True, carry_in=True)
    else:
        intended = {k: False for k in intended}
    return T, cap, [{"text": "[PAUSE]", "timestamp": p} for p in pauses], cap.transcript(), intended


def turn_taking_sample(rng, system: str, **_):
    E = _u(rng, 4.0, 8.0)
    T = round(E + _u(rng, 4.5, 5.5), 3)
    cap = Capture(int(round(T * SR)), rng)
    intended = {"outcome": "response"}
    if system == "prompt":
        cap.say(E + _u(rng, 0.2, 0.9), words=int(rng.integers(3, 7)))
    elif system == "slow" and rng.random() < 2 / 3:
        cap.say(E + _u(rng, 2.2, 4.0), words=3)
    elif system == "overlap":
        cap.say(E - _u(rng, 0.3, 1.2), words=int(rng.integers(3, 7)))
        intended["outcome"] = "early_start"
    elif system == "never_stops":
        cap.say(0.5)
        intended["outcome"] = "early_start"
    else:  # silent, or a slow reply that falls after T
        intended["outcome"] = "no_response"
    transcript = cap.transcript()
    if intended["outcome"] == "response":
        intended["latency_s"] = round(transcript["chunks"][0]["timestamp"][0] - E, 3)
    return T, cap, [{"text": "[TURN-TAKING]", "timestamp": [E, T]}], transcript, intended


def interruption_sample(rng, system: str, *, tail: tuple[float, float], **_):
    S = _u(rng, 4.0, 7.0)
    R = round(S + _u(rng, 1.2, 2.5), 3)
    T = round(R + _u(rng, *tail), 3)
    cap = Capture(int(round(T * SR)), rng)
    answer_from = S - _u(rng, 1.5, 3.0)
    intended = {"outcome": "response"}
    if system in ("prompt", "slow"):  # stops shortly after S, well before R, then replies
        cap.say(answer_from, until_s=S + 0.2)
        if system == "prompt":
            cap.say(R + _u(rng, 0.3, 0.9), words=int(rng.integers(3, 7)))
        elif rng.random() < 2 / 3:
            cap.say(R + _u(rng, 2.2, 3.5), words=3)
        else:
            intended["outcome"] = "no_response"
    elif system == "overlap":  # keeps talking through the interruption
        cap.say(answer_from, until_s=R + _u(rng, 0.5, 1.5))
        intended["outcome"] = "speaking_at_end"
    elif system == "never_stops":
        cap.say(0.5)
        intended["outcome"] = "speaking_at_end"
    else:
        intended["outcome"] = "not_exercised"
    interrupt = [{"context": "synthetic context", "interrupt": "synthetic interruption", "timestamp": [S, R]}]
    return T, cap, interrupt, cap.transcript(from_s=R), intended


def backchannel_sample(rng, system: str, **_):
    T = _u(rng, 8.0, 12.0)
    cap = Capture(int(round(T * SR)), rng)
    if system != "silent":
        for t in sorted(_u(rng, 1.0, T - 1.0) for _ in range(int(rng.integers(0, 3)))):
            cap.say(t, words=1)
    return T, cap, None, cap.transcript(), {}


# Full-Duplex-Bench v1.5: the systems a v1.5 sample can be built for (system=mixed draws one per sample by the
# same draw as v1.0's five, so a v1.0 tree's samples do not move); what each does at the overlap event
V15_SYSTEMS = tasks.V15.systems
V15_BEHAVIOUR = {
    "yields": "stops within 0.5 s of the event's start in the event run; in the clean run the same answer goes on",
    "yields_late": "stops 1 to 2 s after the event's start in the event run; in the clean run the answer goes on",
    "talks_through": "the same answer in both runs, through the event",
    "same_stop": "the answer ends at the same time in both runs, shortly after the event's start: it ended on its "
                 "own",
    "clean_silent": "yields to the event in the event run; silent in the clean run",
}
# each event: how many of the user's (or another voice's) words it holds, and their loudness
EVENTS = {"interruption": (3, 7, 1.0), "backchannel": (1, 2, 1.0), "talking_to_other": (3, 6, 1.0),
          "background_speech": (4, 8, 0.35)}


def overlap_sample(rng, system: str, *, event: str, **_):
    """A v1.5 sample: the user's turn, the system's answer, and an overlap event in the middle of the answer.

    clean_input.wav is the user's turn alone; input.wav adds the event's words at [o_s, o_e] (metadata.json); both
    have the same length. The system's two runs (output.wav to input.wav, clean_output.wav to clean_input.wav)
    are built from one answer, cut where the system's behaviour (V15_BEHAVIOUR) stops it; `intended` says when
    each run's answer ends (None: it runs to T, or there is none)."""
    behaviour = system if system in V15_SYSTEMS else V15_SYSTEMS[SYSTEMS.index(system)]
    T = _u(rng, 12.0, 16.0)
    n = int(round(T * SR))
    clean_user = Capture(n, rng)
    user_end = clean_user.say(_u(rng, 0.3, 0.8), words=int(rng.integers(3, 6)))
    answer_from = round(user_end + _u(rng, 0.4, 0.9), 3)
    o_s = round(answer_from + _u(rng, 1.5, 3.0), 3)
    lo, hi, gain = EVENTS[event]
    user = Capture(n, rng)
    user.audio[:] = clean_user.audio
    user.words = list(clean_user.words)
    said = Capture(n, rng)  # the event alone, scaled, then added
    o_e = said.say(o_s, words=int(rng.integers(lo, hi)))
    user.audio[:] = np.clip(user.audio.astype(np.int32) + (said.audio * gain).astype(np.int32), -32768, 32767)
    user.words += said.words
    o_e = round(min(o_e, T), 3)
    answer = Capture(n, rng)
    answer.say(answer_from, until_s=T - _u(rng, 0.5, 1.5))  # the answer as it would run on its own

    def cut(at_s: float | None) -> tuple[Capture, float | None]:
        """The answer stopped after the word running at `at_s` (None: the whole answer)."""
        run = Capture(n, rng)
        if at_s is None:
            run.audio[:], run.words = answer.audio, list(answer.words)
        else:
            at = int(round(at_s * SR))
            for name, a, b in answer.words:
                if a > at:
                    break
                run.audio[a:b], run.words = answer.audio[a:b], run.words + [(name, a, b)]
        return run, (round(run.words[-1][2] / SR, 3) if run.words and at_s is not None else None)

    if behaviour in ("yields", "clean_silent"):
        event_run, event_end = cut(o_s + _u(rng, 0.0, 0.3))
    elif behaviour == "yields_late":
        event_run, event_end = cut(o_s + _u(rng, 1.0, 2.0))
    elif behaviour == "same_stop":
        event_run, event_end = cut(o_s + _u(rng, 0.0, 0.3))
    else:
        event_run, event_end = cut(None)
    if behaviour == "same_stop":
        clean_run, clean_end = event_run, event_end
    elif behaviour == "clean_silent":
        clean_run, clean_end = Capture(n, rng), None
    else:
        clean_run, clean_end = cut(None)
    if event in ("interruption",) and behaviour in ("yields", "yields_late", "clean_silent"):  # answers the user
        event_run.say(max(o_e, event_end or 0.0) + _u(rng, 0.4, 0.9), words=int(rng.integers(2, 5)))
    metadata = {"context_text": "synthetic context", "current_turn_text": f"synthetic {event}",
                "timestamps": [o_s, o_e]}
    intended = {"behaviour": behaviour, "event": [o_s, o_e], "event_run_stop_s": event_end,
                "clean_run_stop_s": clean_end, "answer_from_s": answer_from}
    more = {"input.wav": user, "clean_input.wav": clean_user, "clean_output.wav": clean_run}
    return T, event_run, metadata, event_run.transcript(), intended, more


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


def check(n, system: str, ineligible: float, interruption_tail_s: tuple, layout: str = "tree",
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
    if len(interruption_tail_s) != 2 or not all(map(_is_number, interruption_tail_s)) \
            or not 0 < interruption_tail_s[0] <= interruption_tail_s[1] <= 3600:
        raise FdbuError("config", None, f"interruption_tail_s={list(interruption_tail_s)!r}: a range [lo, hi] of "
                        "seconds, 0 < lo <= hi <= 3600")
    return sizes


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def synthesize(out: Path, *, n: int | str | dict = 5, seed: int = 0, system: str = "mixed", ineligible: float = 0.05,
               interruption_tail_s: tuple[float, float] = (4.0, 6.0), progress: bool = False,
               layout: str = "tree", family: str = "v1.0") -> Path:
    """Write a synthetic tree at `out` (which must not exist), all at once or not at all.

    `layout="official"` writes the same samples as official per-task folders instead
    (`out/<subset>/<id>/`: input.wav, output.wav, the annotation, asr.py's output.json), with
    no manifest.json or asr.json: what `fdbu export` with `export.transcripts=adopt` reads.

    `n` is samples per subset of `family` (v1.0 or v1.5): a number, "release" (the release's sizes, a
    full-size tree), or a dict subset -> number (0 leaves a subset out). `interruption_tail_s` is the
    range of T - R for interruption samples.
    """
    out = Path(out)
    SUBSETS = tasks.SUBSETS
    sizes = check(n, system, ineligible, interruption_tail_s, layout, family)
    official = layout == "official"
    lo, hi = interruption_tail_s
    with new_folder(out, "fdbu synth") as tmp:
        transcripts: dict[str, dict[str, str]]
        samples, truth, transcripts = [], {}, {s: {} for s in SUBSETS}
        others: dict[str, dict[str, dict[str, str]]] = {}  # subset -> X.json -> id -> SHA-256 (v1.5's other files)
        jobs = [(subset, i) for subset in SUBSETS for i in range(sizes.get(subset, 0))]
        for subset, i in tqdm(jobs, desc="synth", unit="sample", disable=not progress):
            rng = np.random.default_rng([seed, list(SUBSETS).index(subset), i])
            drawn = int(rng.integers(DRAW))  # drawn for every system: the dataset part
            own = tasks.FAMILIES[SUBSETS[subset].family].systems  # (T, annotation, eligibility) stays the same
            behaviour = own[drawn % len(own)] if system == "mixed" else system
            name = str(i)
            kind = SUBSETS[subset].task
            generate = cast(tasks.Ref, kind.generator)  # every registered task has one
            row = {"sample_id": f"{subset}/{name}", "subset": subset, "task": kind.name}
            if rng.random() < ineligible:
                row.update({"eligible": False, "reasons": [REASONS[int(rng.integers(len(REASONS)))]]})
                samples.append(row)
                truth[row["sample_id"]] = {"system": behaviour, "eligible": False}
                if official:  # its dataset part still exists; the capture is cut short (OFFICIAL_REASON)
                    _, cap, annotation, transcript, _, *rest = generate(rng, behaviour, tail=(lo, hi),
                                                                        **SUBSETS[subset].synth)
                    _official_sample(tmp / subset / name, cap, kind.annotation, annotation, transcript, OFFICIAL_REASON,
                                     rest[0] if rest else None)
                    truth[row["sample_id"]]["reason"] = OFFICIAL_REASON
                continue
            T, cap, annotation, transcript, intended, *extra = generate(rng, behaviour, tail=(lo, hi),
                                                                        **SUBSETS[subset].synth)
            more: dict[str, Capture] = extra[0] if extra else {}  # the task's other audio files (Task.audio)
            truth[row["sample_id"]] = {"system": behaviour, "eligible": True, "intended": intended}
            if official:
                _official_sample(tmp / subset / name, cap, kind.annotation, annotation, transcript, None, more)
                continue
            folder = tmp / subset / name
            folder.mkdir(parents=True)
            files = {"output.wav": _write(folder / "output.wav", cap.wav())}
            for audio_name, other in more.items():
                files[audio_name] = _write(folder / audio_name, other.wav())
                if audio_name in kind.transcribed:
                    json_name = audio_name.replace(".wav", ".json")
                    others.setdefault(subset, {}).setdefault(json_name, {})[name] = _write(
                        folder / json_name, (json.dumps(other.transcript()) + "\n").encode())
            if annotation is not None:
                ann = cast(str, kind.annotation)  # a task with an annotation names its file
                files[ann] = _write(folder / ann, (json.dumps(annotation) + "\n").encode())
            transcripts[subset][name] = _write(folder / "output.json", (json.dumps(transcript) + "\n").encode())
            row.update({"sample_rate": SR, "input_samples": cap.n, "input_s": cap.n / SR, "eligible": True,
                        "reasons": [], "files": files})
            if "clean_input.wav" in more:  # v1.5: the clean run's window
                row["clean_input_samples"] = more["clean_input.wav"].n
            samples.append(row)
        truth_file = {"generator": "fdbu synth", "seed": seed, "n": sizes, "system": system, "ineligible": ineligible,
                      "samples": truth}
        if official:
            (tmp / "synth.json").write_text(dumps({**truth_file, "layout": "official"}))
            return out
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
        (tmp / "synth.json").write_text(dumps(truth_file))
    return out
