"""The packaged JIT model's weights as numpy arrays, read from its archive without torch.

A TorchScript archive is a zip file: `data.pkl` pickles the modules (their attributes; each tensor a
reference to a raw little-endian storage under `data/`). A restricted unpickler reads it: it builds
plain records for the `__torch__` module classes and float32 arrays for the tensors, and refuses any
other global, so nothing in the file is executed. The CPU's batched path computes with these arrays
(`batched_numpy.py`), so a run on a CPU that the guard never sends to the reference path loads no torch
(`import torch` is most of a shard's start-up). Every size is checked against the file's own before anything is
allocated (members stored as torch stores them, storages within the file, views within their storage), so a crafted
archive is a one-line refusal, never a MemoryError.
"""
from __future__ import annotations

import collections
import functools
import io
import math
import pickle
import zipfile
from pathlib import Path

import numpy as np

from ..errors import FdbuError


class Record(dict):
    """A pickled TorchScript module: its attributes by name (submodules are Records, tensors arrays); its class's
    `module` names the archive's code file that declares the class (its constants are not pickled)."""

    module = ""

    def __setstate__(self, state):
        self.update(state)


def _tensor(storage: np.ndarray, offset: int, size, stride, *_):
    """torch._utils._rebuild_tensor_v2: a view of the storage, copied (the archive is closed after reading). The view's
    every element must lie inside the storage: a view is memory the pickle points at, checked before it is made."""
    numbers = [offset, *size, *stride]
    if not (isinstance(storage, np.ndarray) and len(size) == len(stride)
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in numbers)):
        raise pickle.UnpicklingError(f"a tensor of offset {offset}, size {size}, stride {stride}")
    if math.prod(size) > len(storage):  # a view's copy is at most its storage, itself at most the archive's size
        raise pickle.UnpicklingError(f"a tensor of {math.prod(size)} elements over a storage of {len(storage)}")
    last = offset + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else offset - 1
    if last >= len(storage):
        raise pickle.UnpicklingError(f"a tensor reaching element {last} of a storage of {len(storage)}")
    view = np.lib.stride_tricks.as_strided(storage[offset:], tuple(size), tuple(4 * s for s in stride))
    return np.ascontiguousarray(view).copy()


@functools.lru_cache(maxsize=4)
def read(path: Path) -> Record:
    """The archive's top module as a Record (cached per process: the file is pinned by its SHA-256)."""
    try:
        with zipfile.ZipFile(path) as z:
            root = z.namelist()[0].split("/")[0]
            storages: dict = {}
            left = [path.stat().st_size]  # bytes the members read may still take: together at most the file's own

            def member(name: str) -> bytes:
                """A member as torch writes data.pkl and the storages, stored (uncompressed), so its bytes are in the
                file: checked before anything is allocated (a deflated member could unpack to any size)."""
                info = z.getinfo(name)
                if info.compress_type != zipfile.ZIP_STORED or info.file_size > left[0]:
                    raise pickle.UnpicklingError(f"{name}: {info.file_size} bytes, "
                                                 + ("compressed (torch stores these uncompressed)"
                                                    if info.compress_type != zipfile.ZIP_STORED else
                                                    f"more than the {left[0]} of the archive left to read"))
                left[0] -= info.file_size
                return z.read(info)

            class Unpickler(pickle.Unpickler):
                def find_class(self, module: str, name: str):
                    if module.startswith("__torch__."):
                        return type(name, (Record,), {"module": module})
                    known = {("torch._utils", "_rebuild_tensor_v2"): _tensor, ("torch", "FloatStorage"): "float32",
                             ("collections", "OrderedDict"): collections.OrderedDict,
                             ("torch.jit._pickle", "build_intlist"): list}
                    if (module, name) not in known:
                        raise pickle.UnpicklingError(f"{module}.{name}, which a Silero archive does not hold")
                    return known[module, name]

                def persistent_load(self, pid):
                    kind, dtype, key, _, numel = pid
                    if key in storages:  # tensors sharing a storage: read once
                        return storages[key]
                    if kind != "storage" or dtype != "float32":
                        raise pickle.UnpicklingError(f"a {dtype} {kind}; the reader knows float32 storages only")
                    if not isinstance(numel, int) or not 0 <= 4 * numel <= left[0]:
                        raise pickle.UnpicklingError(f"storage {key} of {numel} values, more than the archive holds")
                    data = np.frombuffer(member(f"{root}/data/{key}"), "<f4")
                    if len(data) != numel:
                        raise pickle.UnpicklingError(f"storage {key} holds {len(data)} values, not {numel}")
                    storages[key] = data
                    return data

            top = Unpickler(io.BytesIO(member(f"{root}/data.pkl"))).load()
    except (OSError, KeyError, ValueError, IndexError, TypeError, AttributeError, zipfile.BadZipFile,
            pickle.UnpicklingError, EOFError) as e:  # whatever a malformed archive makes the reader meet
        raise FdbuError("vad", None, f"{path}: cannot read the Silero model's weights ({e}); "
                        f"reinstall silero-vad, or use device=cuda or vad.backend=reference") from None
    if not isinstance(top, Record):
        raise FdbuError("vad", None, f"{path}: not a TorchScript module archive")
    return top


def state_dict(module: Record, prefix: str = "") -> dict[str, np.ndarray]:
    """Every array of a module and its submodules, by torch's dotted names (`module.state_dict()`'s keys; the
    empty tensors a streaming model keeps its state in are attributes, not weights)."""
    out: dict[str, np.ndarray] = {}
    for key, value in module.items():
        if isinstance(value, np.ndarray) and value.size:
            out[prefix + key] = value
        elif isinstance(value, Record):
            out.update(state_dict(value, f"{prefix}{key}."))
    return out
