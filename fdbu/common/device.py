"""Where work runs: the torch device, the CPU cores actually free to this process, and a device's identity.

Speech detection and ASR both run on a device chosen by `device=cpu|cuda|auto`. On a shared
node, threads that wait on each other under load throw a batched speed-up away, so the
default thread count is the number of cores this process may use (affinity, cgroup quota)
that are idle right now, measured over a short interval from /proc/stat.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import glob
import importlib
import importlib.util
import math
import os
import platform
import signal
import sys
import threading
import time
from pathlib import Path

from ..errors import FdbuError


@contextlib.contextmanager
def interrupts_held():
    """Ctrl-C held until the block ends, then delivered: a KeyboardInterrupt raised while torch's C++ (pybind11)
    runs its import calls back into Python aborts the process (std::terminate) instead of unwinding, so torch and
    the packages that import it are imported inside this, when a run first needs them (a run served from the cache
    never does)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: held.append(1))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        signal.raise_signal(signal.SIGINT)


def held_import(name: str):
    """The module `name` (torch, or a package that imports it), imported with Ctrl-C held (`interrupts_held`)."""
    if name not in sys.modules:
        with interrupts_held():
            importlib.import_module(name)
    return sys.modules[name]


def load_torch():
    """torch, imported with Ctrl-C held (`interrupts_held`)."""
    return held_import("torch")


def package_folder(name: str) -> Path:
    """Where an installed package lives, found without importing it (torch, and silero_vad, which imports torch)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FdbuError("vad", None, f"the package {name} is not installed: pip install -e . installs it")
    return Path(list(spec.submodule_search_locations)[0])


@functools.lru_cache(maxsize=1)
def _torch_literals() -> dict:
    """Every name torch's own version.py assigns a literal (`__version__`, `cuda`, `hip`), the file parsed once,
    without importing torch; empty where torch is missing or laid out otherwise."""
    out: dict = {}
    try:
        for node in ast.parse((package_folder("torch") / "version.py").read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name):
                        out[t.id] = node.value.value
    except (OSError, SyntaxError, ValueError, FdbuError):
        pass
    return out


def torch_literal(name: str):
    """A constant of torch's own version.py (what the build is), read without importing torch; LookupError when the
    file does not assign it a literal."""
    literals = _torch_literals()
    if name not in literals:
        raise LookupError(name)
    return literals[name]


# what a GPU driver makes: CUDA's device files (and its kernel module's /proc entry), NVIDIA Jetson's integrated GPU's,
# WSL's, ROCm's
GPU_FILES = ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/nvhost-ctrl-gpu", "/dev/nvmap", "/dev/dxg",
             "/dev/kfd")
GPU_GLOBS = ("/dev/nvidia[0-9]*", "/dev/nvgpu*")
GPU_VENDORS = ("0x10de", "0x1002")  # NVIDIA, AMD (PCI vendor ids)
PCI = Path("/sys/bus/pci/devices")


def gpu_on_the_bus() -> bool:
    """An NVIDIA or AMD display-class device (PCI class 0x03xxxx) on the PCI bus, or a bus that cannot be read
    (then: perhaps). The driver may make its device files only at the first CUDA call (nvidia-modprobe), so their
    absence alone does not tell; a GPU on the bus does."""
    try:
        for dev in PCI.iterdir():
            if (dev / "vendor").read_text().strip() in GPU_VENDORS and (dev / "class").read_text().startswith("0x03"):
                return True
    except OSError:
        return True
    return False


def no_gpu() -> bool:
    """True when torch cannot see a GPU, told without importing it (2 s of a small job): a torch built for neither
    CUDA nor ROCm, or a machine with no NVIDIA or AMD GPU on its PCI bus and none of the files a GPU driver makes
    (`GPU_FILES`, `GPU_GLOBS`: CUDA's, Jetson's integrated GPU's, WSL's, ROCm's). False means only "ask torch"."""
    try:
        if torch_literal("cuda") is None and torch_literal("hip") is None:
            return True
    except LookupError:
        pass
    return (not any(os.path.exists(f) for f in GPU_FILES) and not any(glob.glob(g) for g in GPU_GLOBS)
            and not gpu_on_the_bus())


def resolve_device(device: str) -> str:
    """cpu, cuda, or auto (the GPU when torch sees one). cpu is answered without loading torch, and so is auto
    where no GPU can be seen (`no_gpu`)."""
    if device not in ("auto", "cpu", "cuda"):
        raise FdbuError("config", None, f"device={device!r}; choose cpu, cuda or auto")
    if device == "cpu" or (device == "auto" and no_gpu()):
        return "cpu"
    torch = load_torch()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise FdbuError("config", None, "device=cuda but torch sees no CUDA device; use device=cpu or auto")
    return device


THREAD_LIMITS = ("OMP_NUM_THREADS", "SLURM_CPUS_PER_TASK")


def allowed_cores() -> int:
    """Cores this process may run on: its CPU affinity, capped by a cgroup v2 CPU quota and by a
    thread limit set for it (OMP_NUM_THREADS, or a SLURM task's SLURM_CPUS_PER_TASK where the
    cluster does not bind tasks to cores)."""
    cores = len(os.sched_getaffinity(0))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    for name in THREAD_LIMITS:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) >= 1:
            cores = min(cores, int(value))
    return cores


