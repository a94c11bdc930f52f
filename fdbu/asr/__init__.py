"""The ASR stage: word-timed transcripts of every eligible output, as the official pipeline makes them.

`nemo_model.py` is the only module that imports NeMo (an optional extra, `fdbu[asr]`);
`stage.py` reads the tree, cuts interruption audio at R, batches by duration, caches,
resumes, and writes output.json files and asr.json.
"""
