"""`python -m fdbu.common.compile_kernels`: the numba kernels compiled ahead of time (`fdbu.kernels.aot` loads them).

`make install` runs it, and `make test` and `make demo` again whenever a kernel's source changes. It runs fdbu's
stages on small synthetic trees of every subset of both releases (score with every view, compare, a sweep) with
the JIT kernels, records every signature each kernel was compiled for, exports each with numba.pycc, and records
them with the sources' hash in `_compiled.json` beside the kernels.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..kernels.aot import HERE, KERNELS, MODULE, RECORD, sources_sha256


def _workload(root: Path) -> None:
    """fdbu's stages on small trees of every subset, the JIT kernels compiling for the types a run passes."""
    from .. import tasks
    from ..metrics.stats import Bootstrap
    from ..comparison.pairwise import compare
    from ..comparison.systems import load as load_system
    from ..scoring.pipeline import Views, score_path
    from ..config.settings import grid
    from ..scoring.sweep import sweep
    from ..synth.trees import synthesize
    from ..scoring.unified import write
    from ..vad import SpeechDetector
    from ..views import fdbench, videofdb

    views = Views(("fdbench", "videofdb"), {"fdbench": fdbench.Settings(), "videofdb": videofdb.Settings()})
    boot = Bootstrap()
    for family in tasks.FAMILIES.values():  # each release's subsets, a mixed system and its first one
        trees = [synthesize(root / f"{family.name}-{system}", n=6, seed=0, system=system, family=family.name)
                 for system in ("mixed", family.systems[0])]
        for tree in trees:
            detector = SpeechDetector(backend="batched", device="cpu", cache=False, margin=1e-3, threads=1)
            write(score_path(tree, detector, boot, views=views), tree)
        compare([load_system(t, t.name) for t in trees])
        detector = SpeechDetector(backend="batched", device="cpu", cache=False, margin=1e-3, threads=1)
        sweep(trees[:1], detector, boot, grid([0.4, 0.5], [100, 200]))


def build(out: Path = HERE) -> Path:
    """Compile every signature the workload used into `out`/_compiled*.so, and record them in _compiled.json."""
    import tempfile

    from numba import types
    from numba.pycc import CC

    from ..kernels import bootstrap, outcomes, segments

    with tempfile.TemporaryDirectory(prefix="fdbu-aot-") as work:
        _workload(Path(work))
    cc = CC(MODULE)
    cc.output_dir = str(out)
    exports: dict[str, list[list[str]]] = {}
    modules = {"bootstrap": bootstrap, "outcomes": outcomes, "segments": segments}
    for mod, names in KERNELS.items():
        for name in names:
            kernel = getattr(modules[mod], name)
            for argtypes, overload in sorted(kernel.overloads.items(), key=lambda kv: str(kv[0])):
                if any(isinstance(t, types.Array) and t.layout not in "CA" for t in argtypes):
                    continue
                exports.setdefault(name, []).append([str(t) for t in argtypes])
                cc.export(f"{name}__{len(exports[name]) - 1}", overload.signature)(kernel.py_func)
    missing = [n for names in KERNELS.values() for n in names if n not in exports]
    if missing:
        raise SystemExit(f"fdbu.common.compile_kernels: the workload did not call {missing}")
    cc.compile()
    (out / RECORD.name).write_text(json.dumps({"sources": sources_sha256(), "exports": exports}, indent=1))
    return out


def main() -> int:
    if not os.access(HERE, os.W_OK):
        print(f"fdbu.common.compile_kernels: {HERE} is not writable: the kernels stay JIT-compiled (and cached)", file=sys.stderr)
        return 0
    from .. import kernels

    if kernels._COMPILED is not None:  # a valid build is loaded (a kernel's module other than the sources changed):
        # the workload must run the JIT kernels to record their signatures, so the build runs in a process without it
        return subprocess.run([sys.executable, "-m", __spec__.name], env={**os.environ, "FDBU_KERNELS": "jit"}).returncode
    build()
    n = sum(len(v) for v in json.loads(RECORD.read_text())["exports"].values())
    print(f"fdbu.common.compile_kernels: {n} kernel signatures compiled ahead into {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
