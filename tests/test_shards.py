"""Sharded stages: N runs fill the caches, the unsharded command assembles the outputs, and the
bytes equal a one-process run's; a killed shard is finished by its rerun; concurrent writers
leave the cache valid."""
import hashlib
import json
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from builders import fdbu_forked, fdbu_main, untranscribed, needs_nemo
from fdbu.common.cachedir import cache_root
from fdbu.scoring.shard import select, split
from fdbu.synth import synthesize
from fdbu.vad.cache import Entry, ProbabilityCache

FDBU = str(Path(sys.executable).parent / "fdbu")
SUB = "synthetic_user_interruption"


def fresh_cache(path: Path) -> Path:
    """An empty cache root with this machine's calibration (which a new cache root would otherwise redo)."""
    src = cache_root() / "vad-probs" / "calibration"
    if src.is_dir():
        shutil.copytree(src, path / "vad-probs" / "calibration")
    path.mkdir(parents=True, exist_ok=True)
    return path


def ok(out):
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def pool(tmp_path_factory, calibrated):
    """Two systems' trees: their interruption outputs are one pool of work."""
    root = tmp_path_factory.mktemp("pool")
    a = synthesize(root / "a", n={SUB: 9, "candor_turn_taking": 3}, seed=21, ineligible=0.0)
    b = synthesize(root / "b", n={SUB: 5}, seed=22, ineligible=0.1)
    return a, b


@pytest.mark.parametrize("shards", [2, 3, 7])
def test_a_split_is_a_partition_balanced_by_audio(shards):
    rng = np.random.default_rng(shards)
    items = [(f"{k:04d}", float(w)) for k, w in enumerate(rng.uniform(1, 30, 40))]
    parts = split(items + items[:5], shards, key=lambda x: x[0], weight=lambda x: x[1])  # duplicates count once
    assert sorted(x for p in parts for x in p) == sorted(items)
    loads = [sum(w for _, w in p) for p in parts]
    assert max(loads) - min(loads) <= max(w for _, w in items)
    assert select(list(reversed(items)), 1, shards, key=lambda x: x[0], weight=lambda x: x[1]) == parts[1]


def _dealt(items, shards):
    """The split's rule read literally: longest first (ties by key), each to the shard with the fewest seconds so far
    (ties to the lower number), found by looking at every shard."""
    load, out = [0.0] * shards, [[] for _ in range(shards)]
    for item in sorted(dict(items).items(), key=lambda kv: (-kv[1], kv[0])):
        target = min(range(shards), key=lambda s: (load[s], s))
        out[target].append(item)
        load[target] += item[1]
    return [sorted(part) for part in out]


@pytest.mark.parametrize("seed", range(6))
def test_the_split_deals_each_item_to_the_least_loaded_shard(seed):
    """The heap finds the shard the rule names (a split is the same on every machine and version): equal weights,
    ties of load and more shards than items included."""
    rng = np.random.default_rng(seed)
    n, shards = int(rng.integers(0, 400)), int(rng.integers(1, 60))
    weights = rng.choice([1.0, 2.5, 0.1, 0.3], n) if seed % 2 else rng.uniform(0.5, 30, n)
    items = [(f"{int(k):016x}", float(w)) for k, w in zip(rng.integers(0, 2**62, n), weights)]
    assert split(items, shards, key=lambda x: x[0], weight=lambda x: x[1]) == _dealt(items, shards)


@pytest.mark.slow
@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_sharded_speech_detection_assembles_to_the_one_process_bytes(pool, tmp_path, shards):
    a, b = pool
    one = fresh_cache(tmp_path / "one")
    many = fresh_cache(tmp_path / "many")
    want = {}
    for tree in (a, b):
        out = tmp_path / f"one-{tree.name}"
        ok(fdbu_main("score", f"tree={tree}", f"out={out}", f"cache_dir={one}", "progress=false"))
        want[tree.name] = [(out / f).read_bytes() for f in ("unified.json", "unified-samples.jsonl")]
    reports = [ok(fdbu_main("vad", f"trees=[{a},{b}]", f"shard={k}", f"shards={shards}", f"cache_dir={many}",
                            "progress=false")).stdout for k in range(shards)]
    files = [int(r.split(": ")[1].split(" files")[0]) for r in reports]
    assert sum(files) == 9 + sum(1 for _ in (b / SUB).glob("*/output.wav"))  # every file in exactly one shard
    for tree in (a, b):
        out = tmp_path / f"many-{tree.name}"
        printed = ok(fdbu_main("score", f"tree={tree}", f"out={out}", f"cache_dir={many}", "progress=false")).stdout
        assert "speech detection" in printed and " 0 computed" in printed and "recomputed on the reference path" in \
            printed and " 0 recomputed" in printed
        if shards > 1:
            assert "from the caches of shards" in printed
        assert [(out / f).read_bytes() for f in ("unified.json", "unified-samples.jsonl")] == want[tree.name]


