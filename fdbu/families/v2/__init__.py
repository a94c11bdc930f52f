"""Full-Duplex-Bench v2 (upstream v2/README.md): a multi-turn session between an automated examiner (A.wav, here
input.wav) and the system (B.wav, here output.wav) on one clock; Silero segments both channels. Here: its metric
module `metrics.py` (sessions pooled over a split, and its judge, offset and bins entries), `events.py` (one
session's turn ends, interruptions, talk-over, backchannels, judged windows and 15 s bins), `hooks.py` (its settings
group `session.*`, how its entries are shown), `rankcorr.py`; its run layout `runs.py` (an output root, its export;
`synthetic.py`: synthetic runs as upstream leaves them; `said.py`: what export's console says of a tree), the files upstream's eval scripts write `files.py`, its reference column `reference.py` (the
judge's scores as scoring/score.py averages them, its judge run, the official scripts' run) and `judge_scores.py`
(score.py's and score_time.py's arithmetic)."""
from __future__ import annotations

from typing import TYPE_CHECKING, List

from ...tree import readers
from ...family import Family, Layout, Official, Ref, Subset, SynthOption, Task
from ...official import JUDGE_SCORE_SCRIPT, JUDGE_TIME_SCRIPT
from ...version import V2_DEFINITIONS
from . import hooks, metrics

SYNTH = "fdbu.synth.samples"
RUNS = "fdbu.families.v2.runs"  # its run layout: an output root of <split>/<task id>/A.wav, B.wav (and the judge's)
SAID = "fdbu.families.v2.said"  # what export's console says of a tree it wrote
SYNTHETIC = "fdbu.families.v2.synthetic"  # synthetic runs written as upstream leaves them (layout=official)
REFERENCE = "fdbu.families.v2.reference"  # its reference column: the judge's answers, run and rule, the official run
FILES = "fdbu.families.v2.files"  # the files upstream's eval scripts write: the judge's answers, transcripts.json
SESSION = Task(
    name=hooks.TASK, family="v2", annotation="session.json", read=readers.read_session, metrics=metrics,
    reference=None, speech_detection=True, asr_task="default", asr_cut=None, label="session (v2)",
    official=Official(JUDGE_SCORE_SCRIPT, {}, "judge_scores", rule=Ref(REFERENCE, "judge_rule"), via_evaluate=False,
                      also=(JUDGE_TIME_SCRIPT,), run=Ref(REFERENCE, "official_run")),
    generator=Ref(SYNTH, "session_sample"), audio=("input.wav",), transcribed=("output.wav", "input.wav"),
    detected=("output.wav", "input.wav"), combined=("transcripts.json", Ref(FILES, "transcripts_of")))



def _turns(value) -> str | None:
    ok = len(value) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in value) \
        and 1 <= value[0] <= value[1] <= 40
    return None if ok else "a range [lo, hi] of turns, 1 <= lo <= hi <= 40"


TURNS = SynthOption("session_turns", "turns", [3, 6], List[int],
                    "range of examiner turns per v2 session (3-6: sessions of about 30 s; 14-18: release-length ones, "
                    "cut at 120 s by export as upstream trims them)", _turns)

FAMILY = Family(name="v2", systems=("attentive", "hesitant", "eager", "unyielding", "mute"),
                synth_options=(TURNS,),
                judge_scripts=Ref(REFERENCE, "load_session_judge"),
                definitions=V2_DEFINITIONS, settings=hooks.GROUP,
                entries=(hooks.JUDGE_ENTRY, hooks.OFFSET_ENTRY, hooks.BINS_ENTRY),
                layout=Layout(Ref(RUNS, "what"), Ref(RUNS, "export_hint"), Ref(RUNS, "export"),
                              Ref(SYNTHETIC, "write_synthetic"), Ref(SAID, "export_said")),
                # one subset per upstream split (its name in session.json), 50 tasks each (prompts_staged_200.json)
                subsets=(Subset("v2_daily", SESSION, 50, {"split": "Daily"}),
                         Subset("v2_correction", SESSION, 50, {"split": "Correction"}),
                         Subset("v2_entity_tracking", SESSION, 50, {"split": "EntityTracking"}),
                         Subset("v2_safety", SESSION, 50, {"split": "Safety"})))

if TYPE_CHECKING:  # the hooks named by Ref (loaded when first called), held to the contract's protocols by mypy
    from ...family import LayoutExport, LayoutHint, LayoutSaid, LayoutSynth, LayoutWhat
    from . import runs, said, synthetic

    _what: LayoutWhat = runs.what
    _hint: LayoutHint = runs.export_hint
    _export: LayoutExport = runs.export
    _synth: LayoutSynth = synthetic.write_synthetic
    _said: LayoutSaid = said.export_said
