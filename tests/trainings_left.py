"""After each test, nothing of a toy training is left: no training process, no slot held, no visitor queued.

A training left running holds one of the server's few slots (one on a 2-core machine): the next test's
Train then waits behind it, and its page shows "Waiting" where the test expects "Training". The test
folders that train (tests/training, tests/app, tests/e2e) call `check` from an autouse fixture.

In this process every `Trainings` made is remembered (its __init__ records it; nothing else changes) and
must be empty. A live app (harness/live_app.py) among the test's fixtures must have no training process,
and for a test marked `trains` every slot must be free: as many one-second trainings as it has slots
each start at once, without waiting.
"""
from __future__ import annotations

import multiprocessing
import time
import weakref

from harness.live_app import assert_no_training_left, training_processes
from training.toy_session import Trainings, default_limit

_made: weakref.WeakSet = weakref.WeakSet()
_init = Trainings.__init__


def _recorded_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    _made.add(self)


Trainings.__init__ = _recorded_init
TIMEOUT_S = 120  # only a failure waits this long


def _left_here() -> list[str]:
    left = [f"{t.counts()[0]} running and {t.counts()[1]} waiting in a Trainings (pids {t.pids()})"
            for t in list(_made) if t.counts() != (0, 0) or t.pids()]
    left += [f"process {p.pid} ({p.name})" for p in multiprocessing.active_children() if p.name.startswith("toy-training")]
    return left


def check(request) -> None:
    """Wait until the test's trainings have ended (a thread of the test, or the server closing a closed page's
    stream, may still be finishing one); fail with what is left after TIMEOUT_S."""
    deadline = time.monotonic() + TIMEOUT_S
    while _left_here():
        assert time.monotonic() < deadline, f"{request.node.nodeid} left trainings behind: {_left_here()}"
        time.sleep(0.1)
    # by its fields, not its class: however harness/live_app.py was imported
    apps = [value for value in request.node.funcargs.values() if type(value).__name__ == "LiveApp"]
    for app in apps:
        if request.node.get_closest_marker("trains"):
            slots = app.env.get("ATTENTION_TOY_TRAININGS")
            assert_no_training_left(app, int(slots) if slots else default_limit(), timeout=TIMEOUT_S)
        else:
            while training_processes(app):
                assert time.monotonic() < deadline, (
                    f"{request.node.nodeid} left training processes {training_processes(app)} in {app.url}")
                time.sleep(0.1)
