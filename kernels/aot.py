"""The kernels compiled ahead of time, so a run does not import numba (1.1 s and 170 MB a process) to call them.

    python -m fdbu.common.compile_kernels    # `make install` runs it; it writes _compiled*.so and _compiled.json here

This module loads and dispatches to the build; `fdbu/common/compile_kernels.py` makes it (it runs fdbu's stages, so it
lives above them).

Which types: those a run really passes. The build runs fdbu's stages on small synthetic trees of every subset of
both releases (score with every view, compare, a sweep) with the JIT kernels, records every signature each kernel
was compiled for, and exports each one with numba.pycc (`_compiled.<kernel>__<k>`). A call uses an export whose
argument types are exactly the call's (`key`: numba's own name of each argument's type); anything else, and
everything while the kernels' sources no longer hash to what the build was made from, goes to the JIT kernel
(compiled once and cached, as before). Both are the same numba code: the tests compare them on every kernel.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODULE = "_compiled"
RECORD = HERE / f"{MODULE}.json"
SOURCES = ("results.py", "bootstrap.py", "outcomes.py", "segments.py")
KERNELS = {"bootstrap": ("resample_ratios", "ranked", "resample_ranked", "paired_ratio_differences",
                         "ranked_difference", "paired_ranked_differences"),
           "outcomes": ("pause_components", "turn_taking_outcomes", "interruption_outcomes", "overlap_run",
                        "run_overlap_us", "cue_timing", "window_speech"),
           "segments": ("speech_segments",)}


CHOICES = {"compiled": "the default: the kernels built ahead, JIT-compiled where none was built",
           "jit": "numba's JIT kernels always"}


def choice(value: str | None) -> str:
    """FDBU_KERNELS's value (unset or empty: compiled); any other value is refused, not read as the default."""
    if value in (None, ""):
        return "compiled"
    if value not in CHOICES:
        from fdbu.errors import FdbuError

        raise FdbuError("environment", None, f"FDBU_KERNELS={value!r}: "
                        + "; ".join(f"{k} ({v})" for k, v in CHOICES.items()) + ", or unset")
    return value


def sources_sha256() -> str:
    """What a build is valid for: the kernels' sources and numba's version."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((HERE / name).read_bytes())
    return h.hexdigest()


# the array element types the exports take, by dtype (in this machine's byte order): a dict lookup, where reading
# `dtype.name` is Python code in numpy 2 (4 us; a call through `dispatcher` read it twice an array)
ARRAY_TYPES = {np.dtype(name): name for name in ("int64", "int32", "float64", "float32", "bool")}


def key(x) -> str | None:
    """numba's name of the type `numba.typeof(x)` gives, for the kinds of argument the kernels take (None for any
    other kind, an array of the other byte order too: such a call goes to the JIT kernel)."""
    if isinstance(x, np.ndarray):
        name = ARRAY_TYPES.get(x.dtype)
        if name is None:
            return None
        flags = x.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return f"{'' if flags.writeable else 'readonly '}array({name}, {x.ndim}d, {layout})"
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, int):
        return "int64" if -2**63 <= x < 2**63 else None
    if isinstance(x, float):
        return "float64"
    if isinstance(x, (np.integer, np.floating)):
        return x.dtype.name
    return None


def load(record_path: Path = RECORD) -> tuple[object, dict[str, list[list[str]]]] | None:
    """(the compiled module, kernel -> the argument keys of each export), or None where there is no valid build: no
    record, one not for these sources (stale), or no module, quietly (the JIT kernels, as before any build); a record
    that is damaged (not what fdbu.common.compile_kernels writes, or naming exports the module lacks) said in a note."""
    import importlib

    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError):  # missing, truncated, not UTF-8
        return None
    if isinstance(record, dict) and record.get("sources") != sources_sha256():
        return None
    try:
        module = importlib.import_module(f"{__package__}.{MODULE}")
    except ImportError:
        return None
    problem = damaged(record.get("exports"), module) if isinstance(record, dict) else "it is not a JSON object"
    if problem:
        from fdbu.common.log import note

        note(f"fdbu: note: {record_path} is damaged ({problem}): the kernels run JIT-compiled (make install builds "
             "them again)")
        return None
    return module, record["exports"]


def damaged(exports, module) -> str | None:
    """What is wrong with a record's exports (kernel -> a list of each export's argument types) against the built
    module, or None."""
    if not isinstance(exports, dict):
        return "its exports are not a mapping of kernel to signatures"
    kernels = {name for names in KERNELS.values() for name in names}
    for name, signatures in exports.items():
        if name not in kernels:
            return f"{name!r} is no kernel"
        if not isinstance(signatures, list) or not all(
                isinstance(sig, list) and all(isinstance(t, str) for t in sig) for sig in signatures):
            return f"{name}'s exports are not lists of type names"
        for k in range(len(signatures)):
            if not callable(getattr(module, f"{name}__{k}", None)):
                return f"{name}'s export {k} is not in the built module"
    return None


def dispatcher(name: str, jit, compiled):
    """`name` called through an export matching the call's argument types, else through `jit()` (the JIT kernel,
    imported on first need)."""
    module, exports = compiled
    table = {tuple(keys): getattr(module, f"{name}__{k}") for k, keys in enumerate(exports.get(name, []))}

    def call(*args):
        fn = table.get(tuple([key(a) for a in args]))
        return fn(*args) if fn is not None else jit()(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"The kernel {name}, compiled ahead (kernels/aot.py) where the call's types were built."
    return call
