"""What a user meets, round two (issue 37): DataFrames whose columns and dtypes do not depend on the data, one
grammar for lists on the CLI and in the API, -m anywhere, and the console's words."""
import pytest

import fdbu
from builders import fdbu_main
from fdbu.errors import FdbuError
from fdbu.synth import synthesize

UI, TT = "synthetic_user_interruption", "candor_turn_taking"


@pytest.fixture(scope="module")
def systems(tmp_path_factory, calibrated):
    """A system that answers every time (every latency median reached), one that never does (none reached), one
    that is slow; each scored."""
    root = tmp_path_factory.mktemp("schema")
    trees = {s: synthesize(root / s, n={UI: 6, TT: 6}, seed=4, system=s, ineligible=0.0)
             for s in ("prompt", "silent", "slow")}
    for t in trees.values():
        fdbu.score(t, write=True)
    return trees


def _same(frames):
    first = frames[0]
    for f in frames[1:]:
        assert list(f.columns) == list(first.columns)
        assert f.dtypes.astype(str).to_dict() == first.dtypes.astype(str).to_dict()


def test_every_dataframe_has_the_same_columns_and_dtypes_whatever_the_data(systems):
    prompt, silent, slow = systems["prompt"], systems["silent"], systems["slow"]
    scores = [fdbu.score(t) for t in (prompt, silent)]
    for task in ("turn_taking", "user_interruption"):
        _same([s.to_pandas()[task] for s in scores])
    _same([s.metrics() for s in scores])
    latency = scores[1].metrics().query("metric == 'response_latency_s' and subset == @TT")
    assert latency["value_not_reached"].all() and latency["value"].isna().all()  # the silent system: not reached
    sweeps = [fdbu.sweep(t, sweep={"threshold": [0.5], "min_silence_duration_ms": [100, 200]}).to_pandas()
              for t in (prompt, silent)]
    _same(sweeps)
    assert sweeps[0]["response_latency_s_value_not_reached"].dtype == "boolean"
    assert not sweeps[0]["response_latency_s_value_not_reached"].any()  # there, and all false
    compares = [fdbu.compare([prompt, other]).to_pandas() for other in (silent, slow)]
    _same(compares)
    inf = compares[0].query("metric == 'response_latency_s' and subset == @TT")
    assert inf["diff"].iloc[0] == float("inf") and inf["diff_flag"].iloc[0] == "+inf"  # kept, not NaN
    assert compares[1]["diff_flag"].isna().all() or compares[1]["diff_flag"].dtype == "string"


@pytest.mark.slow
def test_a_scalar_where_a_list_is_expected(systems, tmp_path):
    prompt, silent = systems["prompt"], systems["silent"]
    # the API: a one-element list, a group that is no dict refused, a misspelt keyword in the CLI's words
    assert len(fdbu.sweep(prompt, sweep={"threshold": 0.5, "min_silence_duration_ms": 100}).to_pandas()) == 1
    with pytest.raises(FdbuError, match=r"names=\['A'\]: one name per tree \(2\)"):
        fdbu.compare([prompt, silent], names="A")
    with pytest.raises(FdbuError, match=r"vad='threshold=0.5': a group of settings is a dict of its keys"):
        fdbu.score(prompt, vad="threshold=0.5")
    with pytest.raises(FdbuError, match="tre is not a setting; did you mean tree?"):
        fdbu.score(tre=prompt)
    # the CLI: trees=A is [A]; A,B without -m is refused with the list syntax; a bare path gets its key
    out = fdbu_main("compare", f"trees={prompt}")
    assert out.returncode == 2 and "a list of at least two scored trees" in out.stderr, out.stderr
    out = fdbu_main("compare", f"trees={prompt},{silent}")
    assert out.returncode == 2 and f'a list is written "trees=[{prompt},{silent}]"' in out.stderr
    out = fdbu_main("sweep", f"tree={prompt}", "sweep.threshold=0.5", "sweep.min_silence_duration_ms=100",
                    f"out={tmp_path / 'sw'}", "plot=false")
    assert out.returncode == 0, out.stderr
    out = fdbu_main("score", str(prompt))
    assert out.returncode == 2 and f"did you mean tree={prompt}?" in out.stderr
    out = fdbu_main("compare", str(prompt))  # one tree: not trees=[A], which is refused in turn (issue 77)
    assert out.returncode == 2 and f"did you mean trees=[{prompt},TREE2] (at least 2: compare needs another)?" in \
        out.stderr, out.stderr
    out = fdbu_main("compare", str(prompt), str(silent))
    assert out.returncode == 2 and f"did you mean trees=[{prompt},{silent}]?" in out.stderr, out.stderr
    out = fdbu_main("compare", "-m", f"trees={prompt},{silent}")  # with -m: two jobs, each a one-tree list
    assert out.returncode == 2 and "a list of at least two scored trees" in out.stderr


