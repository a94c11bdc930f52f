"""Randomly initialised NeMo transducer ASR models, built on the fly (no checkpoint can be downloaded).

`build(folder, kind="rnnt")` is a tiny Conformer-RNNT, `build(folder, kind="tdt")` a tiny
FastConformer-TDT with Parakeet's durations, loss and decoding; both run NeMo's real
transcription path with word timestamps, and their words are meaningless. `build_from_config`
builds any model section (the benchmark's Parakeet-size config) with a tokenizer trained here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS = ("yes okay so the answer is that we should go there first and then talk about your plan "
         "later today because it really depends on what you want to do next").split()
# Parakeet's TDT settings, as NeMo's FastConformer-TDT recipe
# (examples/asr/conf/fastconformer/hybrid_transducer_ctc/fastconformer_hybrid_tdt_ctc_bpe.yaml) has them
DURATIONS = [0, 1, 2, 3, 4]
TDT_LOSS = {"loss_name": "tdt", "tdt_kwargs": {"fastemit_lambda": 0.0, "clamp": -1.0, "durations": DURATIONS,
                                               "sigma": 0.02, "omega": 0.1}}


def train_tokenizer(folder: Path, vocab_size: int, lines: list[str]):
    """A SentencePiece unigram tokenizer in `folder/tokenizer`, the layout NeMo's `bpe` type reads."""
    import sentencepiece as spm

    tok = Path(folder) / "tokenizer"
    tok.mkdir(parents=True, exist_ok=True)
    (Path(folder) / "text.txt").write_text("\n".join(lines))
    spm.SentencePieceTrainer.train(input=str(Path(folder) / "text.txt"), model_prefix=str(tok / "tokenizer"),
                                   vocab_size=vocab_size, model_type="unigram", character_coverage=1.0,
                                   bos_id=-1, eos_id=-1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tok / "tokenizer.model"))
    (tok / "vocab.txt").write_text("\n".join(sp.id_to_piece(i) for i in range(sp.get_piece_size())) + "\n")
    return tok, sp


def tiny_config(tok: Path, kind: str, h: int = 16) -> dict:
    """The model section: one FastConformer layer (dw_striding x8), width `h`, an RNNT or a TDT head."""
    tdt = kind == "tdt"
    cfg = {
        "sample_rate": 16000,
        "model_defaults": {"enc_hidden": h, "pred_hidden": h, "joint_hidden": h},
        "tokenizer": {"dir": str(tok), "type": "bpe"},
        "preprocessor": {"_target_": "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
                         "sample_rate": 16000, "normalize": "per_feature", "window_size": 0.025,
                         "window_stride": 0.01, "features": 16, "n_fft": 512, "dither": 0.0, "pad_to": 0},
        "encoder": {"_target_": "nemo.collections.asr.modules.ConformerEncoder", "feat_in": 16, "n_layers": 1,
                    "d_model": h, "subsampling": "dw_striding", "subsampling_factor": 8,
                    "subsampling_conv_channels": h, "ff_expansion_factor": 2, "self_attention_model": "rel_pos",
                    "n_heads": 2, "conv_kernel_size": 9, "dropout": 0.0, "dropout_pre_encoder": 0.0,
                    "dropout_emb": 0.0, "dropout_att": 0.0},
        "decoder": {"_target_": "nemo.collections.asr.modules.RNNTDecoder", "normalization_mode": None,
                    "random_state_sampling": False, "blank_as_pad": True,
                    "prednet": {"pred_hidden": h, "pred_rnn_layers": 1, "t_max": None, "dropout": 0.0}},
        "joint": {"_target_": "nemo.collections.asr.modules.RNNTJoint", "log_softmax": None,
                  "preserve_memory": False, "fuse_loss_wer": False,
                  "jointnet": {"encoder_hidden": h, "pred_hidden": h, "joint_hidden": h, "activation": "relu",
                               "dropout": 0.0}},
        "decoding": {"strategy": "greedy_batch", "greedy": {"max_symbols": 2}},
        "loss": {"loss_name": "default"},
        "train_ds": None, "validation_ds": None, "test_ds": None, "optim": None,
    }
    if tdt:
        cfg["model_defaults"].update(tdt_durations=DURATIONS, num_tdt_durations=len(DURATIONS))
        cfg["encoder"].update(xscaling=True, untie_biases=True, conv_norm_type="batch_norm")
        cfg["joint"]["num_extra_outputs"] = len(DURATIONS)
        cfg["decoding"].update(model_type="tdt", durations=DURATIONS)
        cfg["loss"] = TDT_LOSS
    return cfg


