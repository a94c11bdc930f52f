"""A tiny randomly initialised NeMo RNNT ASR model, built on the fly (no checkpoint can be downloaded).

It runs NeMo's real transcription path with word timestamps; its words are meaningless.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

WORDS = ("yes okay so the answer is that we should go there first and then talk about your plan "
         "later today because it really depends on what you want to do next").split()


def build(folder: Path, seed: int = 0) -> Path:
    """Write `folder/tiny.nemo` and return its path."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentencepiece as spm
    import torch
    from omegaconf import OmegaConf, open_dict
    import nemo.collections.asr as nemo_asr

    folder = Path(folder)
    tok = folder / "tokenizer"
    tok.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    (folder / "text.txt").write_text("\n".join(" ".join(rng.choice(WORDS, 8)) for _ in range(300)))
    spm.SentencePieceTrainer.train(input=str(folder / "text.txt"), model_prefix=str(tok / "tokenizer"),
                                   vocab_size=48, model_type="unigram", character_coverage=1.0, bos_id=-1,
                                   eos_id=-1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tok / "tokenizer.model"))
    (tok / "vocab.txt").write_text("\n".join(sp.id_to_piece(i) for i in range(sp.get_piece_size())) + "\n")
    h = 16
    cfg = OmegaConf.create({
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
    })
    torch.manual_seed(seed)
    model = nemo_asr.models.EncDecRNNTBPEModel(cfg=cfg)
    with torch.no_grad():
        # favour blank and whole-word pieces, so the random model emits separate words with gaps
        out = model.joint.joint_net[-1]
        pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
        bias = torch.full_like(out.bias, -4.0)
        bias[-1] = 3.2  # blank
        for i, piece in enumerate(pieces):
            if piece.startswith("\u2581") and len(piece) > 2:
                bias[i] = 0.5
        out.bias.copy_(bias)
        out.weight.mul_(6.0)
    model.eval()
    with open_dict(model.cfg):  # file-based transcribe() reads it, as a released checkpoint has one
        model.cfg.validation_ds = {"use_start_end_token": False, "sample_rate": 16000}
    path = folder / "tiny.nemo"
    model.save_to(str(path))
    return path
