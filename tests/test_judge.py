"""The interruption judge over real HTTP: a local OpenAI-compatible server on loopback."""
import json
import re
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from fdbu.errors import FdbuError
from fdbu.official.evaluate import LEDGER, evaluate, write
from fdbu.official.summary import reference_column
from fdbu.official.judge import Judge, load_official
from fdbu.official.rules import Verdict
from official_scripts import OFFICIAL, needs_official

# A stand-in for the official script with the same shape (written here, not copied): fdbu
# reads the prompt, MODEL_NAME, seed and reply pattern out of whatever checkout it is given.
SCRIPT = '''
import re


def parse_output(data):
    example_pattern = re.compile(
        r"Analysis:\\s*(.*?)\\nI would rate the AI's response as (\\d+)", re.DOTALL
    )


def eval_user_interruption(root_dir, client):
    MODEL_NAME = "judge-of-record"
    seed = 0
    system_msg = """Rate the reply to the interruption from 0 to 5."""
    user_msg = f"""
    - Context: {in_before_interrupt_text}
    - Interruption: {in_interrupt_text}
    - Reply: {out_after_interrupt_text}
    """
'''


@pytest.fixture()
def checkout(tmp_path):
    path = tmp_path / "fdb" / "v1_v1.5" / "evaluation" / "eval_user_interruption.py"
    path.parent.mkdir(parents=True)
    path.write_text(SCRIPT)
    return tmp_path / "fdb"


class Server:
    """Replies from a script: each request pops the next (status, content) pair."""

    def __init__(self, replies):
        self.replies, self.requests = list(replies), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, self.headers.get("Authorization"), body))
                status, content = outer.replies.pop(0) if outer.replies else (500, "")
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *a):
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def close(self):
        self.httpd.shutdown()


def test_prompt_and_parsing_come_from_the_checkout(checkout):
    p = load_official(checkout)
    assert p.model == "judge-of-record" and p.seed == 0 and p.system_msg.startswith("Rate the reply")
    assert p.user("ctx", "stop!", "ok") == "\n    - Context: ctx\n    - Interruption: stop!\n    - Reply: ok\n    "
    assert p.parse("Analysis: fine.\nI would rate the AI's response as 4") == 4
    assert p.parse("no rating") is None


def test_pins_are_checked(checkout):
    with pytest.raises(FdbuError, match="eval_user_interruption.py: SHA-256 differs from fdbu's pins"):
        load_official(checkout, {"eval_user_interruption.py": "0" * 64})
    assert load_official(checkout, {"eval_user_interruption.py": "0" * 64}, allow_unpinned=True).model
    with pytest.raises(FdbuError, match="eval_user_interruption.py: is not in"):
        load_official(checkout / "nowhere")


def test_success_malformed_and_failure(checkout):
    server = Server([(200, "Analysis: relevant.\nI would rate the AI's response as 5"),
                     (200, "I refuse to use the format"), (200, "Analysis: meh.\nI would rate the AI's response as 2"),
                     (500, ""), (500, ""), (200, "still no rating")])
    try:
        judge = Judge(server.url, "other-judge", "sk-test", load_official(checkout), max_attempts=3, backoff_s=0)
        assert judge.rate("a", "ctx", "wait", "sure") == Verdict(5, 0, 1)
        assert judge.rate("b", "ctx", "wait", "sure") == Verdict(2, 1, 2)   # malformed once, then parsed
        # 500, 500, unparsable: no rating; only the reply that came back counts as one without a rating
        assert judge.rate("c", "ctx", "wait", "sure") == Verdict(None, 1, 3)
    finally:
        server.close()
    assert [e["status"] for e in judge.ledger] == ["rated", "unparsable", "rated", "failed", "failed", "unparsable"]
    path, auth, body = server.requests[0]
    assert path == "/v1/chat/completions" and auth == "Bearer sk-test"
    assert body["model"] == "other-judge" and body["seed"] == 0 and body["messages"][0]["role"] == "system"
    assert "- Reply: sure" in body["messages"][1]["content"]


