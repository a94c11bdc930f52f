"""Full-Duplex-Bench v1.0: pause handling, smooth turn-taking, user interruption (unified metrics: `pause.py`,
`turn_taking.py`, `interruption.py`) and backchannels (the official numbers only); its official scripts' arithmetic is
`fdbu.official.rules` and its reference column `fdbu.official.evaluate`'s rules, its generators `fdbu.synth.samples`'."""
from __future__ import annotations

from ...tree import readers
from typing import List

from ...family import Family, Official, Ref, Subset, SynthOption, Task
from ...official import BACKCHANNEL_SCRIPT, INTERRUPTION_SCRIPT, PAUSE_SCRIPT, TURN_SCRIPT
from . import interruption, pause, turn_taking

EVALUATE, SYNTH = "fdbu.official.evaluate", "fdbu.synth.samples"
PAUSE_HANDLING = Task(
    name="pause_handling", annotation="pause.json", read=readers.read_pauses, metrics=pause, reference=None,
    speech_detection=False, asr_task="default", asr_cut=None, label="pause handling",
    official=Official(PAUSE_SCRIPT, {"Average take turn": "take_turn_rate"}, None,
                      rule=Ref(EVALUATE, "pause_rule")),
    generator=Ref(SYNTH, "pause_sample"))
TURN_TAKING = Task(
    name="turn_taking", annotation="turn_taking.json", read=readers.read_turn_end, metrics=turn_taking,
    reference="E_us", speech_detection=False, asr_task="default", asr_cut=None, label="turn-taking (from E)",
    latency="response_latency_s", latency_from="seconds after the user's turn ends (E)",
    official=Official(TURN_SCRIPT, {"Average take turn": "take_turn_rate",
                                                      "Average latency": "latency_s"}, None,
                      rule=Ref(EVALUATE, "turn_taking_rule")),
    generator=Ref(SYNTH, "turn_taking_sample"))
USER_INTERRUPTION = Task(
    name="user_interruption", annotation="interrupt.json", read=readers.read_interruption, metrics=interruption,
    reference="R_us", speech_detection=True, asr_task="user_interruption", asr_cut=readers.interruption_cut_s,
    label="interruption (from R)", latency="response_latency_s",
    latency_from="seconds after the user's interruption ends (R)",
    official=Official(INTERRUPTION_SCRIPT, {"Average rating": "rating", "Average take turn": "take_turn_rate",
                                                    "Average latency": "latency_s"}, "interruption",
                      rule=Ref(EVALUATE, "interruption_rule")),
    generator=Ref(SYNTH, "interruption_sample"))
BACKCHANNEL = Task(
    name="backchannel", annotation=None, read=None, metrics=None, reference=None, speech_detection=False,
    asr_task="default", asr_cut=None, label="backchannel",
    unscored="the spec defines no unified metric for it; fdbu evaluate gives its official numbers",
    official=Official(BACKCHANNEL_SCRIPT, {"JSD": "jsd", "TOR": "take_turn_rate", "Frequency": "frequency_per_s"},
                      "backchannel", printed_digits=4, rule=Ref(EVALUATE, "backchannel_rule")),
    generator=Ref(SYNTH, "backchannel_sample"))



def _tail(value) -> str | None:
    ok = len(value) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value) \
        and 0 < value[0] <= value[1] <= 3600
    return None if ok else "a range [lo, hi] of seconds, 0 < lo <= hi <= 3600"


TAIL = SynthOption("interruption_tail_s", "tail", [4.0, 6.0], List[float],
                   "range of T - R for interruption samples, seconds", _tail)

FAMILY = Family(name="v1.0", systems=("prompt", "slow", "overlap", "never_stops", "silent"), judges=("interruption",),
                synth_options=(TAIL,),
                subsets=(Subset("synthetic_pause_handling", PAUSE_HANDLING, 137),
                         Subset("candor_pause_handling", PAUSE_HANDLING, 216, {"candor": True}),
                         Subset("candor_turn_taking", TURN_TAKING, 119),
                         Subset("synthetic_user_interruption", USER_INTERRUPTION, 200),
                         Subset("icc_backchannel", BACKCHANNEL, 55)))
