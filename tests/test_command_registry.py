"""fdbu.registry: each command registered once, and every layer reading it (the CLI's usage and dispatch, the
configs, the writer's recovery); a command that lacks a part, or writes a name the registry does not declare,
fails here rather than in a user's stopped run."""
import logging
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from fdbu import registry


def test_every_command_is_whole():
    import fdbu.cli.main  # noqa: F401  (attaches the consoles)
    import fdbu.commands  # noqa: F401
    import fdbu.config.store  # noqa: F401

    assert registry.check() == []
    conf = Path(fdbu.__file__).parent / "conf"
    if not conf.is_dir():
        conf = Path(fdbu.__file__).parent.parent / "conf"
    # no file per command: Hydra composes each from the ConfigStore (fdbu.config.store.register)
    assert [p.name for p in conf.glob("*.yaml")] == ["common.yaml"]


def test_the_cli_and_the_configs_read_the_registry():
    from fdbu.cli import main as cli
    from fdbu.config import store as config

    assert list(config.CONFIGS) == list(registry.COMMANDS)
    for name, c in registry.COMMANDS.items():
        assert f"  {name:<10} {c.summary}" in cli.usage() and c.usage in cli.usage()
        assert cli.main([name, "--help"]) == 0  # its config's keys, from the registered dataclass


def test_the_registry_declares_exactly_the_files_each_command_writes():
    """Every writer's announced names (its `names`, attached where the command lives) match its `writes` patterns,
    and every pattern matches some name: read from the registry, so a new writer is checked with no edit here."""
    import fdbu.commands  # noqa: F401  (attaches each command's names)

    produced = {c.name: c.names() for c in registry.COMMANDS.values() if c.writes and c.names is not None}
    assert set(produced) == {c.name for c in registry.COMMANDS.values() if c.writes}
    assert {"score", "report"} <= set(produced)
    for name, names in produced.items():
        c = registry.COMMANDS[name]
        assert [n for n in names if not c.owns(n)] == [], name
        assert [p for p in c.writes if not any(fnmatchcase(n, p) for n in names)] == [], name  # none stale
    report = registry.COMMANDS["report"]
    assert not report.owns("samples-x.js") and report.owns("samples-11-10.js")
    assert not any(report.owns(n) for n in ("samples-0/../../x.js", "../index.html", "sub/index.html", "samples-..js"))


def test_the_writer_refuses_a_name_no_registry_entry_declares(tmp_path):
    from fdbu.common.outputs import Outputs

    with pytest.raises(ValueError, match="not among fdbu score's outputs"):
        Outputs(tmp_path, "score", ["unified.json", "extra.txt"], head="unified.json")
    with pytest.raises(ValueError, match="not among fdbu nosuch's outputs"):
        Outputs(tmp_path, "nosuch", ["unified.json"])


def test_a_part_for_an_unknown_command_is_refused():
    with pytest.raises(KeyError, match="not a registered command"):
        registry.command("nosuch")(lambda cfg, call: None)


def test_a_note_reaches_stderr_from_python_with_nothing_configured():
    """In a script or notebook that configures no logging, a note is on stderr as the CLI shows it (logging's last
    resort), once."""
    import subprocess
    import sys

    code = "from fdbu.config.base import capped_threads; from fdbu.common.device import allowed_cores; " \
           "capped_threads(allowed_cores() + 1)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.count("fdbu: note: vad.threads=") == 1 and out.stdout == ""


def test_the_cli_shows_notes_whatever_logging_config_ran_before(capsys):
    """Hydra's job_logging=disabled (disable_existing_loggers, the root at ERROR) ran before the command: the
    CLI's console handler still shows a note, once."""
    import logging.config

    from fdbu.common.log import console_handler, note

    logger = logging.getLogger("fdbu")
    saved = (logger.level, logger.propagate, list(logger.handlers), logger.disabled)
    others = {name: (one.disabled, one.level) for name, one in logging.root.manager.loggerDict.items()
              if isinstance(one, logging.Logger)}  # what disable_existing_loggers changes, restored after
    root = logging.getLogger()
    saved_root = root.level, list(root.handlers)
    try:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": True, "root": {"level": "ERROR"}})
        console_handler()
        console_handler()
        note("fdbu: note: shown")
        assert capsys.readouterr().err == "fdbu: note: shown\n"
    finally:
        logger.propagate, logger.handlers, logger.disabled = saved[1:]
        logger.setLevel(saved[0])  # setLevel, not .level: it clears the cache of what the logger lets through
        for name, (disabled, level) in others.items():  # Hydra's loggers among them: its --info prints through them
            logging.getLogger(name).disabled = disabled
            logging.getLogger(name).setLevel(level)
        root.handlers[:] = saved_root[1]
        root.setLevel(saved_root[0])


