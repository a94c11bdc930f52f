"""`fdbu compare`: paired differences, their intervals and tests, the pairing rules and the refusals."""
import csv
import io
import json
import math
import shutil
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from builders import fdbu_main, sample, turn_ann, write_tree
import fdbu
from fdbu import tasks
from fdbu.comparison.pairwise import compare as run_compare
from fdbu.comparison.systems import load
from fdbu.comparison.files import names as output_names
from fdbu.metrics.paired import MIN_BOOTSTRAP_PAIRS, bootstrap_p, holm, mcnemar_exact, paired_arrays, resampled_differences
from fdbu.metrics.stats import CI_LO, NOT_REACHED, rank
from fdbu.scoring.unified import write as write_unified
from fdbu.scoring.pipeline import score_path
from fdbu.synth import synthesize

TT = "candor_turn_taking"


@pytest.fixture(scope="module")
def scored(synth_tree, vad, boot, tmp_path_factory):
    """Two systems on one synthetic dataset (mixed and prompt, seed 3), each scored into a copy of its tree."""
    root = tmp_path_factory.mktemp("compare")
    a = root / "mixed"
    shutil.copytree(synth_tree, a)
    b = synthesize(root / "prompt", n=12, seed=3, system="prompt", ineligible=0.1)
    for tree in (a, b):
        write_unified(score_path(tree, vad, boot), tree)
    return a, b


def _systems(*pairs):
    return [load(path, name) for path, name in pairs]


def _metrics(result):
    for pair in result["pairs"]:
        for subset, entry in pair["subsets"].items():
            for name, m in entry["metrics"].items():
                yield pair, subset, name, m


def test_rows_give_back_unified_json_exactly(scored, boot):
    """The comparison starts from components rebuilt from unified-samples.jsonl; they give every record of
    unified.json again, intervals included."""
    system = load(scored[0], "mixed")
    for subset, rows in system.rows.items():
        module = tasks.subset(subset).task.metrics
        eligible = [r for r in rows if r["eligible"]]
        metrics, _ = module.aggregate(module.from_rows(eligible), selected=len(rows),
                                      ineligible=len(rows) - len(eligible), boot=boot)
        assert json.loads(json.dumps(metrics)) == system.unified["subsets"][subset]["metrics"]


def test_a_tree_against_itself_differs_by_exactly_zero_with_p_one(scored):
    a = scored[0]
    result = run_compare(_systems((a, "x"), (a, "y")))
    unified = json.loads((a / "unified.json").read_text())["subsets"]
    seen = 0
    for _, subset, name, m in _metrics(result):
        d = m["difference"]
        both_unreached = m["kind"] == "latency_quantiles" and m["a"]["value"] == NOT_REACHED
        if both_unreached:  # n/a, with its reason, outside the family
            assert d["value"] is None and d["value_flag"] == "undefined" and d["interval"] is None
            assert m["p"] is None and m["p_holm"] is None and m["family"] is None and not m["marker"]
            assert m["reason"].startswith("both medians not reached")
        else:
            assert d["value"] == 0 and d["value_flag"] is None
            assert d["interval"] == [0, 0] and d["excludes_zero"] is False and not m["marker"]
            few = m["kind"] == "latency_quantiles" and m["n"] < MIN_BOOTSTRAP_PAIRS  # no p printed: not calibrated
            assert m["p"] == (None if m["better"] == "context" or few else 1.0)
            assert not few or m["reason"].startswith("too few pairs") and "no p" in m["reason"]
            assert m["p_holm"] in (None, 1.0)
            seen += 1
        # the paired set is every eligible sample: each side is unified.json's record
        want = {k: v for k, v in unified[subset]["metrics"][name].items() if k != "selected_bounds"}
        assert m["a"] == want and m["b"] == want
    assert seen > 20
    for pair in result["pairs"]:
        table = pair["subsets"]["synthetic_user_interruption"]["populations"]["exercised"]
        assert table["only_a"] == table["only_b"] == 0