@pytest.mark.slow
@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_a_sweep_assembles_from_shards_too(pool, tmp_path, shards):
    a, _ = pool
    grid = ["sweep.threshold=[0.35,0.5,0.65]", "sweep.min_silence_duration_ms=[50,300]"]
    one, many = fresh_cache(tmp_path / "one"), fresh_cache(tmp_path / "many")
    ok(fdbu_main("sweep", f"tree={a}", f"out={tmp_path / 'one-out'}", f"cache_dir={one}", "plot=false", *grid))
    for k in range(shards):
        ok(fdbu_main("vad", f"tree={a}", f"shard={k}", f"shards={shards}", "for_sweep=true", f"cache_dir={many}",
                     *grid))
    printed = ok(fdbu_main("sweep", f"tree={a}", f"out={tmp_path / 'many-out'}", f"cache_dir={many}", "plot=false",
                           *grid)).stdout
    assert " 0 computed" in printed and " 0 recomputed" in printed
    for f in ("sweep.json", "sweep.csv"):
        assert (tmp_path / "many-out" / f).read_bytes() == (tmp_path / "one-out" / f).read_bytes()


@pytest.mark.slow
def test_a_killed_shard_is_finished_by_its_rerun(pool, tmp_path):
    a, _ = pool
    cache = fresh_cache(tmp_path / "cache")
    args = ["vad", f"tree={a}", "shard=0", "shards=2", f"cache_dir={cache}", "vad.batch_seconds=30", "progress=false"]
    killed = fdbu_forked(*args, env={"FDBU_KILL_AT": "vad:batch:1"})  # killed: a forked copy of this process
    assert killed.returncode == -9
    done_before = len(list((cache / "vad-probs").glob("*/*.probs")))
    rerun = ok(fdbu_main(*args))
    assert f"{done_before} already cached" in rerun.stdout and done_before > 0
    ok(fdbu_main("vad", f"tree={a}", "shard=1", "shards=2", f"cache_dir={cache}", "progress=false"))
    printed = ok(fdbu_main("score", f"tree={a}", f"out={tmp_path / 'out'}", f"cache_dir={cache}")).stdout
    assert " 0 computed" in printed
    assert not list((cache / "vad-probs").rglob("*.tmp"))  # nothing half-written


def test_a_shard_reads_only_its_own_files(pool, tmp_path):
    """A shard picks its files by the SHA-256 manifest.json lists, so its start-up does not grow with the tree: a
    changed file of another shard is not read (its own shard refuses it; the assembling score hash-checks every
    file, tests/test_tree_checks.py)."""
    from fdbu.vad import stage

    a, _ = pool
    tree = tmp_path / "tree"
    shutil.copytree(a, tree)
    parts = split(stage.jobs([tree]), 2, key=lambda j: j.sha256, weight=lambda j: j.samples)
    theirs = parts[1][0]
    theirs.path.write_bytes(theirs.path.read_bytes() + b"\0\0")  # changed after the manifest recorded it
    cache = fresh_cache(tmp_path / "cache")
    mine = ok(fdbu_main("vad", f"tree={tree}", "shard=0", "shards=2", f"cache_dir={cache}", "progress=false"))
    assert f"shard 0/2: {len(parts[0])} files" in mine.stdout
    refused = fdbu_main("vad", f"tree={tree}", "shard=1", "shards=2", f"cache_dir={cache}", "progress=false")
    assert refused.returncode != 0 and theirs.where in refused.stderr and "differs from manifest.json" in refused.stderr


def _writer(args):
    root, k = args
    cache = ProbabilityCache(Path(root), "6.2.3", "m" * 64)
    probs = np.full(300, k / 10, np.float32)
    for _ in range(40):
        cache.put("ab" * 32, Entry(probs, False, 1e-3, "cal", f"{k}/4"))
        got = cache.get("ab" * 32, 300)
        assert got is None or (got.probs == got.probs[0]).all()  # a whole entry or none, never a mix
    return True


