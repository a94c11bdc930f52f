"""The quantile rule, Wilson intervals and empty populations."""
from fractions import Fraction

import numpy as np
import pytest

from fdbu.kernels import INF
from fdbu.metrics.stats import Bootstrap, latency_quantiles, pooled_ratio, rank, share, wilson


@pytest.mark.parametrize("q,n,want", [(Fraction(1, 2), 7, 4), (Fraction(1, 2), 6, 3), (Fraction(9, 10), 10, 9),
                                      (Fraction(9, 10), 11, 10), (Fraction(1, 40), 2000, 50),
                                      (Fraction(39, 40), 2000, 1950), (Fraction(1, 40), 1, 1)])
def test_rank_is_exact_ceil_qn(q, n, want):
    assert rank(q, n) == want


def test_wilson_ends_are_exact():
    assert wilson(0, 7)[0] == 0.0 and wilson(7, 7)[1] == 1.0
    assert 0.0 < wilson(0, 7)[1] < 1.0 and 0.0 < wilson(7, 7)[0] < 1.0
    assert wilson(0, 0) is None


def test_empty_population_has_no_value_and_no_interval():
    boot = Bootstrap()
    assert share(0, 0, unknown=3, selected=3, better="lower")["value"] is None
    assert share(0, 0, unknown=3, selected=3, better="lower")["interval"] is None
    assert share(0, 0, unknown=3, selected=3, better="lower")["selected_bounds"] == [0.0, 1.0]
    empty = np.zeros(0, np.int64)
    assert pooled_ratio(empty, empty, boot, better="lower")["value"] is None
    lat = latency_quantiles(empty, boot)
    assert (lat["value"], lat["interval"], lat["p90"], lat["count"]) == (None, None, None, 0)


def test_quantiles_are_order_statistics_without_interpolation():
    lat = latency_quantiles(np.array([3_000_000, 1_000_000, 2_000_000, 4_000_000], np.int64), Bootstrap())
    assert lat["value"] == 2.0 and lat["p90"] == 4.0  # 2nd and 4th smallest, never 2.5 or 3.7
    silent = latency_quantiles(np.array([INF, INF, 500_000], np.int64), Bootstrap())
    assert silent["value"] == "not reached" and silent["observed"] == 1


def test_bootstrap_draw_convention():
    idx = Bootstrap(2000, 0).indices(5)
    assert np.array_equal(idx, np.random.default_rng(0).integers(0, 5, size=(2000, 5)))
    assert np.array_equal(Bootstrap(2000, 0).indices(5), idx)  # fresh generator per metric


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 7, 1001, 2999, 70_000])
def test_the_resamples_drawn_in_blocks_are_the_same_numbers(n, monkeypatch):
    """Metrics hold the resample indices a block at a time (memory flat in the number of samples); the blocks are
    the rows of one draw, whatever the block size (odd counts included: PCG64 keeps a half-used draw in its state)."""
    from fdbu.metrics import stats

    boot = Bootstrap(300, 4)
    full = boot.indices(n)
    for block_bytes in (1, 8 * 3 * n, stats.BLOCK_BYTES):
        monkeypatch.setattr(stats, "BLOCK_BYTES", block_bytes)
        blocks = list(boot.blocks(n))
        assert all(len(b) * n * 8 <= max(block_bytes, 8 * n) for b in blocks)
        assert np.array_equal(np.concatenate(blocks), full)
    assert len(blocks) == (1 if 300 * 8 * n <= stats.BLOCK_BYTES else -(-300 // (stats.BLOCK_BYTES // (8 * n))))


def test_a_resample_matrix_too_large_is_refused_not_a_memory_error():
    from fdbu.errors import FdbuError
    from fdbu.metrics.stats import INDEX_BYTES

    n = INDEX_BYTES // 8 // 100_000 + 1  # one sample more than 100,000 resamples may index
    with pytest.raises(FdbuError, match=rf"bootstrap.resamples=100000 over {n} samples needs 4.0 GiB .* fewer"):
        Bootstrap(100_000, 0).indices(n)
    with pytest.raises(FdbuError, match=rf"bootstrap.resamples=100000 over {n} samples needs 4.0 GiB"):
        next(Bootstrap(100_000, 0).blocks(n))  # the metrics' way: refused before the first block
