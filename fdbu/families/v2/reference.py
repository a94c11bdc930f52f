"""Full-Duplex-Bench v2's reference column (`fdbu evaluate`): the judge's answers of a tree's sessions, the judge
run as upstream runs it (eval_single_item.py, with the user's key), its reference rule, and the official scripts'
run beside fdbu's (scoring/score.py, score_time.py). The family's hooks (`fdbu.tasks`) name this module."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from ...common.atomic import regular, sha256_bytes
from ...errors import FdbuError
from .runs import CHANNELS, FAMILY, JUDGE_SUFFIX
from .files import TASK_KEY, TURN_KEY, read_judge

def session_of(tree, sample) -> dict:
    """A tree sample's session.json, hash-checked against manifest.json (its split, task id and judge)."""
    from ...tree.load import hashed

    return json.loads(hashed(sample.folder / "session.json", sample.sample_id, "session.json",
                             tree.files[sample.sample_id].get("session.json"), "manifest.json", tree.root))


def judged_sessions(tree, subset: str) -> tuple[list[tuple[str, str, bytes]], list[str]]:
    """The subset's eligible sessions the judge reached, as (split folder, task id, judge.json's bytes, hash-checked),
    keyed as score.py keys them: by the split folder of the judge's file; and the names of those it did not reach."""
    from ...tree.load import hashed

    judged, missing = [], []
    for s in tree.subset(subset):
        if not s.eligible:
            continue
        files = tree.files[s.sample_id]
        session = session_of(tree, s)
        if "judge.json" not in files:
            missing.append(s.name)
            continue
        data = hashed(s.folder / "judge.json", s.sample_id, "judge.json", files["judge.json"], "manifest.json",
                      tree.root)
        folder = Path(session["judge"]["file"]).parts[0] if "file" in session.get("judge", {}) else session["split"]
        judged.append((folder, session["task_id"], data))
    return judged, missing


@dataclass
class SessionJudge:
    """v2's judge as the checkout has it, run unchanged (fdbu.families.v2.runs.run_judge): eval_single_item.py per
    session (Gemini), its rubrics, the tasks' staged goals and parse.py, which turns its answers into the
    `*_processed.json` score.py reads."""

    script: Path
    prompts: Path
    staged: list[Path]
    parse: Path
    sha256: dict  # file -> SHA-256


def load_session_judge(checkout: Path, pins: dict[str, str] | None, allow_unpinned: bool, options) -> SessionJudge:
    """v2's judge files of the checkout (Family.judge_scripts; with `pins`, a file that is not the pinned one is
    refused unless `allow_unpinned`); `options.staged_files` (evaluate.judge) in place of the checkout's
    prompts_staged_200.json (tasks of your own)."""
    staged_files = options.staged_files
    from ...official import JUDGE_V2_PARSE, JUDGE_V2_PROMPTS, JUDGE_V2_SCRIPT, JUDGE_V2_TASKS
    from ...official.rules import checkout_files

    names = [JUDGE_V2_SCRIPT, JUDGE_V2_PROMPTS, JUDGE_V2_PARSE] + ([] if staged_files else [JUDGE_V2_TASKS])
    paths, reports = checkout_files(checkout, names, pins, allow_unpinned)
    sha = {name: r["sha256"] for name, r in reports.items()}
    staged = [Path(f) for f in staged_files] if staged_files else [paths[JUDGE_V2_TASKS]]
    for k, f in enumerate(staged if staged_files else []):
        try:
            regular(f, "evaluate.judge.staged_files", f.name)
            sha[f"staged_files[{k}]: {f.name}"] = sha256_bytes(f.read_bytes())  # (no paths in summary.json)
        except OSError as e:
            raise FdbuError("evaluate.judge.staged_files", str(f), f"cannot be read ({e.strerror or e})") from None
    return SessionJudge(paths[JUDGE_V2_SCRIPT], paths[JUDGE_V2_PROMPTS], [f.resolve() for f in staged],
                        paths[JUDGE_V2_PARSE], sha)


