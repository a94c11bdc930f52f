"""What a folder a user points fdbu at is: a reference tree, a release, an official per-task folder, ...

A wrong `tree=` or `export.roots=` is named for what it is, with the command that turns it into
what the command needs (docs: Scoring your system's outputs). Only names and file types are
looked at (no file is read), so a diagnosis costs a few directory listings.
"""
from __future__ import annotations

from pathlib import Path

from .. import tasks

MANIFEST, ASR = "manifest.json", "asr.json"


def sample_dirs(folder: Path) -> list[Path]:
    """Sample-like sub-folders: not hidden, not what the official scripts skip (`.md`, `.DS_Store`)."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and not p.name.endswith((".md", ".DS_Store")))
    except OSError:
        return []


def annotation_subsets() -> dict[str, list[str]]:
    """annotation file -> the subsets whose samples carry it."""
    out: dict[str, list[str]] = {}
    for name, s in tasks.SUBSETS.items():
        if s.task.annotation:
            out.setdefault(s.task.annotation, []).append(name)
    return out


def sample_annotations(folder: Path) -> list[str]:
    """The task annotation files a sample folder holds."""
    return [a for a in annotation_subsets() if (folder / a).is_file()]


def task_subsets(samples: list[Path]) -> list[str]:
    """The subsets a per-task folder's samples could be, from the annotation they carry (none: backchannel)."""
    found = sorted({a for d in samples[:5] for a in sample_annotations(d)})
    if not found:
        return [n for n, s in tasks.SUBSETS.items() if s.task.annotation is None]
    return [n for a in found for n in annotation_subsets()[a]]


def per_task_samples(folder: Path) -> list[Path]:
    return [d for d in sample_dirs(folder) if (d / "input.wav").is_file()]


def release_subsets(folder: Path) -> list[str]:
    """The subsets of a release folder (`<subset>/<id>/input.wav`)."""
    return [s for s in tasks.SUBSETS if per_task_samples(folder / s)]


def marked_files() -> tuple[str, ...]:
    """The files beside input.wav that mark a release's sample folder (each family's `files`: v1.5's clean run and
    metadata.json)."""
    return tuple(f for fam in tasks.FAMILIES.values() for f in fam.files)


def folder_family(samples: list[Path]):
    """The family (fdbu.family.Family) whose sample folders these are: the first whose files (`Family.files`) one
    of the first five holds, else the first that marks none (v1.0)."""
    for fam in tasks.FAMILIES.values():
        if fam.files and any((d / f).is_file() for d in samples[:5] for f in fam.files):
            return fam
    return next(fam for fam in tasks.FAMILIES.values() if not fam.files)


def task_folders(folder: Path) -> list[Path]:
    """The official per-task folders directly inside `folder` (as upstream's evaluation/example_data holds them)."""
    return [d for d in sample_dirs(folder) if per_task_samples(d)]


def official_tasks() -> dict[str, list[str]]:
    """Official task name (evaluate.py --task; eval_<task>.py) -> the subsets of that task."""
    out: dict[str, list[str]] = {}
    for name, s in tasks.SUBSETS.items():
        if s.task.official is None or not s.task.official.via_evaluate:  # evaluate.py --task names these
            continue
        out.setdefault(s.task.official.script.removeprefix("eval_").removesuffix(".py"), []).append(name)
    return out


def mapping(folders: list[Path]) -> tuple[dict[str, Path], list[str]]:
    """subset -> per-task folder for `export.roots`, from each folder's annotation (and, between two subsets of
    one task, a dataset name in the folder's name: candor, synthetic, icc); notes where the choice is a guess."""
    chosen: dict[str, Path] = {}
    notes = []
    for folder in folders:
        candidates = [c for c in task_subsets(per_task_samples(folder)) if c not in chosen]
        if not candidates:
            notes.append(f"{folder.name} left out: its task's subsets are taken by other folders")
            continue
        named = ([c for c in candidates if c in folder.name.lower()] or  # v1.5's folders are named by subset
                 [c for c in candidates if c.split("_")[0] in folder.name.lower()])
        pick = (named or candidates)[0]
        if len(candidates) > 1 and not named:
            ann = tasks.subset(pick).task.annotation or "no annotation"
            notes.append(f"{folder.name}: {' or '.join(candidates)}, both with {ann}; mapped to {pick}, change the "
                         "key if it holds the other")
        chosen[pick] = folder
    return chosen, notes


def roots_command(chosen: dict[str, Path], notes: list[str]) -> str:
    roots = ", ".join(f"{s}: {f}" for s, f in chosen.items())
    return (f"fdbu export \"export.roots={{{roots}}}\" export.transcripts=adopt out=TREE, then fdbu score tree=TREE"
            + (f" ({'; '.join(notes)})" if notes else ""))


def roots_hint(folder: Path, subsets: list[str]) -> str:
    return "\"export.roots={" + ", ".join(f"{s}: {folder}" for s in subsets[:1]) + "}\""