def test_swapping_the_systems_negates_every_difference_exactly(scored, boot):
    """b - a against a - b: values and intervals negate exactly (flags flip), p, Holm and the marker stay,
    discordant pairs swap; a bootstrap interval is read at mirrored ranks, r = ceil(N/40) and N + 1 - r."""
    a, b = scored
    systems = _systems((a, "mixed"), (b, "prompt"))
    forward = run_compare(systems, baseline="mixed")
    backward = run_compare(systems, baseline="prompt")
    back = {(s, n): m for _, s, n, m in _metrics(backward)}
    flip = {None: None, "+inf": "-inf", "-inf": "+inf", "undefined": "undefined"}
    neg = (lambda x: None if x is None else -x)
    checked_ranks = 0
    for _, subset, name, m in _metrics(forward):
        w = back[subset, name]
        d, e = m["difference"], w["difference"]
        assert e["value_flag"] == flip[d["value_flag"]]
        assert e["value"] == neg(d["value"])
        assert (w["p"], w["p_holm"], w["marker"], w["reason"], w["a"], w["b"]) == \
            (m["p"], m["p_holm"], m["marker"], m["reason"], m["b"], m["a"])
        if "discordant" in m:
            assert w["discordant"] == {"a_only": m["discordant"]["b_only"], "b_only": m["discordant"]["a_only"]}
        if d["interval"] is None:
            assert e["interval"] is None
            continue
        assert e["interval"] == [neg(d["interval"][1]), neg(d["interval"][0])]
        assert e["interval_flags"] == [flip[f] for f in reversed(d["interval_flags"])]
        if m["kind"] == "share":
            continue
        # the kept differences of the forward pair, from the same components, at the mirrored ranks
        s = {x.name: x for x in systems}
        rows = [[r for r in s[k].rows[subset] if r["eligible"]] for k in ("mixed", "prompt")]
        module = tasks.subset(subset).task.metrics
        metric = next(x for x in module.METRICS if x.name == name)
        ca, cb = (module.from_rows(r) for r in rows)
        mask = module.populations(ca)[metric.over] & module.populations(cb)[metric.over]
        kept = resampled_differences(metric.kind, *paired_arrays(metric, ca, cb, mask), int(np.count_nonzero(mask)),
                                     boot)
        N = len(kept)
        assert d["resamples_kept"] == e["resamples_kept"] == N
        to_out = (lambda x: x / 1e6 if abs(int(x)) != (2**63 - 1) else None) if m["kind"] == "latency_quantiles" \
            else float
        r = rank(CI_LO, N)
        assert d["interval"] == [to_out(kept[r - 1]), to_out(kept[N - r])]
        checked_ranks += 1
    assert checked_ranks >= 6  # every non-share line with an interval (8 here)


def test_exercised_table_matches_a_hand_count(scored):
    a, b = scored
    result = run_compare(_systems((a, "mixed"), (b, "prompt")))
    rows = [{json.loads(line)["sample_id"]: json.loads(line) for line in (t / "unified-samples.jsonl").open()}
            for t in (a, b)]
    sub = "synthetic_user_interruption"
    ids = [i for i in rows[0] if rows[0][i]["subset"] == sub and rows[0][i]["eligible"] and rows[1][i]["eligible"]]
    ex = [[rows[k][i]["outcome"] != "not_exercised" for i in ids] for k in (0, 1)]
    want = {"both": sum(x and y for x, y in zip(*ex)), "only_a": sum(x and not y for x, y in zip(*ex)),
            "only_b": sum(y and not x for x, y in zip(*ex)), "neither": sum(not x and not y for x, y in zip(*ex))}
    entry = result["pairs"][0]["subsets"][sub]
    assert entry["populations"]["exercised"] == want
    assert want["only_b"] > 0  # the prompt system speaks at S where the mixed one is silent
    # a metric over the exercised samples is paired over those exercised in both, the others over eligible in both
    assert entry["metrics"]["speaking_at_end_rate"]["n"] == want["both"]
    assert entry["metrics"]["exercised_rate"]["n"] == len(ids) == entry["samples"]["eligible_in_both"]
    # beside every row: both systems' coverage, exercised_rate and selected bounds from their unified.json
    for k, side in enumerate("ab"):
        unified = json.loads(((a, b)[k] / "unified.json").read_text())["subsets"][sub]
        assert entry["context"][side] == {"coverage": unified["coverage"],
                                          "exercised_rate": unified["metrics"]["exercised_rate"]["value"]}
        assert entry["metrics"]["restart_rate"]["selected_bounds"][side] == \
            unified["metrics"]["restart_rate"]["selected_bounds"]


def _turn_tree(root, responders, ineligible=()):
    """candor_turn_taking samples 0..11, E = 2 s, T = 6 s; a responder answers 0.5 s after E."""
    return write_tree(root, [sample(TT, i, 6.0, [(2.5, 2.9)] if i in responders else [], turn_ann(2.0),
                                    eligible=i not in ineligible) for i in range(12)])


