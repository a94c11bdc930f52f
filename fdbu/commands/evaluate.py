"""`fdbu evaluate`: registered in `fdbu.registry`, its config in `fdbu.config.store`, its console in `fdbu.cli.consoles`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path
from typing import cast

from .. import registry
from ..registry import CALL, Call

if TYPE_CHECKING:  # the config dataclass its `run` reads (fdbu.config.store)
    from ..config.store import EvaluateConfig
from ..common.cachedir import VAD_PROBS
from .base import Ran, commit
from ..errors import FdbuError


@registry.command("evaluate")
def run(cfg: EvaluateConfig, call: Call = CALL) -> Ran:
    """`fdbu evaluate`: value is summary.json as a dict; `disagreements` lists where the official
    scripts, when run, differ from fdbu's rules."""
    import os

    from ..official import evaluate as ev
    from ..official.rules import GT_DISTRIBUTION, SCRIPT_DIRS
    from ..tree.load import load_tree, require

    e = cfg.evaluate
    checkout = Path(e.official_checkout) if e.official_checkout else None
    pins = dict(e.official_sha256)
    beside = None  # without evaluate.gt_distribution: the one beside the scripts, where upstream runs them
    if not e.gt_distribution and checkout is not None:
        beside = next((checkout / d / GT_DISTRIBUTION for d in SCRIPT_DIRS
                       if (checkout / d / GT_DISTRIBUTION).is_file()), None)
    gt = Path(e.gt_distribution) if e.gt_distribution else beside
    judge = None
    require(Path(cfg.tree))
    if e.judge.base_url:
        from .. import tasks
        from ..official.judge import Judge, load_behaviour, load_official
        from ..tree.load import read_manifest

        families = tasks.families_of({x.subset for x in read_manifest(Path(cfg.tree)).samples})
        judged = {j for f in families for j in f.judges} if families else set(next(iter(tasks.FAMILIES.values())).judges)
        # the config asks for a checkout with a judge: the prompts the tree's families' official rules send
        prompt = load_official(cast(Path, checkout), pins, e.allow_unpinned) if "interruption" in judged else None
        behaviour = load_behaviour(cast(Path, checkout), pins, e.allow_unpinned) if "behaviour" in judged else None
        # a family whose judge runs by its own scripts (v2's eval_single_item.py): its files, pinned
        scripts = {f.name: f.judge_scripts(cast(Path, checkout), pins, e.allow_unpinned, e.judge) for f in families
                   if f.judge_scripts is not None}
        key = os.environ.get(e.judge.api_key_env)
        if scripts and not key:  # the scripts refuse to run without one
            raise FdbuError("config", None, f"evaluate.judge: the {', '.join(scripts)} judge needs an API key, and "
                            f"${e.judge.api_key_env} is not set: export it, or name the variable holding it with "
                            "evaluate.judge.api_key_env=NAME")
        if scripts and key and (any(c.isspace() for c in key) or not key.isprintable()):  # the HTTP client would refuse the
            # header after five tries, echoing the key in its message
            raise FdbuError("config", None, f"evaluate.judge: ${e.judge.api_key_env} holds whitespace or a control "
                            "character around or inside the key (a .env file with CRLF line ends?): strip it")
        _limits_read(e.judge, scripts, prompt is not None or behaviour is not None)
        # the model is set: the config refuses a judge without one
        judge = Judge(e.judge.base_url, cast(str, e.judge.model), key, prompt, max_attempts=e.judge.max_attempts,
                      timeout_s=e.judge.timeout_s, behaviour=behaviour, scripts=scripts, workers=e.judge.workers)
    for name, given in (("staged_files", bool(e.judge.staged_files)), ("workers", e.judge.workers != 1)):
        if given and (judge is None or not judge.scripts):
            from .. import tasks

            whose = ", ".join(f.name for f in tasks.FAMILIES.values() if f.judge_scripts is not None)
            raise FdbuError("config", None, f"evaluate.judge.{name} is read only by a judge run by its own scripts "
                            f"({whose}): this tree has none of its subsets, or no judge runs (evaluate.judge.base_url); "
                            "leave it out")
    outputs = ev.outputs(Path(cfg.tree), judge is not None)
    tree = load_tree(Path(cfg.tree))
    if checkout is not None:
        _checkout_used(checkout, e, tree, beside is not None)
    lines: list[str] = []
    disagreements: list[str] = []
    if e.run_official:  # the pins are checked before anything is computed
        from ..official.runner import check_files

        check_files(tree, cast(Path, checkout), gt, pins, e.allow_unpinned)  # the config asks for one
    result = ev.evaluate(tree, gt_distribution=gt, judge=judge, pins=pins, probs_cache=cfg.cache_root() / VAD_PROBS,
                         progress=cfg.progress)
    if e.run_official:
        from ..official.runner import run_official
        from ..cli.terminal import teller

        result["official_run"], lines, disagreements = run_official(tree, cast(Path, checkout), result, gt_path=gt, pins=pins,
                                                                    say=teller("evaluate", cfg.progress),
                                                                    allow_unpinned=e.allow_unpinned)
    written, report = commit(outputs, ev.files(result, judge.ledger if judge else None))
    return Ran(result, written, [*lines, *report], disagreements=disagreements)


def _limits_read(judge, scripts: dict, asked_by_fdbu: bool) -> None:
    """evaluate.judge.timeout_s and max_attempts bound the requests fdbu itself sends (v1.0's and v1.5's judges). A
    judge run by its own scripts (v2's eval_single_item.py, run unchanged) sends its own: `requests.post(url,
    headers=headers, json=payload, timeout=120)` (eval_single_item.py:278) up to `max_retries: int = 5` times
    (:251). Where only such a judge runs, the two would change nothing: refused, not ignored."""
    if not scripts or asked_by_fdbu:
        return
    default = type(judge)()  # the config's own defaults
    for name, script in (("timeout_s", "waits 120 s for each reply (eval_single_item.py:278)"),
                         ("max_attempts", "tries each request 5 times (eval_single_item.py:251)")):
        if getattr(judge, name) != getattr(default, name):
            raise FdbuError("config", None, f"evaluate.judge.{name}={getattr(judge, name)} is not read by the "
                            f"{', '.join(scripts)} judge: its script, run unchanged, {script}; leave it out")


def _checkout_used(checkout: Path, e, tree, gives_gt: bool) -> None:
    """evaluate.official_checkout is honoured or refused, never ignored: it must be a folder, and something must
    read it (the official scripts run, the judge's prompt, or icc_backchannel's ground truth beside the scripts)."""
    if not checkout.is_dir():
        raise FdbuError("config", None, f"evaluate.official_checkout={checkout}: "
                        f"{'is not a folder' if checkout.exists() else 'does not exist'}")
    from ..official.rules import GT_DISTRIBUTION

    backchannel = any(s.kind.official.runner == "backchannel" for s in tree.samples)
    if not (e.run_official or e.judge.base_url or (backchannel and gives_gt)):
        raise FdbuError("config", None, f"evaluate.official_checkout={checkout} would not be read: it is used by "
                        "evaluate.run_official=true (run the official scripts and compare), by a judge "
                        "(evaluate.judge.base_url) and for icc_backchannel's ground truth (the "
                        f"{GT_DISTRIBUTION} beside its scripts); add "
                        "evaluate.run_official=true, or leave it out")


@registry.announces("evaluate")
def names() -> set[str]:
    from ..official import evaluate, summary

    return {summary.SUMMARY, evaluate.LEDGER}
