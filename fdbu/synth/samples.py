"""One synthetic sample per task, for a system's behaviour: `<task>_sample(rng, system, **options)` returns (T,
the capture, the annotation, the transcript, what it was built to do[, the task's other audio files]); the task
registry names each one (`Task.generator`). Sample i of a subset depends only on (seed, subset, i), and its
dataset part (T, annotation, eligibility) not on the system."""
from __future__ import annotations

import numpy as np

from .. import tasks
from .speech import GAP_S, SR, Capture

SYSTEMS = tasks.FAMILIES["v1.0"].systems  # v1.0's generators' systems


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
# same draw as v1.0's five, so a v1.0 tree's samples do not move); what each does at the overlap event:
# - yields: stops within 0.5 s of the event's start in the event run; in the clean run the same answer goes on
# - yields_late: stops 1 to 2 s after the event's start in the event run; in the clean run the answer goes on
# - talks_through: the same answer in both runs, through the event
# - same_stop: the answer ends at the same time in both runs, shortly after the event's start: it ended on its own
# - clean_silent: yields to the event in the event run; silent in the clean run
V15_SYSTEMS = tasks.FAMILIES["v1.5"].systems
# each event: how many of the user's (or another voice's) words it holds, and their loudness
EVENTS = {"interruption": (3, 7, 1.0), "backchannel": (1, 2, 1.0), "talking_to_other": (3, 6, 1.0),
          "background_speech": (4, 8, 0.35)}


STOPS = {"yields": (0.0, 0.3), "clean_silent": (0.0, 0.3), "same_stop": (0.0, 0.3), "yields_late": (1.0, 2.0)}


