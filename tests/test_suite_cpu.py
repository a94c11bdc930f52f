"""benchmarks/suite_cpu.py, the suite's CPU account (issue 78): a test's own CPU and its reaped children's land in its
row, and the summary adds them up by file."""
import json
import subprocess
import sys
import time
from types import SimpleNamespace

from benchmarks import suite_cpu


def test_a_tests_own_cpu_and_its_childrens_are_its_row(tmp_path, monkeypatch):
    out = tmp_path / "cpu.jsonl"
    monkeypatch.setenv(suite_cpu.OUT, str(out))
    around = suite_cpu.pytest_runtest_protocol(SimpleNamespace(nodeid="tests/test_x.py::test_busy"), None)
    next(around)
    end = time.process_time() + 0.2
    while time.process_time() < end:  # 0.2 s of this process's CPU
        pass
    subprocess.run([sys.executable, "-c", "import time\nend = time.process_time() + 0.3\n"
                    "while time.process_time() < end: pass"], check=True)  # 0.3 s of a child's, reaped
    next(around, None)
    row, = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["test"] == "tests/test_x.py::test_busy"
    assert 0.2 <= row["self_s"] < 1.0 and 0.3 <= row["children_s"] < 1.5 and row["wall_s"] >= 0.5


def test_the_summary_adds_each_files_tests(tmp_path):
    rows = [("tests/test_a.py::one", 1.0, 2.0), ("tests/test_a.py::two", 0.5, 0.0), ("tests/test_b.py::three", 4.0, 0.0)]
    path = tmp_path / "cpu.jsonl"
    path.write_text("".join(json.dumps({"test": t, "self_s": s, "children_s": c, "wall_s": 9.0, "worker": "gw0"}) + "\n"
                            for t, s, c in rows))
    text = suite_cpu.summary(str(path))
    assert text.splitlines()[0] == "3 tests, 8 s of CPU (worker 6 s, children 2 s)"
    files = [line.split() for line in text.splitlines()[3:5]]
    assert files == [["4.0", "53.3%", "1", "tests/test_b.py", "(4.0", "+", "0.0)"],
                     ["3.5", "46.7%", "2", "tests/test_a.py", "(1.5", "+", "2.0)"]]
    assert text.splitlines()[-1].endswith("tests/test_a.py::two")  # the dearest tests, dearest first