def _file(path: Path) -> str:
    """What a file is, in a few words."""
    parent = path.parent
    if path.name in ("input.wav", "output.wav", "output.json", *marked_files()) and (
            (parent / "input.wav").is_file() or (parent.parent.parent / MANIFEST).is_file()):
        return f"the {path.name} of the sample folder {parent}"
    kind = {".wav": "a WAV file", ".json": "a JSON file", ".jsonl": "a JSON lines file", ".yaml": "a YAML file",
            ".nemo": "a NeMo checkpoint"}.get(path.suffix.lower(), "a file")
    return kind


def what(folder: Path) -> tuple[str, str]:
    """(kind, what is there in a few words): missing, file, empty, tree, release, per-task, roots, family-run (a
    family's own run layout: v2's output root), sample, tree-sample or other. Only names and file types are looked at."""
    if not folder.exists():
        return "missing", "nothing: it does not exist"
    if not folder.is_dir():
        return "file", _file(folder)
    try:
        entries = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    except OSError as e:
        return "other", f"a folder that cannot be listed ({e.strerror or e})"
    if not entries:
        return "empty", "an empty folder"
    if (folder / MANIFEST).is_file():
        return "tree", "a reference tree (manifest.json)"
    subs = release_subsets(folder)
    if subs:
        return "release", (f"a Full-Duplex-Bench {' and '.join(tasks.family_of(subs))} release (<subset>/<id>/input.wav "
                           f"for {', '.join(subs)})")
    samples = per_task_samples(folder)
    marked = folder_family(samples) if samples else None
    if marked is not None and marked.files:
        return "per-task", (f"a Full-Duplex-Bench {marked.name} per-task folder of {' or '.join(task_subsets(samples))} "
                            f"samples (<id>/input.wav, {', '.join(marked.files)})")
    if samples:
        return "per-task", (f"an official per-task folder of {' or '.join(task_subsets(samples))} samples "
                            f"(<id>/input.wav, {', '.join(sample_annotations(samples[0])) or 'no annotation'})")
    run = family_run(folder)
    if run is not None:
        return "family-run", run[1]
    inner = task_folders(folder)
    if inner:
        return "roots", f"a folder of official per-task folders ({', '.join(d.name for d in inner)})"
    if (folder / "input.wav").is_file():
        return "sample", "one sample's folder (input.wav directly in it)"
    if (folder.parent.parent / MANIFEST).is_file() and folder.parent.name in tasks.SUBSETS:
        return "tree-sample", f"the sample folder {folder.parent.name}/{folder.name} of the reference tree {folder.parent.parent}"
    if (folder / "output.wav").is_file():
        return "sample", "one sample's folder (output.wav directly in it)"
    shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
    return "other", f"no sample folders (it holds {shown})"


def family_run(folder: Path):
    """(the family, the folder in words) when a family with a run layout of its own (fdbu.family.Layout) knows the
    folder; else None."""
    for family in tasks.FAMILIES.values():
        said = family.layout.what(folder) if family.layout is not None else None
        if said:
            return family, said
    return None


def found(folder: Path) -> str:
    """What is in a folder that is not what was expected, in a few words."""
    return what(folder)[1]


def next_step(folder: Path) -> str | None:
    """For a folder that is not a reference tree: what turns it into one, as a command (None: nothing does)."""
    kind, _ = what(folder)
    if kind == "release":
        return (f"export it first: fdbu export dataset={folder} out=TREE (export.transcripts=adopt takes the "
                "official asr.py's output.json), then fdbu score tree=TREE")
    if kind == "per-task":
        chosen, notes = mapping([folder])
        return "export it first: " + roots_command(chosen, notes)
    if kind == "roots":
        chosen, notes = mapping(task_folders(folder))
        return "export them first: " + roots_command(chosen, notes)
    if kind == "tree-sample":
        return f"give the tree: tree={folder.parent.parent}"
    if kind == "family-run":
        return family_run(folder)[0].layout.hint(folder)
    if kind == "sample":
        parent = Path(folder).resolve().parent
        if parent == Path(folder).resolve():  # the file system's root: nothing above
            return None
        step = next_step(parent) if what(parent)[0] != "sample" else None  # a sample's folder holds no sample
        return f"its folder {parent} is {found(parent)}" + (f"; {step}" if step else "")
    return None


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
        return f"{root} is {_file(root)}, not a reference tree folder (manifest.json, asr.json, <subset>/<id>/)"
    if (root / MANIFEST).exists():  # transcribed was asked for
        return (f"{root} was exported but not transcribed (manifest.json, no asr.json); run fdbu asr tree={root}, "
                "or export again with export.transcripts=adopt to take the official asr.py's output.json")
    if (root.parent / MANIFEST).is_file() and root.name in tasks.SUBSETS:
        return f"{root} is the {root.name} folder of the reference tree {root.parent}; give the tree: tree={root.parent}"
    kind, text = what(root)
    step = next_step(root)
    if kind == "other":
        return f"{root} is not a reference tree (no manifest.json; {text}); make one with {fix_export}"
    if step is not None:
        return f"{root} is {text}, not a reference tree; {step}"
    return f"{root} is {text}, not a reference tree; make one with {fix_export}, or fdbu synth out=TREE"
