"""Pack per-sample variable-length arrays into the kernels' flat form."""
import numpy as np


def flatten(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate int64 arrays; offsets[i]:offsets[i+1] is part i."""
    offsets = np.zeros(len(parts) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in parts])
    flat = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)
    return np.ascontiguousarray(flat), offsets


def column(values) -> np.ndarray:
    return np.ascontiguousarray(np.array(values, dtype=np.int64).reshape(-1))
