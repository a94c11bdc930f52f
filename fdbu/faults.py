"""Named points where a test can kill the process (`FDBU_KILL_AT=<point>`), to show that what a
killed run leaves behind is recovered: the kill is injected at a known step, not timed."""
import os
import signal


def point(name: str) -> None:
    if os.environ.get("FDBU_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
