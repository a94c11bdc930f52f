"""The official interruption judge: its prompt and reply parsing, on any OpenAI-compatible endpoint.

The prompt is not copied into fdbu: it is read at run time from the user's Full-Duplex-Bench
checkout (`eval_user_interruption.py`), parsed with `ast` (the system message, the user
message f-string, MODEL_NAME, the seed and the reply regex), and the file's SHA-256 is
recorded and checked against the pins the run is given. Every request and reply goes into
a ledger. The official script asks again, without limit, until a reply parses
(eval_user_interruption.py:67, 139-140); fdbu asks at most `max_attempts` times, and a
takeover left without a rating is reported as the official script still waiting
(`fdbu.official.rules.user_interruption`), never as a rating.
"""
from __future__ import annotations

import ast
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..errors import FdbuError
from . import BEHAVIOR_PROMPT, BEHAVIOR_SCRIPT
from .rules import INTERRUPTION_SCRIPT, Verdict, checkout_files

USER_FIELDS = {"in_before_interrupt_text": "context", "in_interrupt_text": "interrupt",
               "out_after_interrupt_text": "response"}


@dataclass
class OfficialPrompt:
    path: str
    sha256: str
    system_msg: str
    user_parts: list  # str pieces and field names, in order
    model: str
    seed: int
    pattern: re.Pattern

    def user(self, context: str, interrupt: str, response: str) -> str:
        values = {"context": context, "interrupt": interrupt, "response": response}
        return "".join(p if isinstance(p, str) else format(values[p[0]]) for p in self.user_parts)  # as f"{x}"

    def parse(self, reply: str) -> int | None:
        """The official parse_output(reply + "\\n"): the last match's rating, or None."""
        rating = None
        for m in self.pattern.finditer(reply + "\n"):
            rating = int(m.group(2).strip())
        return rating


def _constant(tree: ast.AST, name: str):
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
    return None


def load_official(checkout: Path, pins: dict[str, str] | None = None, allow_unpinned: bool = False) -> OfficialPrompt:
    """The prompt of the checkout's eval_user_interruption.py; with `pins` (file name -> SHA-256)
    a file that is not the pinned one is refused unless `allow_unpinned`."""
    rel = INTERRUPTION_SCRIPT
    paths, reports = checkout_files(checkout, [rel], pins, allow_unpinned)
    data, digest = paths[rel].read_bytes(), reports[rel]["sha256"]
    try:
        tree = ast.parse(data)
        system = _constant(tree, "system_msg").value
        user = _constant(tree, "user_msg")
        model = _constant(tree, "MODEL_NAME").value
        seed = _constant(tree, "seed").value
        compile_call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "compile")
        flags = re.DOTALL if any("DOTALL" in ast.unparse(a) for a in compile_call.args[1:]) else 0
        pattern = re.compile(cast(Any, compile_call.args[0]).value, flags)  # a Constant, else AttributeError
        parts: list = []
        for v in user.values:
            if isinstance(v, ast.Constant):
                parts.append(v.value)
            else:
                parts.append((USER_FIELDS[v.value.id],))
    except (AttributeError, StopIteration, KeyError, SyntaxError, TypeError) as e:
        raise FdbuError("official checkout", rel, f"does not have the prompt, model, seed and reply pattern "
                        f"fdbu reads ({type(e).__name__}: {e})") from None
    return OfficialPrompt(rel, digest, system, parts, model, seed, pattern)


@dataclass
class BehaviourPrompt:
    """v1.5's behaviour judge as the checkout has it: the system message (instruction/behavior.txt), the user
    message's f-string (eval_behavior.py:164-171, its pieces and field names in order), the model and the first
    seed (eval_behavior.py:54, 51)."""

    sha256: dict  # file -> SHA-256
    system_msg: str
    user_parts: list
    model: str
    seed: int

    def user(self, texts: dict[str, str]) -> str:
        return "".join(p if isinstance(p, str) else format(texts[p[0]]) for p in self.user_parts)


def load_behaviour(checkout: Path, pins: dict[str, str] | None = None, allow_unpinned: bool = False) -> BehaviourPrompt:
    """The behaviour judge's prompt of the checkout (eval_behavior.py and instruction/behavior.txt, read as the
    script reads them); with `pins` a file that is not the pinned one is refused unless `allow_unpinned`."""
    from .behavior import FIELDS

    paths, reports = checkout_files(checkout, (BEHAVIOR_SCRIPT, BEHAVIOR_PROMPT), pins, allow_unpinned)
    try:
        tree = ast.parse(paths[BEHAVIOR_SCRIPT].read_bytes())
        template = _constant(tree, "final_input")
        parts: list = [v.value if isinstance(v, ast.Constant) else (v.value.id,) for v in template.values]
        if not all(isinstance(part, str) or part[0] in FIELDS for part in parts):
            raise KeyError("final_input names a field fdbu does not know")
        model, seed = _constant(tree, "MODEL_NAME").value, _constant(tree, "seed").value
        system = paths[BEHAVIOR_PROMPT].read_text(encoding="utf-8")  # eval_behavior.py:101-105
    except (AttributeError, KeyError, SyntaxError, TypeError, UnicodeDecodeError) as e:
        raise FdbuError("official checkout", BEHAVIOR_SCRIPT, f"does not have the prompt, model and seed fdbu reads "
                        f"({type(e).__name__}: {e})") from None
    return BehaviourPrompt({n: r["sha256"] for n, r in reports.items()}, system, parts, model, seed)