def run_judge(tree, subset: str, judge) -> tuple[list[tuple[str, str, bytes]], dict[str, str], dict[str, dict]]:
    """v2's judge run now, as upstream runs it (eval/run_evaluation.sh's second step), on the subset's eligible
    sessions: eval_single_item.py unchanged on each session's transcripts (input.json as A.json, output.json as
    B.json, every one hash-checked before the first request), one process per session, in manifest order
    (`fdbu.official.child gemini`: the key in GEMINI_API_KEY, the requests to `evaluate.judge.base_url`), then
    parse.py unchanged over all the answers. Returns the sessions judged as `judged_sessions` does (split, task id,
    the processed JSON's bytes, checked by `read_judge`), what each answer was made on (`MADE_ON`: the SHA-256 of the
    session's two tracks and of the transcripts sent), and why each other session was not: the script failed or
    ran too long, its answer is empty (a refusal), or is not a judge output of the session. When the judge answered
    no session at all, one line says why (a wrong key or model). Every request that got a reply goes into the
    judge's ledger with it; the key is in no file and no message."""
    import os
    import subprocess
    import sys
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    session_judge = judge.scripts[FAMILY]
    limit = 900.0  # above the script's own worst case, 840 s: 5 requests of up to 120 s each and 4 waits of up to
    # 60 s unless a Retry-After asks longer (eval_single_item.py:251-307); evaluate.judge.timeout_s bounds fdbu's own
    # requests (v1.0's, v1.5's judges) and is not read here
    found: list[tuple[str, str, bytes]] = []
    failed: dict[str, str] = {}
    made_on: dict[str, dict[str, str]] = {}

    def secret(text: str) -> str:
        return text.replace(judge.api_key, "***") if judge.api_key else text

    with tempfile.TemporaryDirectory(prefix="fdbu-v2-judge-") as tmp_name:
        tmp = Path(tmp_name)
        answers, asked = tmp / "eval_results", []
        sessions = _transcripts_as_upstream(tree, subset, tmp / "transcripts")  # all checked before a request
        env = {**os.environ, "GEMINI_API_KEY": judge.api_key or ""}
        env.pop("GEMINI_MODEL", None)  # the model is evaluate.judge.model, passed as --model
        def ask(session) -> str | None:
            """One session's script run: None, or why it failed."""
            s, split, task, folder, _ = session
            argv = [sys.executable, "-m", "fdbu.official.child", "gemini", str(session_judge.script), judge.base_url,
                    str(tmp / f"{split}.{task}.ledger.jsonl"), "--subset", split, "--task-id", task, "--transcript-a",
                    str(folder / "A.json"), "--transcript-b", str(folder / "B.json"), "--eval-prompts",
                    str(session_judge.prompts), "--staged-files", *map(str, session_judge.staged), "--model",
                    judge.model, "--out", str(answers / split / f"{task}.json")]
            try:
                run = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                                     timeout=limit)
                return None if run.returncode == 0 else _script_error(run.returncode, run.stderr)
            except subprocess.TimeoutExpired:
                return f"ran past {limit:.0f} s (its retries, or a long Retry-After)"

        # evaluate.judge.workers sessions at once (1: one after another, as upstream); the results in manifest order
        with ThreadPoolExecutor(max_workers=judge.workers) as pool:
            whys = list(pool.map(ask, sessions))
        for (s, split, task, _, _), why in zip(sessions, whys):
            judge.ledger.extend(_ledger(tmp / f"{split}.{task}.ledger.jsonl", f"{split}/{task}", secret))
            if why is not None:
                failed[s.name] = secret(f"{JUDGE_SCRIPT_NAME} failed: {why}")
                continue
            asked.append((s, split, task))
        if not asked and failed:  # not one answer: the key, the model or the endpoint, not the sessions
            first = next(iter(failed.items()))
            raise FdbuError("evaluate.judge", None, f"the judge answered none of {subset}'s {len(failed)} sessions "
                            f"(a wrong key, model or base_url?); {first[0]}: {first[1]}")
        if asked:
            _parse_answers(session_judge.parse, answers, secret)
        made = {s.sample_id: hashes for s, _, _, _, hashes in sessions}
        for s, split, task in asked:
            data, why = _processed_answer(answers / split / f"{task}{JUDGE_SUFFIX}", s)
            if why is not None:
                failed[s.name] = why
                continue
            found.append((split, task, data))
            made_on[f"{split}/{task}"] = made[s.sample_id]
    return found, failed, made_on


def _ledger(ledger: Path, session: str, secret) -> list[dict]:
    """One session's requests and replies as the judge's child logged them (none if it logged none), the key out."""
    lines = ledger.read_text(encoding="utf-8").splitlines() if ledger.is_file() else []
    return [{"session": session, **json.loads(secret(line))} for line in lines]


