"""The probability cache: reused when valid, recomputed when stale or corrupt, never trusted blindly."""
import pytest
import hashlib
import json

import soundfile as sf

from fdbu.vad import Job, SpeechDetector

MARGIN = 1e-3  # the cache does not care which margin: a fixed one spares each temporary cache a calibration


def batched(cache_dir, **kw):
    return SpeechDetector(backend="batched", device="cpu", cache_dir=cache_dir, margin=MARGIN, **kw)


def job(tree):
    """An interruption output with speech in it."""
    for p in sorted((tree / "synthetic_user_interruption").glob("*/output.wav")):
        audio, _ = sf.read(str(p), dtype="float32")
        if abs(audio).max() > 0.1:
            return Job("x", p, hashlib.sha256(p.read_bytes()).hexdigest(), len(audio))
    raise AssertionError("no speech in the synthetic tree")


def entry_path(cache, j):
    return cache / j.sha256[:2] / f"{j.sha256}.probs"


def test_second_run_reads_the_cache(synth_tree, tmp_path):
    j = job(synth_tree)
    first = batched(tmp_path)
    a = first.segments([j])
    second = batched(tmp_path)
    assert second.segments([j])[0].tolist() == a[0].tolist()
    assert (first.stats.computed, second.stats.computed, second.stats.cache_hits) == (1, 0, 1)


@pytest.mark.slow
def test_corrupt_and_stale_entries_are_recomputed(synth_tree, tmp_path):
    j = job(synth_tree)
    SpeechDetector(backend="reference", cache_dir=tmp_path).segments([j])
    path = entry_path(tmp_path, j)
    good = path.read_bytes()
    head, payload = good.split(b"\n", 1)
    bad_payload = bytearray(payload)
    bad_payload[7] ^= 0xFF
    for broken in (good[:-4], head + b"\n" + bytes(bad_payload), b"not a header\n" + payload,
                   json.dumps({**json.loads(head), "model_sha256": "0" * 64}).encode() + b"\n" + payload):
        path.write_bytes(broken)
        det = SpeechDetector(backend="reference", cache_dir=tmp_path)
        det.segments([j])
        assert (det.stats.cache_hits, det.stats.computed, det.stats.cache_rejected) == (0, 1, 1)
        assert path.read_bytes() == good  # rewritten with the right entry


def test_reference_backend_does_not_trust_batched_probabilities(synth_tree, tmp_path):
    j = job(synth_tree)
    batched(tmp_path).segments([j])
    header = json.loads(entry_path(tmp_path, j).read_bytes().split(b"\n", 1)[0])
    assert header["exact"] is False and header["margin"] == MARGIN
    ref = SpeechDetector(backend="reference", cache_dir=tmp_path)
    ref.segments([j])
    assert (ref.stats.cache_hits, ref.stats.computed) == (0, 1)
    assert json.loads(entry_path(tmp_path, j).read_bytes().split(b"\n", 1)[0])["exact"] is True
    again = batched(tmp_path)  # exact entries serve every backend
    again.segments([j])
    assert again.stats.cache_hits == 1


def test_cache_off_writes_nothing(synth_tree, tmp_path):
    batched(tmp_path, cache=False).segments([job(synth_tree)])
    assert list(tmp_path.iterdir()) == []


def test_a_batched_entry_keeps_the_margin_of_the_device_that_computed_it(synth_tree, tmp_path):
    """A cache shared between machines: the guard uses each entry's own margin, so an entry from a
    device with a wider margin is guarded by that margin, not by this device's."""
    j = job(synth_tree)
    batched(tmp_path).segments([j])
    wide = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path, margin=0.3)
    wide.segments([j])
    assert (wide.stats.cache_hits, wide.stats.recomputed) == (1, 0)  # guarded by the entry's 1e-3, not 0.3
    narrow = batched(tmp_path)
    path = entry_path(tmp_path, j)
    head, payload = path.read_bytes().split(b"\n", 1)
    path.write_bytes(json.dumps({**json.loads(head), "margin": 0.3}).encode() + b"\n" + payload)
    narrow.segments([j])
    assert (narrow.stats.cache_hits, narrow.stats.recomputed) == (1, 1)  # an entry from a looser device


def test_verify_on_a_cached_file_says_why_nothing_was_verified(synth_tree, tmp_path):
    """vad.verify=N checks only what the batched path computed in this run, and the report says so."""
    j = job(synth_tree)
    first = batched(tmp_path, verify=3)
    first.segments([j])
    line = first.stats.line()
    # the one computed file: verified (its later windows still batched, if the guard recomputed its first ones), or
    # recomputed whole by the guard
    st = first.stats
    whole = st.recomputed == 1 and (st.recomputed_whole == 1 or st.guard_windows == st.recomputed_windows)
    assert (not whole and first.stats.verified == 1 and " 1 verified (largest" in line
            and "of 3 asked: only 1 computed" in line) or \
        (whole and "vad.verify=3: nothing to verify: the guard recomputed all 1 computed files" in line)
    second = batched(tmp_path, verify=3)
    second.segments([j])
    assert second.stats.computed == 0 and " 0 verified (vad.verify=3: nothing to verify: nothing was computed " \
        "here, every file came from the cache" in second.stats.line()
    ref = SpeechDetector(backend="reference", cache=False, verify=2)
    ref.segments([j])
    assert "0 verified (vad.verify=2: nothing to verify: the reference backend" in ref.stats.line()
    quiet = batched(tmp_path)  # vad.verify=auto asks for nothing on one file: nothing to explain
    quiet.segments([j])
    assert " 0 verified," in quiet.stats.line()