MAX_REPLY_BYTES = 1 << 20  # a chat completion holding one rating or tag is a few KiB; 80 MB replies filled the ledger


def judged_something(judge: "Judge") -> None:
    """A judge fdbu asked that answered none of its requests (every one failed: refused, timed out, too large, not a
    chat completion) made the run's judging a failure, not a success with everything waiting: refused in one line
    with the first request's error. Replies that came back without a rating are answers (the official scripts would
    ask again; the column says it is waiting)."""
    mine = [e for e in judge.ledger if "sample_id" in e]  # fdbu's own requests (v2's script keeps its own ledger)
    if mine and all(e.get("status") == "failed" for e in mine):
        raise FdbuError("evaluate.judge", None, f"the judge at {judge.base_url} answered none of fdbu's {len(mine)} "
                        f"requests (the first: {mine[0].get('error')}); nothing was written: check "
                        "evaluate.judge.base_url, evaluate.judge.model and the key")


@dataclass
class Judge:
    base_url: str
    model: str
    api_key: str | None
    prompt: OfficialPrompt | None  # v1.0's interruption judge, where the tree has that subset
    max_attempts: int = 3
    timeout_s: float = 60.0
    backoff_s: float = 1.0
    ledger: list[dict] = field(default_factory=list)
    behaviour: BehaviourPrompt | None = None  # v1.5's behaviour judge, where the tree has v1.5 subsets
    scripts: dict[str, Any] = field(default_factory=dict)  # a family's judge run by its own scripts, by family
    #                                                        (Family.judge_scripts: v2's eval_single_item.py)
    workers: int = 1  # sessions judged at once by a family's own scripts (evaluate.judge.workers)

    def identity(self) -> dict:
        first = self.prompt or self.behaviour
        files: dict[str, str] = {self.prompt.path: self.prompt.sha256} if self.prompt else {}
        if self.behaviour is not None:  # (a v1.0 tree's summary.json stays as it was)
            files.update(self.behaviour.sha256)
        for loaded in self.scripts.values():
            files.update(loaded.sha256)
        return {"model": self.model, "official_model": first.model if first else None, "base_url": self.base_url,
                "seed": first.seed if first else None, "official_file": files, "max_attempts": self.max_attempts}

    def _post(self, body: dict) -> str:
        req = urllib.request.Request(self.base_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
            data = r.read(MAX_REPLY_BYTES + 1)
        if len(data) > MAX_REPLY_BYTES:  # read no further, keep none of it (the ledger would hold it whole)
            raise ValueError(f"the reply is larger than {MAX_REPLY_BYTES >> 20} MiB: not a judge's answer")
        return json.loads(data)["choices"][0]["message"]["content"]

    def tag(self, sample_id: str, texts: dict[str, str]) -> tuple[dict | None, int]:
        """v1.5's behaviour judge on one sample: (the reply's object holding "behaviour", or None when no attempt
        gave one, and the attempts made). As eval_behavior.py:48-79 does, any failure (the request, or a reply
        without such an object) is asked again with the next seed; fdbu stops after max_attempts."""
        from .behavior import extract

        prompt = cast(BehaviourPrompt, self.behaviour)  # called only with one
        messages = [{"role": "system", "content": prompt.system_msg}, {"role": "user", "content": prompt.user(texts)}]
        for attempt in range(1, self.max_attempts + 1):
            body = {"model": self.model, "messages": messages, "seed": prompt.seed + attempt - 1}
            entry: dict[str, Any] = {"sample_id": sample_id, "attempt": attempt, "request": body}
            try:
                reply = self._post(body)
                entry["reply"] = reply
                if not isinstance(reply, str):  # a null content (a refusal): the script's parse raises, it asks again
                    raise ValueError(f"the reply's content is {reply!r}, not text")
                result = extract(reply)
                entry.update(result=result, status="tagged")
            except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
                result = None
                entry.setdefault("status", "unparsable" if "reply" in entry else "failed")
                entry["error"] = f"{type(e).__name__}: {e}"
            self.ledger.append(entry)
            if result is not None:
                return result, attempt
            if attempt < self.max_attempts and self.backoff_s:
                time.sleep(self.backoff_s * attempt)
        return None, self.max_attempts

    def rate(self, sample_id: str, context, interrupt, response) -> Verdict:
        """Ask until a reply parses, at most max_attempts times; replies that came back without
        a rating are counted (the official script re-runs its loop body for each)."""
        prompt = cast(OfficialPrompt, self.prompt)  # called only with one
        messages = [{"role": "system", "content": prompt.system_msg},
                    {"role": "user", "content": prompt.user(context, interrupt, response)}]
        body = {"model": self.model, "messages": messages, "seed": prompt.seed}
        unparsable = 0
        for attempt in range(1, self.max_attempts + 1):
            entry = {"sample_id": sample_id, "attempt": attempt, "request": body}
            try:
                reply = self._post(body)
                rating = prompt.parse(reply)
                entry.update(reply=reply, rating=rating, status="rated" if rating is not None else "unparsable")
            except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError, TypeError) as e:
                rating = None
                entry.update(status="failed", error=f"{type(e).__name__}: {e}")
            self.ledger.append(entry)
            if rating is not None:
                return Verdict(rating, unparsable, attempt)
            unparsable += entry["status"] == "unparsable"
            if attempt < self.max_attempts and self.backoff_s:
                time.sleep(self.backoff_s * attempt)
        return Verdict(None, unparsable, self.max_attempts)
