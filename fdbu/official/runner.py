"""`evaluate.run_official=true`: run the official scripts unchanged (v1.0's four, v1.5's two), compare with fdbu.

Each script gets a temporary folder laid out the way it reads a subset (`<root_dir>/<id>/`
with output.json and the annotation, or output.wav for backchannel; eligible samples only)
and runs with this Python from the user's checkout, after its SHA-256 is checked against
the pins. Pause handling and turn-taking run as `python SCRIPT --root_dir DIR`; the
interruption and backchannel scripts through `fdbu.official.child` (a client for the
judge, a loader for torchaudio). The printed `[Result]` block is parsed, or the exception
the script raised is read from its traceback.

Agreement: a number printed with `print(label, x)` is Python's repr of the float, so it is
compared to 1e-9 (the float summation order may differ: the scripts visit folders in
`os.listdir` order); one printed with `:.4f` (backchannel) is known only to half a unit of its
last printed digit, so fdbu's value agrees when it lies within that (plus the same 1e-9);
"nan" agrees with "nan". A script that raises agrees when fdbu's numbers are all
`unavailable` with the same exception name.

The interruption judge is fdbu's stub on 127.0.0.1 (`StubJudge`), the same for the script
and for fdbu's rules, so the rating is compared too. v1.5's get_timing.py runs on every v1.5 subset of the tree
in one process (`run_each_timing`: torch loaded once, the script executed afresh as __main__ for each subset's
folder, each run's exit status and output kept apart).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any, cast

from . import rules as official
from .child import HUB, offline_hub
from .child import LOADER
from .stub_judge import StubJudge
from ..tasks import SUBSETS, Official
from ..tree.load import Tree

TOLERANCE = 1e-9


# ---- running a script ----

def _layout(tree: Tree, subset: str, dest: Path) -> None:
    """The eligible samples as `<dest>/<id>/` with the files the script reads (the wav linked; v1.5's timing
    script: input.wav and output.wav, linked, and it writes latency_intervals.json beside them)."""
    dest.mkdir(parents=True)
    ann = SUBSETS[subset].task.annotation
    for s in tree.subset(subset):
        if not s.eligible:
            continue
        (dest / s.name).mkdir()
        if cast(Official, SUBSETS[subset].task.official).runner == "timing":  # run only for a task with one
            for name in ("input.wav", "output.wav"):
                os.symlink((s.folder / name).resolve(), dest / s.name / name)
            continue
        shutil.copyfile(s.folder / "output.json", dest / s.name / "output.json")
        if ann:
            shutil.copyfile(s.folder / ann, dest / s.name / ann)
        else:
            os.symlink(s.wav_path.resolve(), dest / s.name / "output.wav")


_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")


def raised(stderr: str) -> tuple[str, str] | None:
    """The exception the last Python traceback in stderr names: (name without module, message).
    It is the first unindented line after the frames (a progress bar may still write after it)."""
    if "Traceback (most recent call last):" not in stderr:
        return None
    for text in stderr.rsplit("Traceback (most recent call last):", 1)[1].splitlines():
        m = _EXCEPTION.match(text)
        if text and not text[0].isspace() and m:
            return m.group(1).rsplit(".", 1)[-1], m.group(2) or ""
    return None


def parse_result(stdout: str, labels: dict[str, str]) -> dict[str, str]:
    """The printed numbers of the `[Result]` block, as printed: {summary key: text}; for a
    'LABEL - Mean: m ± s' line, {key: "m ± s"}."""
    block = stdout.split("[Result]", 1)[-1]
    out = {}
    for label, key in labels.items():
        m = re.search(r"^" + re.escape(label) + r"(?::\s+| - Mean: )(\S+(?: ± \S+)?)\s*$", block, re.M)
        if m:
            out[key] = m.group(1)
    m = re.search(r"^Number of samples: (\d+)\s*$", block, re.M)
    if m:
        out["samples"] = m.group(1)
    return out


def run_script(mode: str | None, script: Path | str, root: Path, cwd: Path, url: str | None = None) -> tuple[int, str, str]:
    """Run an official script on `root` -> (exit status, stdout, stderr): plainly (`mode` None)
    or through fdbu.official.child. The loopback stub is never sent to a proxy."""
    if mode is None:
        cmd = [sys.executable, str(script), "--root_dir", str(root)]
    else:
        cmd = [sys.executable, "-m", "fdbu.official.child", mode, str(script), str(root)] + ([url] if url else [])
    env = dict(os.environ)
    env["NO_PROXY"] = ",".join(filter(None, [env.get("NO_PROXY"), "127.0.0.1"]))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@contextlib.contextmanager
def _killed_on_error(proc: subprocess.Popen):
    """The child killed when the parent stops reading it (an error, a Ctrl-C that reached this process alone: an
    API caller's interrupt); Popen's own exit would wait for it instead, as subprocess.run did not."""
    try:
        yield
    except BaseException:
        proc.kill()
        raise


def run_each_timing(script: Path, hub: Path, roots: list[Path], cwd: Path,
                    step=None) -> list[tuple[int, str, str]]:
    """get_timing.py on each root, unchanged, each run as `python get_timing.py --root_dir ROOT` is (fresh as
    __main__) but all in one process through fdbu.official.child (torch loaded once): (exit status, stdout,
    stderr) per root, from the line the child prints after each run, read as it comes (`step`, a `_stepper`: each
    root's run said as it starts and ends). A root the child ended before reporting (it died in a run) is run again
    alone, in a process of its own, as before."""
    from .child import RUN

    step = step or _stepper(None)
    runs = {}
    with subprocess.Popen(  # its stderr is never read (each run's own is in its line): not kept
            [sys.executable, "-m", "fdbu.official.child", "timing_each", str(script), str(hub), *map(str, roots)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=dict(os.environ)) as proc, \
            _killed_on_error(proc), contextlib.ExitStack() as running:
        pending = iter(roots)
        running.enter_context(step(f"{script.name}: torch and its offline hub loading"))
        for line in cast(Any, proc.stdout):
            if line.startswith(RUN):
                r = json.loads(line.removeprefix(RUN))
                if "root" in r:
                    runs[r["root"]] = (r["rc"], r["stdout"], r["stderr"])
                running.close()  # the set-up's or that root's seconds said; the next root's start
                following = next(pending, None)
                if following is not None:
                    running.enter_context(step(f"{script.name} on {following.name}"))
    return [runs[str(root)] if str(root) in runs else run_script("timing", script, root, cwd, str(hub))
            for root in roots]


def gt_folder(dest: Path, gt_path: Path) -> Path:
    """A working directory for eval_backchannel.py: it opens ./icc_gt_distribution.json (line 19)."""
    dest.mkdir()
    shutil.copyfile(gt_path, dest / official.GT_DISTRIBUTION)
    return dest


# ---- comparing ----

def agrees(text: str, ours, rounded: bool) -> tuple[bool, float]:
    """Whether fdbu's value lies within what the printed text pins down, and that bound: a
    repr float to 1e-9; a rounded one (`:.4f`) also to half a unit of its last digit."""
    if text == "nan":
        return ours == "nan", 0.0
    bound = TOLERANCE + (0.5 * 10 ** -len(text.split(".", 1)[1]) if rounded and "." in text else 0.0)
    number = isinstance(ours, (int, float)) and not isinstance(ours, bool)
    return number and abs(ours - float(text)) <= bound, bound


def compare_printed(printed: dict[str, str], ours: dict, rounded: bool) -> dict:
    """{key: {official (as printed), fdbu, bound, agree}} for every number the script printed."""
    out = {}
    for key, text in printed.items():
        value = ours.get(key)
        if key == "samples":
            out[key] = {"official": text, "fdbu": value, "agree": value == int(text)}
            continue
        if " ± " in text:
            cells = [agrees(part, value.get(sub) if isinstance(value, dict) else None, rounded)
                     for part, sub in zip(text.split(" ± "), ("mean", "std"))]
            agree, bound = all(c[0] for c in cells), max(c[1] for c in cells)
        else:
            agree, bound = agrees(text, value, rounded)
        out[key] = {"official": text, "fdbu": value, "bound": bound, "agree": agree}
    return out


def why_not(rc: int, stderr: str) -> str:
    """Why a script could not run: the exception its traceback names, else its last line of stderr."""
    exc = raised(stderr)
    return f"{exc[0]}: {exc[1]}" if exc else (stderr.strip().splitlines() or [f"exit status {rc}, no output"])[-1]


def compare(subset: str, rc: int, stdout: str, stderr: str, ours: dict) -> dict:
    """The record of one script run against fdbu's numbers for the subset."""
    spec = cast(Official, SUBSETS[subset].task.official)  # run only for a task with one
    script, labels = spec.script, spec.labels
    keys = list(labels.values())
    exc = raised(stderr) if rc != 0 else None
    if rc != 0 and (exc is None or exc[0] in ("ImportError", "ModuleNotFoundError")):
        return {"script": script, "status": "could not run", "why": why_not(rc, stderr)}
    if exc is not None:
        name = exc[0]
        same = all(isinstance(ours.get(k), dict) and str(ours[k].get("unavailable", "")).startswith(name + ":")
                   for k in keys)
        return {"script": script, "status": "agreed" if same else "differs",
                "official_raised": f"{name}: {exc[1]}", "fdbu": {k: ours.get(k) for k in keys}}
    printed = parse_result(stdout, labels)
    if set(keys) - set(printed):
        return {"script": script, "status": "could not run",
                "why": f"its output has no [Result] line for {', '.join(sorted(set(keys) - set(printed)))}"}
    numbers = compare_printed(printed, ours, rounded=spec.printed_digits is not None)
    return {"script": script, "status": "agreed" if all(n["agree"] for n in numbers.values()) else "differs",
            "numbers": numbers}


def compare_files(subset: str, rc: int, stderr: str, root: Path, ours: dict) -> dict:
    """v1.5's timing script writes a file per sample: each latency_intervals.json it wrote against the bytes fdbu
    writes for the same lists (fdbu.official.timing.file_bytes); agreed only when every one is equal."""
    from . import timing

    script = cast(Official, SUBSETS[subset].task.official).script
    if rc != 0:
        return {"script": script, "status": "could not run", "why": why_not(rc, stderr)}
    differ, missing = [], []
    for name, lists in ours["latency_intervals"].items():
        written = root / name / timing.OUT_FILENAME
        if not written.is_file():
            missing.append(name)
        elif written.read_bytes() != timing.file_bytes(lists):
            differ.append(name)
    return {"script": script, "status": "agreed" if not differ and not missing else "differs",
            "files": len(ours["latency_intervals"]), "equal": len(ours["latency_intervals"]) - len(differ) - len(missing),
            "differ": differ, "not_written": missing}


def behaviour_run(tree: Tree, subset: str, checkout: Path, paths: dict[str, Path], tmp: Path, reference: dict,
                  pins: dict[str, str], allow_unpinned: bool) -> dict:
    """v1.5's eval_behavior.py, unchanged, on the eligible samples' four transcripts with fdbu's stub judge, against
    fdbu's rule with the same stub: agreeing says fdbu sends the script's requests and reads the replies as it does
    (the stub's tag depends on the request's messages); the reference column was judged otherwise, so it is printed
    beside, not called equal (as for v1.0's interruption script)."""
    from .evaluate import behaviour
    from .judge import Judge, load_behaviour
    from .behavior import FILES

    root, cwd = tmp / f"{subset}-behaviour", tmp / f"{subset}-behaviour-cwd"
    for s in tree.subset(subset):
        if s.eligible:
            (root / s.name).mkdir(parents=True)
            for f in FILES:
                if (s.folder / f).is_file():
                    shutil.copyfile(s.folder / f, root / s.name / f)
    root.mkdir(exist_ok=True)
    (cwd / "instruction").mkdir(parents=True)
    shutil.copyfile(paths[official.BEHAVIOR_PROMPT], cwd / official.BEHAVIOR_PROMPT)
    prompt = load_behaviour(checkout, pins, allow_unpinned)
    with StubJudge() as stub:
        rc, out, err = run_script("behavior", paths[official.BEHAVIOR_SCRIPT], root, cwd, stub.url)
        requests = stub.requests
    judge_info = {"stub": StubJudge.BEHAVIOUR_POLICY, "official_requests": requests}
    last = (out.strip().splitlines() or [""])[-1]
    if rc != 0 or not last.startswith("[fdbu] "):
        return {"script": official.BEHAVIOR_SCRIPT, "status": "could not run", "why": why_not(rc, err),
                "judge": judge_info}
    printed = json.loads(last.removeprefix("[fdbu] "))["C"]
    with StubJudge() as stub:
        ours = behaviour(tree, subset, Judge(stub.url, prompt.model, None, None, max_attempts=3, backoff_s=0,
                                             behaviour=prompt))
        judge_info["fdbu_requests"] = stub.requests
    mine = ours.get("printed", {})
    numbers = {tag: {"official": repr(printed.get(tag)), "fdbu": mine.get(tag), "bound": 0.0,
                     "agree": printed.get(tag) == mine.get(tag)} for tag in sorted(set(printed) | set(mine))}
    record = {"script": official.BEHAVIOR_SCRIPT, "status": "agreed" if all(n["agree"] for n in numbers.values())
              else "differs", "numbers": numbers, "judge": judge_info, "fdbu_with_the_stub": ours,
              "population": population(tree, subset)}
    return judged(record, reference.get("printed", reference))


def population(tree: Tree, subset: str) -> dict:
    """The samples a run compares on: the subset's eligible samples, and those left out of both sides."""
    selected = tree.subset(subset)
    return {"samples": sum(s.eligible for s in selected),
            "left_out": {s.sample_id: s.reasons for s in selected if not s.eligible}}


def judged(record: dict, reference: dict) -> dict:
    """The interruption script needs a judge: it ran with fdbu's stub, and so did fdbu's rules for the
    comparison, so agreeing says the rules are the script's, not that the reference column (rated by
    the judge `fdbu evaluate` was given, or none) is what the script printed: not comparable."""
    if record["status"] != "agreed" or "numbers" not in record:
        return record
    state = {k: reference[k] for k in ("pending", "waiting", "unavailable") if k in reference}
    column = state or {k: reference.get(k) for k in record["numbers"] if k != "samples"}  # (a state: no judge ran)
    return {**record, "status": "not comparable", "rules_agree": True, "reference_column": column,
            "why": "the script needs a judge and ran with fdbu's stub judge; fdbu's rules with the same stub "
                   "agree with it, but the reference column was " + ("rated otherwise" if not state else
                                                                     "not judged")}


def left_out(record: dict) -> dict:
    """A script that raised on the samples fdbu chose, when some were left out (ineligible): the raise may
    come from that choice, so the script on the user's whole folder could print numbers: not comparable."""
    pop = record.get("population", {})
    if record["status"] == "agreed" and "official_raised" in record and pop.get("left_out"):
        return {**record, "status": "not comparable", "rules_agree": True,
                "why": f"the script raised {record['official_raised']} on the {pop['samples']} eligible samples "
                       f"fdbu chose; {len(pop['left_out'])} ineligible left out, which the script on your "
                       "whole folder would read"}
    return record


def _numbers(record: dict, key: str = "official") -> str:
    return ", ".join(f"{k} {n[key] if key == 'official' else _short(n[key])}"
                     for k, n in record["numbers"].items())


def _short(value) -> str:
    """A number as the reference column prints it; a state (pending, unavailable, waiting) as `state: why`."""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict) and len(value) == 1:
        return "{}: {}".format(*next(iter(value.items())))
    return json.dumps(value)


def _population(record: dict) -> str:
    pop = record.get("population")
    if not pop or not pop["left_out"]:
        return ""
    ids = list(pop["left_out"])
    return (f"; on the {pop['samples']} eligible samples only: {len(ids)} ineligible left out of both "
            f"({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}), so the script on your whole folder may "
            "print other numbers")


def line(subset: str, record: dict) -> str:
    """The console line for one script run: agreed (equal numbers on the same samples), differs (both
    numbers), not comparable (why, and both sides), or could not run (why)."""
    judge = " with fdbu's stub judge" if "judge" in record else ""
    head = f"official {record['script']} on {subset}{judge}: {record['status']}"
    status = record["status"]
    if status == "could not run":
        return f"{head} ({record['why']})"
    if status == "not comparable" and "reference_column" in record:
        column = ", ".join(f"{k} {_short(v)}" for k, v in record["reference_column"].items())
        return (f"{head} with the reference column ({record['why']}: the script printed {_numbers(record)}; "
                f"the reference column has {column})")
    if status == "not comparable":
        return f"{head} ({record['why']})"
    if "official_raised" in record:
        fdbu = "; ".join(f"{k} {json.dumps(v)}" for k, v in record["fdbu"].items())
        return f"{head} (the script raised {record['official_raised']}" + (
            f"{_population(record)})" if status == "agreed" else f"; fdbu: {fdbu})")
    if "files" in record:  # a script writing a file per sample (v1.5's timing)
        detail = f"{record['equal']} of {record['files']} latency_intervals.json byte-identical to fdbu's"
        if record["differ"] or record["not_written"]:
            detail += "; " + "; ".join(f"{what}: {', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}"
                                       for what, ids in (("differ", record["differ"]),
                                                         ("not written", record["not_written"])) if ids)
        ids = list(record["population"]["left_out"])
        if ids:  # each file is one sample's: the ones left out are not compared, and change no other
            detail += (f"; {len(ids)} ineligible left out ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}): "
                       "no file compared for them")
        return f"{head} ({detail})"
    if status == "agreed":
        return f"{head} ({_numbers(record)}{_population(record)})"
    return f"{head}: " + "; ".join(f"{k} official {n['official']}, fdbu {json.dumps(n['fdbu'])}"
                                   for k, n in record["numbers"].items() if not n["agree"])


# ---- the whole run ----

def check_files(tree: Tree, checkout: Path, gt_path: Path | None, pins: dict[str, str],
                allow_unpinned: bool) -> tuple[dict[str, Path], dict[str, dict]]:
    """The official files this run uses: ({name: path}, {name: SHA-256 against the pin}); a file
    that is not the pinned one is refused unless allowed. (No paths go into summary.json.)"""
    present = [cast(Official, s.task.official) for s in SUBSETS.values()  # those evaluate has a rule for
               if tree.subset(s.name) and s.task.official is not None and s.task.official.rule is not None]
    names = dict.fromkeys(name for o in present for name in (o.script, *o.also))
    if any(o.runner == "timing" for o in present):  # v1.5: the behaviour judge's script and prompt run too
        names.update(dict.fromkeys((official.BEHAVIOR_SCRIPT, official.BEHAVIOR_PROMPT)))
    gt = {official.GT_DISTRIBUTION: Path(gt_path)} \
        if any(o.runner == "backchannel" for o in present) and gt_path is not None else {}
    return official.checkout_files(checkout, names, pins, allow_unpinned, extra=gt)


def _stepper(say: Callable[[str], None] | None):
    """A context manager per official script: "official NAME on SUBSET ..." as it starts, its seconds as it ends."""
    import contextlib
    import time

    @contextlib.contextmanager
    def step(what: str):
        if say is None:
            yield
            return
        import threading

        from ..common.progress import Bar

        say(f"official {what} ...")
        t0 = time.perf_counter()
        # the script prints nothing until it ends (its output is read then): its elapsed time ticks meanwhile
        clock = Bar(desc="  running", bar_format="{desc} {elapsed}", leave=False)
        done = threading.Event()

        def tick() -> None:
            while not done.wait(0.5):
                clock.refresh()
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
            clock.close()
        say(f"official {what}: {time.perf_counter() - t0:.1f} s")
    return step


def run_official(tree: Tree, checkout: Path, result: dict, *, gt_path: Path | None = None,
                 pins: dict[str, str] | None = None, allow_unpinned: bool = False,
                 say: Callable[[str], None] | None = None) -> tuple[dict, list[str], list[str]]:
    """Run every script whose subset the tree has (`pins` default: the shipped ones). Returns
    (summary.json's `official_run`, console lines, disagreement lines). `say`: told each script as it starts and
    its seconds when it ends (a terminal is never silent through them: issue 56)."""
    step = _stepper(say)
    from .evaluate import interruption
    from .judge import Judge, load_official

    checkout = Path(checkout).resolve()  # the scripts run from temporary folders: no relative paths
    gt_path = Path(gt_path).resolve() if gt_path is not None else None
    pins = official.shipped_pins() if pins is None else pins
    paths, files = check_files(tree, checkout, gt_path, pins, allow_unpinned)
    report: dict[str, Any] = {"files": files, "allow_unpinned": allow_unpinned, "subsets": {}}
    with tempfile.TemporaryDirectory(prefix="fdbu-official-") as tmp:
        ran = [subset for subset, entry in SUBSETS.items() if tree.subset(subset) and subset in result["subsets"]
               and entry.task.official is not None]
        for subset in ran:
            _layout(tree, subset, Path(tmp) / subset)
        timed = [s for s in ran if cast(Official, SUBSETS[s].task.official).runner == "timing"]  # one process
        if timed:
            hub = offline_hub(Path(tmp) / "hub")  # one for every v1.5 subset of the run
            timing_script = paths[cast(Official, SUBSETS[timed[0]].task.official).script]
            timings = dict(zip(timed, run_each_timing(timing_script, hub, [Path(tmp) / s for s in timed],
                                                      Path(tmp), step)))
        for subset in ran:
            spec = cast(Official, SUBSETS[subset].task.official)
            script, mode = spec.script, spec.runner
            path, root, ours = paths[script], Path(tmp) / subset, result["subsets"][subset]
            extra: dict[str, Any] = {}
            if spec.run is not None:  # a family's own run of its scripts (v2: score.py and score_time.py)
                with step(f"{' and '.join((script, *spec.also))} on {subset}"):
                    record = spec.run(tree, subset, {n: paths[n] for n in (script, *spec.also)}, Path(tmp), ours)
                report["subsets"][subset] = {**record, "population": population(tree, subset)}
                continue
            if mode is None:
                with step(f"{script} on {subset}"):
                    rc, out, err = run_script(mode, path, root, Path(tmp))
            elif mode == "interruption":
                prompt = load_official(checkout, pins, allow_unpinned)
                with StubJudge() as stub, step(f"{script} on {subset} (the stub judge)"):
                    rc, out, err = run_script(mode, path, root, Path(tmp), stub.url)
                    extra["judge"] = {"stub": StubJudge.POLICY, "official_requests": stub.requests}
                with StubJudge() as stub:
                    ours = interruption(tree, subset, Judge(stub.url, prompt.model, None, prompt, max_attempts=2,
                                                            backoff_s=0))
                    extra["judge"]["fdbu_requests"] = stub.requests
                extra["fdbu_numbers_with_the_stub"] = ours
            elif mode == "timing":
                rc, out, err = timings[subset]
                record = {**compare_files(subset, rc, err, root, ours), "hub": HUB, "loader": LOADER,
                          "population": population(tree, subset)}
                report["subsets"][subset] = record
                with step(f"{official.BEHAVIOR_SCRIPT} on {subset} (the stub judge)"):
                    report["subsets"][f"{subset}/behaviour"] = behaviour_run(tree, subset, checkout, paths, Path(tmp),
                                                                           ours["behaviour"], pins, allow_unpinned)
                continue
            else:
                if gt_path is None or "pending" in ours:
                    report["subsets"][subset] = {"script": script, "status": "could not run",
                                                 "why": "needs icc_gt_distribution.json: evaluate.gt_distribution=PATH"}
                    continue
                with step(f"{script} on {subset}"):
                    rc, out, err = run_script(mode, path, root, gt_folder(Path(tmp) / f"{subset}-cwd", gt_path))
                extra["loader"] = LOADER
            record = {**compare(subset, rc, out, err, ours), **extra, "population": population(tree, subset)}
            if mode == "interruption":
                record = judged(record, result["subsets"][subset])
            report["subsets"][subset] = left_out(record)
    lines = [line(subset, r) for subset, r in report["subsets"].items()]
    disagreements = [line(subset, r) for subset, r in report["subsets"].items() if r["status"] == "differs"]
    return report, lines, disagreements
