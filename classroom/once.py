"""Work done once for everyone who needs it: the first caller of a key computes it while the others wait for its
result (a class's 300 phones opening the same step compute its views once), kept least recently used first out,
bounded by the bytes the results hold (model.cache.nbytes).

    once = Once(max_bytes=64 << 20)
    figure = once.get(("attention", "lm", text), lambda: draw(...))
    once.computed      # how many times a value was computed (a bench reads it)
"""
from __future__ import annotations

import threading

from model.cache import ByteLRU, nbytes


class _Slot:
    """One computation under way: those who wait for it, and what it gave."""

    def __init__(self):
        self.done = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class Once:
    """A cache whose missing key is computed by one caller while the others wait (ByteLRU alone lets two threads
    compute the same value). An exception reaches the caller that computed and every caller waiting for it; the
    next caller computes again."""

    def __init__(self, max_bytes: int, size_of=nbytes):
        self._kept = ByteLRU(max_bytes, size_of=lambda box: size_of(box[0]))  # values boxed: None is a value too
        self._running: dict = {}  # key -> _Slot
        self._lock = threading.Lock()
        self.computed = 0

    def get(self, key, make):
        with self._lock:
            box = self._kept.peek(key)
            if box is not None:
                return box[0]
            slot = self._running.get(key)
            mine = slot is None
            if mine:
                slot = self._running[key] = _Slot()
        if not mine:
            slot.done.wait()
            if slot.error is not None:
                raise slot.error
            return slot.value
        try:
            slot.value = make()
            self._kept.put(key, (slot.value,))
        except BaseException as e:
            slot.error = e
            raise
        finally:
            with self._lock:
                self.computed += slot.error is None
                del self._running[key]
            slot.done.set()
        return slot.value

    def clear(self) -> None:
        self._kept.clear()