def test_notes_below_the_commands_can_be_captured_or_silenced(caplog, capsys):
    """A note (here: vad.threads above the cores) is a log record of the `fdbu` logger: captured by a handler,
    silenced by the logger's level."""
    from fdbu.config.base import capped_threads
    from fdbu.common.device import allowed_cores

    big = allowed_cores() + 1
    logger = logging.getLogger("fdbu")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    try:
        logger.handlers, logger.propagate = [], True
        with caplog.at_level(logging.WARNING, logger="fdbu"):
            assert capped_threads(big) == allowed_cores()
        assert [r.name for r in caplog.records] == ["fdbu"] and "is more than the" in caplog.records[0].getMessage()
        caplog.clear()
        logger.setLevel(logging.ERROR)
        capped_threads(big)
        assert caplog.records == [] and "is more than the" not in capsys.readouterr().err
    finally:
        logger.propagate, logger.handlers = saved[1], saved[2]
        logger.setLevel(saved[0])  # setLevel, not .level: it clears the cache of what the logger lets through


@pytest.mark.slow
def test_a_made_up_command_is_an_entry_a_config_and_a_function(tmp_path, capsys):
    """A command a plugin (here, this test) adds as ARCHITECTURE.md's recipe says, in three parts: its registry entry,
    its config dataclass and its function `run(cfg, call: Call) -> Ran`, typed. The CLI lists it, --help shows its
    keys, Hydra composes and checks its config (a multirun too), a launcher's share of the cores reaches it in
    `call`, and without a console of its own its lines are printed; no YAML file, no other edit. Its `share` is a
    made-up setting: one field (default and help) whose range comes from fdbu.config.settings, shown by --help and refused
    out of range in one line. A function that cannot take (cfg, call) is refused when it is registered."""
    import fdbu.config.store  # noqa: F401  (the configs: registered as the CLI registers them)
    import made_up_command
    from builders import fdbu_main
    from fdbu.cli import main as cli
    from fdbu.commands import Ran

    plugged = "hello" in registry.COMMANDS  # already registered as a plugin (FDBU_PLUGINS=made_up_plugin)
    if not plugged:
        made_up_command.register()
    try:
        assert registry.check() == [] and "  hello      say hello (a made-up command)" in cli.usage()
        assert cli.main(["hello", "--help"]) == 0 and "who is greeted" in capsys.readouterr().out
        out = fdbu_main("hello", "name=fdbu", "times=2")
        assert out.returncode == 0 and out.stdout.splitlines() == ["hello, fdbu", "hello, fdbu", "cores None"], \
            out.stderr
        bad = fdbu_main("hello", "times=two")
        assert bad.returncode == 2 and "times" in bad.stderr, bad.stderr
        bare = fdbu_main("hello", "fdbu")  # its own hint for a bare word
        assert bare.returncode == 2 and "did you mean name=fdbu?" in bare.stderr, bare.stderr
        assert cli.main(["hello", "--help"]) == 0 and "a made-up setting" in capsys.readouterr().out
        bad = fdbu_main("hello", "share=1.5")
        assert bad.returncode == 2 and bad.stderr == "fdbu: error: config: share=1.5: a number from 0 to 1\n", bad.stderr
        assert fdbu_main("hello", "share=1").returncode == 0
        jobs = fdbu_main("hello", "-m", "name=a,b")
        assert jobs.returncode == 0 and "hello, a" in jobs.stdout and "hello, b" in jobs.stdout, jobs.stderr
        import fdbu.cli.consoles

        real = fdbu.cli.consoles.launcher_share  # under a launcher of jobs side by side (joblib's, test_cluster.py): 3
        fdbu.cli.consoles.launcher_share = lambda: 3
        try:
            shared = fdbu_main("hello", "name=a")
        finally:
            fdbu.cli.consoles.launcher_share = real
        assert shared.stdout.splitlines() == ["hello, a", "cores 3"], shared.stderr  # the share reaches the command
        with pytest.raises(TypeError, match="command 'hello' must take \\(cfg, call"):
            registry.command("hello")(lambda cfg: Ran(None))  # the old shape, without the call
    finally:
        if not plugged:
            made_up_command.unregister()
    assert ("hello" in cli.usage()) == plugged