def _parse_answers(parse: Path, answers: Path, secret) -> None:
    """parse.py unchanged over every answer in `answers` (upstream's last judge step), or one line of why not."""
    import subprocess
    import sys

    try:
        run = subprocess.run([sys.executable, str(parse), "--root_dir", str(answers)], cwd=answers.parent,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        why = None if run.returncode == 0 else _script_error(run.returncode, run.stderr)
    except subprocess.TimeoutExpired:
        why = "ran past 600 s"
    if why is not None:
        raise FdbuError("official checkout", "scoring/parse.py", secret(f"failed on the judge's answers ({why})"))


def _processed_answer(processed: Path, s) -> tuple[bytes, str | None]:
    """One session's processed answer (parse.py's output) and, where it cannot be used, why not."""
    if not processed.is_file():
        return b"", "the judge's answer is not JSON parse.py reads (see the ledger)"
    data = processed.read_bytes()
    try:
        read_judge(data, s.sample_id, s.T_us, processed.name)
    except FdbuError as e:
        return data, f"the judge's answer is not a judge output of this session: {e.problem}"
    doc = json.loads(data)  # read_judge read it: an object with its events' list
    if not doc.get(TURN_KEY) and doc.get(TASK_KEY) is None:
        return data, "the judge's answer is empty: no event and no task score (a refusal or a cut-off reply; see " \
                     "the ledger)"
    return data, None


def _transcripts_as_upstream(tree, subset: str, dest: Path) -> list[tuple[Any, str, str, Path, dict]]:
    """Each eligible session's transcripts as upstream's ASR step leaves them for the judge, `dest/<split>/<task
    id>/A.json` (the examiner: the tree's input.json) and `B.json` (output.json), each hash-checked against asr.json:
    (sample, split, task id, its folder, what a judge's answer on them is made on: `MADE_ON`'s SHA-256, the user's
    two tracks as its session.json records them and the transcripts as asr.json does), in manifest order."""
    from ...tree.load import hashed

    out = []
    for s in tree.subset(subset):
        if not s.eligible:
            continue
        session = session_of(tree, s)
        split, task = session["split"], session["task_id"]
        folder = dest / split / task
        folder.mkdir(parents=True)
        listed = {"output.json": tree.receipts.get(subset, {}).get(s.name),  # as asr.json lists them
                  "input.json": tree.other_receipts.get(subset, {}).get("input.json", {}).get(s.name)}
        for name, as_name in (("input.json", "A.json"), ("output.json", "B.json")):
            (folder / as_name).write_bytes(hashed(s.folder / name, s.sample_id, name, listed[name], "asr.json",
                                                  tree.root))
        out.append((s, split, task, folder, {**{c: session["source"][c].get("sha256") for c in CHANNELS},
                                             "A.json": listed["input.json"], "B.json": listed["output.json"]}))
    return out


def _script_error(rc: int, stderr: str) -> str:
    """Why the script failed: the exception its traceback names, with the whole message (the API's error is a JSON
    body over several lines), on one line, at most 300 characters."""
    from ...official.runner import why_not

    lines = stderr.strip().splitlines()
    head = why_not(rc, stderr)
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(head.split(":")[0] + ":")), None)
    text = " ".join(" ".join(lines[at:]).split()) if at is not None else head
    return text if len(text) <= 300 else text[:297] + "..."


JUDGE_SCRIPT_NAME = "eval_single_item.py"


MEAN_OF_SESSIONS = ("fdbu's, not upstream's (its scripts print no aggregate over sessions): the plain mean of "
                    "score.py's per-session rows as judge_summary.csv holds them, each rounded to 3 decimals")