def _idle_jiffies(cpus: set[int]) -> dict[int, tuple[int, int]]:
    """cpu -> (idle + iowait, total) jiffies from /proc/stat."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            values = [int(v) for v in fields]
            out[int(name[3:])] = (values[3] + (values[4] if len(values) > 4 else 0), sum(values[:8]))
    return out


def free_cores(interval_s: float = 0.1) -> int:
    """Cores idle right now among those this process may use (at least 1).

    The sum over the allowed CPUs of their idle share over `interval_s`, rounded, capped by
    `allowed_cores()` (a CPU with no tick in the interval counts as idle). Without /proc/stat (not Linux) it is
    `allowed_cores()`.
    """
    before = idle_sample()
    if before is None:
        return allowed_cores()
    time.sleep(interval_s)
    after = idle_sample()
    if after is None:
        return allowed_cores()
    idle, unticked = _idle(before, after)
    return max(1, min(allowed_cores(), round(idle + unticked)))


def idle_sample() -> dict[int, tuple[int, int]] | None:
    """The allowed CPUs' idle and total jiffies now, for `idle_since`; None without /proc/stat (not Linux)."""
    try:
        return _idle_jiffies(os.sched_getaffinity(0))
    except (OSError, ValueError, AttributeError):
        return None


def idle_since(before: dict[int, tuple[int, int]] | None, wait_s: float = 0.03) -> float | None:
    """Cores' worth of idle time among the allowed CPUs since `before` (an `idle_sample`): 1.0 is one core idle all
    along, or two half the time. Where no clock tick has passed since (a tick is 4-10 ms), measured again after
    `wait_s`. None where it cannot be known: no sample, no /proc/stat, still no tick."""
    if before is None:
        return None
    for pause in (0.0, wait_s):
        time.sleep(pause)
        after = idle_sample()
        if after is None:
            return None
        idle, unticked = _idle(before, after)
        if unticked < len(after):
            return idle
    return None


def _idle(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> tuple[float, int]:
    """(the idle shares summed over the CPUs that ticked between the samples, the number that did not)."""
    idle, unticked = 0.0, 0
    for cpu, (i1, t1) in after.items():
        i0, t0 = before.get(cpu, (i1, t1))
        if t1 > t0:
            idle += (i1 - i0) / (t1 - t0)
        else:
            unticked += 1
    return idle, unticked


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def identity(device: str, threads: int | None = None) -> dict:
    """What float results on this device can depend on: the hardware and the kernels torch dispatches to.

    CPU: model name, architecture, the instruction set torch's CPU kernels use, and the thread
    count (reduction splits can follow it). GPU: name, compute capability, CUDA and cuDNN versions.
    """
    torch = load_torch()

    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        return {"type": "cuda", "name": props.name, "capability": f"{props.major}.{props.minor}",
                "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(), "torch": torch.__version__}
    return {"type": "cpu", "name": cpu_model(), "machine": platform.machine(),
            "capability": torch.backends.cpu.get_cpu_capability(), "threads": threads, "torch": torch.__version__}


def describe(ident: dict) -> str:
    """One short phrase for the console: `cpu AMD EPYC (AVX2, 2 threads)` or `cuda NVIDIA H200 (sm 9.0)`."""
    if ident["type"] == "cuda":
        return f"cuda {ident['name']} (sm {ident['capability']}, CUDA {ident['cuda']})"
    threads = ident["threads"]
    return f"cpu {ident['name']} ({ident['capability']}, {threads} thread{'' if threads == 1 else 's'})"
