"""What the calibration benchmarks (compare's markers, v1.5's control) share: their command line and the bound a
null cell's marker rate must stay under. Light: the fixed-seed tests import the benchmarks' `cell`."""
from __future__ import annotations

import argparse
import math


def arguments(doc: str) -> argparse.Namespace:
    """--datasets (per null cell), --power-datasets (per power cell), --seed."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=2000)
    ap.add_argument("--power-datasets", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def bound(alpha: float, datasets: int) -> float:
    """alpha + 3 Monte Carlo standard errors of a rejection rate alpha over `datasets` datasets."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / datasets)
