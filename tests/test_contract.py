"""The contract between the releases and the layers is typed, and mypy holds every implementation to it: a command's
function must return a `Ran`, a layout's hooks must have the protocols' signatures, also where a release names
them by `Ref` (loaded when first called; bound to the protocols under TYPE_CHECKING in its folder)."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WRONG = '''
from pathlib import Path

from fdbu import registry
from fdbu.family import LayoutExport, LayoutWhat


def export(root: Path, out: Path, *, judge: int = 0) -> Path:  # judge of the wrong type, no transcripts=
    return out


def what(folder: Path) -> bool:  # not a description
    return False


_export: LayoutExport = export
_what: LayoutWhat = what


@registry.command("score")
def run(cfg, call: registry.Call = registry.CALL) -> dict:  # not a Ran
    return {}
'''

RIGHT = '''
from pathlib import Path

from fdbu import registry
from fdbu.commands.base import Ran
from fdbu.family import LayoutExport, LayoutWhat


def export(root: Path, out: Path, *, judge: Path | None = None, transcripts: str = "none", model: str = "m",
           only: list[str] | None = None, progress: bool = False) -> Path:
    return out


def what(folder: Path) -> str | None:
    return None


_export: LayoutExport = export
_what: LayoutWhat = what


@registry.command("score")
def run(cfg, call: registry.Call = registry.CALL) -> Ran:
    return Ran(None)
'''


def _mypy(tmp_path: Path, **files: str) -> dict[str, list[str]]:
    """mypy (a process of its own, the project's settings and cache) over the given modules, each module's errors.
    Their names are made unique: mypy's cache knows a module by its name."""
    import subprocess
    import sys
    import uuid

    tag = uuid.uuid4().hex[:12]
    paths = {name: tmp_path / f"contract_{name}_{tag}.py" for name in files}
    for name, code in files.items():
        paths[name].write_text(code)
    out = subprocess.run([sys.executable, "-m", "mypy", *map(str, paths.values()), "--config-file",
                          str(REPO / "pyproject.toml"), "--cache-dir", str(REPO / ".mypy_cache")],
                         capture_output=True, text=True, cwd=REPO, timeout=300).stdout
    return {name: [line for line in out.splitlines() if line.startswith(str(path)) and ": error:" in line]
            for name, path in paths.items()}


def test_mypy_refuses_a_hook_or_a_command_with_the_wrong_signature(tmp_path):
    errors = _mypy(tmp_path, wrong=WRONG, right=RIGHT)
    said = "\n".join(errors["wrong"])
    assert len(errors["wrong"]) == 3, said
    assert '"LayoutExport"' in said and '"LayoutWhat"' in said and '"Run"' in said
    assert errors["right"] == []


def test_a_release_binds_the_hooks_it_names_by_ref_to_the_protocols():
    """v2's layout hooks are Refs (its run layout loads torch-free but late): its folder binds each function to its
    protocol for mypy, one binding per Layout field it fills."""
    import ast

    from fdbu import tasks

    source = (REPO / "fdbu" / "families" / "v2" / "__init__.py").read_text()
    bound = {node.annotation.id for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.AnnAssign) and isinstance(node.annotation, ast.Name)}
    layout = tasks.FAMILIES["v2"].layout
    filled = {f for f in ("what", "hint", "export", "synth", "said") if getattr(layout, f) is not None}
    assert {f"Layout{f.capitalize()}" for f in filled} <= bound
