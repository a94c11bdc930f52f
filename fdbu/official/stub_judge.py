"""The stub judge `evaluate.run_official=true` runs the official scripts against offline: an OpenAI-compatible chat
endpoint on 127.0.0.1 with fixed, documented replies (`StubJudge.POLICY`), the same for the scripts and for fdbu's
rules, so the ratings are compared too; and Gemini's generateContent for v2's judge (`GEMINI_POLICY`), which the
tests run eval_single_item.py against. A real HTTP server on a real socket: the scripts' own client talks to it."""
from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubJudge:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 with fixed replies. The first request
    with given messages and seed gets a reply without a rating (so the script's ask-again
    loop runs, eval_user_interruption.py:139-140); every later one "I would rate the AI's
    response as k", k = the first byte of SHA-256(messages, seed) mod 6."""

    POLICY = ("first request per (messages, seed): a reply without a rating; then 'I would rate the AI's "
              "response as k', k = first byte of SHA-256 of the JSON of messages and seed, mod 6")

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.requests = 0
        self.keys: set = set()  # the API keys v2's judge sent
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith(":generateContent"):  # v2's judge: Gemini's API, the key in a header
                    outer.keys.add(self.headers.get("x-goog-api-key"))
                    if f"/models/{outer.UNKNOWN_MODEL}:" in self.path:  # as Gemini answers a model it lacks
                        error = json.dumps({"error": {"code": 404, "message": f"models/{outer.UNKNOWN_MODEL} is not "
                                                      "found", "status": "NOT_FOUND"}}, indent=2).encode()
                        self.send_response(404)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(error)))
                        self.end_headers()
                        self.wfile.write(error)
                        return
                    payload = json.dumps(outer.gemini(body)).encode()
                else:
                    payload = json.dumps(outer.reply(body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        self.root = f"http://127.0.0.1:{self.httpd.server_port}"  # v2's judge: the API root its requests go under
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    TAGS = ("C_RESPOND", "C_RESUME", "C_UNCERTAIN_HANDLING", "C_UNKNOWN")  # v1.5's behaviour tags
    BEHAVIOUR_POLICY = ("v1.5's behaviour prompt: at seed 1, no JSON when the second byte of SHA-256 of the JSON of "
                        "messages is divisible by 3 (the script asks again with seed 2); otherwise "
                        "'{\"behaviour\": [TAGS[first byte mod 4]]}'")

    def reply(self, body: dict) -> dict:
        key = json.dumps({"messages": body.get("messages"), "seed": body.get("seed")}, sort_keys=True)
        digest = hashlib.sha256(key.encode()).digest()
        self.requests += 1
        count = self.seen[key] = self.seen.get(key, 0) + 1
        content = ("Analysis: the stub judge gives no rating on a first request." if count == 1 else
                   f"Analysis: a fixed reply.\nI would rate the AI's response as {digest[0] % 6}")
        if any('"behaviour"' in str(m.get("content")) for m in body.get("messages") or []
               if isinstance(m, dict)):  # v1.5's behaviour judge: a tag
            tagged = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
            content = ("Analysis: no JSON on a first try." if body.get("seed") == 1 and tagged[1] % 3 == 0 else
                       f'Analysis.\n{{ "behaviour": ["{self.TAGS[tagged[0] % 4]}"] }}')
        return {"id": f"stub-{self.requests}", "object": "chat.completion", "created": 0, "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}

    GEMINI_POLICY = ("v2's judge (Gemini generateContent): one event per run of Channel B's timestamped segments in "
                     "the prompt (a gap over 1.5 s starts another), TT, IF and the task-specific score 1 + a byte of "
                     "SHA-256 of the prompt mod 5; the first answer to each prompt inside a ```json fence, as models "
                     "often answer; no candidate at all (as a safety block answers) for a prompt holding NO_ANSWER; "
                     "404 for the model UNKNOWN_MODEL")
    NO_ANSWER = "fdbu-stub: no answer"
    UNKNOWN_MODEL = "fdbu-stub-unknown-model"
    SEGMENT = re.compile(r"^\[(\d+(?:\.\d+)?), (\d+(?:\.\d+)?)\]: ", re.M)

    def gemini(self, body: dict) -> dict:
        prompt = body["contents"][0]["parts"][0]["text"]
        digest = hashlib.sha256(prompt.encode()).digest()
        self.requests += 1
        if self.NO_ANSWER in prompt:
            return {"candidates": [], "promptFeedback": {"blockReason": "SAFETY"}}
        count = self.seen[prompt] = self.seen.get(prompt, 0) + 1
        b_part = prompt.split("Channel B (Examinee) segments with timestamps:", 1)[-1]
        runs: list[list[float]] = []
        for m in self.SEGMENT.finditer(b_part):
            start, end = float(m.group(1)), float(m.group(2))
            if runs and start - runs[-1][1] <= 1.5:
                runs[-1][1] = end
            else:
                runs.append([start, end])
        events = [[run, 1 + digest[2 * k % 32] % 5, 1 + digest[(2 * k + 1) % 32] % 5] for k, run in enumerate(runs)]
        text = json.dumps({"Turn-taking event and score": events, "Task-specific score": 1 + digest[31] % 5})
        if count == 1:
            text = f"```json\n{text}\n```"
        return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}]}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