def test_evaluate_with_a_judge_labels_it_and_keeps_a_ledger(checkout, synth_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    server = Server([(200, "Analysis: x.\nI would rate the AI's response as 3")] * 200)
    try:
        judge = Judge(server.url, "other-judge", None, load_official(checkout), backoff_s=0)
        result = evaluate(tree, judge=judge)
        write(result, tree, judge.ledger)
    finally:
        server.close()
    ui = result["subsets"]["synthetic_user_interruption"]
    assert ui["rating"] == 3.0 and ui["judge_failed_samples"] == []
    assert len(server.requests) == ui["takeovers"] > 0
    assert result["judge"]["model"] == "other-judge" and result["judge"]["official_model"] == "judge-of-record"
    ledger = [json.loads(x) for x in (tree / LEDGER).read_text().splitlines()]
    assert len(ledger) == ui["takeovers"] and all(e["status"] == "rated" for e in ledger)
    col = reference_column(tree, result["inputs"]["manifest.json"], result["inputs"]["asr.json"])
    assert "rating (other-judge) 3.000" in col


def test_a_judge_that_never_parses_leaves_the_reference_column_waiting(checkout, synth_tree, tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    server = Server([(200, "no rating here")] * 200)
    try:
        judge = Judge(server.url, "judge-of-record", None, load_official(checkout), max_attempts=2, backoff_s=0)
        result = evaluate(tree, judge=judge)
        write(result, tree, judge.ledger)
    finally:
        server.close()
    ui = result["subsets"]["synthetic_user_interruption"]
    assert len(server.requests) == 2 and ui["judge_failed_samples"] == [judge.ledger[0]["sample_id"]]
    assert ui["rating"] == ui["take_turn_rate"] == ui["latency_s"] and "waiting" in ui["rating"]
    col = reference_column(tree, result["inputs"]["manifest.json"], result["inputs"]["asr.json"])
    assert (f"rating waiting: the official script would still be asking the judge about "
            f"{judge.ledger[0]['sample_id']}") in col and "2 attempts" in col


def test_a_judge_that_answers_nothing_readable_is_a_failed_run_and_no_reply_is_kept_whole(checkout, synth_tree, tmp_path):
    """Replies larger than 1 MiB are not read past it and not kept (80 MB replies grew the ledger to 335 MB, issue 76);
    a judge that answered none of fdbu's requests (every one failed) is a refusal in one line naming the first error,
    not a run that exits 0 with everything waiting; nothing is written."""
    tree = tmp_path / "t"
    shutil.copytree(synth_tree, tree)
    server = Server([(200, "x" * (2 << 20))] * 20)
    try:
        judge = Judge(server.url, "judge-of-record", None, load_official(checkout), max_attempts=2, backoff_s=0)
        with pytest.raises(FdbuError, match=r"^evaluate.judge: the judge at http://127.0.0.1:\d+/v1 answered none of "
                                            r"fdbu's 2 requests \(the first: ValueError: the reply is larger than 1 MiB: "
                                            r"not a judge's answer\); nothing was written"):
            evaluate(tree, judge=judge)
    finally:
        server.close()
    assert len(server.requests) == 2 and all("reply" not in e for e in judge.ledger)
    assert len(json.dumps(judge.ledger)) < 100_000 and not (tree / "summary.json").exists()


@needs_official
def test_the_real_official_checkout_parses():
    p = load_official(OFFICIAL)
    assert p.model == "gpt-4-turbo" and p.seed == 0 and p.pattern.flags & re.DOTALL
    assert p.user("a", "b", "c") == ("\n                - Contextual user turn: a\n                - User interrupting "
                                     "turn: b\n                - AI's response: c\n                ")
    assert p.parse("Analysis: x.\nI would rate the AI's response as 4.") == 4


@pytest.mark.parametrize("model", ["../../x?y=1#", "gemini 2.5", "a/b/c", "x#frag", "..", "gpt-4\n"])
def test_a_judge_model_is_a_name_not_a_path_or_a_query(tmp_path, model):
    """v2's script puts the model into the request's URL with the key in a header: `../../x?y=1#` would send the key
    to another path (issue 76). Refused in one line before anything is read; real names pass the check."""
    from builders import fdbu_main

    out = fdbu_main("evaluate", f"tree={tmp_path / 'none'}", "evaluate.judge.base_url=http://127.0.0.1:9",
                    f"evaluate.official_checkout={tmp_path}", f"evaluate.judge.model={model!r}")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "evaluate.judge.model" in lines[0] and "a model's name" in \
        lines[0], out.stderr
    from fdbu.config.store import JudgeConfig

    for fine in ("gemini-2.5-pro", "gpt-4-turbo", "meta-llama/Llama-3.1-8B-Instruct", "gpt-4o-2024-08-06",
                 "models:gemini@001"):
        assert JudgeConfig(model=fine).model == fine
