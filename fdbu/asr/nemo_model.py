"""The one module that calls NeMo: a local Parakeet checkpoint, batched word-timed transcription.

Nothing is downloaded: the offline switches are set before NeMo is imported and the model
is loaded with `restore_from` from a local `.nemo` file, pinned by SHA-256 before loading.
"""
from __future__ import annotations

import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..atomic import sha256_file
from ..errors import FdbuError

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
INSTALL = "pip install 'fdbu[asr]' (nemo_toolkit[asr]==3.0.0); `make install` in a checkout"


def require_nemo(verbose: bool = False, load: bool = True):
    """NeMo, and with `load` its ASR collection. Without `load` only the package is checked (its
    ASR collection takes 10-20 s to import; a run whose transcripts are all cached never needs it)."""
    import importlib.util
    import logging

    for k, v in OFFLINE.items():
        os.environ.setdefault(k, v)
    if not verbose:  # NeMo's telemetry layer warns on import that it collects nothing
        logging.getLogger("nv_one_logger").setLevel(logging.ERROR)
    try:
        import nemo
        if importlib.util.find_spec("nemo.collections.asr") is None:
            raise ImportError(name="nemo.collections.asr")
        if not load:
            return nemo, None
        import nemo.collections.asr as nemo_asr
        from nemo.utils import logging as nemo_logging
    except ImportError as e:
        raise FdbuError("asr", None, f"fdbu asr needs NeMo, which is not installed ({e.name}): {INSTALL}") from None
    # NeMo's info lines and telemetry would mix into fdbu's output: warnings only, unless asked
    nemo_logging.set_verbosity(nemo_logging.INFO if verbose else nemo_logging.WARNING)
    return nemo, nemo_asr


@dataclass
class Word:
    text: str
    start: float
    end: float | None


class ParakeetASR:
    def __init__(self, checkpoint: Path, *, sha256: str | None = None, device: str = "cpu", verbose: bool = False):
        checkpoint = Path(checkpoint)
        self.model_id = checkpoint.stem  # e.g. parakeet-tdt-0.6b-v2; the SHA-256 says which weights
        if not checkpoint.is_file():
            raise FdbuError("asr", "checkpoint", f"{checkpoint} does not exist; fdbu loads a local .nemo file and "
                            "never downloads one (see the README for how to obtain and pin it)")
        self.checkpoint_sha256 = sha256_file(checkpoint)
        if sha256 is not None and sha256.lower() != self.checkpoint_sha256:
            raise FdbuError("asr", "checkpoint", f"{checkpoint} has SHA-256 {self.checkpoint_sha256}, not the pinned "
                            f"asr.sha256={sha256}; nothing was transcribed")
        nemo, _ = require_nemo(verbose, load=False)
        import torch

        self.nemo_version = nemo.__version__
        self.torch_version = torch.__version__
        self.device = device
        self.verbose = verbose
        self.checkpoint = checkpoint
        if not tarfile.is_tarfile(checkpoint):  # refused now, not after the work that precedes loading
            raise FdbuError("asr", "checkpoint", f"{checkpoint} is not a NeMo checkpoint (a .nemo file is a tar "
                            "archive)")
        self._model = None

    @property
    def model(self):
        """The NeMo model, restored on first use (a run whose transcripts are all cached never loads it)."""
        if self._model is None:
            import torch

            _, nemo_asr = require_nemo(self.verbose)

            try:
                self._model = nemo_asr.models.ASRModel.restore_from(str(self.checkpoint),
                                                                    map_location=torch.device(self.device))
            except Exception as e:  # an archive NeMo cannot restore
                raise FdbuError("asr", "checkpoint", f"{self.checkpoint} is not a NeMo checkpoint NeMo "
                                f"{self.nemo_version} can load ({type(e).__name__}: "
                                f"{str(e).splitlines()[0] if str(e) else ''})") from None
            self._model.eval()
        return self._model

    @property
    def one_file_per_call(self) -> bool:
        return stale_tdt_durations(self.model.cfg.decoding, self.device)

    def transcribe(self, audios: list[np.ndarray], batch_size: int) -> list[list[Word]]:
        """Word-timed transcripts of 16 kHz mono float waveforms (empty audio gives no words)."""
        out: list[list[Word]] = [[] for _ in audios]
        todo = [i for i, a in enumerate(audios) if len(a)]
        if not todo:
            return out
        model = self.model
        hyps = model.transcribe([np.ascontiguousarray(audios[i], dtype=np.float32) for i in todo],
                                     batch_size=1 if self.one_file_per_call else batch_size, timestamps=True,
                                     verbose=False, num_workers=0)
        for i, h in zip(todo, hyps):
            out[i] = words_of(h)
        return out


def stale_tdt_durations(decoding, device: str) -> bool:
    """Whether NeMo would decode batches with the greedy TDT loop of its plain PyTorch path (CPU,
    or CUDA without CUDA graphs). In NeMo 3.0.0 that loop stores, for a token found while another
    file of the batch was still searching, the duration predicted for the later step, so TDT word
    ends depend on the batch (NVIDIA-NeMo/Speech#16097, fixed upstream after 3.0.0; the CUDA-graph
    loop is right). fdbu then hands NeMo one file per call, as the official script does."""
    tdt = decoding.get("model_type") == "tdt" or bool(decoding.get("durations"))
    if not tdt or decoding.get("strategy") != "greedy_batch":
        return False
    graphs = (decoding.get("greedy") or {}).get("use_cuda_graph_decoder", True)
    return not (str(device).startswith("cuda") and graphs)


def words_of(hypothesis) -> list[Word]:
    """The words of one NeMo hypothesis, with the times NeMo gives them.

    RNNT and TDT hypotheses arrive the same way: `timestamp` is a dict whose "word" entry lists
    {"word", "start", "end"} in seconds, empty for an empty hypothesis. The times differ in
    origin: a word starts at the frame of its first token; an RNNT word ends one frame after its
    last token's frame, a TDT word at that frame plus the token's predicted duration (0 to 4
    frames, so a TDT word may end where it starts). A hypothesis with text but no word times
    (timestamps not computed) is refused rather than written as an empty transcript.
    """
    stamps = hypothesis.timestamp if isinstance(hypothesis.timestamp, dict) else {}
    words = stamps.get("word")
    if words is None:
        if hypothesis.text:
            raise FdbuError("asr", None, f"NeMo returned the transcript {hypothesis.text[:40]!r} without word "
                            "timestamps, which output.json needs")
        return []
    return [Word(w["word"], float(w["start"]), None if w.get("end") is None else float(w["end"])) for w in words]