def test_the_cli_shows_notes_after_a_level_was_changed_behind_the_loggers_back(capsys):
    """A logger caches what it lets through; a level set by assignment (as a notebook or a test may) leaves that
    cache stale. The CLI's console handler resets it, so a note is shown however the process got there."""
    from fdbu.common.log import console_handler, note

    logger = logging.getLogger("fdbu")
    saved = (logger.level, list(logger.handlers), logger.propagate, logger.disabled)
    try:
        console_handler()
        logger.setLevel(logging.ERROR)
        note("fdbu: note: hidden")
        logger.level = saved[0] or logging.WARNING  # behind its back: the cache still says no
        console_handler()
        note("fdbu: note: shown")
        assert capsys.readouterr().err == "fdbu: note: shown\n"
    finally:
        logger.handlers = saved[1]
        logger.setLevel(saved[0])
        logger.propagate, logger.disabled = saved[2:]


def test_a_launchers_parallel_jobs_each_get_their_share_of_the_cores(monkeypatch):
    """launcher_share: under a launcher declaring n_jobs (joblib's) each job gets cores // jobs (at least 1; n_jobs
    -1 or null: one core each); under a launcher without n_jobs (basic, SLURM), or outside Hydra, no share."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    import fdbu.cli.consoles
    import fdbu.common.device

    monkeypatch.setattr(fdbu.common.device, "allowed_cores", lambda: 8)
    for launcher, share in (({"n_jobs": 2}, 4), ({"n_jobs": 3}, 2), ({"n_jobs": 16}, 1), ({"n_jobs": -1}, 1),
                            ({"n_jobs": None}, 1), ({"partition": "x"}, None)):
        monkeypatch.setattr(HydraConfig, "get", staticmethod(lambda launcher=launcher: OmegaConf.create(
            {"launcher": launcher})))
        assert fdbu.cli.consoles.launcher_share() == share, launcher
    monkeypatch.undo()
    assert fdbu.cli.consoles.launcher_share() is None  # no Hydra run: HydraConfig.get raises ValueError


def test_the_configs_are_stored_once_and_again_when_the_store_lost_them(monkeypatch):
    """fdbu.config.store.register puts the configs in Hydra's ConfigStore once per process (each in-process command called
    it again), and again when the store no longer holds them."""
    from hydra.core.config_store import ConfigStore

    from fdbu.config import store as config

    config.register()
    cs = ConfigStore.instance()
    calls: list = []
    real = cs.store
    monkeypatch.setattr(cs, "store", lambda **k: (calls.append(k["name"]), real(**k))[1])
    config.register()
    assert calls == []
    del cs.repo["score_schema.yaml"]
    config.register()
    assert "score_schema" in calls and "score_schema.yaml" in cs.repo


def test_every_commands_help_fits_80_columns(capsys):
    """`fdbu X --help` for every registered command, and `fdbu --help`: no line over 80 columns (a meaning wrapped
    at words under its key, a long default shown by its size with the command that prints it whole), and no word
    cut in two by the wrapping."""
    import fdbu.config.store  # noqa: F401
    from fdbu.cli import main as cli
    from fdbu.config.keys import settings_of

    for args in ([["--help"]] + [[name, "--help"] for name in registry.COMMANDS]):
        assert cli.main(args) == 0
        text = capsys.readouterr().out
        long = [line for line in text.splitlines() if len(line) > 80]
        assert long == [], (args, long)
        if len(args) == 2:  # every meaning is there, word for word
            flat = " ".join(text.split())
            assert all(" ".join(s.help.split()) in flat for s in settings_of(args[0]) if s.help), args
    pins = next(s for s in settings_of("evaluate") if s.key == "evaluate.official_sha256")
    assert len(pins.default) > 1000  # the pinned files' SHA-256 values: shown by their number
    assert cli.main(["evaluate", "--help"]) == 0
    assert f"default {len(pins.value)} entries (whole: fdbu evaluate --cfg job)" in capsys.readouterr().out


def test_a_plugin_that_cannot_be_loaded_is_one_line_naming_it(tmp_path):
    """FDBU_PLUGINS naming a module that is not there, or one that fails on import: one line naming the plugin and
    where it was named, exit 2, no traceback; a plugin that loads adds its command to the usage."""
    import os
    import subprocess
    import sys

    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('half-installed')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(__file__).parent)])}
    for name, said in (("no_such_plugin", "ModuleNotFoundError: No module named 'no_such_plugin'"),
                       ("broken_plugin", "RuntimeError: half-installed")):
        out = subprocess.run([sys.executable, "-m", "fdbu", "--help"], env={**env, "FDBU_PLUGINS": name},
                             capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr == f"fdbu: error: plugin {name} (FDBU_PLUGINS) cannot be loaded: " \
                                                     f"{said}\n", out.stderr
    out = subprocess.run([sys.executable, "-m", "fdbu", "--help"], env={**env, "FDBU_PLUGINS": "made_up_plugin"},
                         capture_output=True, text=True)
    assert out.returncode == 0 and "  hello      say hello (a made-up command)" in out.stdout, out.stderr