def instantiate(cfg: dict, seed: int):
    """The NeMo model of a model section, in eval mode, with random weights from `seed`."""
    import torch
    from omegaconf import OmegaConf, open_dict

    from fdbu.asr.nemo_model import offline_switches, require_nemo

    # NeMo loaded as fdbu loads it (offline, its logger at WARNING), whichever test loads it first (tests/leaks.py)
    _, nemo_asr = require_nemo()
    with offline_switches():  # set while the model is made, then as they were
        torch.manual_seed(seed)
        model = nemo_asr.models.EncDecRNNTBPEModel(cfg=OmegaConf.create(cfg))
    model.eval()
    with open_dict(model.cfg):  # file-based transcribe() reads it, as a released checkpoint has one
        model.cfg.validation_ds = {"use_start_end_token": False, "sample_rate": 16000}
    return model


def favour_words_with_gaps(model, sp, seed: int) -> None:
    """Re-draw the joint's output layer so that the random model emits separate words with gaps.

    A random joint's hidden state varies little from frame to frame, so plain random logits make
    the same choice everywhere (blank throughout, or a token at every step). Here the prediction
    network's share of that state is shrunk (choices follow the audio more than the last token),
    and every output becomes a random direction in the hidden space standardised on noise bursts
    (a logit of unit variance there), offset: blank +2 (more if needed for silence to give blank
    by that margin), whole-word pieces 0, other pieces -4; of a TDT joint's duration logits the
    one for 0 frames gets +1 and the rest 0, so every duration is chosen somewhere.
    """
    import torch

    out = model.joint.joint_net[-1]
    with torch.no_grad():
        model.joint.pred.weight.mul_(0.1)
    rng = np.random.default_rng(seed)
    bursts = np.repeat(rng.random(80) < 0.5, 4000)  # 20 s, on and off in 0.25 s steps
    hidden = _joint_inputs(model, (0.1 * rng.standard_normal(bursts.size) * bursts).astype(np.float32))
    silent = _joint_inputs(model, np.zeros(16000, np.float32)).mean(0)
    mean, std = hidden.mean(0), hidden.std(0)
    live = std > 1e-3  # dead ReLU units have std exactly 0, live ones 0.014 and up (both models): no machine flips one
    w = torch.zeros_like(out.weight)
    w[:, live] = torch.randn(w.shape[0], int(live.sum()), generator=torch.Generator().manual_seed(seed))
    w[:, live] /= std[live] * live.sum().sqrt()
    vocab = sp.get_piece_size()  # NeMo puts blank right after the vocabulary, then any duration logits
    offset = torch.zeros(w.shape[0])
    offset[:vocab] = torch.tensor([0.0 if p.startswith("\u2581") and len(p) > 2 else -4.0
                                   for p in map(sp.id_to_piece, range(vocab))])
    if w.shape[0] > vocab + 1:
        offset[vocab + 1] = 1.0  # duration 0
    bias = offset - w @ mean
    at_silence = w[:vocab + 1] @ silent + bias[:vocab + 1]
    bias[vocab] += max(2.0, float(at_silence[:vocab].max() - at_silence[vocab]) + 2.0)
    with torch.no_grad():
        out.weight.copy_(w)
        out.bias.copy_(bias)


def _joint_inputs(model, audio: np.ndarray):
    """The joint's hidden states (inputs to its output layer) while the model transcribes `audio`."""
    import torch

    out, seen = model.joint.joint_net[-1], []
    hook = out.register_forward_pre_hook(lambda _m, x: seen.append(x[0].detach().reshape(-1, x[0].shape[-1])))
    model.transcribe([audio], batch_size=1, verbose=False, num_workers=0)
    hook.remove()
    return torch.cat(seen)


def build(folder: Path, seed: int = 0, kind: str = "rnnt") -> Path:
    """Write `folder/tiny-<kind>.nemo` and return its path."""
    if kind not in ("rnnt", "tdt"):
        raise ValueError(f"kind must be rnnt or tdt, not {kind!r}")
    folder = Path(folder)
    rng = np.random.default_rng(seed)
    tok, sp = train_tokenizer(folder, 48, [" ".join(rng.choice(WORDS, 8)) for _ in range(300)])
    model = instantiate(tiny_config(tok, kind), seed)
    favour_words_with_gaps(model, sp, seed)
    path = folder / f"tiny-{kind}.nemo"
    model.save_to(str(path))
    return path


def build_from_config(folder: Path, config: Path, seed: int = 0) -> Path:
    """Write `folder/<config stem>.nemo` from a YAML file with `model` (a NeMo model section whose
    tokenizer.dir is filled in here) and `vocab_size` (of the SentencePiece tokenizer trained here on
    pseudo-words, since only the vocabulary's size matters for speed)."""
    from omegaconf import OmegaConf

    folder = Path(folder)
    spec = OmegaConf.load(config)
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lines = [" ".join("".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(12)) for _ in range(4000)]
    tok, _ = train_tokenizer(folder, int(spec.vocab_size), lines)
    cfg = OmegaConf.to_container(spec.model, resolve=True)
    cfg["tokenizer"] = {"dir": str(tok), "type": "bpe"}
    model = instantiate(cfg, seed)
    path = folder / f"{Path(config).stem}.nemo"
    model.save_to(str(path))
    return path