def test_mcnemar_on_hand_built_discordant_pairs(tmp_path, vad, boot):
    a = _turn_tree(tmp_path / "a", {0, 1, 2})
    b = _turn_tree(tmp_path / "b", {0, *range(3, 11)}, ineligible={11})
    for tree in (a, b):
        write_unified(score_path(tree, vad, boot), tree)
    result = run_compare(_systems((a, "A"), (b, "B")))
    m = result["pairs"][0]["subsets"][TT]["metrics"]["response_rate_1s"]
    assert m["n"] == 11 and m["discordant"] == {"a_only": 2, "b_only": 8}
    exact = min(Fraction(1), 2 * Fraction(sum(math.comb(10, i) for i in range(3)), 2 ** 10))  # 112/1024
    assert exact == Fraction(7, 64) and m["p"] == float(exact) and m["test"] == "mcnemar_exact"
    from scipy.stats import binomtest

    assert m["p"] == pytest.approx(binomtest(2, 10, 0.5).pvalue, rel=1e-9)
    assert m["difference"]["value"] == 9 / 11 - 3 / 11
    # the interval: scipy's Clopper-Pearson interval of the a_only share of the 10 discordant pairs, mapped to the
    # difference (b_only - a_only) / 11 = (10 / 11)(1 - 2 theta)
    ci = binomtest(2, 10).proportion_ci(0.95, method="exact")
    assert m["difference"]["interval"] == pytest.approx([10 / 11 * (1 - 2 * ci.high), 10 / 11 * (1 - 2 * ci.low)],
                                                        abs=1e-12)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 3) == 0.25


def test_holm_adjustment():
    """Sorted p_(1) <= ... <= p_(m): adjusted p_(j) = max over i <= j of min(1, (m - i + 1) p_(i)); a missing p
    does not count in m. Binary fractions, so every product is exact."""
    assert holm([0.25, 0.25, 0.0625, None]) == [0.5, 0.5, 0.1875, None]  # 3 x 0.0625; 2 x 0.25; max(0.5, 0.25)
    assert holm([0.5, 0.125]) == [0.5, 0.25]
    assert holm([0.75, 0.375, 0.125]) == [0.75, 0.75, 0.375]
    assert holm([0.5, 0.75, 0.625]) == [1.0, 1.0, 1.0]  # 3 x 0.5 is capped at 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=1, max_size=300))
def test_bootstrap_p_is_never_zero_and_counts_the_observed_resample(values):
    """p = 2 (min(k<=0, k>=0) + 1) / (K + 1), at most 1: never 0, even when every resample is on one side."""
    d = np.sort(np.array(values, np.int64))
    K = len(d)
    k = min(int(np.count_nonzero(d <= 0)), int(np.count_nonzero(d >= 0)))
    assert bootstrap_p(d) == min(1.0, 2 * (k + 1) / (K + 1)) > 0
    assert bootstrap_p(np.zeros(K, np.int64)) == 1.0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(-3, 3))
def test_at_2000_resamples_the_bootstrap_p_and_interval_agree(seed, shift):
    """With the default 2000 resamples, p < 0.05 exactly when the interval at mirrored ranks (50th, 1951st)
    excludes 0."""
    rng = np.random.default_rng(seed)
    d = np.sort(rng.integers(-20, 21, 2000) + shift * rng.integers(0, 12, 2000))
    lo, hi = d[rank(CI_LO, 2000) - 1], d[2000 - rank(CI_LO, 2000)]
    assert (bootstrap_p(d) < 0.05) == bool(lo > 0 or hi < 0)


def _one_line_error(out, *words):
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fdbu: error: "), out.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.slow
def test_refusals_are_one_line(scored, tmp_path, vad, boot):
    a, b = scored
    unscored = _turn_tree(tmp_path / "unscored", {0})
    _one_line_error(fdbu_main("compare", f"trees=[{a},{unscored}]"), str(unscored), "unified.json",
                    "not scored")
    other = tmp_path / "other"
    shutil.copytree(b, other)
    unified = json.loads((other / "unified.json").read_text())
    unified["speech_detection"]["settings"]["threshold"] = 0.4
    (other / "unified.json").write_text(json.dumps(unified))
    _one_line_error(fdbu_main("compare", f"trees=[{a},{other}]", f"out={tmp_path / 'o'}"), str(other),
                    "speech_detection.settings.threshold: 0.5 vs 0.4")
    unified["speech_detection"]["settings"]["threshold"] = 0.5
    unified["bootstrap"]["resamples"] = 1000
    (other / "unified.json").write_text(json.dumps(unified))
    _one_line_error(fdbu_main("compare", f"trees=[{a},{other}]"), "bootstrap.resamples: 2000 vs 1000")
    assert not (tmp_path / "o").exists()
    # different sample sets: refused, or compared over the common samples with what was dropped said
    small = write_tree(tmp_path / "small", [sample(TT, i, 6.0, [], turn_ann(2.0)) for i in range(10)])
    big = _turn_tree(tmp_path / "big", {0})
    for tree in (small, big):
        write_unified(score_path(tree, vad, boot), tree)
    _one_line_error(fdbu_main("compare", f"trees=[{small},{big}]"), str(big), "2 only in big",
                    "compare.allow_different_samples=true")
    ok = fdbu_main("compare", f"trees=[{small},{big}]", "compare.allow_different_samples=true")
    assert ok.returncode == 0, ok.stderr
    assert f"dropped: 2 only in big (e.g. {TT}/10)" in ok.stdout and "paired: 10 eligible in both of 10" in ok.stdout
    # a changed manifest (the tree rescored or edited since) and bad settings
    stale = tmp_path / "stale"
    shutil.copytree(big, stale)
    (stale / "manifest.json").write_text((stale / "manifest.json").read_text() + " ")
    _one_line_error(fdbu_main("compare", f"trees=[{small},{stale}]"), "manifest.json", "changed after")
    _one_line_error(fdbu_main("compare", f"trees=[{a}]"), "at least two")
    _one_line_error(fdbu_main("compare", f"trees=[{a},{b}]", "names=[x,x]"), "must all differ")
    _one_line_error(fdbu_main("compare", f"trees=[{a},{b}]", "baseline=z"), "baseline")
    _one_line_error(fdbu_main("compare", f"trees=[{a},{b}]", "compare.pairs=some"), "choose baseline or all")


