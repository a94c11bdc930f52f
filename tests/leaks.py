"""A test that leaves the process changed fails, naming what it changed (issue 78).

Tests share their worker process, and which files share one depends on timing: a signal handler, an environment
variable, a working directory, a logging handler or level, torch's or numpy's global settings or `sys.path` left
behind by one test changes what the next one runs in, so a suite that passes on one machine fails on another. This
plugin (loaded by conftest.py) takes a snapshot of that state when each test's setup starts and compares it when its
teardown ends, after every fixture has been torn down (monkeypatch's undo included): a difference is an error of that
test, one line per changed item, and the state is put back so the next test starts clean.

A process started with Ctrl-C ignored (a background job of a non-interactive shell: `make test &` in a script, a CI
runner's step) passes the ignoring on to every process it starts, and Python then installs no handler of its own:
every test of what a Ctrl-C does would see nothing happen. `pytest_configure` gives the test process Python's own
handler back (the xdist workers and every process a test starts then begin with it), and the snapshot compares the
signals the kernel ignores for the process (SigIgn in /proc/self/status), which a library's C code can change
without Python's `signal.getsignal` seeing it.

Warnings filters are not compared: pytest's warnings plugin wraps each test's whole run in `catch_warnings`, so a
filter a test adds is gone before the next test starts (tests/test_leaks.py shows it).
"""
from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

import pytest

# Set once by a library's first import, in whichever test imports it first; the next test sees the same value whether
# or not it imports the library, so the value cannot make tests depend on their order. Each with where it comes from.
IMPORT_TIME_ENVIRONMENT = {
    "PYTEST_CURRENT_TEST": "pytest's own: the test and phase running",
    "KMP_DUPLICATE_LIB_OK": "threadpoolctl's import (threadpoolctl.py:83, setdefault 'True'; fdbu's CPU path uses it)",
    "TOKENIZERS_PARALLELISM": "NeMo, each time it builds a tokenizer (mixins.py:85-86, 'false' where unset); read only "
                              "by Hugging Face's tokenizers library, which fdbu does not use",
    # NeMo's ASR collection's first import, in whichever test loads it first outside an in-process command:
    "KMP_INIT_AT_FORK": "joblib's and scikit-learn's imports (joblib/__init__.py:163, setdefault 'FALSE')",
    "PYTORCH_NVML_BASED_CUDA_CHECK": "lightning's import (lightning/fabric/__init__.py:27, '1')",
    "TORCHINDUCTOR_CACHE_DIR": "torch inductor's first use (torch/_inductor/runtime/cache_dir_utils.py:17)",
}

_SIGNALS = (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM))


def import_time_path(entry: str) -> bool:
    """A sys.path entry a library's first import appends, in whichever test imports it first: torch.distributed's
    folder of the module it generates (`_remote_module_non_scriptable`, a new temporary folder per process) and
    lhotse's sph2pipe tools folder (lhotse/tools/env.py:24), both through NeMo's ASR collection."""
    return "/.lhotse/tools/" in entry or os.path.isfile(os.path.join(entry, "_remote_module_non_scriptable.py"))


def ignored_signals() -> frozenset[str]:
    """The signals the kernel ignores for this process, by name (empty where /proc is not Linux's)."""
    try:
        with open("/proc/self/status") as f:
            mask = next((int(line.split()[1], 16) for line in f if line.startswith("SigIgn:")), 0)
    except OSError:
        return frozenset()
    return frozenset(_name(n) for n in range(1, 65) if mask >> (n - 1) & 1)


