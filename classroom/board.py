"""Followers wait here for the lecturer's next move: one cheap wait per phone, woken once when the class's version
grows (a drive, a reveal), instead of a poll each second each. Waiters are asyncio futures on the server's event
loop, so 300 phones waiting cost 300 idle futures, not 300 threads; a move made in a worker thread wakes them
through the loop (call_soon_threadsafe).

    board = Board()
    version = await board.wait(code, since=3, timeout=25)   # returns at once if the class is past version 3
    board.moved(code, 4)                                      # from any thread: wakes those waiting
"""
from __future__ import annotations

import asyncio
import threading


class Board:
    """The latest version each class has reached, and who waits for a later one (one server process's)."""

    def __init__(self):
        self._versions: dict[str, int] = {}
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future, int]]] = {}
        self._lock = threading.Lock()

    def version(self, code: str) -> int | None:
        with self._lock:
            return self._versions.get(code)

    def moved(self, code: str, version: int) -> None:
        """The class `code` reached `version`: wake everyone waiting for a version past theirs."""
        with self._lock:
            if version <= self._versions.get(code, -1):
                return
            self._versions[code] = version
            waiting = self._waiters.get(code, [])
            woken = [w for w in waiting if version > w[2]]
            self._waiters[code] = [w for w in waiting if version <= w[2]]
        for loop, future, _ in woken:
            loop.call_soon_threadsafe(_settle, future, version)

    async def wait(self, code: str, since: int, timeout: float) -> int:
        """The class's version once it is past `since` (at once if it already is), or after `timeout` seconds the
        version as it is. `code` must name a class whose version moved() has set."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            now = self._versions.get(code, 0)
            if now > since:
                return now
            entry = (loop, future, since)
            self._waiters.setdefault(code, []).append(entry)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            with self._lock:
                waiting = self._waiters.get(code, [])
                if entry in waiting:
                    waiting.remove(entry)
                return self._versions.get(code, 0)

    def waiting(self, code: str) -> int:
        with self._lock:
            return len(self._waiters.get(code, []))

    def forget(self, code: str) -> None:
        with self._lock:
            self._versions.pop(code, None)
            waiting = self._waiters.pop(code, [])
        for loop, future, _ in waiting:
            loop.call_soon_threadsafe(_settle, future, -1)


def _settle(future: asyncio.Future, version: int) -> None:
    if not future.done():
        future.set_result(version)
