"""The package's layers: the CLI and the API stand side by side on `fdbu.commands`, the configs sit
above every module that does the work, and `import fdbu` (and so any `--help`) loads no torch."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import fdbu

ROOT = Path(fdbu.__file__).parent
HEAVY = ("torch", "numba", "nemo", "torchaudio", "silero_vad")


def imports_in(text: str, package: str) -> set[str]:
    """Every fdbu module a file of `package` imports, at any depth of the file (function-level too)."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("fdbu")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            if base.startswith("fdbu"):
                out.add(base)
                out |= {f"{base}.{a.name}" for a in node.names}
    return out


def imported(path: Path) -> set[str]:
    return imports_in(path.read_text(), ".".join(("fdbu", *path.relative_to(ROOT).parent.parts)))


def test_api_and_cli_do_not_import_each_other():
    assert "fdbu.cli" not in imported(ROOT / "api.py")
    assert "fdbu.api" not in imported(ROOT / "cli.py")
    assert "fdbu.commands" in imported(ROOT / "api.py") and "fdbu.commands" in imported(ROOT / "cli.py")


def test_no_module_below_config_imports_it():
    above = {ROOT / "cli.py", ROOT / "api.py", ROOT / "config.py"}
    files = [p for p in ROOT.rglob("*.py") if p not in above]
    assert len(files) > 40  # the whole package was found
    offenders = [str(p.relative_to(ROOT)) for p in files if "fdbu.config" in imported(p)]
    assert offenders == []


def test_the_import_check_sees_every_spelling():
    """The checker itself: each way a module can import the configs is seen, none of the near misses."""
    for text, package in (("def f():\n    from ..config import build\n", "fdbu.vad"),
                          ("from . import config\n", "fdbu"), ("import fdbu.config\n", "fdbu"),
                          ("from fdbu.config import build\n", "fdbu.metrics")):
        assert "fdbu.config" in imports_in(text, package), text
    for text, package in (("from .vad import config\n", "fdbu"), ("from . import configs\n", "fdbu"),
                          ("import omegaconf.config\n", "fdbu")):
        assert "fdbu.config" not in imports_in(text, package), text


def _modules_after(code: str) -> set[str]:
    """The modules loaded after `code` runs in a fresh interpreter (listed on stderr: help goes to stdout)."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules), file=sys.stderr)"],
                         capture_output=True, text=True, check=True)
    return set(out.stderr.split())


def test_import_fdbu_loads_no_torch():
    loaded = _modules_after("import fdbu")
    assert "fdbu" in loaded and not loaded & set(HEAVY)


@pytest.mark.parametrize("args", [["--help"], ["score", "--help"], ["sweep", "--help"], ["asr", "--help"],
                                  ["evaluate", "--help"]])
def test_help_loads_no_torch_numba_or_nemo(args):
    loaded = _modules_after(f"from fdbu.cli import main\nassert main({args!r}) == 0")
    assert "fdbu.cli" in loaded and not loaded & set(HEAVY)


def test_the_api_still_loads_on_first_use():
    loaded = _modules_after("import fdbu\nfdbu.score")
    assert "fdbu.api" in loaded and "fdbu.commands" in loaded