@pytest.mark.slow
def test_cli_writes_every_output_deterministically(scored, tmp_path):
    a, b = scored
    runs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        res = fdbu_main("compare", f"trees=[{a},{b}]", "compare.pairs=all", f"out={out}")
        assert res.returncode == 0, res.stderr
        runs.append({p.name: p.read_bytes() for p in out.iterdir()})
    assert runs[0] == runs[1]
    assert sorted(runs[0]) == sorted(output_names(True))
    assert runs[0]["compare-forest.pdf"].startswith(b"%PDF") and runs[0]["compare-forest.png"][:4] == b"\x89PNG"
    assert b"CreationDate" not in runs[0]["compare-forest.pdf"]
    result = json.loads(runs[0]["compare.json"])
    assert result["kind"] == "compare" and result["generator"] == "fdbu"
    assert [s["name"] for s in result["systems"]] == ["mixed", "prompt"]  # folder names by default
    assert result["systems"][0]["inputs"] == json.loads((a / "unified.json").read_text())["inputs"]
    assert str(a) not in runs[0]["compare.json"].decode()  # no paths: the same bytes wherever the trees live
    rows = list(csv.DictReader(io.StringIO(runs[0]["compare.csv"].decode())))
    per_pair = sum(len(e["metrics"]) for e in result["pairs"][0]["subsets"].values())
    assert len(rows) == per_pair and {(r["a"], r["b"]) for r in rows} == {("mixed", "prompt")}
    unreached = [r for r in rows if r["a_value_not_reached"] == "True"]
    assert unreached and all(r["a_value"] == "" for r in unreached)
    for r in rows:
        for col in ("a_value", "b_value", "diff", "diff_lo", "diff_hi", "p", "p_holm", "a_coverage"):
            assert r[col] == "" or math.isfinite(float(r[col]))
    frame = fdbu.compare([a, b]).to_pandas()
    assert frame["diff"].dtype.kind == "f" and frame["a_value_not_reached"].dtype == "boolean"
    printed = fdbu_main("compare", f"trees=[{a},{b}]", "names=[A,B]", "baseline=B")
    assert printed.returncode == 0 and "synthetic_user_interruption: A vs B (difference A - B)" in printed.stdout
    assert "pass out=DIR" in printed.stdout


def test_the_api_names_stay_functions_after_their_modules_load(tmp_path):
    """fdbu.score, fdbu.sweep and fdbu.compare are the API functions, also once every module of fdbu is
    loaded (a submodule of the same name would be bound over its function, so there is none)."""
    import importlib
    import pkgutil

    from fdbu.errors import FdbuError

    for module in pkgutil.walk_packages(fdbu.__path__, "fdbu."):
        if not module.name.startswith("fdbu.asr") and module.name != "fdbu.__main__":  # NeMo; the CLI entry
            importlib.import_module(module.name)
    for name in ("score", "sweep", "compare"):
        assert callable(getattr(fdbu, name)), name
    tree = _turn_tree(tmp_path / "t", {0, 1})
    first, second = fdbu.score(tree), fdbu.score(tree)
    assert first.unified == second.unified
    with pytest.raises(FdbuError, match="has no synthetic_user_interruption or user_interruption or .* samples to sweep"):
        fdbu.sweep(tree, sweep={"threshold": [0.5], "min_silence_duration_ms": [100]})
