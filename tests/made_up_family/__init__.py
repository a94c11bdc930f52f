"""A task family that exists nowhere but in the tests, "made-up" (release "vX"), with one task, "hold": after a hold
cue at H (hold.json) the system should stay silent for a window, then reply. Everything a family can bring is here:
its own settings group (`hold.window_s`, recorded in unified.json), an extra entry of each subset (`hold`: a paired
line, as v1.5's matched control), a figure (`hold-curves`), which the report shows as rows of its subset table,
and the task's reader, metric module and generator (`hold.py`). It is one folder, as a release of fdbu/families/
is, and one registry line, `register()` (tests/test_registry.py; a whole suite's run with it registered:
tests/made_up_plugin.py): synth, score, the reader, compare, report, the sweep's refusal and the API take it with no
other file touched."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from fdbu import tasks
from fdbu.config.settings import MS_UP_TO_MINUTE, opt, within
from fdbu.common.timebase import seconds, to_us
from fdbu.family import Entry, Family, Figure, Group, SynthOption
from fdbu.metrics.paired import cdf_band
from fdbu.metrics.stats import Bootstrap

from . import hold
from .hold import HOLD, HoldSettings, from_rows

# ---- the family's settings group: hold.window_s ----------------------------------------------------------------

@dataclass
class HoldConfig:
    window_s: float = opt(1.0, "how long the system should stay silent after the hold cue, seconds")

    def __post_init__(self):
        within(self, "hold.", window_s=MS_UP_TO_MINUTE)

    def settings(self) -> HoldSettings:
        return HoldSettings(to_us(self.window_s))


# ---- the family's entry, figure and registration ---------------------------------------------------------------

def check_entry(r, subset_entry: dict, at: str, doc: dict) -> None:
    r.fields(r.obj(doc, "hold", "hold"), {"window_s": "seconds"}, "hold.")
    e = r.obj(subset_entry, "hold", f"{at}.hold")
    r.fields(e, {"n": "count"}, f"{at}.hold.")
    line = r.obj(e, "late_reply_rate", f"{at}.hold.late_reply_rate")
    r.fields(line, {"p": "unit?", "marker": "flag"}, f"{at}.hold.late_reply_rate.")


def curves(rows: list[dict], unified: dict) -> tuple[list[dict], dict]:
    boot = Bootstrap(unified["bootstrap"]["resamples"], unified["bootstrap"]["seed"])
    out = []
    for subset, e in unified["subsets"].items():
        mine = [r for r in rows if r["subset"] == subset and r["eligible"]]
        if e["task"] == TASK.name and mine:
            lat = from_rows(mine, subset, unified).latency_us
            out.append({"subset": subset, "over": "eligible", "horizon_s": None,
                        "systems": [{"name": "reply", **cdf_band(lat, boot)}]})
    return out, {"title": "Hold curves F(t)", "ylabel": "share replied by then", "none": "no hold subset",
                 "horizon": "T", "marks_s": (seconds(HoldSettings.of(unified.get("hold")).window_us),)}


GROUP = Group("hold", "the made-up family's hold window", HoldConfig, HoldSettings.of)
ENTRY = Entry(key="hold", lines=lambda e: {"late_reply_rate": e["late_reply_rate"]},
              better=lambda subset, unified: {"late_reply_rate": "lower"}, label=lambda name: f"{name} (made up)",
              check=check_entry, console=lambda e: [f"  hold entry: late_reply_rate over {e['n']} samples"],
              count=lambda e: e["n"], columns={"n": "int"}, row=lambda e, line: {"n": e["n"]},
              sweep={"late_reply_rate": "late"})
HOLD_S = SynthOption("hold_s", "hold", [2.0, 4.0], List[float], "the made-up family's range of H, seconds",
                     lambda v: None if len(v) == 2 and 0 < v[0] <= v[1] <= 10 else "a range [lo, hi], 0 < lo <= hi <= 10")
TASK = tasks.Task(name="hold", family="vX", annotation=HOLD, read=hold.read_hold, metrics=hold,
                  reference="hold_us", speech_detection=False, label="hold (from H)", generator=hold.generate)
SUBSET = tasks.Subset("made_up_hold", TASK, 12)
FAMILY = Family(name="vX", systems=("patient", "eager", "mute"), definitions="made-up-hold-1", settings=GROUP,
                entries=(ENTRY,), figures=(Figure("hold-curves", curves),), synth_options=(HOLD_S,), subsets=(SUBSET,))


def register() -> None:
    """The one registry line: the family with its subsets, as fdbu.tasks.RELEASES registers v1.0, v1.5 and v2."""
    tasks.register_family(FAMILY)


def unregister() -> None:
    tasks.unregister_family(FAMILY.name)
