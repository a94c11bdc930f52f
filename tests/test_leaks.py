"""tests/leaks.py catches a test that leaves its worker changed (issue 78): a real pytest run over tests that each leak
one thing fails each of them naming it, and the test after a leak starts as if there had been none."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

INNER = '''
import ctypes, logging, os, signal, sys, time, warnings

import numpy as np
import pytest


def test_a_sigint_handler_left_ignored():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_after_it_ctrl_c_interrupts_again():
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)


def test_a_signal_ignored_by_c_code_left_so():
    ctypes.CDLL(None).signal(signal.SIGUSR1, ctypes.c_void_p(1))  # SIG_IGN, past Python's signal module


def test_after_it_the_kernel_delivers_it_again():
    with open("/proc/self/status") as f:
        ignored = next(int(line.split()[1], 16) for line in f if line.startswith("SigIgn:"))
    assert not ignored >> (signal.SIGUSR1 - 1) & 1


def test_an_environment_variable_left_set():
    os.environ["FDBU_LEAKED"] = "1"


def test_a_working_directory_left_changed(tmp_path):
    os.chdir(tmp_path)


def test_a_root_logging_handler_left_behind():
    logging.getLogger().addHandler(logging.NullHandler())


def test_numpy_error_state_left_raising():
    np.seterr(all="raise")


def test_sys_path_left_longer():
    sys.path.append("/nowhere")


def test_a_warnings_filter_left_behind():
    warnings.simplefilter("error")


def test_monkeypatch_undone_is_no_leak(monkeypatch, tmp_path):
    monkeypatch.setenv("FDBU_PATCHED", "1")
    monkeypatch.chdir(tmp_path)


def test_after_them_all_the_process_is_as_it_was():
    assert "FDBU_LEAKED" not in os.environ and "/nowhere" not in sys.path
    assert not [h for h in logging.getLogger().handlers if type(h) is logging.NullHandler]
    assert np.geterr()["divide"] != "raise"
    warnings.warn("pytest's warnings plugin put the filters back", UserWarning)  # not raised
'''


def test_a_leak_fails_the_test_that_made_it_naming_it_and_the_next_test_starts_clean(tmp_path):
    """The inner run starts with Ctrl-C ignored, as a background job of a non-interactive shell does (`make test &` in
    a script): the plugin gives Python's handler back, so the tests of Ctrl-C see one (issue 78's failing test)."""
    import signal

    (tmp_path / "test_inner.py").write_text(INNER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS"):  # the outer run's (--order-seed is conftest's option)
        env.pop(name, None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "leaks", "-p", "no:randomly", "-p", "no:cacheprovider",
                          "-c", os.devnull, "--rootdir", str(tmp_path), "-W", "default", "test_inner.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    said = {
        "test_a_sigint_handler_left_ignored": "the SIGINT handler changed: <built-in function default_int_handler> "
                                              "-> <Handlers.SIG_IGN: 1>",
        "test_an_environment_variable_left_set": "os.environ['FDBU_LEAKED'] set to '1'",
        "test_a_working_directory_left_changed": "the working directory changed",
        "test_a_root_logging_handler_left_behind": "the root logger's handlers changed",
        "test_numpy_error_state_left_raising": "numpy's error state changed",
        "test_sys_path_left_longer": "sys.path changed",
        "test_a_signal_ignored_by_c_code_left_so": "the ignored signals changed: added ['SIGUSR1']",
    }
    for test, line in said.items():
        assert f"test_inner.py::{test} left the process changed:\n  {line}" in out, (test, out)
    assert "ERROR test_inner.py::test_a_warnings_filter_left_behind" not in out
    assert "ERROR test_inner.py::test_monkeypatch_undone_is_no_leak" not in out
    assert f"{len(said)} errors" in out.splitlines()[-1] and "12 passed" in out.splitlines()[-1], out
