"""Full-Duplex-Bench v1.5 (upstream v1_v1.5/dataset/README.md): each sample holds input.wav with an overlap event,
clean_input.wav without it, metadata.json (the event's window in input.wav), and the system's two runs, output.wav and
clean_output.wav; Silero segments both. Its metric module is `metrics.py` (the four overlap subsets), its matched
control `control.py` (the settings group `overlap.*`, the entry's record) and `control_pairs.py` (two systems'
controls compared, and the entry itself); its reference column is get_timing.py's latency_intervals.json per sample
(`fdbu.official.timing`, `fdbu.official.evaluate`'s rule)."""
from __future__ import annotations

from ...tree import readers
from ...family import Family, Figure, Official, Ref, Subset, Task
from ...official import TIMING_SCRIPT
from ...version import V15_DEFINITIONS
from . import control, control_pairs, metrics as overlap

EVALUATE, SYNTH = "fdbu.official.evaluate", "fdbu.synth.samples"
OVERLAP = Task(
    name=overlap.TASK, family="v1.5", annotation="metadata.json", read=readers.read_event, metrics=overlap,
    reference=None, speech_detection=True, asr_task="default", asr_cut=None, label="overlap (v1.5, from o_s)",
    latency=None, latency_from="seconds after the overlap event begins (o_s)",  # its curves: overlap.stop_curves
    official=Official(TIMING_SCRIPT, {}, "timing", rule=Ref(EVALUATE, "overlap_rule"), via_evaluate=False),
    generator=Ref(SYNTH, "overlap_sample"),
    audio=("input.wav", "clean_input.wav", "clean_output.wav"),
    runs=(("output.wav", "input.wav"), ("clean_output.wav", "clean_input.wav")),
    transcribed=("output.wav", "clean_output.wav", "input.wav", "clean_input.wav"),
    detected=("output.wav", "clean_output.wav"))

# its subsets carry the matched control (its settings group overlap.*, its `control` entries) and draw its stop
# curves; after v1.0's (synth seeds each subset by its place in the registry: v1.0's samples do not move)
FAMILY = Family(name="v1.5", systems=("yields", "yields_late", "talks_through", "same_stop", "clean_silent"),
                judges=("behaviour",), files=("clean_input.wav", "metadata.json"),
                definitions=V15_DEFINITIONS, settings=control.GROUP, entries=(control_pairs.ENTRY,),
                figures=(Figure("stop-curves", overlap.stop_curves),),
                subsets=(Subset("user_interruption", OVERLAP, 200, {"event": "interruption"}),
                         Subset("user_backchannel", OVERLAP, 99, {"event": "backchannel"}),
                         Subset("talking_to_other", OVERLAP, 100, {"event": "talking_to_other"}),
                         Subset("background_speech", OVERLAP, 100, {"event": "background_speech"})))
