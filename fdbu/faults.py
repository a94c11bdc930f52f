"""Named points where a test can stop the process, to show what a stopped run leaves behind is
handled: `FDBU_KILL_AT=<point>` kills it (SIGKILL), `FDBU_INTERRUPT_AT=<point>` interrupts it as
Ctrl-C does (SIGINT). The stop is injected at a known step, not timed."""
import os
import signal


def point(name: str) -> None:
    if os.environ.get("FDBU_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("FDBU_INTERRUPT_AT") == name:
        os.kill(os.getpid(), signal.SIGINT)
