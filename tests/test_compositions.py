"""fdbu.cli.compositions: a command line composed once per process, then copied (issue 78); and composed again
whenever anything it reads has changed: the working directory, the ConfigStore, a package's config files, a user's
config folder, an environment variable the job copies."""
import pytest
from hydra import initialize_config_module
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.config_store import ConfigStore
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf

from builders import fdbu_main
from fdbu.cli import compositions
from fdbu.config.store import register


@pytest.fixture
def compose(monkeypatch):
    """compose(overrides) -> the score command's config as Hydra's loader gives it, with fdbu's memory on; and the
    number of real compositions so far (`compose.made`)."""
    register()
    monkeypatch.setattr(compositions, "_COMPOSED", type(compositions._COMPOSED)())  # this test's own memory
    real = ConfigLoaderImpl._load_configuration_impl
    made: list = []
    monkeypatch.setattr(ConfigLoaderImpl, "_load_configuration_impl",
                        lambda self, *a, **k: made.append(1) or real(self, *a, **k))

    def run(*overrides: str, name: str = "score"):
        with initialize_config_module("fdbu.conf", version_base="1.3"), compositions.remembered():
            hydra = GlobalHydra.instance().hydra
            assert hydra is not None
            return hydra.compose_config(config_name=name, overrides=list(overrides), run_mode=RunMode.RUN,
                                        with_log_configuration=False)
    run.made = made  # type: ignore[attr-defined]
    return run


def test_a_repeat_is_a_copy_of_the_first_and_the_first_stays_as_made(compose):
    first = compose("tree=runs/a", "vad.threshold=0.6")
    text = OmegaConf.to_yaml(first)
    first.vad.threshold = 0.9  # a caller changing its copy
    second = compose("tree=runs/a", "vad.threshold=0.6")
    assert compose.made == [1] and second is not first
    assert OmegaConf.to_yaml(second) == text and second.vad.threshold == 0.6
    third = compose("tree=runs/a", "vad.threshold=0.7")  # another command line: composed
    assert compose.made == [1, 1] and third.vad.threshold == 0.7


def test_another_working_directory_is_composed_again(compose, tmp_path, monkeypatch):
    compose("tree=runs/a")
    monkeypatch.chdir(tmp_path)
    again = compose("tree=runs/a")
    assert compose.made == [1, 1] and again.hydra.runtime.cwd == str(tmp_path)


def test_a_config_stored_since_is_composed_again(compose):
    store = ConfigStore.instance()
    compose("tree=runs/a")
    store.store(group="made_up_compositions", name="one", node={"x": 1})
    try:
        compose("tree=runs/a")
        assert compose.made == [1, 1]
        store.store(group="made_up_compositions", name="one", node={"x": 2})  # the same name, a new node
        compose("tree=runs/a")
        assert compose.made == [1, 1, 1]
    finally:
        del store.repo["made_up_compositions"]


def test_a_package_file_changed_is_seen(tmp_path, monkeypatch):
    package = tmp_path / "made_up_conf"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "score.yaml").write_text("a: 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = compositions._files("made_up_conf")
    assert [f[0] for f in before[2]] == ["__init__.py", "score.yaml"]
    (package / "score.yaml").write_text("a: 12\n")
    assert compositions._files("made_up_conf") != before


def test_an_env_copy_is_read_each_time(compose, monkeypatch):
    monkeypatch.setenv("FDBU_MADE_UP", "one")
    assert compose("tree=runs/a", "hydra.job.env_copy=[FDBU_MADE_UP]").hydra.job.env_set.FDBU_MADE_UP == "one"
    monkeypatch.setenv("FDBU_MADE_UP", "two")
    assert compose("tree=runs/a", "hydra.job.env_copy=[FDBU_MADE_UP]").hydra.job.env_set.FDBU_MADE_UP == "two"
    assert compose.made == [1, 1]


def test_a_users_config_file_is_read_each_time(tmp_path, monkeypatch):
    """`--config-dir DIR --config-name NAME`: the user's YAML may change between two commands of one process; the
    second reads it (fdbu.cli.overrides.config_file makes its keys the command line's)."""
    folder = tmp_path / "conf"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    said = []
    for threshold in (0.6, 0.7):
        (folder / "mine.yaml").write_text(f"tree: runs/a\nvad:\n  threshold: {threshold}\n")
        out = fdbu_main("score", "--config-dir", str(folder), "--config-name", "mine", "--cfg", "job")
        assert out.returncode == 0, out.stderr
        said.append(OmegaConf.create(out.stdout).vad.threshold)
    assert said == [0.6, 0.7]


def test_a_config_folder_on_hydra_s_search_path_is_read_each_time(tmp_path, monkeypatch):
    """A search path with a folder (a Hydra plugin's, hydra.searchpath): what its YAML says may change at any time."""
    from hydra import initialize_config_dir

    monkeypatch.setattr(compositions, "_COMPOSED", type(compositions._COMPOSED)())
    said = []
    for value in (1, 2):
        (tmp_path / "mine.yaml").write_text(f"x: {value}\n")
        with initialize_config_dir(str(tmp_path), version_base="1.3"), compositions.remembered():
            hydra = GlobalHydra.instance().hydra
            assert hydra is not None
            said.append(hydra.compose_config(config_name="mine", overrides=[], run_mode=RunMode.RUN,
                                             with_log_configuration=False).x)
    assert said == [1, 2]


def test_the_cli_composes_a_repeated_command_once_and_leaves_hydra_as_it_was(tmp_path, monkeypatch):
    """Each command composes through the memory (the second of two alike is not composed again); Hydra's loader is
    its own again after each."""
    monkeypatch.setattr(compositions, "_COMPOSED", type(compositions._COMPOSED)())
    real, impl = ConfigLoaderImpl.load_configuration, ConfigLoaderImpl._load_configuration_impl
    made: list = []
    monkeypatch.setattr(ConfigLoaderImpl, "_load_configuration_impl",
                        lambda self, *a, **k: made.append(1) or impl(self, *a, **k))
    for _ in range(2):
        out = fdbu_main("score", f"tree={tmp_path / 'missing'}")
        assert out.returncode == 2 and "does not exist" in out.stderr
        assert ConfigLoaderImpl.load_configuration is real
    assert made == [1]
