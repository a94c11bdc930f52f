"""`fdbu COMMAND [key=value ...]`: one Hydra app per command, typed configs in `fdbu.config.store`, the
work in `fdbu.commands`, what each prints in `fdbu.cli.consoles`; this module dispatches: the command line read
one way (`fdbu.cli.overrides`), multiruns checked (`fdbu.cli.multirun`), Hydra composing the config, errors as one line.

The command word is taken off argv before Hydra parses the rest, so every Hydra feature
(`--cfg job`, `-m` multirun, launchers, overrides) works per command. Every expected
failure (input, file system, cache, output, config) is one line `fdbu: error: ...` and exit
status 2; Ctrl-C is exit 130; anything else is a bug: its traceback, and a line asking to
report it.
"""
from __future__ import annotations

import os
import signal
import sys


def _stop(signum=None, frame=None):
    """Ctrl-C while fdbu starts (torch, Hydra and the config load for seconds): nothing was read or
    written yet, so it ends here, in one line, whatever import it came in."""
    os.write(2, b"fdbu: error: interrupted (Ctrl-C) while starting; nothing was read or written\n")
    os._exit(130)


# first of all, in the console script (not where a program imports fdbu): a shell's background job keeps
# SIGINT ignored, which stays so
if os.path.basename(sys.argv[0]) == "fdbu" and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _stop)

import contextlib  # noqa: E402
import copy  # noqa: E402
import difflib  # noqa: E402
import logging  # noqa: E402
from pathlib import Path  # noqa: E402
import traceback  # noqa: E402
from typing import NoReturn  # noqa: E402

from . import consoles
from .. import registry  # noqa: E402  (consoles: attaches each command's console)
from ..version import __version__  # noqa: E402
from ..errors import FdbuError  # noqa: E402
from ..common.log import console_handler  # noqa: E402
from .multirun import clear_bookkeeping, job_header, outputs_of_jobs, scratch_sweep_dir  # noqa: E402
from .overrides import config_file, habits, hydra_keys, one_grammar, options_first, value_text  # noqa: E402
from .terminal import error  # noqa: E402



def usage() -> str:
    """`fdbu --help`: every registered command, one line each."""
    return f"""usage: fdbu COMMAND [key=value ...] [--cfg job] [-m]
       fdbu COMMAND --help: every key of the command, with its type and default

commands:
{registry.usage()}

Hydra: --cfg job shows the composed config;
       -m runs several jobs (fdbu score -m tree=A,B).
Python: import fdbu; fdbu.score("runs/modelA").to_pandas()  (docs: Python API)."""


def _task(fn, command: str | None = None):
    """Run one command on its composed config: validated into its dataclass first, errors as one line."""
    def run(cfg) -> None:
        from omegaconf import OmegaConf
        from omegaconf.errors import OmegaConfBaseException

        from ..config.keys import composition_error

        console_handler()  # the notes of the modules below (fdbu.common.log) on stderr, one line each
        try:
            try:
                obj = OmegaConf.to_object(cfg)
            except OmegaConfBaseException as e:
                raise FdbuError("config", None, composition_error(e, command)) from None
            job_header(obj)
            consoles.announce(command, obj)  # what it is doing, before torch loads (never a silent screen)
            if signal.getsignal(signal.SIGINT) is _stop:  # the work starts: Ctrl-C unwinds it (outputs clean up)
                _preload(command)
                signal.signal(signal.SIGINT, signal.default_int_handler)
            fn(obj)
        except FdbuError as e:
            error(str(e).splitlines()[0])
        except KeyboardInterrupt as e:
            interrupted(e)
        except RecursionError:
            error("a JSON file is nested too deeply to read")
    return run


def _preload(command: str | None) -> None:
    """torch before Ctrl-C becomes an exception: a KeyboardInterrupt raised while torch's C++ (pybind11) runs its
    import calls back into Python aborts the process (std::terminate) instead of unwinding. Until here Ctrl-C
    exits at once (130), nothing having been written."""
    if command in registry.COMMANDS and registry.COMMANDS[command].loads_torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            pass


def _command_help(command: str) -> str:
    from ..config.keys import help_text

    return (f"usage: fdbu {command} [key=value ...] [--cfg job] [-m]\n\n{help_text(command)}\n\n"
            "Hydra: --cfg job shows the composed config; -m runs several jobs;\n"
            "hydra/launcher=... picks a launcher.")


