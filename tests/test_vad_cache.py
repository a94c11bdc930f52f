"""The probability cache: reused when valid, recomputed when stale or corrupt, never trusted blindly."""
import hashlib
import json

import soundfile as sf

from fdbu.vad import Job, SpeechDetector


def job(tree):
    p = sorted((tree / "synthetic_user_interruption").glob("*/output.wav"))[1]
    return Job("x", p, hashlib.sha256(p.read_bytes()).hexdigest(), sf.info(str(p)).frames)


def entry_path(cache, j):
    return cache / j.sha256[:2] / f"{j.sha256}.probs"


def test_second_run_reads_the_cache(synth_tree, tmp_path):
    j = job(synth_tree)
    first = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path)
    a = first.segments([j])
    second = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path)
    assert second.segments([j])[0].tolist() == a[0].tolist()
    assert (first.stats.computed, second.stats.computed, second.stats.cache_hits) == (1, 0, 1)


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
    SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path).segments([j])
    assert json.loads(entry_path(tmp_path, j).read_bytes().split(b"\n", 1)[0])["exact"] is False
    ref = SpeechDetector(backend="reference", cache_dir=tmp_path)
    ref.segments([j])
    assert (ref.stats.cache_hits, ref.stats.computed) == (0, 1)
    assert json.loads(entry_path(tmp_path, j).read_bytes().split(b"\n", 1)[0])["exact"] is True
    again = SpeechDetector(backend="batched", device="cpu", cache_dir=tmp_path)  # exact entries serve every backend
    again.segments([j])
    assert again.stats.cache_hits == 1


def test_cache_off_writes_nothing(synth_tree, tmp_path):
    SpeechDetector(backend="batched", device="cpu", cache=False, cache_dir=tmp_path).segments([job(synth_tree)])
    assert list(tmp_path.iterdir()) == []