def judge_rule(tree, subset: str, ctx) -> dict:
    """score.py's and score_time.py's rows (fdbu.families.v2.judge_scores) over the subset's judged sessions, each
    judge.json (hash-checked) keyed as the scripts key it: (its split, its task id); the sessions the judge did not
    reach are listed, not scored. With a judge given (evaluate.judge.base_url), the judge runs now (`run_judge`)
    and its answers, not the exported ones, make the rows."""
    from .judge_scores import judge_scores

    ran = ctx.judge is not None and FAMILY in ctx.judge.scripts
    if ran:
        found, failed, made_on = run_judge(tree, subset, ctx.judge)
        missing = list(failed)
    else:
        found, missing = judged_sessions(tree, subset)
    judged = {(folder, task): [json.loads(data)] for folder, task, data in found}
    out = judge_scores(judged)
    rows = out["score.py"]["judge_summary.csv"]["rows"]
    means = {}  # fdbu's plain mean of score.py's per-session rows (upstream prints no aggregate over tasks)
    for j, column in enumerate(out["score.py"]["judge_summary.csv"]["header"][4:], start=4):
        values = [r[j] for r in rows if r[j] is not None]
        means[column] = sum(values) / len(values) if values else None
    result = {**out, "judged": len(judged), "not_judged": missing, "mean_of_sessions": means,
              "mean_of_sessions_is": MEAN_OF_SESSIONS}
    if ran:  # the judge ran now: which one, and why each session it did not judge was not
        result["judge_run"] = {"model": ctx.judge.model, "base_url": ctx.judge.base_url, "failed": failed,
                               "processed": {f"{folder}/{task}": json.loads(data) for folder, task, data in found},
                               "made_on": made_on}
    return result


def official_run(tree, subset: str, paths: dict, tmp: Path, ours: dict) -> dict:
    """`evaluate.run_official`: score.py and score_time.py themselves, unchanged and offline, on the subset's judged
    sessions laid out as upstream's eval_results (`<split>/<task id>_processed.json`: each judge.json's bytes, or the
    answers of the judge run in this evaluate), each
    in its own working folder (both write judge_summary.csv there); every CSV they write compared row by row with
    the reference column (fdbu.families.v2.judge_scores), as csv.writer writes fdbu's rows. Agreed only when every file
    is equal."""
    import csv
    import subprocess
    import sys

    from ...official import JUDGE_SCORE_SCRIPT, JUDGE_TIME_SCRIPT
    from .judge_scores import csv_cell
    from ...official.runner import why_not

    root = tmp / f"{subset}-eval_results"
    ran = ours.get("judge_run")  # the judge ran in this evaluate: its answers, not the exported ones
    found = [(*key.split("/", 1), json.dumps(doc).encode()) for key, doc in ran["processed"].items()] if ran else \
        judged_sessions(tree, subset)[0]
    for folder, task, data in found:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / f"{task}{JUDGE_SUFFIX}").write_bytes(data)
    root.mkdir(exist_ok=True)
    script = f"{JUDGE_SCORE_SCRIPT} and {JUDGE_TIME_SCRIPT}"
    numbers = {}
    for name, written in ((JUDGE_SCORE_SCRIPT, ("judge_summary.csv",)),
                          (JUDGE_TIME_SCRIPT, ("judge_summary.csv", "judge_summary_binned.csv"))):
        cwd = tmp / f"{subset}-{Path(name).stem}"
        cwd.mkdir()
        try:
            run = subprocess.run([sys.executable, str(paths[name]), "--root_dir", str(root)], cwd=cwd,
                                 capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        except subprocess.TimeoutExpired:
            return {"script": script, "status": "could not run", "why": f"{name} ran past 600 s"}
        if run.returncode != 0:
            return {"script": script, "status": "could not run", "why": f"{name}: {why_not(run.returncode, run.stderr)}"}
        for csv_name in written:
            table = ours[Path(name).name][csv_name]
            if not (cwd / csv_name).is_file() and table["rows"]:
                return {"script": script, "status": "could not run", "why": f"{name} wrote no {csv_name}"}
            if not (cwd / csv_name).is_file():  # score_time.py writes no file without a row: nor has fdbu a row
                theirs = [table["header"]]
            else:
                with open(cwd / csv_name, newline="") as f:
                    theirs = list(csv.reader(f))
            mine = [[csv_cell(x) for x in row] for row in table["rows"]]
            pairs = [(theirs[0] if theirs else [], table["header"]), *zip(sorted(theirs[1:]), sorted(mine))]
            if len(theirs) - 1 != len(mine):
                pairs.append(([f"{len(theirs) - 1} rows"], [f"{len(mine)} rows"]))
            first = next(((a, b) for a, b in pairs if a != b), None)  # the first row (or the header) that differs
            numbers[f"{Path(name).name}'s {csv_name}"] = {
                "official": f"{len(theirs) - 1} rows" if first is None else ",".join(first[0]),
                "fdbu": f"{len(mine)} rows" if first is None else ",".join(first[1]), "agree": first is None}
    return {"script": script, "status": "agreed" if all(n["agree"] for n in numbers.values()) else "differs",
            "numbers": numbers}
