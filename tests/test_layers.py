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


def fdbu_imports(nodes, package: str):
    """(module, names) of each fdbu import among `nodes` in a file of `package`: `import fdbu.x` is (fdbu.x, []),
    `from .x import a, b` is (fdbu.x, [a, b]), relative levels resolved."""
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names if a.name.startswith("fdbu"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            if base.startswith("fdbu"):
                yield base, [a.name for a in node.names]


def loads(nodes) -> set[str]:
    """The fdbu modules loaded by name among `nodes`: `importlib.import_module("fdbu.x")` and `__import__("fdbu.x")`
    with a literal name (an import the statements above do not show, as control once loaded control_pairs)."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and node.args[0].value.startswith("fdbu") \
                and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                     or (isinstance(node.func, ast.Name) and node.func.id in ("__import__", "import_module"))):
            out.add(node.args[0].value)
    return out


def imports_in(text: str, package: str) -> set[str]:
    """Every fdbu module a file of `package` imports, at any depth of the file (function-level too)."""
    out = set()
    for base, names in fdbu_imports(ast.walk(ast.parse(text)), package):
        out |= {base, *(f"{base}.{n}" for n in names)}
    return out | loads(ast.walk(ast.parse(text)))


def runtime_imported(path: Path) -> set[str]:
    """`imported`, without the imports for type names only (`if TYPE_CHECKING:`), which never run."""
    package = ".".join(("fdbu", *path.relative_to(ROOT).parent.parts))
    out = set()
    for base, names in fdbu_imports(_runtime_nodes(ast.parse(path.read_text())), package):
        out |= {base, *(f"{base}.{n}" for n in names)}
    return out


def imported(path: Path) -> set[str]:
    return imports_in(path.read_text(), ".".join(("fdbu", *path.relative_to(ROOT).parent.parts)))


def test_api_and_cli_do_not_import_each_other():
    cli = imported(ROOT / "cli" / "main.py") | imported(ROOT / "cli" / "consoles.py")  # the CLI and the consoles it attaches
    assert not {"fdbu.cli.main", "fdbu.cli.consoles"} & imported(ROOT / "api.py")
    assert "fdbu.api" not in cli
    assert "fdbu.commands" in imported(ROOT / "api.py") and "fdbu.commands" in cli


def test_no_module_below_config_imports_it():
    """The configs (the commands', the groups they share, their keys and help) sit above every module that does the
    work: a module below receives checked values and never imports them when it runs (a command names its config's
    dataclass for its type only, under TYPE_CHECKING: `run(cfg: ScoreConfig, ...)`, which mypy checks)."""
    configs = {"fdbu.config.store", "fdbu.config.base", "fdbu.config.keys"}
    above = {ROOT / "cli" / "main.py", ROOT / "cli" / "consoles.py", ROOT / "cli" / "overrides.py", ROOT / "api.py", ROOT / "config" / "store.py",
             ROOT / "config" / "keys.py", ROOT / "cli" / "docs.py"}  # reference.py: the docs' settings pages, from the configs
    files = [p for p in ROOT.rglob("*.py") if p not in above]
    assert len(files) > 40  # the whole package was found
    offenders = [str(p.relative_to(ROOT)) for p in files if configs & runtime_imported(p) and p != ROOT / "config" / "base.py"]
    assert offenders == []


def test_the_import_check_sees_every_spelling():
    """The checker itself: each way a module can import the configs is seen, none of the near misses."""
    for text, package in (("def f():\n    from ..config.store import build\n", "fdbu.vad"),
                          ("from .config import store\n", "fdbu"), ("import fdbu.config.store\n", "fdbu"),
                          ("from fdbu.config.store import build\n", "fdbu.metrics")):
        assert "fdbu.config.store" in imports_in(text, package), text
    for text, package in (("from .vad import config\n", "fdbu"), ("from .config import settings\n", "fdbu"),
                          ("import omegaconf.config\n", "fdbu")):
        assert "fdbu.config.store" not in imports_in(text, package), text


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
    loaded = _modules_after(f"from fdbu.cli.main import main\nassert main({args!r}) == 0")
    assert "fdbu.cli.main" in loaded and not loaded & set(HEAVY)


def test_the_api_still_loads_on_first_use():
    loaded = _modules_after("import fdbu\nfdbu.score")
    assert "fdbu.api" in loaded and "fdbu.commands" in loaded


# ---- the import graph: no cycle, commands on top, no Hydra below the CLI -----------------------------------------

TOP = {"fdbu", "fdbu.__main__", "fdbu.cli.main", "fdbu.cli.consoles", "fdbu.api", "fdbu.commands",
       *(f"fdbu.commands.{p.stem}" for p in (ROOT / "commands").glob("*.py") if p.stem != "__init__")}  # the facade, the front ends, commands


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["fdbu", *parts])


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imports for type names only, never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            yield from (n for child in node.orelse for n in ast.walk(child))
            continue
        yield node
        yield from _runtime_nodes(node)


def import_graph() -> dict[str, set[str]]:
    """fdbu's modules (kernels/ is installed as fdbu.kernels) -> the fdbu modules each imports, imports inside
    functions counted, those only for type names (`if TYPE_CHECKING:`) not; `from .x import name` is an edge to fdbu.x.name where that is a module, else to fdbu.x."""
    kernels = ROOT.parent / "kernels"
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    if kernels.is_dir():  # the source checkout (an installed fdbu has them under fdbu/kernels already)
        files |= {"fdbu.kernels" + ("" if p.stem == "__init__" else f".{p.stem}"): p for p in kernels.glob("*.py")}

    def known(name: str) -> str:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        nodes = list(_runtime_nodes(ast.parse(path.read_text())))
        for base, names in fdbu_imports(nodes, package):
            found |= {known(f"{base}.{n}") for n in names} if names else {known(base)}
        found |= {known(m) for m in loads(nodes)}
        graph[name] = found - {name, ""}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest import chain (the graph has no cycle)."""
    memo: dict[str, list[str]] = {}

    def chain(v):
        if v not in memo:
            memo[v] = [v, *max((chain(w) for w in graph[v]), key=len, default=[])]
        return memo[v]
    return max((chain(v) for v in graph), key=len)


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 60 and "fdbu.kernels.outcomes" in graph and "fdbu.vad.calibration" in graph
    assert cycles(graph) == []
    # a ratchet: 23 modules before issue 51; 18 since the scored tree's reader imports no writer (fdbu.scoring.unified, the
    # pipeline) and no tree reader, the report reads summary.json without the evaluator, the configs import no
    # sweep, the calibration no generator (fdbu -> cli -> consoles -> commands -> commands.report -> site -> tables
    # -> board -> tree -> layout -> tasks -> a metric module -> ... -> kernels.results). A longer chain is a new
    # dependency someone should look at. 19 since the graph sees modules loaded by name (issue 74): v1.5's control
    # entry loaded control_pairs by name below the registry; declared in control_pairs it is one visible hop more.
    # 20 since each release is a folder whose __init__ declares it (tasks -> families.v1_5 -> its modules)
    assert len(longest_chain(graph)) <= 20, " -> ".join(longest_chain(graph))


def closure(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or not."""
    seen, todo = set(), [start]
    while todo:
        for m in graph[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return seen


def test_reading_a_scored_tree_needs_no_scoring_stack():
    """compare and report read scored trees (fdbu.scoring.scored) and the compare result without the writer of a score, the
    pipeline, speech detection or the ASR stage; and the writer of score's files needs no pipeline either."""
    graph = import_graph()
    stack = {"fdbu.scoring.unified", "fdbu.scoring.pipeline", "fdbu.vad", "fdbu.asr", "fdbu.scoring.sweep", "fdbu.commands"}
    for reader in ("fdbu.scoring.scored", "fdbu.comparison.systems", "fdbu.comparison.pairwise", "fdbu.comparison.compared"):
        used = {m for m in closure(graph, reader) if m in stack or m.startswith(("fdbu.vad.", "fdbu.asr."))}
        assert used == set(), (reader, sorted(used))
    assert "fdbu.scoring.pipeline" not in closure(graph, "fdbu.scoring.unified")


def test_the_official_rules_are_one_floor():
    """fdbu/official/'s floor is the pinned scripts' arithmetic and names (`rules`, `timing`, `behavior`, the
    scripts' `child` process): it imports only the leaves below it. Running the scripts themselves (which needs the
    tree, the rules and the judge: `runner`), summary.json (`evaluate`, `summary`) and the judge stand above it."""
    graph = import_graph()
    floor = {"fdbu.official", *(f"fdbu.official.{m}" for m in ("rules", "timing", "behavior", "child"))}
    leaves = {"fdbu.common.atomic", "fdbu.errors", "fdbu.config.settings"}
    folders = {"fdbu.common", "fdbu.config"}  # their __init__: a docstring
    assert floor <= set(graph) and all(graph[f] == set() for f in folders)
    for m in floor:
        assert graph[m] <= leaves | folders | floor, m
    assert all(graph[leaf] <= {"fdbu.errors"} | folders for leaf in leaves)
    above = {m for m in graph if m.startswith("fdbu.official.")} - floor
    assert {"fdbu.official.runner", "fdbu.official.evaluate"} <= above
    assert not any(graph[m] & above for m in floor)


def release_offenders(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module outside fdbu.families and the registry that imports a release's module, and those it imports."""
    family = {m for m in graph if m.startswith("fdbu.families.")}
    return {m: sorted(d & family) for m, d in graph.items()
            if d & family and not m.startswith("fdbu.families") and m != "fdbu.tasks"}


def test_no_layer_imports_a_releases_folder():
    """A release's folder (fdbu.families.<release>: its metric modules, hooks, run layout, reference rules) is
    reached through the task registry only: no layer (tree reading, speech detection, ASR, statistics, compare,
    report, the CLI, the API) imports one, by statement or by name, so the releases are registered alike and a new
    one is its folder and one line of fdbu.tasks.RELEASES; the metrics package holds only what they share."""
    graph = import_graph()
    assert {"fdbu.families.v1_0", "fdbu.families.v1_5.metrics", "fdbu.families.v2.runs"} <= set(graph)
    assert release_offenders(graph) == {}
    assert {m for m in graph if m.startswith("fdbu.metrics.")} == {
        "fdbu.metrics.base", "fdbu.metrics.stats", "fdbu.metrics.table", "fdbu.metrics.paired", "fdbu.metrics.flat"}
    from fdbu import tasks

    assert [f.name for f in tasks.RELEASES] == list(tasks.FAMILIES)[:3] == ["v1.0", "v1.5", "v2"]
    on_disk = sorted(p.name for p in (ROOT / "families").iterdir() if (p / "__init__.py").is_file())
    assert on_disk == ["v1_0", "v1_5", "v2"]


def test_the_layer_check_finds_a_layer_importing_a_release():
    """The check itself: a layer that loads a release's module by name (as control once loaded control_pairs) is
    named."""
    graph = import_graph()
    code = "import importlib\n\ndef f():\n    return importlib.import_module('fdbu.families.v2.metrics')\n"
    leaked = {**graph, "fdbu.scoring.pipeline": graph["fdbu.scoring.pipeline"] | loads(ast.walk(ast.parse(code)))}
    assert release_offenders(leaked) == {"fdbu.scoring.pipeline": ["fdbu.families.v2.metrics"]}


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    """The checker itself: the cycle the writer once closed (outputs importing the commands' modules inside a
    function to learn their file names) is found, and so is a three-module ring."""
    graph = import_graph()
    closed = {**graph, "fdbu.common.outputs": graph["fdbu.common.outputs"] | {"fdbu.scoring.unified"}}
    assert any({"fdbu.common.outputs", "fdbu.scoring.unified"} <= set(c) for c in cycles(closed))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_import_graph_sees_a_module_loaded_by_name():
    """importlib.import_module("fdbu.x") and __import__("fdbu.x") are edges too: v1.5's control once loaded
    control_pairs by name (control -> control_pairs -> overlap -> control), a cycle no import statement showed."""
    code = ("import importlib\n\ndef f():\n    return importlib.import_module('fdbu.families.v1_5.control_pairs')\n"
            "def g():\n    return __import__('fdbu.families.v1_5.metrics')\n")
    assert loads(ast.walk(ast.parse(code))) == {"fdbu.families.v1_5.control_pairs", "fdbu.families.v1_5.metrics"}
    graph = import_graph()
    closed = {**graph, "fdbu.families.v1_5.control": graph["fdbu.families.v1_5.control"] | loads(ast.walk(ast.parse(code)))}
    assert any({"fdbu.families.v1_5.control", "fdbu.families.v1_5.control_pairs", "fdbu.families.v1_5.metrics"} <= set(c)
               for c in cycles(closed))


def test_no_lower_module_imports_a_command_module():
    """fdbu.commands, the CLI and the API are the top: nothing below imports them (the writer learns a command's
    file names from fdbu.registry, a leaf)."""
    graph = import_graph()
    offenders = {m: sorted(d & TOP) for m, d in graph.items() if m not in TOP and d & TOP}
    assert offenders == {}
    assert graph["fdbu.registry"] == set()


def test_the_commands_layer_reads_no_hydra():
    """A command runs the same from the API as from the CLI: the launcher's share of the cores is passed in."""
    names = set()
    for path in (ROOT / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
    assert names and not {n for n in names if n.split(".")[0] in ("hydra", "hydra_plugins")}


# where a console is the point: the CLI and its handler of notes, the Hydra launcher (its console under Hydra), a maintainer's script,
# the install step compiling the kernels, and the child process an official script runs in (its last line of stdout is read by
# the parent)
PRINTERS = {"fdbu.cli.main", "fdbu.cli.consoles", "fdbu.cli.terminal", "fdbu.common.log", "fdbu.cli.launcher", "fdbu.synth.render_bank", "fdbu.common.compile_kernels", "fdbu.official.child"}


def test_no_module_below_the_commands_prints():
    """Notes go through logging (fdbu.common.log): no print() and no write to sys.stderr/stdout below the CLI."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        if _module(path) in PRINTERS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                if (isinstance(f, ast.Name) and f.id == "print") or (
                        isinstance(f, ast.Attribute) and f.attr in ("write", "flush") and
                        isinstance(f.value, ast.Attribute) and f.value.attr in ("stderr", "stdout")) or (
                        isinstance(f, ast.Attribute) and f.attr == "write" and isinstance(f.value, ast.Name) and
                        f.value.id == "tqdm"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_facts_declared_in_settings_are_written_nowhere_else():
    """The model's name, the figures' default width and the largest integer are fdbu.config.settings' (PARAKEET, WIDTH,
    MAX_INT): no other module writes them as literals (a copy drifts: plot once fell back to 1000 resamples)."""
    from fdbu.config.settings import PARAKEET, WIDTH

    offenders = []
    for path in ROOT.rglob("*.py"):
        if path.name == "settings.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):  # the name, or a text holding it (a help string), outside the docstrings
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and PARAKEET in node.value and \
                    id(node) not in docstrings:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {PARAKEET!r}")
            if isinstance(node, ast.BinOp) and ast.unparse(node).replace(" ", "") in ("2**63-1", "2**63"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} 2**63")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
                args = node.args.args[len(node.args.args) - len(node.args.defaults):] + \
                    [a for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
                offenders += [f"{path.relative_to(ROOT)}:{node.lineno} width={WIDTH!r}" for a, d in zip(args, defaults)
                              if a.arg == "width" and isinstance(d, ast.Constant) and d.value == WIDTH]
    assert offenders == []


def test_names_declared_once_are_written_once():
    """The official scripts' file names are fdbu.official's (the task registry names them from there); the segment
    settings have one spelling (silero-vad's keywords, settings.SEGMENT and AXES): the sweep's old ones (min_silence_ms,
    min_speech_ms, a "thresholds" axis) appear nowhere in the package."""
    from fdbu.official import OFFICIAL_FILES

    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in OFFICIAL_FILES and rel != "official/__init__.py":
                offenders.append(f"{rel}:{node.lineno} {node.value!r}")
            named = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
                node.arg if isinstance(node, ast.arg) else node.value if isinstance(node, ast.Constant) else None
            if named in ("min_silence_ms", "min_speech_ms", "pad_ms", "thresholds", "sweep.thresholds"):
                offenders.append(f"{rel}:{node.lineno} {named}")
    assert offenders == []


def test_every_package_folder_is_installed():
    """pyproject.toml lists its packages by name (kernels/ and conf/ install under fdbu): a folder of modules left
    off the list works in the editable checkout and is missing from a wheel, so each one must be listed."""
    import tomllib

    pyproject = ROOT.parent / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("an installed fdbu: no pyproject.toml beside it")
    listed = set(tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(("fdbu", *p.parent.relative_to(ROOT).parts)) for p in ROOT.rglob("__init__.py")}
    assert folders and folders <= listed, sorted(folders - listed)


def _ruff_count(*args: str) -> int:
    """How many findings ruff reports over fdbu/ (and the kernels where named) with the given rule."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                          "--exit-zero", *args], cwd=ROOT.parent, capture_output=True, text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if line.startswith(("fdbu/", "kernels/")))


def test_the_house_keeps_its_size():
    """A ratchet on what made the code hard to carry on (issue 74): no module over 500 lines, no function over 80,
    at most 22 functions of fdbu/ and kernels/ above ruff's complexity 10 (C901), at most 46 of fdbu/ taking more
    than 5 arguments (ruff's PLR0913; the numba kernels take flat arrays, so kernels/ is not counted). A new one is
    split, or grouped into a value (`comparison.pairwise.Pairing`, `asr.stage.Batching`), not let in."""
    files = [*ROOT.rglob("*.py"), *(ROOT.parent / "kernels").glob("*.py")]
    long_modules = [str(p) for p in files if len(p.read_text().splitlines()) > 500]
    long_functions = [f"{p.name}:{n.name}" for p in files for n in ast.walk(ast.parse(p.read_text()))
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno >= 80]
    assert long_modules == [] and long_functions == []
    assert _ruff_count("--select", "C901", "--config", "lint.mccabe.max-complexity=10", "fdbu", "kernels") <= 22
    assert _ruff_count("--select", "PLR0913", "fdbu") <= 46
    assert _ruff_count("--select", "PLR0913", "kernels") > 0  # the count reads ruff's findings