def _name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def snapshot() -> dict[str, Any]:
    """The process-wide state a test may change, item by item (each a comparable value)."""
    state: dict[str, Any] = {}
    for name, number in _SIGNALS:
        state[f"the {name} handler"] = signal.getsignal(number)
    state["the blocked signals"] = frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, []))
    state["the ignored signals"] = ignored_signals()
    for key, value in os.environ.items():
        if key == "PATH":  # lhotse's import appends its sph2pipe folder (lhotse/tools/env.py:25)
            value = os.pathsep.join(p for p in value.split(os.pathsep) if not import_time_path(p))
        if key not in IMPORT_TIME_ENVIRONMENT:
            state[f"os.environ[{key!r}]"] = value
    try:
        state["the working directory"] = os.getcwd()
    except FileNotFoundError:  # removed under the process: itself a change
        state["the working directory"] = "(removed)"
    state["sys.path"] = tuple(p for p in sys.path if not import_time_path(p))
    root = logging.getLogger()
    state["the root logger's level"] = root.level
    state["the root logger's handlers"] = tuple(root.handlers)
    state["logging.disable"] = logging.root.manager.disable
    for name, logger in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):  # a logger made later by an import is new, not changed
            state[f"logger {name!r}"] = (logger.level, tuple(logger.handlers), logger.propagate, logger.disabled)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        if "silero_vad" in sys.modules:  # silero_vad's import sets one thread (silero_vad/model.py:3), in
            state["torch's thread count"] = torch.get_num_threads()  # whichever test imports it first
        state["torch's default dtype"] = torch.get_default_dtype()
        state["torch's grad mode"] = torch.is_grad_enabled()
        state["torch's deterministic algorithms"] = torch.are_deterministic_algorithms_enabled()
    numpy = sys.modules.get("numpy")
    if numpy is not None and hasattr(numpy, "geterr"):
        state["numpy's error state"] = tuple(sorted(numpy.geterr().items()))
        state["numpy's print options"] = tuple(sorted((k, repr(v)) for k, v in numpy.get_printoptions().items()))
    return state


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per item that differs (torch's and numpy's only where both snapshots have them: a test that imports
    either changes nothing by that; a logger only where it existed before)."""
    lines = []
    for key in before.keys() | after.keys():
        if key.startswith(("torch's", "numpy's", "logger ")) and not (key in before and key in after):
            continue
        if key not in after:
            lines.append(f"{key} removed (was {_short(before[key])})")
        elif key not in before:
            lines.append(f"{key} set to {_short(after[key])}")
        elif before[key] != after[key] and isinstance(before[key], (tuple, frozenset)) and \
                key in ("sys.path", "the root logger's handlers", "the ignored signals"):
            order = sorted if isinstance(after[key], frozenset) else list
            added = order(x for x in after[key] if x not in before[key])
            gone = order(x for x in before[key] if x not in after[key])
            lines.append(f"{key} changed: " + "; ".join(
                [*([f"added {_short(added)}"] if added else []), *([f"removed {_short(gone)}"] if gone else [])]
                or ["reordered"]))
        elif before[key] != after[key]:
            lines.append(f"{key} changed: {_short(before[key])} -> {_short(after[key])}")
    return sorted(lines)


def restore(before: dict[str, Any]) -> None:
    """Put back what a test changed, so that the tests after it start as they would have."""
    for name, number in _SIGNALS:
        if signal.getsignal(number) is not before[f"the {name} handler"]:
            signal.signal(number, before[f"the {name} handler"])
    signal.pthread_sigmask(signal.SIG_SETMASK, before["the blocked signals"])
    for name in ignored_signals() - before["the ignored signals"]:  # ignored by C code: Python's view set again
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, signal.getsignal(number) or signal.SIG_DFL)
    kept = {k: v for k, v in os.environ.items() if k in IMPORT_TIME_ENVIRONMENT}
    added = [p for p in os.environ.get("PATH", "").split(os.pathsep) if import_time_path(p)]
    os.environ.clear()
    os.environ.update({k[len("os.environ['"):-2]: v for k, v in before.items() if k.startswith("os.environ[")})
    os.environ.update(kept)
    if added and "PATH" in os.environ:
        os.environ["PATH"] = os.pathsep.join([os.environ["PATH"], *added])
    if before["the working directory"] != "(removed)":
        os.chdir(before["the working directory"])
    sys.path[:] = [*before["sys.path"], *(p for p in sys.path if import_time_path(p))]
    root = logging.getLogger()
    root.setLevel(before["the root logger's level"])
    root.handlers[:] = before["the root logger's handlers"]
    logging.disable(before["logging.disable"])
    for key, value in before.items():
        if key.startswith("logger "):
            logger = logging.getLogger(key[len("logger '"):-1])
            logger.level, handlers, logger.propagate, logger.disabled = value
            logger.handlers[:] = handlers
    logging.Logger.manager._clear_cache()
    torch = sys.modules.get("torch")
    if "torch's thread count" in before and torch is not None:
        torch.set_num_threads(before["torch's thread count"])
        torch.set_default_dtype(before["torch's default dtype"])
        torch.set_grad_enabled(before["torch's grad mode"])
        torch.use_deterministic_algorithms(before["torch's deterministic algorithms"])
    numpy = sys.modules.get("numpy")
    if "numpy's error state" in before and numpy is not None:
        numpy.seterr(**dict(before["numpy's error state"]))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


_BEFORE = pytest.StashKey[dict]()


def pytest_configure(config):
    """Ctrl-C handled by Python again in a process started with it ignored (the module's docstring)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    """Outermost: before any fixture (and outside pytest's per-phase log capture)."""
    item.stash[_BEFORE] = snapshot()
    return (yield)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    """Outermost: after every fixture's teardown; what differs fails this test's teardown, in one error."""
    result = yield
    before = item.stash.get(_BEFORE, None)
    if before is not None:
        found = changes(before, snapshot())
        if found:
            restore(before)
            pytest.fail(f"{item.nodeid} left the process changed:\n  " + "\n  ".join(found), pytrace=False)
    return result
