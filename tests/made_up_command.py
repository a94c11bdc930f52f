"""A command that exists nowhere but in the tests, `fdbu hello`, in the three parts ARCHITECTURE.md's recipe names:
its registry entry, its config dataclass (a made-up setting `share` whose range fdbu.config.settings declares) and
its function `run(cfg, call: Call) -> Ran`, typed. `register()` adds it (tests/test_command_registry.py; a whole
suite's run with it registered: tests/made_up_plugin.py)."""
from __future__ import annotations

from dataclasses import dataclass

from fdbu import registry
from fdbu.commands import Ran
from fdbu.config.settings import UNIT, opt, within
from fdbu.registry import CALL, Call

NAME = "hello"


@dataclass
class HelloConfig:
    name: str = opt("world", "who is greeted")
    times: int = opt(1, "how many times")
    share: float = opt(0.5, "a made-up setting: a share, checked against a range fdbu.config.settings declares")

    def __post_init__(self):
        within(self, "", share=UNIT)


def hello(cfg: HelloConfig, call: Call = CALL) -> Ran:
    return Ran(None, lines=[f"hello, {cfg.name}"] * cfg.times + [f"cores {call.cores}"])


def register() -> None:
    registry.add(registry.Command(NAME, "say hello (a made-up command)", "fdbu hello [name=NAME]", bare="name={}"))
    registry.config(NAME)(HelloConfig)
    registry.command(NAME)(hello)


def unregister() -> None:
    registry.remove(NAME)
