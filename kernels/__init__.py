"""numba kernels: the metric math as pure functions over flat integer arrays.

This folder sits at the top of the repository (the layout ARCHITECTURE.md describes) and installs as
`fdbu.kernels`: pyproject.toml maps it there (`package-dir`), so both an editable and a
regular install import it as `fdbu.kernels`, never as `kernels`. Every sample of a subset is processed in one call:
per-sample variable-length data (word starts and ends, pauses, speech segments)
are concatenated, and `off[i]:off[i+1]` selects sample i's part. All times are
int64 microseconds; `INF` stands for +infinity (a latency that never happened).
"""
import os as _os
import typing as _typing


def _numba_cache_dir() -> None:
    """Compiled kernels are cached beside this file; where it is read-only (a system-wide install
    used by another account), numba would refuse to import them, so they go to fdbu's cache root,
    or to a private temporary folder when even that cannot be written."""
    from numba.core import config

    # numba's config sets CACHE_DIR at run time (from the environment), out of mypy's sight
    if config.CACHE_DIR or _os.access(_os.path.dirname(__file__), _os.W_OK):  # type: ignore[attr-defined]
        return
    import tempfile

    from fdbu.common.cachedir import cache_root

    for folder in (cache_root() / "numba", _os.path.join(tempfile.gettempdir(), f"fdbu-numba-{_os.getuid()}")):
        try:
            _os.makedirs(folder, mode=0o700, exist_ok=True)
            if _os.access(folder, _os.W_OK):
                config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]  # see above
                return
        except OSError:
            continue


from . import aot as _aot  # noqa: E402
from .results import (INF, EARLY_START, NO_RESPONSE, NOT_EXERCISED, RESPONSE, SPEAKING_AT_END, CueTiming,  # noqa: E402
                      InterruptionOutcomes, OverlapRun, PauseComponents, Resampled, Segments, TurnTakingOutcomes,
                      WindowSpeech)

# the kernels compiled ahead (kernels/aot.py), while the sources are what they were built from; FDBU_KERNELS=jit
# uses numba's JIT kernels instead (the tests compare the two)
_COMPILED = None if _aot.choice(_os.environ.get("FDBU_KERNELS")) == "jit" else _aot.load()


def _jit(module: str, name: str):
    """The JIT kernel, imported (with numba) on first need: a call no ahead-compiled signature matches."""
    def get():
        import importlib

        _numba_cache_dir()
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return get


if _typing.TYPE_CHECKING:  # the kernels' types, for mypy (at run time each name is bound below)
    from .bootstrap import (paired_ranked_differences, paired_ratio_differences, ranked,  # noqa: F401
                            ranked_difference, resample_ranked, resample_ratios)
    from .outcomes import (interruption_outcomes, overlap_run, pause_components, run_overlap_us,  # noqa: F401
                           turn_taking_outcomes, cue_timing, window_speech)
    from .segments import speech_segments  # noqa: F401


def _lazy(name: str, jit):
    """`name` called through its JIT kernel, imported on the first call: importing fdbu (a command's --help, its
    config) imports no numba, whichever kernels are used."""
    kernel: list = []

    def call(*args):
        if not kernel:
            kernel.append(jit())
        return kernel[0](*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"The kernel {name}, JIT-compiled by numba on its first call (FDBU_KERNELS=jit, or no build)."
    return call


for _module, _names in _aot.KERNELS.items():
    for _name in _names:
        globals()[_name] = (_lazy(_name, _jit(_module, _name)) if _COMPILED is None
                            else _aot.dispatcher(_name, _jit(_module, _name), _COMPILED))

__all__ = [
    "INF", "EARLY_START", "RESPONSE", "NO_RESPONSE", "NOT_EXERCISED", "SPEAKING_AT_END",
    "pause_components", "turn_taking_outcomes", "interruption_outcomes", "overlap_run", "run_overlap_us", "cue_timing",
    "window_speech",
    "ranked", "resample_ranked", "resample_ratios", "speech_segments",
    "paired_ratio_differences", "paired_ranked_differences", "ranked_difference",
    "PauseComponents", "TurnTakingOutcomes", "InterruptionOutcomes", "OverlapRun", "CueTiming", "WindowSpeech", "Segments",
    "Resampled",
]
