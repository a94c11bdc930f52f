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

from .errors import FdbuError
from .official.rules import INTERRUPTION_SCRIPT, Verdict, file_report, refuse_unpinned, script_path

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
    path = script_path(Path(checkout), rel)
    report = file_report(path, rel, pins or {})
    if pins is not None:
        refuse_unpinned({rel: report}, allow_unpinned)
    data, digest = path.read_bytes(), report["sha256"]
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
class Judge:
    base_url: str
    model: str
    api_key: str | None
    prompt: OfficialPrompt
    max_attempts: int = 3
    timeout_s: float = 60.0
    backoff_s: float = 1.0
    ledger: list[dict] = field(default_factory=list)

    def identity(self) -> dict:
        return {"model": self.model, "official_model": self.prompt.model, "base_url": self.base_url,
                "seed": self.prompt.seed, "official_file": {self.prompt.path: self.prompt.sha256},
                "max_attempts": self.max_attempts}

    def _post(self, body: dict) -> str:
        req = urllib.request.Request(self.base_url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})})
        with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
            return json.loads(r.read())["choices"][0]["message"]["content"]

    def rate(self, sample_id: str, context, interrupt, response) -> Verdict:
        """Ask until a reply parses, at most max_attempts times; replies that came back without
        a rating are counted (the official script re-runs its loop body for each)."""
        messages = [{"role": "system", "content": self.prompt.system_msg},
                    {"role": "user", "content": self.prompt.user(context, interrupt, response)}]
        body = {"model": self.model, "messages": messages, "seed": self.prompt.seed}
        unparsable = 0
        for attempt in range(1, self.max_attempts + 1):
            entry = {"sample_id": sample_id, "attempt": attempt, "request": body}
            try:
                reply = self._post(body)
                rating = self.prompt.parse(reply)
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