def test_the_api_is_listed():
    assert {"score", "sweep", "compare", "report", "FdbuError"} <= set(dir(fdbu))


def _on_a_terminal(args: list[str], columns: int = 80) -> list[str]:
    """`fdbu ARGS` with its output on a pseudo-terminal `columns` wide, as a person sees it."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios
    from pathlib import Path

    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    exe = str(Path(sys.executable).parent / "fdbu")
    proc = subprocess.Popen([exe, *args], stdout=child, stderr=subprocess.DEVNULL, env={**os.environ,
                                                                                       "COLUMNS": str(columns)})
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(main)
    return b"".join(chunks).decode().replace("\r", "").splitlines()


@pytest.mark.slow
def test_tables_read_at_80_columns(systems, tmp_path):
    """Issue 37, item 8: score's, compare's and sweep's tables fit 80 columns on a terminal: every row whole on
    one line (a metric's name, value and interval together), nothing wider than the terminal."""
    prompt, silent = systems["prompt"], systems["silent"]
    score = _on_a_terminal(["score", f"tree={prompt}", "progress=false"])
    compare = _on_a_terminal(["compare", f"trees=[{prompt},{silent}]", "plot=false"])
    sweep = _on_a_terminal(["sweep", f"tree={prompt}", "plot=false", "progress=false", f"out={tmp_path / 'sw'}"])
    for lines in (score, compare, sweep):  # (a path longer than the terminal stands alone on its line)
        wide = [line for line in lines if len(line) > 80 and len(line.split()) > 1]
        assert lines and not wide, wide
    rows = [line for line in score if line.startswith("  response_rate_1s ")]
    assert rows and all(line.rstrip().endswith("/6") and "[" in line for line in rows)
    diff = [line for line in compare if line.startswith("  early_start_rate ") and ("+" in line or "-0" in line)]
    assert diff and all("[" in line for line in diff)  # the difference with its interval on the metric's line
    assert any(line.startswith("  swept: threshold (5)") for line in sweep)
    assert any("not_ex: not_exercised" in line for line in sweep) or \
        "not_ex: not_exercised" in " ".join(sweep)  # the legend of the short names


# every key `fdbu COMMAND --help` lists is accepted (a value other than its default builds the config); every key
# it leaves out is refused with a reason; calibrate refuses what it would ignore (issue 37, item 7)
BASE = {"score": {"tree": "t"}, "sweep": {"tree": "t"}, "compare": {"trees": ["a", "b"]},
        "report": {"trees": ["a", "b"], "out": "o"}, "evaluate": {"tree": "t"}, "export": {"dataset": "d", "out": "o"},
        "asr": {"tree": "t"}, "vad": {"tree": "t"}, "synth": {"out": "o"}, "calibrate": {}}
OTHER = {  # a value other than the default that the key takes (with what it needs beside it)
    "device": "cpu", "progress": False, "cache_dir": "c", "tree": "u", "trees": ["x", "y"], "out": "p", "plot": False,
    "width": "column", "names": ["A", "B"], "baseline": "b", "dataset": "e", "outputs": "q", "shard": 1, "shards": 2,
    "n": 3, "seed": 1, "system": "prompt", "ineligible": 0.1, "interruption_tail_s": [2.0, 3.0], "layout": "official",
    "family": "v1.5",
    "for_sweep": True, "vad.threshold": 0.6, "vad.min_speech_duration_ms": 200, "vad.min_silence_duration_ms": 200,
    "vad.speech_pad_ms": 30, "vad.backend": "reference", "vad.cache": False, "vad.verify": 3, "vad.threads": 1,
    "vad.batch_seconds": 100.0, "vad.require_shards": True, "bootstrap.resamples": 100, "bootstrap.seed": 2, "overlap.min_agreement": 0.5, "overlap.within_s": [0.25, 1.0],
    "views": ["videofdb"], "fdbench.reply_within_s": 2.0, "fdbench.early_reply_s": 0.5, "videofdb.yield_within_s": 1.0,
    "videofdb.handoff_within_s": 2.0, "fdbench.stop_by": "R", "videofdb.backchannel_words": "start",
    "sweep.threshold": [0.4], "sweep.min_silence_duration_ms": [200], "sweep.neg_threshold_offset": [0.1],
    "sweep.min_speech_duration_ms": [200], "sweep.speech_pad_ms": [30], "sweep.allow_large": True,
    "sweep.subset": "user_backchannel",
    "compare.allow_different_samples": True, "compare.alpha": 0.01, "compare.allow_mixed_transcripts": True,
    "compare.pairs": "all", "compare.family": "pair", "report.family": "leaderboard",
    "report.allow_different_samples": True, "report.alpha": 0.01,
    "report.allow_mixed_transcripts": True, "report.format": ["md"], "report.compare": "c",
    "evaluate.gt_distribution": "g", "evaluate.official_checkout": "k", "evaluate.allow_unpinned": True,
    "evaluate.run_official": True, "evaluate.judge.base_url": "http://127.0.0.1:9/v1", "evaluate.judge.model": "m",
    "evaluate.judge.api_key_env": "KEY", "evaluate.judge.max_attempts": 2, "evaluate.judge.timeout_s": 5.0,
    "evaluate.judge.staged_files": ["goals.json"], "evaluate.judge.workers": 2,
    "export.length": "strict", "export.only": ["s/1"], "export.roots": {"candor_turn_taking": "r"},
    "export.transcripts": "adopt", "export.model": "m/n", "asr.model": "m/n", "asr.checkpoint": "x.nemo",
    "asr.sha256": "0" * 64, "asr.batch_size": 2, "asr.max_batch_seconds": 60.0, "asr.verify": 0, "asr.resume": True,
    "asr.cache": False, "asr.verbose": True, "asr.require_shards": True,
    "session_turns": [10, 12], "session.merge_gap_s": 0.4, "session.window_s": 2.0, "session.stop_within_s": 1.0,
    "session.backchannel_max_s": 0.8, "session.backchannel_max_words": 3, "session.offsets_ms": [-20, 20],
    "export.judge": "j",
}
NEEDS = {("evaluate", "evaluate.run_official"): {"evaluate.official_checkout": "k"},
         ("evaluate", "evaluate.judge.base_url"): {"evaluate.official_checkout": "k", "evaluate.judge.model": "m"},
         ("export", "export.roots"): {"dataset": None}, ("compare", "baseline"): {"names": ["a", "b"]},
         ("report", "baseline"): {"names": ["a", "b"]}, ("asr", "trees"): {"tree": None},
         ("vad", "trees"): {"tree": None}, ("compare", "names"): {}, ("vad", "shard"): {"shards": 2},
         ("asr", "shard"): {"shards": 2}, ("sweep", "names"): {"tree": ["a", "b"]}}
NEEDS.update({("vad", k): {"for_sweep": True} for k in OTHER if k.startswith("sweep.")})
NEEDS.update({("score", k): {"views": [k.split(".")[0]]} for k in OTHER if k.startswith(("fdbench.", "videofdb."))})


def _nested(flat: dict) -> dict:
    out: dict = {}
    for key, value in flat.items():
        *groups, last = key.split(".")
        at = out
        for g in groups:
            at = at.setdefault(g, {})
        at[last] = value
    return out


def _listed(command: str) -> list[str]:
    import re

    from fdbu.config.keys import help_text

    return re.findall(r"^  ([a-z_.]+) +\S", help_text(command), re.M)


@pytest.mark.parametrize("command", list(BASE))
def test_help_and_acceptance_agree(command):
    from fdbu.config.store import CONFIGS
    from fdbu.config.keys import build, settings_of

    defaults = {s.key: s.value for s in settings_of(command) if s.kind is not None}
    for key in _listed(command):  # a key this test has no other value for (a plugin's): its default, as given
        values = {**BASE[command], key: OTHER[key] if key in OTHER else defaults[key], **NEEDS.get((command, key), {})}
        values = {k: v for k, v in values.items() if v is not None}
        build(command, _nested(values))  # accepted
    for key in getattr(CONFIGS[command], "REFUSED", ()):
        if key not in OTHER:
            continue
        with pytest.raises(FdbuError, match=key.replace(".", r"\.")):
            build(command, _nested({**BASE[command], key: OTHER[key]}))


def test_calibrate_lists_only_what_it_uses():
    assert _listed("calibrate") == ["device", "progress", "cache_dir", "vad.threads"]


def test_asr_refuses_a_device_it_cannot_use_before_loading_nemo(tmp_path):
    """`fdbu asr device=cuda` where torch sees no GPU: refused in one line before NeMo is imported (it took 10 s to
    load NeMo and then refuse)."""
    import subprocess
    import sys

    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: device=cuda is valid")
    tree = synthesize(tmp_path / "t", n=1, seed=0)
    (tmp_path / "t" / "asr.json").unlink()
    code = ("import sys\nfrom fdbu.cli.main import main\ntry:\n"
            f"    rc = main(['asr', 'tree={tree}', 'device=cuda', 'asr.resume=true', 'progress=false'])\n"
            "except SystemExit as e:\n    rc = e.code\nprint('RC', rc, 'nemo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "RC 2 False", (out.stdout, out.stderr)
    assert out.stderr.strip().splitlines()[-1] == \
        "fdbu: error: config: device=cuda but torch sees no CUDA device; use device=cpu or auto"