def interrupted(e: KeyboardInterrupt) -> NoReturn:
    """Ctrl-C: one line (a second Ctrl-C is ignored while it prints), exit 130. The message of a
    KeyboardInterrupt raised with one (`Outputs.commit`) says what the next run will do."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    error(f"interrupted (Ctrl-C); {e.args[0] if e.args else NOTHING_KEPT}", 130)


NOTHING_KEPT = "nothing half-written was left behind; nothing was kept yet: the same command starts again"


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt as e:  # while the imports and the config load
        interrupted(e)
    except FdbuError as e:  # while the imports: the environment they read (FDBU_KERNELS)
        return error(str(e))
    except BrokenPipeError:  # printing into a reader that stopped (`| head`): what SIGPIPE would end with
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        registry.load_plugins()  # a plugin's commands are in the usage, its families in every config
    except ImportError as e:
        return error(str(e))
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if argv[0] in ("--version", "-V", "version"):
        print(f"fdbu {__version__}")
        return 0
    if argv[0] in ("-m", "--multirun") and len(argv) > 1 and argv[1] in registry.COMMANDS:  # Hydra's habit: -m first
        argv = [argv[1], argv[0], *argv[2:]]
    command, rest = argv[0], argv[1:]
    if command not in registry.COMMANDS:
        near = difflib.get_close_matches(command, registry.COMMANDS, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        print(f"fdbu: error: unknown command {command!r}{hint}\n\n{usage()}", file=sys.stderr)
        return 2
    if any(a in ("-h", "--help") for a in rest):
        print(_command_help(command))
        return 0
    from ..config.store import register
    from ..config.keys import too_large
    try:
        rest = outputs_of_jobs(command, one_grammar(command, habits(command, config_file(rest))))
        hydra_keys(command, rest)
    except FdbuError as e:
        return error(str(e))
    large = too_large(rest)  # the command line's and a config file's values alike
    if large:
        return error(f"config: {large}")
    register()
    os.environ["HYDRA_FULL_ERROR"] = "1"  # composition errors reach this function, which prints one line
    scratch = scratch_sweep_dir(rest)
    if scratch:
        rest = [*rest, f"hydra.sweep.dir={value_text(scratch)}"]  # quoted: any TMPDIR Hydra's grammar can read
    sys.argv = [f"fdbu-{command}"] + options_first(rest)
    try:
        return _run(command, app_of(command))
    finally:
        if scratch:
            clear_bookkeeping(Path(scratch))


def app_of(command: str):
    import hydra

    return hydra.main(version_base="1.3", config_path="pkg://fdbu.conf", config_name=command)(
        _task(consoles.console_of(command), command))


@contextlib.contextmanager
def _mode_read_from_the_command_line():
    """Hydra composes a command's whole config once only to read `hydra.mode` (`Hydra.get_mode`), then again to run
    it: about 47 ms each, half of what a command that refuses its input costs, and 5% of the test suite's CPU.
    fdbu's configs never set hydra.mode (tests/test_cli.py checks every command's), so unless the command line
    names it or brings a config of its own, get_mode's answer is None (a run; -m, a multirun) without composing."""
    from hydra._internal.hydra import Hydra

    if any(_may_set_the_mode(a) for a in sys.argv[1:]):
        yield
        return
    composed = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: None
    try:
        yield
    finally:
        Hydra.get_mode = composed


@contextlib.contextmanager
def _the_store_shared_not_copied():
    """Each composition deep-copies Hydra's config repository (`CachingConfigRepository`, so that setting up its
    sources cannot change the original's list), and with it the whole ConfigStore its structured source points at:
    every command's schema and Hydra's own, 10 ms a command, a sixth of composing one. The store is only read while
    composing, and `ConfigStore.load` hands out a deep copy of each node it loads, so the source's copy shares it.
    The class patched is the one Hydra's registry of sources resolves now (a rescan of Hydra's plugins, as joblib's
    in-process jobs do, defines the module's class anew); what it had before is put back."""
    from hydra._internal.sources_registry import SourcesRegistry
    from hydra.core.plugins import Plugins

    Plugins.instance()  # Hydra's sources registered (a scan once per process)
    try:
        source = SourcesRegistry.instance().resolve("structured")
    except ValueError:  # no structured source: nothing to share
        yield
        return
    had = vars(source).get("__deepcopy__", _NOTHING)
    try:
        source.__deepcopy__ = lambda self, memo: copy.copy(self)
        yield
    finally:
        if had is _NOTHING:
            delattr(source, "__deepcopy__")
        else:
            source.__deepcopy__ = had


_NOTHING = object()


def _may_set_the_mode(arg: str) -> bool:
    """An argument through which hydra.mode could be set: one naming it (hydra.mode=, hydra={mode:...}), the whole
    hydra node, a search path (a config group of the user's), or a config of the user's."""
    key = arg.split("=", 1)[0].lstrip("+~")
    return arg.startswith(("--config", "-cd", "-cn", "-cp")) or key in ("hydra", "hydra.searchpath") or \
        (key.startswith("hydra") and "mode" in arg)


def _run(command: str, app) -> int:
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from ..config.keys import composition_error

    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    try:
        with _mode_read_from_the_command_line(), _the_store_shared_not_copied():
            app()
    except KeyboardInterrupt as e:
        interrupted(e)
    except (HydraException, OmegaConfBaseException) as e:  # composing the config, parsing the overrides
        error(f"config: {composition_error(e, command)}")
    except FdbuError as e:  # a launcher's refusal, or jobs of a multirun that did not finish
        error(str(e).splitlines()[0])
    except BrokenPipeError:
        raise
    except Exception as e:
        if isinstance(e, ValueError) and str(e).startswith("Only one of --run, --multirun, --cfg"):
            error("-m and --cfg/--info cannot be combined (Hydra shows one run's config): leave out -m and give "
                  "each swept key one value to see it")
        traceback.print_exc()
        print(f"fdbu {__version__}: this is a bug in fdbu, not a problem with your input; please report it with "
              "the command and the traceback above", file=sys.stderr)
        return 1
    finally:  # Hydra's --info leaves the root logger at DEBUG with a handler on that stdout: a caller in this
        # process (the API, a notebook, the tests) would then pay for Hydra's debug report on every later command
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
    return 0


if __name__ == "__main__":
    sys.exit(main())
