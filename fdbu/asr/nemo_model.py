"""The one module that calls NeMo: Parakeet by name or from a local checkpoint, word-timed transcription.

By name (`asr.model`, default nvidia/parakeet-tdt-0.6b-v2) the model is NeMo's own
`from_pretrained`, which reads the Hugging Face cache first and downloads only what is not there
(never with HF_HUB_OFFLINE=1). A local `.nemo` file (`asr.checkpoint`) is loaded with
`restore_from` with the offline switches set, so nothing is downloaded. Either way the file's
SHA-256 is computed (and checked against `asr.sha256`) before the weights load.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import tarfile
import textwrap
import types
from typing import IO, cast
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from ..common.atomic import sha256_bytes, sha256_file
from ..errors import FdbuError
from ..config.settings import PARAKEET
from ..common.log import note

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
INSTALL = "pip install 'fdbu[asr]' (nemo_toolkit[asr]==3.0.0); `make install` in a checkout"
DEFAULT_MODEL = PARAKEET
# NeMo 3.0.0's batched greedy TDT loop on its PyTorch path, GreedyBatchedTDTLabelLoopingComputer.torch_impl:
# the SHA-256 of its dedented source, which the one-line fix below was written against
TDT_LOOP_SHA256 = "f94162e15c6265766581c9295841cff3280fef2dd1c1e6db6c7e39eead14320e"
STALE_DURATIONS = "\n            durations = model_durations[jump_durations_indices]\n"  # the inner loop's
KEPT_DURATIONS = "\n            durations = torch.where(advance_mask, model_durations[jump_durations_indices], durations)\n"
# how NeMo is called: files of a batch in one call, with or without the fix, or one file per call
BATCHED, BATCHED_FIXED, ONE_FILE = "batched", "batched, TDT durations fixed", "one file per call"


@contextlib.contextmanager
def offline_switches(on: bool = True):
    """The Hugging Face offline switches set (where the user has not set them) while NeMo is imported and a local
    checkpoint restored, and put back after: Hugging Face's libraries read them when they are imported, and a
    process that goes on after fdbu (a notebook, another command run in-process, the programs it starts) keeps
    the environment it had (tests/leaks.py checks)."""
    if not on:
        yield
        return
    before = {k: os.environ.get(k) for k in OFFLINE}
    for k, v in OFFLINE.items():
        os.environ.setdefault(k, v)
    try:
        yield
    finally:
        for k, was in before.items():
            if was is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = was


def require_nemo(verbose: bool = False, load: bool = True, offline: bool = True):
    """NeMo, and with `load` its ASR collection. Without `load` only the package is checked (its
    ASR collection takes 10-20 s to import; a run whose transcripts are all cached never needs it).
    `offline` sets the Hugging Face offline switches while NeMo is imported (a local checkpoint);
    loading by name leaves them as the user set them."""
    import importlib.util
    import logging

    if not verbose:  # NeMo's telemetry layer warns on import that it collects nothing
        logging.getLogger("nv_one_logger").setLevel(logging.ERROR)
    try:
        with offline_switches(offline):
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
    from ..common.log import AboveBars

    for handler in logging.getLogger("nemo_logger").handlers:  # its lines above fdbu's bars, not inside them
        # NeMo's own handlers only (a plain StreamHandler on a terminal's stream), not one a host put there
        if type(handler) is logging.StreamHandler and hasattr(handler.stream, "fileno") \
                and not isinstance(handler.stream, AboveBars):
            handler.setStream(AboveBars(handler.stream))
    return nemo, nemo_asr



@dataclass
class Word:
    text: str
    start: float
    end: float | None


def archive_config(path: Path) -> dict:
    """model_config.yaml of a .nemo archive (read without loading the weights); {} when it has none."""
    from omegaconf import OmegaConf

    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if member.isfile() and Path(member.name).name == "model_config.yaml":
                    data = cast(IO[bytes], tar.extractfile(member)).read()  # a regular file: never None
                    cfg = OmegaConf.to_container(OmegaConf.create(data.decode()))
                    return cfg if isinstance(cfg, dict) else {}
    except (tarfile.TarError, OSError, ValueError, UnicodeDecodeError):
        pass
    return {}


def offline_switch() -> str:
    """The variable that makes huggingface_hub offline (it reads either), as the user set it."""
    return next((k for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if os.environ.get(k)), "HF_HUB_OFFLINE")


def available(name: str) -> None:
    """Refuse a model by name that cannot be had, before NeMo is imported (about a minute): not in the Hugging
    Face cache and, with HF_HUB_OFFLINE set, not to be downloaded; or the hub not answering (10 s) or not
    knowing it. NeMo resolves `org/name` to the file `name.nemo` of that repository (its
    `_get_hf_hub_pretrained_model_info`); a name without an org is NGC's, left to NeMo."""
    if "/" not in name:
        return
    try:
        from huggingface_hub import HfApi, constants, try_to_load_from_cache
    except ImportError:  # NeMo brings it: require_nemo then says how to install both
        return
    try:
        cached = try_to_load_from_cache(repo_id=name, filename=PurePosixPath(name).name + ".nemo")
    except ValueError as e:  # huggingface_hub's HFValidationError: not a repository id (a path, a/b/c, org/)
        hint = "; a local file goes in asr.checkpoint=FILE.nemo" if name.endswith(".nemo") or name.startswith(
            ("/", ".")) else ""
        raise FdbuError("asr", "model", f"asr.model={name!r} is not a model name (org/name) the Hugging Face hub "
                        f"takes ({str(e).splitlines()[0]}){hint}") from None
    if isinstance(cached, str):
        return
    where = f"{name} is not in the Hugging Face cache ({constants.HF_HUB_CACHE})"
    if constants.HF_HUB_OFFLINE:
        switch = offline_switch()
        raise FdbuError("asr", "model", f"{where} and {switch} is set, so it is not downloaded; download it "
                        f"once with network access (unset {switch} there), or pass asr.checkpoint=FILE.nemo")
    try:
        HfApi().model_info(name, timeout=10)
    except Exception as e:  # no network, a proxy refusing, no such repository: one line with the ways out
        why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        raise FdbuError("asr", "model", f"{where} and cannot be downloaded from {constants.ENDPOINT} ({why}); "
                        "download it once where the hub answers, or pass asr.checkpoint=FILE.nemo") from None


