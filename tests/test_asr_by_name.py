"""Parakeet by name: NeMo's own from_pretrained over a Hugging Face cache laid out here (no network).

The cache holds the tiny TDT model under the name nvidia/parakeet-tdt-0.6b-v2, in the layout
huggingface_hub writes (`models--org--name/snapshots/<rev>/<name>.nemo`, `refs/main`)."""
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from importlib.util import find_spec

# the asr extra, told by its package's presence: importing NeMo (10-15 s) is left to the tests that use it, not
# paid by every worker that collects this file
pytestmark = [pytest.mark.skipif(find_spec("nemo.collections.asr") is None, reason="the asr extra (nemo_toolkit[asr]) is not installed"),
              pytest.mark.slow]

from builders import fdbu_main, untranscribed  # noqa: E402
from fdbu.asr.nemo_model import BATCHED_FIXED, DEFAULT_MODEL, ParakeetASR  # noqa: E402
from fdbu.asr.stage import run  # noqa: E402
from fdbu.errors import FdbuError  # noqa: E402

REV = "0123456789abcdef0123456789abcdef01234567"


def hf_cache(root: Path, name: str, nemo: Path) -> Path:
    """A Hugging Face hub cache at `root` holding `nemo` as `<name>`'s .nemo file at revision REV."""
    repo = root / f"models--{name.replace('/', '--')}"
    snap = repo / "snapshots" / REV
    snap.mkdir(parents=True)
    shutil.copy(nemo, snap / f"{name.split('/')[-1]}.nemo")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REV)
    return root


@pytest.fixture(scope="module")
def hub(built, tmp_path_factory):
    return hf_cache(tmp_path_factory.mktemp("hf") / "hub", DEFAULT_MODEL, built("tdt")[0])


@pytest.fixture
def offline_hub(hub, monkeypatch):
    """This process's huggingface_hub reads its cache and offline switch at import: point it at `hub`, offline."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return hub


def test_the_default_model_loads_by_name_from_the_cache_offline(synth_tree, tmp_path, offline_hub, built, monkeypatch,
                                                               request):
    """`fdbu asr` with no model setting, offline with the cache above (huggingface_hub reads HF_HUB_CACHE and
    HF_HUB_OFFLINE once, at import: `offline_hub` sets what they would have set), and a proxy that refuses every
    connection, so any network use would fail: asr.json names the model, records the cached file's SHA-256 and the
    batch size used, and the words are the ones the same file gives as a local checkpoint. In this process: a fresh
    one would pay NeMo's imports (about 10 s of CPU) for nothing this test reads."""
    checkpoint, local = built("tdt")
    by_name = untranscribed(synth_tree, tmp_path / "by-name")
    for key, value in {"NO_PROXY": "", "no_proxy": "", "HTTPS_PROXY": "http://127.0.0.1:9",
                       "HTTP_PROXY": "http://127.0.0.1:9"}.items():
        monkeypatch.setenv(key, value)
    # huggingface_hub reads the proxy when it makes its shared HTTP client: made again now, and after the test
    from huggingface_hub import close_session

    close_session()
    request.addfinalizer(close_session)
    out = fdbu_main("asr", f"tree={by_name}", "device=cpu", "progress=false", "asr.cache=false", "asr.batch_size=8",
                    "asr.sha256=" + local.checkpoint_sha256)
    assert out.returncode == 0, out.stderr
    config = json.loads((by_name / "asr.json").read_text())["config"]
    assert config["model_id"] == DEFAULT_MODEL and config["source"] == "fdbu asr"
    assert config["checkpoint_sha256"] == hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    assert config["loaded_by"].startswith("from_pretrained")
    # TDT on CPU: NeMo 3.0.0's PyTorch loop with fdbu's durations fix, 8 files per call as asked
    assert (config["batch_size"], config["nemo_batch_size"], config["decoding"]) == (8, 8, BATCHED_FIXED)
    local_tree = untranscribed(synth_tree, tmp_path / "local")
    run(local_tree, lambda: local, batch_size=8, cache_dir=None)
    assert sorted(p.read_bytes() for p in by_name.glob("*/*/output.json")) == \
        sorted(p.read_bytes() for p in local_tree.glob("*/*/output.json"))


def test_a_checkpoint_is_named_by_what_it_is_not_by_its_file_name(built, tmp_path):
    checkpoint, local = built("tdt")
    renamed = tmp_path / "anything.nemo"
    shutil.copy(checkpoint, renamed)
    asr = ParakeetASR(renamed, device="cpu")
    assert asr.model_id == f"checkpoint sha256:{local.checkpoint_sha256[:12]}" and "anything" not in asr.model_id
    assert ParakeetASR(renamed, model=DEFAULT_MODEL, device="cpu").model_id == DEFAULT_MODEL
    assert asr.loaded_by.startswith("restore_from")


def test_the_pin_is_checked_for_a_model_loaded_by_name(offline_hub):
    with pytest.raises(FdbuError, match="not the pinned asr.sha256=" + "0" * 64):
        ParakeetASR(sha256="0" * 64, device="cpu")
    assert ParakeetASR(device="cpu").model_id == DEFAULT_MODEL


def test_a_model_neither_cached_nor_downloadable_is_one_line_naming_both_ways_out(synth_tree, tmp_path,
                                                                                   offline_hub):
    tree = untranscribed(synth_tree, tmp_path / "t")
    before = sorted(p.relative_to(tree) for p in tree.rglob("*"))
    out = fdbu_main("asr", f"tree={tree}", "asr.model=nvidia/parakeet-tdt-1.1b", "progress=false", "device=cpu")
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("fdbu: error: asr: model: nvidia/parakeet-tdt-1.1b is not in the Hugging Face "
                               f"cache ({offline_hub})")
    assert "HF_HUB_OFFLINE is set" in lines[0] and "download it once with network access" in lines[0]
    assert lines[0].endswith("or pass asr.checkpoint=FILE.nemo")
    assert sorted(p.relative_to(tree) for p in tree.rglob("*")) == before  # nothing written
