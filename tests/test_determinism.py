"""Same tree, same bytes out: two runs of the scorer write identical files."""
import shutil

from fdbu.scoring.unified import write
from fdbu.scoring.pipeline import score_path


def test_two_runs_write_identical_bytes(synth_tree, vad, boot, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(synth_tree, tree)
    write(score_path(tree, vad, boot), tree)
    first = {p: (tree / p).read_bytes() for p in ("unified.json", "unified-samples.jsonl")}
    write(score_path(tree, vad, boot), tree)  # rerun on the same tree, over its own outputs
    assert {p: (tree / p).read_bytes() for p in first} == first
    # the output does not depend on where the tree lives
    moved = tmp_path / "elsewhere"
    shutil.copytree(synth_tree, moved)
    write(score_path(moved, vad, boot), moved)
    assert {p: (moved / p).read_bytes() for p in first} == first