def _cached_model_file(name: str, nemo_asr) -> Path:
    """The .nemo file NeMo's `from_pretrained` resolves for `name` (the Hugging Face cache, else a download)."""
    try:
        path = nemo_asr.models.ASRModel.from_pretrained(model_name=name, return_model_file=True)
    except Exception as e:  # offline and not cached, no network, no such model: one line with both ways out
        from huggingface_hub import constants

        why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        switch = offline_switch() if constants.HF_HUB_OFFLINE else None  # only a switch that is set is named
        raise FdbuError("asr", "model", f"{name} is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and "
                        f"could not be downloaded{f' ({switch} is set)' if switch else ''}: {why}; download "
                        f"it once with network access{f' (unset {switch} there)' if switch else ''}, or pass "
                        "asr.checkpoint=FILE.nemo") from None
    if not Path(path).is_file():
        raise FdbuError("asr", "model", f"{name} resolves to {path}, an unpacked folder, not one .nemo file fdbu can "
                        "pin by SHA-256; pass asr.checkpoint=FILE.nemo")
    return Path(path)


class ParakeetASR:
    def __init__(self, checkpoint: Path | None = None, *, model: str | None = None, sha256: str | None = None,
                 device: str = "cpu", verbose: bool = False):
        """`checkpoint`: a local .nemo file (`model` then only names it in asr.json); else `model` (default
        nvidia/parakeet-tdt-0.6b-v2) by name through NeMo's from_pretrained and the Hugging Face cache."""
        self.name = None if checkpoint is not None else (model or DEFAULT_MODEL)
        if checkpoint is None:
            name = model or DEFAULT_MODEL
            available(name)  # decided before NeMo's import, which takes about a minute
            nemo, nemo_asr = require_nemo(verbose, offline=False)
            checkpoint = _cached_model_file(name, nemo_asr)
            self.loaded_by = "from_pretrained (Hugging Face cache)"
        else:
            checkpoint = Path(checkpoint)
            self.loaded_by = "restore_from (local checkpoint)"
            if not checkpoint.is_file():
                raise FdbuError("asr", "checkpoint", f"{checkpoint} does not exist; give a local .nemo file, or load "
                                f"the model by name (asr.model={DEFAULT_MODEL}, the default without asr.checkpoint)")
        self.checkpoint_sha256 = sha256_file(checkpoint)
        if sha256 is not None and sha256.lower() != self.checkpoint_sha256:
            raise FdbuError("asr", "checkpoint", f"{checkpoint} has SHA-256 {self.checkpoint_sha256}, not the pinned "
                            f"asr.sha256={sha256}; nothing was transcribed")
        if self.name is None:  # by name, NeMo (and its ASR collection) is loaded already
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
        # what asr.json calls the model: its name, or the name the checkpoint's config gives itself, never
        # the file's name (which could be anything); the SHA-256 says which weights
        own = None if self.name or model else archive_config(checkpoint).get("name")
        self.model_id = self.name or model or (own if isinstance(own, str) else None) or \
            f"checkpoint sha256:{self.checkpoint_sha256[:12]}"
        self._model = None
        self._decoding: str | None = None
        self._computer = None

    @property
    def model(self):
        """The NeMo model, loaded on first use (a run whose transcripts are all cached never loads it)."""
        if self._model is None:
            import torch

            _, nemo_asr = require_nemo(self.verbose, offline=self.name is None)

            try:  # the file hashed above, whichever way it was found (by name: what from_pretrained resolved)
                with offline_switches(self.name is None):
                    self._model = nemo_asr.models.ASRModel.restore_from(str(self.checkpoint),
                                                                        map_location=torch.device(self.device))
            except Exception as e:  # an archive NeMo cannot restore
                raise FdbuError("asr", "checkpoint", f"{self.checkpoint} is not a NeMo checkpoint NeMo "
                                f"{self.nemo_version} can load ({type(e).__name__}: "
                                f"{str(e).splitlines()[0] if str(e) else ''})") from None
            self._model.eval()
        return self._model

    @property
    def decoding(self) -> str:
        """How NeMo is called (BATCHED, BATCHED_FIXED or ONE_FILE), settled when first asked: NeMo's
        timestamped decoding is made once here (transcribe(timestamps=True) would make it on its first
        call) and, for TDT on NeMo's PyTorch loop, given the durations fix or, when the fix cannot
        apply, one file per call, with the reason in a note (`fdbu.common.log`). Checked again on every call, since
        NeMo remakes its decoding object when its decoding config changes."""
        model = self.model
        computer = _tdt_loop(model)
        fixed = getattr(getattr(computer, "torch_impl", None), "fdbu_fixed", False)
        if self._decoding is not None and self._computer is computer and fixed == (self._decoding == BATCHED_FIXED):
            return self._decoding
        self._computer = computer
        dec = model.cfg.decoding
        if dec.get("compute_timestamps") is not True:
            from omegaconf import open_dict

            with open_dict(dec):
                dec.compute_timestamps = True
            model.change_decoding_strategy(dec, verbose=False)
            return self.decoding
        if not greedy_batched_tdt(dec):  # NeMo's batches are right
            self._decoding = BATCHED
            return self._decoding
        why = fix_tdt_durations(computer)
        if why is None:
            self._decoding = BATCHED_FIXED
        elif not stale_tdt_durations(dec, self.device):
            self._decoding = BATCHED  # CUDA graphs: NeMo's other loop, which keeps durations right
        else:
            self._decoding = ONE_FILE
            note(f"fdbu asr: {why}; NeMo decodes one file per call (as the official script does)")
        return self._decoding

    def files_per_call(self, batch_size: int) -> int:
        return 1 if self.decoding == ONE_FILE else batch_size

    def transcribe(self, audios: list[np.ndarray], batch_size: int) -> list[list[Word]]:
        """Word-timed transcripts of 16 kHz mono float waveforms (empty audio gives no words)."""
        out: list[list[Word]] = [[] for _ in audios]
        todo = [i for i, a in enumerate(audios) if len(a)]
        if not todo:
            return out
        per_call = self.files_per_call(batch_size)
        hyps = self.model.transcribe([np.ascontiguousarray(audios[i], dtype=np.float32) for i in todo],
                                     batch_size=per_call, timestamps=True, verbose=False, num_workers=0)
        for i, h in zip(todo, hyps):
            out[i] = words_of(h)
        return out