def overlap_sample(rng, system: str, *, event: str, **_):
    """A v1.5 sample: the user's turn, the system's answer, and an overlap event in the middle of the answer.

    clean_input.wav is the user's turn alone; input.wav adds the event's words at [o_s, o_e] (metadata.json); both
    have the same length. The system's two runs (output.wav to input.wav, clean_output.wav to clean_input.wav)
    are built from one answer, cut where the system's behaviour (V15_SYSTEMS' comment) stops it; `intended` says when
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

    stops = STOPS.get(behaviour)  # how long after the event's start the answer stops (None: it runs on)
    event_run, event_end = cut(o_s + _u(rng, *stops) if stops is not None else None)
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


SESSION_MAX_S = 900.0  # a v2 session is planned inside this (40 turns fit), then cut to its T


def _cut(cap: Capture, n: int) -> Capture:
    """`cap` ended at sample n: its audio and the words that end by then."""
    out = Capture(n, cap.rng)
    out.audio[:] = cap.audio[:n]
    out.words = [w for w in cap.words if w[2] <= n]
    return out


def _end_s(cap: Capture) -> float:
    return round(cap.words[-1][2] / SR, 3)


def session_sample(rng, system: str, *, split: str = "Daily", turns: tuple[int, int] = (3, 6), index: int = 0, **_):
    """A Full-Duplex-Bench v2 session: the examiner's turns (input.wav, upstream's A.wav) and the system's (output.wav,
    B.wav) on one clock. Each examiner turn ends, and the system answers as it behaves (`attentive`: 0.3-0.9 s later;
    `hesitant`: 1.5-2.5 s; `eager`: 0.4-1.0 s before the end; `unyielding`: as attentive, but never stops when
    interrupted; `mute`: never); some examiner turns start while the system speaks (an examiner interruption:
    every system but `unyielding` stops 0.2-0.5 s later, after the word running then), and an attentive system
    backchannels one word inside some long examiner turns. Every gap between one channel's turns is at least 0.8 s
    (session.merge_gap_s is 0.5 s), and a mute system's examiner waits 3.4-4 s (session.window_s is 3 s).

    `intended` holds the ground truth in the words' times: per examiner turn end its outcome and latency, per
    interruption its stop latency, and the backchannels placed."""
    n_max = int(SESSION_MAX_S * SR)
    A, B = Capture(n_max, rng), Capture(n_max, rng)
    k = int(rng.integers(turns[0], turns[1] + 1))
    ends: list[dict] = []
    interruptions: list[dict] = []
    backchannels = 0
    t = _u(rng, 0.3, 0.8)
    for i in range(k):
        interrupting = bool(interruptions) and interruptions[-1]["start_s"] == t
        a0 = t
        long_turn = system == "attentive" and not interrupting and rng.random() < 0.5
        A.say(a0, words=int(rng.integers(8, 11)) if long_turn or interrupting else int(rng.integers(4, 8)))
        a1 = _end_s(A)
        if long_turn:  # one word in the middle of the examiner's turn, well inside it
            B.say(round(a0 + (a1 - a0) / 2 - 0.3, 3), words=1)
            if _end_s(B) < a1 - 0.6:
                backchannels += 1
            else:  # not inside after all: take it back
                _name, x, y = B.words.pop()
                B.audio[x:y] = 0
        if system == "mute":
            ends.append({"end_s": a1, "outcome": "no_response", "latency_s": None})
            t = round(a1 + _u(rng, 3.4, 4.0), 3)
            continue
        if B.words and _end_s(B) > a1:  # an unyielding answer still running: the end is overlapped, no new answer
            ends.append({"end_s": a1, "outcome": "overlapped", "latency_s": None})
            t = round(_end_s(B) + _u(rng, 0.8, 1.5), 3)
            continue
        interrupt_next = i + 1 < k and rng.random() < 0.4
        if system == "eager":
            b0 = round(a1 - _u(rng, 0.4, 1.0), 3)
        elif system == "hesitant":
            b0 = round(a1 + _u(rng, 1.5, 2.5), 3)
        else:
            b0 = round(a1 + _u(rng, 0.3, 0.9), 3)
        first = len(B.words)
        if system == "unyielding" and interrupt_next:
            B.say(b0, until_s=b0 + _u(rng, 5.0, 6.0))
        else:
            B.say(b0, words=int(rng.integers(8, 11)) if interrupt_next else int(rng.integers(3, 7)))
        b0 = round(B.words[first][1] / SR, 3)
        if interrupting:  # the answer to the interrupting turn starts before it ends: the system resumed over it
            interruptions[-1]["resumed"] = b0 < a1
        ends.append({"end_s": a1, "outcome": "overlapped" if b0 < a1 else "response",
                     "latency_s": round(b0 - a1, 3) if b0 >= a1 else None})
        if interrupt_next:
            nxt = round(max(b0 + _u(rng, 1.0, 1.5), a1 + 0.8), 3)  # while the answer runs, after this turn
            if system != "unyielding":  # stop after the word running 0.2-0.5 s into the examiner's turn
                at = int(round((nxt + _u(rng, 0.2, 0.5)) * SR))
                keep = [w for w in B.words[first:] if w[1] <= at]
                for _name, x, y in B.words[first + len(keep):]:
                    B.audio[x:y] = 0
                B.words = B.words[:first + len(keep)]
            interruptions.append({"start_s": nxt, "stop_latency_s": round(_end_s(B) - nxt, 3), "resumed": False})
            t = nxt
        else:
            t = round(max(_end_s(B), a1) + _u(rng, 0.8, 1.5), 3)
    T = min(round(max(_end_s(A), _end_s(B) if B.words else 0.0) + _u(rng, 3.5, 4.5), 3), SESSION_MAX_S)
    n = int(round(T * SR))
    examiner, system_cap = _cut(A, n), _cut(B, n)
    intended = {"behaviour": system, "turn_ends": ends, "interruptions": interruptions, "backchannels": backchannels}
    annotation = {"task_id": f"{split}.synthetic.{index + 1:03d}", "split": split}
    return T, system_cap, annotation, system_cap.transcript(), intended, {"input.wav": examiner}

