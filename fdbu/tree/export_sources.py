"""Where `fdbu export` reads: a release's subset folders (`<dataset>/<subset>/<id>/`), or the official per-task
folders `export.roots` maps to subsets (each checked to be that subset's, a folder of the other release named as
such), and the sample folders in them in the official scripts' order. No audio is read here (and no torch loaded)."""
from __future__ import annotations

from pathlib import Path
from typing import cast

from . import layout
from .. import tasks
from ..errors import FdbuError
from .load import SAFE_NAME


def _sort_key(name: str):
    return (0, int(name), name) if name.isdigit() else (1, 0, name)


def folders(dataset: Path | None, roots: dict | None) -> dict[str, Path]:
    """subset -> the folder holding its `<id>/` sample folders, in the registry's order: `<dataset>/<subset>`
    of a release, or each folder `roots` maps a subset to (checked to be that subset's official folder)."""
    if roots is None:
        release = cast(Path, dataset)  # export passes a dataset whenever it passes no roots
        return {s: release / s for s in tasks.SUBSETS if (release / s).is_dir()}
    unknown = [s for s in roots if s not in tasks.SUBSETS]
    if unknown:
        official = layout.official_tasks().get(unknown[0])
        if official:  # evaluate.py's --task names the task; export.roots names the subset (the dataset's split)
            which = (f"its subset is {official[0]}" if len(official) == 1 else
                     f"its subsets are {' and '.join(official)}: pick the one the folder holds (Candor's "
                     "conversations or the synthetic set)")
            raise FdbuError("config", None, f"export.roots: {unknown[0]!r} is the official task name (evaluate.py "
                            f"--task); {which}, e.g. \"export.roots={{{official[0]}: {roots[unknown[0]]}}}\"")
        raise FdbuError("config", None, f"export.roots: {unknown[0]!r} is not a subset; known: {', '.join(tasks.SUBSETS)}")
    seen: dict[Path, str] = {}
    for subset, folder in roots.items():
        key = Path(folder).resolve()
        if key in seen:
            raise FdbuError("config", None, f"export.roots maps {seen[key]} and {subset} to the same folder {folder}")
        seen[key] = subset
        check_root(subset, Path(folder))
    return {s: Path(roots[s]) for s in tasks.SUBSETS if s in roots}


def check_root(subset: str, folder: Path) -> None:
    """A folder mapped to `subset` must be its official per-task folder: `<id>/input.wav` and the subset's
    annotation, and no other task's annotation in its place; a folder of the other release (v1.0 for a v1.5 subset,
    and the reverse) is named as such."""
    ann = tasks.subset(subset).task.annotation
    family = tasks.subset(subset).family
    expected = f"<id>/input.wav{' and <id>/' + ann if ann else ' without a task annotation'} (a {subset} folder)"
    samples = layout.per_task_samples(folder) if folder.is_dir() else []
    wrong = None
    for d in samples:
        others = [a for a in layout.sample_annotations(d) if a != ann]
        if others and (ann is None or not (d / ann).is_file()):
            theirs = layout.annotation_subsets()[others[0]]
            wrong = f"{d.name}/{others[0]} (a {' or '.join(theirs)} sample)"
            other = tasks.family_of(theirs)
            if other != [family]:
                wrong += f": a Full-Duplex-Bench {' and '.join(other)} folder, and {subset} is a {family} subset"
            break
        marks = tasks.FAMILIES[family].files
        if marks and layout.folder_family([d]).name != family:
            wrong = (f"{d.name}/ without {' or '.join(marks)}: a Full-Duplex-Bench {layout.folder_family([d]).name} "
                     f"folder, and {subset} is a {family} subset")
            break
    if not samples or wrong:
        raise FdbuError(f"export.roots.{subset}", None, f"{folder}: expected {expected}; found "
                        f"{wrong or layout.found(folder)}")


def discover(sources: dict[str, Path], only: list[str] | None, where: Path | None = None) -> list[tuple[str, str]]:
    """(subset, id) of every sample folder, in subset order then numeric id order."""
    found = []
    for subset, folder in sources.items():
        for d in sorted(layout.sample_dirs(folder), key=lambda p: _sort_key(p.name)):  # as the official scripts skip
            if not SAFE_NAME.match(d.name):
                raise FdbuError(f"{subset}/{d.name}", None, "is not a plain sample folder name")
            found.append((subset, d.name))
    if only is not None:
        wanted = list(dict.fromkeys(only))
        have = {f"{s}/{i}" for s, i in found}
        missing = [w for w in wanted if w not in have]
        if missing:
            raise FdbuError("config", None, f"export.only names samples the dataset does not have: {missing[:5]}")
        found = [(s, i) for s, i in found if f"{s}/{i}" in set(wanted)]
    if not found and where is None:
        raise FdbuError("config", None, "export.only leaves no sample to export")
    if not found:
        assert where is not None  # the check above raised without one
        raise FdbuError("dataset", None, f"{where}: expected a Full-Duplex-Bench release (<subset>/<id>/input.wav "
                        "for subsets " + " or ".join(f"of {f} ({', '.join(tasks.release_sizes(f))})" for f in tasks.FAMILIES)
                        + f"); found {layout.found(where)}"
                        + _per_task_hint(where))
    return found


def _per_task_hint(folder: Path) -> str:
    """For per-task folders given as dataset= (one, or the folder holding them): the export that reads them."""
    kind, _ = layout.what(folder)
    if kind == "per-task":
        return f"; map it instead: {layout.roots_hint(folder, layout.task_subsets(layout.per_task_samples(folder)))}"
    if kind == "roots":
        chosen, notes = layout.mapping(layout.task_folders(folder))
        return "; map them instead: " + layout.roots_command(chosen, notes)
    return ""
