"""Outputs are written atomically and never replace files fdbu did not write."""
import json

import pytest

from fdbu.common import atomic
from fdbu.errors import FdbuError
from fdbu.scoring.unified import write
from fdbu.scoring.pipeline import Scored


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "unified.json"
    path.write_text("old")

    def boom(*a):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError):
        atomic.write_text(path, "new")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["unified.json"]


def test_refuses_to_replace_a_foreign_unified_json(tmp_path):
    (tmp_path / "unified.json").write_text('{"mine": true}')
    scored = Scored(unified={"generator": "fdbu"}, rows=[])
    with pytest.raises(FdbuError, match="not written by fdbu"):
        write(scored, tmp_path)
    assert (tmp_path / "unified.json").read_text() == '{"mine": true}'
    (tmp_path / "unified.json").unlink()
    (tmp_path / "unified-samples.jsonl").write_text("x")
    with pytest.raises(FdbuError):
        write(scored, tmp_path)


def test_replaces_its_own_output(tmp_path):
    write(Scored(unified={"generator": "fdbu", "v": 1}, rows=[{"a": 1}]), tmp_path)
    write(Scored(unified={"generator": "fdbu", "v": 2}, rows=[]), tmp_path)
    assert json.loads((tmp_path / "unified.json").read_text())["v"] == 2