def test_concurrent_writers_of_one_entry_leave_it_valid(tmp_path):
    with ProcessPoolExecutor(4) as ex:
        assert all(ex.map(_writer, [(str(tmp_path), k) for k in range(4)]))
    entry = ProbabilityCache(tmp_path, "6.2.3", "m" * 64).get("ab" * 32, 300)
    assert entry is not None and entry.by in {f"{k}/4" for k in range(4)}
    assert np.all(entry.probs == np.float32(int(entry.by[0]) / 10))
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{'ab' * 32}.probs"]


@pytest.mark.slow
@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_sharded_asr_assembles_to_the_one_process_bytes(pool, tmp_path, built, shards):
    needs_nemo()
    from fdbu.asr import stage
    from fdbu.asr.nemo_model import ParakeetASR

    checkpoint, model = built("rnnt")
    trees = {name: untranscribed(pool[0], tmp_path / name) for name in ("one", "many")}
    stage.run(trees["one"], lambda: model, batch_size=4, cache_dir=None)
    for k in range(shards):
        stage.run_shard([trees["many"]], lambda: model, tmp_path / "cache", k, shards, batch_size=4)
    assembler = ParakeetASR(checkpoint, device="cpu")  # a fresh one: it must not need to load the model
    _, counts = stage.run(trees["many"], lambda: assembler, batch_size=4, cache_dir=tmp_path / "cache")
    assert counts["transcribed"] == 0 and assembler._model is None
    assert set(counts["shards"]) == ({f"{k}/{shards}" for k in range(shards)} if shards > 1 else {"0/1"})

    def digest(tree):
        return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(tree.rglob("*.json"))}

    assert digest(trees["many"]) == digest(trees["one"])
    assert json.loads((trees["many"] / "asr.json").read_text())["config"]["nemo_version"]


@pytest.mark.slow
def test_a_missing_shard_is_named_and_computed_or_refused(pool, tmp_path):
    """Assembling after 3 of 4 shards names the missing one and how many files it computed in its place;
    vad.require_shards=true refuses instead: one line, exit 2, nothing written."""
    from fdbu.vad.stage import jobs

    a, _ = pool
    cache = fresh_cache(tmp_path / "cache")
    for k in (0, 1, 2):
        ok(fdbu_main("vad", f"tree={a}", f"shard={k}", "shards=4", f"cache_dir={cache}", "progress=false"))
    absent = len(select(jobs([a]), 3, 4, key=lambda j: j.sha256, weight=lambda j: j.samples))
    assert absent > 0
    refused = fdbu_main("score", f"tree={a}", f"out={tmp_path / 'refused'}", f"cache_dir={cache}",
                        "vad.require_shards=true", "progress=false")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"vad.require_shards=true: shard 3/4 missing ({absent} files); run the missing shard" in refused.stderr
    assert not (tmp_path / "refused").exists()
    printed = ok(fdbu_main("score", f"tree={a}", f"out={tmp_path / 'out'}", f"cache_dir={cache}",
                           "progress=false")).stdout
    assert f" {absent} computed" in printed and f"shard 3/4 missing ({absent} files): computed here" in printed
    again = ok(fdbu_main("score", f"tree={a}", f"out={tmp_path / 'again'}", f"cache_dir={cache}",
                         "vad.require_shards=true", "progress=false")).stdout
    assert " 0 computed" in again and "): computed here" not in again  # now every file is cached


@pytest.mark.slow
def test_a_missing_asr_shard_is_named_and_transcribed_or_refused(pool, tmp_path, built):
    needs_nemo()
    from fdbu.asr import stage
    from fdbu.errors import FdbuError

    _, model = built("rnnt")
    tree = untranscribed(pool[0], tmp_path / "tree")
    stage.run_shard([tree], lambda: model, tmp_path / "cache", 0, 2, batch_size=4)
    with pytest.raises(FdbuError, match=r"asr.require_shards=true: shard 1/2 missing \(\d+ files\)"):
        stage.run(tree, lambda: model, batch_size=4, cache_dir=tmp_path / "cache", require_shards=True)
    assert not list(tree.glob("*/*/output.json")) and not (tree / stage.ASR_JSON).exists()
    _, counts = stage.run(tree, lambda: model, batch_size=4, cache_dir=tmp_path / "cache")
    assert counts["transcribed"] > 0 and stage.by_shards(counts) == (
        f" (made by shards 0/2); shard 1/2 missing ({counts['transcribed']} files): transcribed here")
