"""Named points where a test can stop the process, to show what a stopped run leaves behind is
handled: `FDBU_KILL_AT=<point>` kills it (SIGKILL), `FDBU_INTERRUPT_AT=<point>` interrupts it as
Ctrl-C does (SIGINT). The stop is injected at a known step, not timed."""
import os
import signal
import sys


def point(name: str) -> None:
    if os.environ.get("FDBU_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get("FDBU_INTERRUPT_AT") == name:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):  # Python's handler for SIGINT, run here, as a Ctrl-C's delivery would run it: a
            # signal sent to the process lands in some thread that does not block it (the main thread may, for a
            # moment: fdbu.figures.plot across a fork, a pool starting its helpers), and Python runs the handler at the main
            # thread's next check, wherever that is; the point is here, so the stop is too
            handler(signal.SIGINT, sys._getframe(0))
        else:  # ignored (a background job), or the default action
            os.kill(os.getpid(), signal.SIGINT)
