"""What a folder a user points fdbu at is: a reference tree, a release, an official per-task folder, ...

A wrong `tree=` or `export.roots=` is named for what it is, with the command that turns it into
what the command needs (README: Scoring your system's outputs). Only names and file types are
looked at (no file is read), so a diagnosis costs a few directory listings.
"""
from __future__ import annotations

from pathlib import Path

from . import tasks

MANIFEST, ASR = "manifest.json", "asr.json"


def _dirs(folder: Path) -> list[Path]:
    """Sample-like sub-folders: not hidden, not what the official scripts skip (`.md`, `.DS_Store`)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and not p.name.endswith((".md", ".DS_Store")))
    except OSError:
        return []


def annotations() -> dict[str, list[str]]:
    """annotation file -> the subsets whose samples carry it."""
    out: dict[str, list[str]] = {}
    for name, s in tasks.SUBSETS.items():
        if s.task.annotation:
            out.setdefault(s.task.annotation, []).append(name)
    return out


def sample_annotations(folder: Path) -> list[str]:
    """The task annotation files a sample folder holds."""
    return [a for a in annotations() if (folder / a).is_file()]


def task_subsets(samples: list[Path]) -> list[str]:
    """The subsets a per-task folder's samples could be, from the annotation they carry (none: backchannel)."""
    found = sorted({a for d in samples[:5] for a in sample_annotations(d)})
    if not found:
        return [n for n, s in tasks.SUBSETS.items() if s.task.annotation is None]
    return [n for a in found for n in annotations()[a]]


def per_task_samples(folder: Path) -> list[Path]:
    return [d for d in _dirs(folder) if (d / "input.wav").is_file()]


def release_subsets(folder: Path) -> list[str]:
    """The subsets of a release folder (`<subset>/<id>/input.wav`)."""
    return [s for s in tasks.SUBSETS if per_task_samples(folder / s)]


def roots_hint(folder: Path, subsets: list[str]) -> str:
    return "\"export.roots={" + ", ".join(f"{s}: {folder}" for s in subsets[:1]) + "}\""


def found(folder: Path) -> str:
    """What is in a folder that is not what was expected, in a few words."""
    if not folder.exists():
        return "nothing: it does not exist"
    if not folder.is_dir():
        return "a file"
    entries = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    if not entries:
        return "an empty folder"
    if (folder / MANIFEST).is_file():
        return "a reference tree (manifest.json)"
    subs = release_subsets(folder)
    if subs:
        return f"a Full-Duplex-Bench release (<subset>/<id>/input.wav for {', '.join(subs)})"
    samples = per_task_samples(folder)
    if samples:
        return (f"an official per-task folder of {' or '.join(task_subsets(samples))} samples "
                f"(<id>/input.wav, {', '.join(sample_annotations(samples[0])) or 'no annotation'})")
    if (folder / "input.wav").is_file() or (folder / "output.wav").is_file():
        return "one sample's folder (input.wav / output.wav directly in it)"
    shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
    return f"no sample folders (it holds {shown})"


def not_a_tree(root: Path, transcribed: bool) -> str | None:
    """None when `root` is a reference tree (with asr.json when `transcribed`); else what it is and the fix."""
    root = Path(root)
    # exists, not is_file: a manifest.json that is not a regular file (a FIFO) is refused by the reader, by its kind
    if root.is_dir() and (root / MANIFEST).exists() and (not transcribed or (root / ASR).exists()):
        return None
    fix_export = "fdbu export dataset=DIR out=TREE (export.transcripts=adopt takes the official asr.py's output.json)"
    if not root.exists():
        return f"{root} does not exist"
    if not root.is_dir():
        if root.name in (MANIFEST, ASR, "unified.json") and (root.parent / MANIFEST).is_file():
            return f"{root} is a file of the reference tree {root.parent}; give the folder: tree={root.parent}"
        return f"{root} is a file, not a reference tree folder (manifest.json, asr.json, <subset>/<id>/)"
    if (root / MANIFEST).exists():  # transcribed was asked for
        return (f"{root} was exported but not transcribed (manifest.json, no asr.json); run fdbu asr tree={root}, "
                "or export again with export.transcripts=adopt to take the official asr.py's output.json")
    if (root.parent / MANIFEST).is_file() and root.name in tasks.SUBSETS:
        return f"{root} is the {root.name} folder of the reference tree {root.parent}; give the tree: tree={root.parent}"
    what = found(root)
    if what.startswith("a Full-Duplex-Bench release"):
        return (f"{root} is {what}, not a reference tree; export it first: fdbu export dataset={root} out=TREE "
                "(export.transcripts=adopt takes the official asr.py's output.json), then fdbu score tree=TREE")
    if what.startswith("an official per-task folder"):
        subs = task_subsets(per_task_samples(root))
        return (f"{root} is {what}, not a reference tree; export it first: fdbu export "
                f"{roots_hint(root, subs)} out=TREE export.transcripts=adopt, then fdbu score tree=TREE")
    if what.startswith("no sample folders"):
        return f"{root} is not a reference tree (no manifest.json; {what}); make one with {fix_export}"
    return f"{root} is {what}, not a reference tree; make one with {fix_export}, or fdbu synth out=TREE"
