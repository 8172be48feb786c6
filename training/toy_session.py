"""Live trainings for many visitors at once: each in a process of its own, a few at a time.

    trainings = Trainings(limit=1)
    for event in trainings.run(owner="visitor-id", settings=[ToySettings(task="reverse")]):
        ...  # Waiting(ahead=...) while others train, then tuples of toy.Snapshot, the last one done

Why processes: a tiny model's training step is mostly Python, so a training thread would hold the GIL
and slow every page; torch.set_num_threads is global to a process; and killing a process frees all it
held, however the visitor left. The processes fork from a server started once (multiprocessing's
forkserver) that has already imported torch, so a training starts in a fraction of a second.

Safety: `limit` trainings at once across all visitors, first come first served after that, at most
`max_waiting` in the queue (then Busy); one training per visitor (AlreadyTraining); a run that is
stopped, whose generator is closed (Gradio closes it when the client disconnects) or that overruns
its time is killed and frees its slot. Nothing is written to disk: snapshots come back over a pipe.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Iterator

from training import toy

START_GRACE_S = 60.0  # beyond its own seconds: the first start of the fork server imports torch
POLL_S = 0.2  # how often a waiting or running generator looks up (and can be closed)


def default_limit() -> int:
    """Trainings at once: one core is kept for serving pages (1 on a 2-core machine)."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class TrainingRefused(Exception):
    """No training for this request; the message tells the viewer why and what to do."""


class Busy(TrainingRefused):
    pass


class AlreadyTraining(TrainingRefused):
    pass


class TrainingFailed(RuntimeError):
    pass


@dataclass
class Waiting:
    """The visitor's place in the queue: `ahead` visitors wait before them, `running` trainings run."""

    ahead: int
    running: int


def _preload() -> list[str]:
    """Modules the fork server imports once, so that each training forks with them loaded: torch through
    training.toy, torch._dynamo (the optimiser imports it on first use: seconds), and the main script's
    own module. Each child runs the main script again as __mp_main__ (Python 3.11's fork server never
    receives the script's path, so it cannot preload it as "__main__"); with everything the script
    imports already loaded, that costs milliseconds instead of importing gradio again."""
    names = ["training.toy", "torch._dynamo"]
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path and getattr(main, "__spec__", None) is None and path.endswith(".py"):
        folder, name = os.path.split(os.path.abspath(path))
        if any(os.path.abspath(entry or os.curdir) == folder for entry in sys.path):
            names.insert(0, name[:-3])  # app.py -> "app": importable, and its main() stays behind its guard
    return names


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_preload())
    return context


class Trainings:
    def __init__(self, limit: int | None = None, max_waiting: int = 6):
        self.limit = limit or default_limit()
        self.max_waiting = max_waiting
        self._changed = threading.Condition()
        self._running: set[str] = set()
        self._queue: list[str] = []
        self._stopping: set[str] = set()
        self._pids: dict[str, int] = {}
        self._warming = False

    def warm_up(self) -> None:
        """Start the fork server in the background (it imports torch: seconds), so a first Train starts at once."""
        with self._changed:
            if self._warming:
                return
            self._warming = True

        def start():
            _context()
            multiprocessing.forkserver.ensure_running()

        threading.Thread(target=start, name="toy-forkserver-warm-up", daemon=True).start()

    def pids(self) -> dict[str, int]:
        """owner -> process id of each training running now."""
        with self._changed:
            return dict(self._pids)

    def counts(self) -> tuple[int, int]:
        """(running, waiting) right now."""
        with self._changed:
            return len(self._running), len(self._queue)

    def stop(self, owner: str) -> bool:
        """Ask the owner's run to stop (it keeps what it learned); False if it has none."""
        with self._changed:
            if owner not in self._running and owner not in self._queue:
                return False
            self._stopping.add(owner)
            self._changed.notify_all()
            return True

    def _join(self, owner: str) -> None:
        with self._changed:
            if owner in self._running or owner in self._queue:
                raise AlreadyTraining("You already have a training running (one per visitor). "
                                      "Press Stop, or wait for it to finish.")
            if len(self._queue) >= self.max_waiting:
                raise Busy(f"The server is busy: {len(self._running)} training(s) running and {len(self._queue)} "
                           "waiting, the most it takes. Try again in a minute.")
            self._queue.append(owner)
            self._stopping.discard(owner)

    def _leave(self, owner: str) -> None:
        with self._changed:
            self._running.discard(owner)
            if owner in self._queue:
                self._queue.remove(owner)
            self._stopping.discard(owner)
            self._pids.pop(owner, None)
            self._changed.notify_all()

    def _wait_for_slot(self, owner: str) -> Iterator[Waiting]:
        """Yields the place in the queue until the owner holds a slot (returns True) or stops (False)."""
        while True:
            with self._changed:
                if owner in self._stopping:
                    return False
                if self._queue[0] == owner and len(self._running) < self.limit:
                    self._queue.pop(0)
                    self._running.add(owner)
                    self._changed.notify_all()
                    return True
                place = Waiting(ahead=self._queue.index(owner), running=len(self._running))
            yield place
            with self._changed:
                self._changed.wait(POLL_S * 5)

    def run(self, owner: str, settings: list[toy.ToySettings],
            max_steps: int = toy.MAX_STEPS) -> Iterator[Waiting | tuple[toy.Snapshot, ...]]:
        """Queue, then train in a fresh process; yields Waiting, then tuples of snapshots (one per
        setting, trained side by side) until one is done. Raises TrainingRefused or TrainingFailed."""
        self._join(owner)
        process = conn = None
        try:
            got_slot = yield from self._wait_for_slot(owner)
            if not got_slot:
                return
            context = _context()
            conn, child_conn = context.Pipe()
            process = context.Process(target=toy.work, args=(child_conn, [s.to_dict() for s in settings], max_steps),
                                      daemon=True, name=f"toy-training-{settings[0].task}")
            process.start()
            child_conn.close()
            with self._changed:
                self._pids[owner] = process.pid
            deadline = time.monotonic() + settings[0].seconds + START_GRACE_S
            stop_sent = False
            while True:
                if not stop_sent and owner in self._stopping:
                    conn.send("stop")
                    stop_sent = True
                if conn.poll(POLL_S):
                    try:
                        message = conn.recv()
                    except EOFError:
                        message = "the training process ended without a result"
                    if isinstance(message, str):
                        raise TrainingFailed(message)
                    yield message
                    if message[0].done:
                        return
                elif not process.is_alive() and not conn.poll():
                    raise TrainingFailed(f"the training process ended (exit code {process.exitcode})")
                if time.monotonic() > deadline:
                    raise TrainingFailed("the training overran its time and was stopped")
        finally:
            if conn is not None:
                conn.close()
            if process is not None and process.pid is not None:
                _end(process)
            self._leave(owner)


def _end(process) -> None:
    """Let a finished process exit; kill one that is still training (a closed page, an error)."""
    process.join(timeout=0.5)
    if process.is_alive():
        process.terminate()
        process.join(timeout=2)
    if process.is_alive():
        process.kill()
        process.join(timeout=2)