def greedy_batched_tdt(decoding) -> bool:
    tdt = decoding.get("model_type") == "tdt" or bool(decoding.get("durations"))
    return tdt and decoding.get("strategy") == "greedy_batch"


def stale_tdt_durations(decoding, device: str) -> bool:
    """Whether NeMo would decode batches with the greedy TDT loop of its plain PyTorch path (CPU,
    or CUDA without CUDA graphs). In NeMo 3.0.0 that loop stores, for a token found while another
    file of the batch was still searching, the duration predicted for the later step, so TDT word
    ends depend on the batch (NVIDIA-NeMo/Speech#16097, fixed upstream after 3.0.0; the CUDA-graph
    loop is right)."""
    if not greedy_batched_tdt(decoding):
        return False
    graphs = (decoding.get("greedy") or {}).get("use_cuda_graph_decoder", True)
    return not (str(device).startswith("cuda") and graphs)


def _tdt_loop(model):
    """NeMo's batched greedy TDT loop object of the model's current decoding, if it has one."""
    return getattr(getattr(model.decoding, "decoding", None), "decoding_computer", None)


def fix_tdt_durations(computer) -> str | None:
    """Give NeMo's batched greedy TDT loop object the fix of NVIDIA-NeMo/Speech#16098: in the inner
    loop, a file's duration is replaced only while that file is still searching (`advance_mask`),
    as its labels and scores already are and as NeMo's CUDA-graph loop does, so each token keeps
    the duration predicted with it and a batch decodes as its files do alone. The fixed method is
    NeMo's own source with that one line changed, compiled in NeMo's module and set on this
    object only; it is made only from the exact source it was written against (by SHA-256).
    Returns None when applied, else why not."""
    from nemo.collections.asr.parts.submodules.transducer_decoding import tdt_label_looping as loop

    if not isinstance(computer, loop.GreedyBatchedTDTLabelLoopingComputer):
        return f"NeMo's batched TDT decoding is not the label-looping loop fdbu can fix ({type(computer).__name__})"
    if getattr(computer.torch_impl, "fdbu_fixed", False):
        return None
    source = textwrap.dedent(inspect.getsource(type(computer).torch_impl))
    digest = sha256_bytes(source.encode())
    if digest != TDT_LOOP_SHA256 or source.count(STALE_DURATIONS) != 1:
        return (f"NeMo {_nemo_version()}'s batched TDT loop (tdt_label_looping.py, torch_impl) is not the NeMo 3.0.0 "
                f"source fdbu's durations fix was written against (SHA-256 {digest[:12]}..., expected "
                f"{TDT_LOOP_SHA256[:12]}...)")
    namespace: dict = {}
    exec(compile(source.replace(STALE_DURATIONS, KEPT_DURATIONS), loop.__file__, "exec"), vars(loop), namespace)
    fixed = namespace["torch_impl"]
    fixed.fdbu_fixed = True
    computer.torch_impl = types.MethodType(fixed, computer)
    return None


def _nemo_version() -> str:
    import nemo

    return nemo.__version__


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