def test_an_entry_the_guard_recomputed_in_part_keeps_its_exact_windows(synth_tree, tmp_path):
    """The guard recomputes a file up to its last critical window: the entry says how many windows are the
    reference path's, a later run guards only the windows after them (no recomputation), an entry that does not
    say is guarded whole, and a count that cannot be is not trusted."""
    from fdbu.vad.cache import Entry, ProbabilityCache

    j = job(synth_tree)
    first = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path, margin=0.3, verify=0)
    first.segments([j])  # a margin of 0.3: every speaking file is critical
    head = json.loads(entry_path(tmp_path, j).read_bytes().split(b"\n", 1)[0])
    assert first.stats.recomputed == 1 and first.stats.guard_windows < first.stats.recomputed_windows
    assert head["exact"] is False and head["exact_windows"] == first.stats.guard_windows
    again = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path, margin=0.3, verify=0)
    assert again.segments([j])[0].tolist() == first.segments([j])[0].tolist() == \
        SpeechDetector(backend="reference", cache=False).segments([j])[0].tolist()
    assert (again.stats.cache_hits, again.stats.recomputed) == (1, 0)
    cache = ProbabilityCache(tmp_path, first.silero.version, first.silero.model_sha256)
    frames = (j.samples + 511) // 512
    path = entry_path(tmp_path, j)
    head_bytes, payload = path.read_bytes().split(b"\n", 1)
    for prefix, read in ((None, 0), (frames + 1, 0), (True, 0), (3, 3)):
        doc = {k: v for k, v in json.loads(head_bytes).items() if k != "exact_windows"}
        path.write_bytes(json.dumps(doc if prefix is None else {**doc, "exact_windows": prefix}).encode() + b"\n"
                         + payload)
        entry = cache.get(j.sha256, frames)
        assert isinstance(entry, Entry) and entry.exact_windows == read


def test_a_cached_entry_recomputed_in_part_is_not_taken_for_this_runs_work(synth_tree, tmp_path):
    """Another rule over cached batched probabilities: the guard recomputes a prefix, but the later windows were
    checked by the run that computed them, so the sentinel has nothing of this run's to verify."""
    from fdbu.vad import SileroSettings

    j = job(synth_tree)
    # thresholds 0.6 then 0.5 under a margin of 0.1: every probability of this file lies at least 0.011 from every
    # threshold and threshold +- margin of the two rules, so the premise (the first run leaves the first 238 windows
    # exact, the second recomputes the first 414 of 442) holds on
    # any device whose probabilities stay within 1e-3 of the reference path's (calibration refuses any other)
    SpeechDetector(SileroSettings(threshold=0.6), backend="batched", device="cpu", cache_dir=tmp_path, margin=0.1,
                   verify=0).segments([j])
    other = SpeechDetector(SileroSettings(threshold=0.5), backend="batched", device="cpu", cache_dir=tmp_path,
                           margin=0.1, verify=2)
    got = other.segments([j])
    assert other.stats.cache_hits == 1 and other.stats.recomputed == 1 and other.stats.verified == 0
    assert 0 < other.stats.guard_windows < other.stats.recomputed_windows  # (a prefix: the test's premise)
    assert "nothing was computed here, every file came from the cache" in other.stats.line()
    ref = SpeechDetector(SileroSettings(threshold=0.5), backend="reference", cache=False).segments([j])
    assert got[0].tolist() == ref[0].tolist()


def test_reference_workers_on_every_device(monkeypatch):
    """vad.threads when given; else the batched path's threads on a CPU; on a GPU (whose batched path counts one
    thread) the free cores."""
    from fdbu.common import device as devices

    monkeypatch.setattr(devices, "free_cores", lambda *a: 7)
    assert SpeechDetector(backend="batched", device="cpu", threads=3, margin=MARGIN).reference_workers == 3
    cpu = SpeechDetector(backend="batched", device="cpu", margin=MARGIN)
    assert cpu.threads == 7 and cpu.reference_workers == 7
    gpu = SpeechDetector(backend="batched", device="cpu", margin=MARGIN)
    gpu._device, gpu._threads = "cuda", 1  # what the threads property sets on a GPU
    assert gpu.reference_workers == 7


def test_the_reference_paths_bar_moves_file_by_file_and_the_sentinel_has_its_own(synth_tree, tmp_path, monkeypatch):
    """vad.backend=reference: the speech bar moved once per batch (at 0/121 for 29 s, then 100%); now once per file,
    ending where the batch's whole would. The sentinel's files have a bar of their own (nothing was on screen while
    it ran)."""
    import fdbu.vad.detect as detect
    from builders import recording_bar

    bars: list = []
    monkeypatch.setattr(detect, "Bar", recording_bar(bars))
    jobs = list(_jobs(synth_tree))[:3]  # in path order
    ref = SpeechDetector(backend="reference", cache_dir=tmp_path / "r", progress=True, batch_seconds=1000.0)
    ref.probabilities(jobs)
    kw, moves = bars[0]
    assert kw["desc"] == "speech detection" and len(moves) == 3 and sum(moves) == kw["total"]
    bars.clear()
    many = batched(tmp_path / "b", progress=True, verify=2)
    many.guard(many.probabilities(jobs), jobs, [many.silero.settings.rule])
    verify = [(kw, moves) for kw, moves in bars if kw["desc"] == "speech detection: verify"]
    assert len(verify) == 1 and verify[0][1] == [1, 1] and verify[0][0]["total"] == 2


def _jobs(tree):
    for p in sorted((tree / "synthetic_user_interruption").glob("*/output.wav")):
        audio, _ = sf.read(str(p), dtype="float32")
        yield Job(p.parent.name, p, hashlib.sha256(p.read_bytes()).hexdigest(), len(audio))
