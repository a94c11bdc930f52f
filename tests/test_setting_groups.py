"""A family's settings group on a tree without that family changes nothing: refused in one line, not ignored
(issue 76: `session.window_s=2` on a v1.0 tree gave a unified.json byte-identical to the default's). Walks every
registered group, every setting of it, against a tree of every other family, read from the registries."""
from __future__ import annotations

import dataclasses

import pytest

from builders import fdbu_main
from fdbu import tasks
from fdbu.errors import FdbuError


def changed_values(group) -> list[tuple[str, str]]:
    """(key, a value other than its default that the group's checks accept) for each setting of `group`."""
    out = []
    for f in dataclasses.fields(group.config):
        default = getattr(group.config(), f.name)
        if isinstance(default, bool):
            tries = [not default]
        elif isinstance(default, int):
            tries = [default + 1, default - 1]
        elif isinstance(default, float):
            tries = [round(default + 0.25, 3), round(default - 0.25, 3)]
        elif isinstance(default, list):
            tries = [default[:-1], default[1:], [*default, 7], [100]] if default else [[100], [0.25]]
        else:
            continue
        for value in tries:
            try:
                if group.config(**{f.name: value}).settings().non_default():
                    out.append((f"{group.key}.{f.name}", str(value).replace(" ", "")))
                    break
            except (FdbuError, ValueError, TypeError):
                continue
    return out


GROUPS = [g for g in tasks.groups("score")]
OTHERS = [(g, other) for g in GROUPS for other in tasks.FAMILIES.values()
          if other.settings is not g]


def test_every_group_has_a_setting_the_walk_changes():
    assert GROUPS and all(changed_values(g) for g in GROUPS)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """One small synthetic tree per family (family name -> path), made when first asked for."""
    made = {}

    def get(family: str):
        if family not in made:
            out = tmp_path_factory.mktemp("groups") / family
            done = fdbu_main("synth", f"out={out}", f"family={family}", "n=1", "seed=1", "progress=false")
            assert done.returncode == 0, done.stderr
            made[family] = out
        return made[family]
    return get


@pytest.mark.slow
@pytest.mark.parametrize("group, other", OTHERS, ids=[f"{g.key}-on-{o.name}" for g, o in OTHERS])
def test_a_group_whose_family_the_tree_lacks_is_refused(trees, tmp_path, group, other):
    tree = trees(other.name)
    owner = next(f.name for f in tasks.FAMILIES.values() if f.settings is group)
    for key, value in changed_values(group):
        out = fdbu_main("score", f"tree={tree}", f"out={tmp_path / 'out'}", f"{key}={value}", "progress=false")
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr
        assert lines[0].startswith(f"fdbu: error: config: {key}=") and f"read only on {owner} subsets" in lines[0], \
            lines[0]
        assert not (tmp_path / "out").exists()
    key, value = changed_values(group)[0]
    if "sweep" in group.commands and any(s.task.speech_detection for s in other.subsets):  # else nothing to sweep
        out = fdbu_main("sweep", f"tree={tree}", f"out={tmp_path / 'sweep'}", f"{key}={value}", "progress=false",
                        "plot=false", "sweep.threshold=[0.5]", "sweep.min_silence_duration_ms=[100]")
        assert out.returncode == 2 and f"read only on {owner} subsets" in out.stderr, out.stderr
