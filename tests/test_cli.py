"""The `fdbu` console script: Hydra overrides, --cfg job, multirun, and one-line errors."""
import pytest
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


from builders import fdbu_main

FDBU = str(Path(sys.executable).parent / "fdbu")


def run(*args, cwd=None, cache=None):
    env = {**os.environ, **({"XDG_CACHE_HOME": str(cache)} if cache else {})}
    return subprocess.run([FDBU, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=env)


def test_help_lists_commands():
    out = run("--help")
    assert out.returncode == 0 and "score" in out.stdout and "synth" in out.stdout


def test_cfg_job_shows_the_composed_config():
    out = fdbu_main("score", "tree=/some/tree", "vad.threshold=0.4", "--cfg", "job")
    assert out.returncode == 0, out.stderr
    assert "tree: /some/tree" in out.stdout and "threshold: 0.4" in out.stdout and "resamples: 2000" in out.stdout


@pytest.mark.slow
def test_multirun_scores_two_trees_and_prints_the_summary(synth_tree, tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(synth_tree, a)
    synth = fdbu_main("synth", f"out={b}", "n=2", "seed=9", "progress=false")
    assert synth.returncode == 0, synth.stderr
    monkeypatch.chdir(tmp_path)
    out = fdbu_main("score", "-m", f"tree={a},{b}", "progress=false")
    assert out.returncode == 0, out.stderr
    for tree in (a, b):
        unified = json.loads((tree / "unified.json").read_text())
        assert unified["definitions"] == "fdb-v1.0-unified-4"
        assert unified["inputs"]["manifest.json"] and unified["speech_detection"]["model_sha256"]
        assert len((tree / "unified-samples.jsonl").read_text().splitlines()) > 0
    assert out.stdout.count("synthetic_user_interruption:") == 2
    assert "exercised_rate" in out.stdout and "bounds over all selected samples: exercised_rate [" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # Hydra left nothing in the cwd


def test_error_is_one_line_exits_non_zero_and_writes_nothing(synth_tree, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(synth_tree, tree)
    victim = next(p for p in sorted((tree / "candor_turn_taking").glob("*/output.json")))
    victim.write_text(victim.read_text().replace('"chunks"', '"chunks" ', 1))
    out = fdbu_main("score", f"tree={tree}", "progress=false")
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"fdbu: error: candor_turn_taking/{victim.parent.name}: output.json: SHA-256")
    assert not (tree / "unified.json").exists() and not (tree / "unified-samples.jsonl").exists()


def test_unknown_command_and_missing_tree(tmp_path):
    assert fdbu_main("frobnicate").returncode == 2
    out = fdbu_main("score", f"tree={tmp_path / 'nope'}")
    assert out.returncode == 2 and out.stderr == f"fdbu: error: tree: {tmp_path / 'nope'} does not exist\n"


def test_output_into_a_closed_pipe_is_not_a_bug():
    """`fdbu score --help | head -1`: the reader stops early; fdbu ends as SIGPIPE would, with no traceback."""
    r, w = os.pipe()
    os.close(r)
    proc = subprocess.run([FDBU, "score", "--help"], stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(w)
    assert proc.returncode == 141 and proc.stderr == ""


def test_the_command_list_fits_80_columns():
    """Issue 56, item 4: `fdbu --help` had 12 of its 15 lines over 80 columns and its sweep row ran into the next
    column. Every line fits a terminal of 80, and each command's shortest command line is under its name."""
    from fdbu import registry
    from fdbu.cli.main import usage

    text = usage()
    assert max(len(line) for line in text.splitlines()) <= 80, [x for x in text.splitlines() if len(x) > 80]
    for c in registry.COMMANDS.values():
        assert f"  {c.name:<10} {c.summary}\n               {c.usage}\n" in text + "\n", c.name


def test_the_examples_folder_is_named_where_a_checkout_has_none(tmp_path, monkeypatch):
    """Issue 56, item 4: `--config-dir conf/examples` outside a clone failed with no hint that the examples ship with
    fdbu; the refusal names where they are, and that folder works."""
    monkeypatch.chdir(tmp_path)
    out = fdbu_main("score", "--config-dir", "conf/examples", "--config-name", "score-modelA")
    assert out.returncode == 2 and "fdbu's examples are installed with it: --config-dir " in out.stderr, out.stderr
    shipped = out.stderr.strip().rsplit("--config-dir ", 1)[1]
    again = fdbu_main("score", "--config-dir", shipped, "--config-name", "score-modelA")
    assert "tree: runs/modelA does not exist" in again.stderr, again.stderr  # the file read: its tree is the example's


def test_no_command_s_config_sets_hydra_mode_so_the_cli_need_not_compose_it_twice():
    """fdbu.cli.main answers Hydra's `get_mode` without composing (it composed the whole config once only to read
    `hydra.mode`): true only while no command's config sets hydra.mode, which this composes and checks."""
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    from fdbu.config.store import register
    from fdbu.registry import COMMANDS

    register()
    for command in COMMANDS:
        with initialize_config_module("fdbu.conf", version_base="1.3"):
            hydra = GlobalHydra.instance().hydra
            assert hydra is not None
            cfg = hydra.compose_config(config_name=command, overrides=[], run_mode=RunMode.MULTIRUN,
                                       with_log_configuration=False, validate_sweep_overrides=False)
            assert cfg.hydra.mode is None, command


def test_a_command_composes_without_deep_copying_hydra_s_config_store(monkeypatch, tmp_path):
    """fdbu.cli.main lets Hydra's copy of its config repository share the ConfigStore (only read while composing; each
    node loaded from it is a copy): a command composes and runs without a deep copy of the store, leaves the store
    as it was, and leaves Hydra's class as it was."""
    import copy

    from hydra._internal.sources_registry import SourcesRegistry
    from hydra.core.config_store import ConfigStore

    from fdbu.config.store import register

    register()
    store = ConfigStore.instance()
    before = copy.deepcopy(store.repo)
    copies: list = []
    monkeypatch.setattr(ConfigStore, "__deepcopy__", lambda self, memo: copies.append(1) or self, raising=False)
    out = fdbu_main("score", f"tree={tmp_path / 'missing'}")
    assert out.returncode == 2 and "does not exist" in out.stderr, out.stderr  # composed, validated, run
    assert copies == []
    assert store.repo == before
    assert "__deepcopy__" not in vars(SourcesRegistry.instance().resolve("structured"))  # the class Hydra uses


@pytest.mark.parametrize("mode", ["hydra.mode=MULTIRUN", "hydra={mode:MULTIRUN}"])
def test_hydra_mode_on_the_command_line_is_still_hydra_s(synth_tree, tmp_path, monkeypatch, mode):
    """With hydra.mode set on the command line, in either spelling, Hydra reads it as before: MULTIRUN sweeps a comma
    list as -m does (two jobs)."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(synth_tree, a)
    shutil.copytree(synth_tree, b)
    monkeypatch.chdir(tmp_path)
    out = fdbu_main("score", f"tree={a},{b}", mode, "progress=false")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("synthetic_user_interruption:") == 2, out.stdout
    assert all((tree / "unified.json").is_file() for tree in (a, b))
