"""`fdbu report`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import ReportConfig
from .base import Ran, commit, compare_systems, load_systems


@registry.command("report")
def run(cfg: ReportConfig, call: Call = CALL) -> Ran:
    """`fdbu report`: value is the compare result the leaderboard's decisions come from (None for one tree):
    made here as `fdbu compare` makes it, or read from `report.compare`, refused unless it compares exactly
    these trees."""
    from ..tree.readers import parse_json
    from ..reporting.site import build, outputs as report_outputs

    r = cfg.report
    systems = load_systems(cfg)
    compare_path = Path(r.compare) / "compare.json" if r.compare else None
    outputs = report_outputs(Path(cfg.out), [sum(map(len, s.rows.values())) for s in systems], r.formats(), cfg.plot,
                             len(systems) > 1 and not compare_path)
    if compare_path is not None and r.compare is not None:
        from ..errors import FdbuError

        from ..comparison.compared import read_result
        from ..common.atomic import regular

        try:
            regular(compare_path, r.compare, "compare.json")  # a FIFO would block the read forever
            result = parse_json(compare_path.read_bytes(), r.compare, "compare.json")
        except OSError as e:
            raise FdbuError(r.compare, "compare.json", f"cannot be read: {e.strerror or e}") from None
        result = read_result(result, systems, r.compare)
        decided(cfg, result)
    else:
        result = compare_systems(cfg, systems, r) if len(systems) > 1 else None
    written, lines = commit(outputs, build(systems, result, Path(cfg.out), formats=r.formats(), plot=cfg.plot,
                                           width=cfg.width, compare_path=compare_path, progress=cfg.progress))
    return Ran(result, written, lines)


def decided(cfg, result: dict) -> None:
    """With report.compare, compare.json's decisions are shown as they are: a setting that would decide otherwise
    (another alpha changes which lines can decide and so Holm's family, not only the threshold; another family
    other adjusted p; another baseline other pairs; the permissions another comparison) is refused with the compare
    command that honours it."""
    from ..errors import FdbuError

    from ..comparison.marks import holm_rule
    from ..config.settings import ALPHA, HOLM_FAMILY, PAIRS

    # compare's defaults, as its config declares them (fdbu.config.settings): one equal to it is left off the suggestion
    defaults = {"compare.pairs": PAIRS[0], "compare.alpha": ALPHA, "compare.family": HOLM_FAMILY}
    r, c = cfg.report, result["comparison"]
    asked = []
    if r.alpha is not None and r.alpha != c["alpha"]:
        asked.append((f"report.alpha={r.alpha}", f"compare.alpha={r.alpha}", f"decided at alpha {c['alpha']}"))
    if r.family is not None and r.family != c["holm_family"]:
        asked.append((f"report.family={r.family}", f"compare.family={r.family}", f"decided with {holm_rule(c)}"))
    if cfg.baseline is not None and cfg.baseline != c["baseline"]:
        asked.append((f"baseline={cfg.baseline}", f"baseline={cfg.baseline}", f"compares against {c['baseline']}"))
    for key in ("allow_different_samples", "allow_mixed_transcripts"):
        if getattr(r, key):  # compare.json does not record it: nothing to check it against, and nothing it would do
            raise FdbuError("config", None, f"report.{key}=true: with report.compare= the comparison is "
                            f"{r.compare}/compare.json's, made by fdbu compare (which takes compare.{key}=true); "
                            f"leave report.{key} out")
    if asked:
        names = f" \"names=[{','.join(cfg.names)}]\"" if cfg.names is not None else ""
        # the compare command that decides as asked, keeping what compare.json decided with and was not asked
        keep = {"compare.pairs": c["pairs"], "compare.alpha": c["alpha"], "compare.family": c["holm_family"]}
        keep.update((h.split("=", 1)[0], h.split("=", 1)[1]) for _, h, _ in asked if h.startswith("compare."))
        honour = [f"{k}={v}" for k, v in keep.items() if str(v) != str(defaults[k])]
        honour += [h for _, h, _ in asked if not h.startswith("compare.")]
        raise FdbuError("config", None, f"{' '.join(g for g, _, _ in asked)}: {r.compare}/compare.json "
                        f"{'; '.join(w for _, _, w in asked)}, and the report shows its decisions as they are; run "
                        f"fdbu compare \"trees=[{','.join(cfg.trees)}]\"{names} {' '.join(honour)} out=DIR and give "
                        "report.compare=DIR, or leave it out to compare here")


@registry.announces("report")
def names() -> set[str]:
    """Over 1, 2 and 12 systems of 2,600 samples (11 parts of drill-downs each), every format, figures or not."""
    from ..reporting import site
    from ..config.settings import FORMATS

    out = {site.HEAD, "compare.json"}
    for n in (1, 2, 12):
        for plot in (True, False):
            out |= set(site.names([2600] * n, tuple(FORMATS), site.figure_names(n, plot)))
    return out
