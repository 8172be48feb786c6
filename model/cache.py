"""One least-recently-used cache, bounded by the bytes its values hold (and optionally by a count), safe to
share between the server's threads. The app keeps traces in it: a trace's size grows with the square of its
length (a 12 x 12-head model at 512 tokens holds ~150 MB of attention weights, lm at 32 tokens 70 KB), so a
count of entries says nothing about memory.

    cache = ByteLRU(max_bytes=1 << 30)
    trace = cache.get(("lm", text), lambda: model.trace(text))
"""
from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict

import numpy as np


_PLAIN = (str, bytes, int, float, bool)
_PLAIN_TYPES = frozenset(_PLAIN)  # exactly these types (a subclass, such as numpy's float64, takes the long way)


def nbytes(value, _seen: set | None = None) -> int:
    """What `value` holds in memory, roughly: numpy arrays and torch tensors by their data, strings by their
    size, dataclasses, dicts, lists and tuples by what they contain (each object counted once)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, _PLAIN) or value is None:  # first: a trace's labels are most of its objects
        return sys.getsizeof(value)
    if isinstance(value, np.ndarray):  # a view of another array counts that array (once)
        return nbytes(value.base, seen) if isinstance(value.base, np.ndarray) else value.nbytes
    if hasattr(value, "element_size") and hasattr(value, "untyped_storage"):  # a torch tensor (no torch import)
        return value.untyped_storage().nbytes()
    if isinstance(value, dict):
        return _contents(value.keys(), seen) + _contents(value.values(), seen) + 64
    if isinstance(value, (list, tuple, set, frozenset)):
        return _contents(value, seen) + 8 * len(value) + 56
    if dataclasses.is_dataclass(value) or hasattr(value, "__dict__"):
        return nbytes(vars(value), seen) + 64
    return sys.getsizeof(value)


def _contents(values, seen: set) -> int:
    """nbytes of each value, summed; a label, an id or a field's name counted here, not by a call of its own (a call
    per token was most of the time of sizing a trace, which the trace cache does for every new sentence)."""
    total = 0
    for v in values:
        if type(v) in _PLAIN_TYPES:
            if id(v) not in seen:
                seen.add(id(v))
                total += sys.getsizeof(v)
        else:
            total += nbytes(v, seen)
    return total


class ByteLRU:
    """A thread-safe least-recently-used cache that holds at most `max_bytes` (as `nbytes` counts them)
    and, if given, at most `max_items` entries. `get(key, make)` computes a missing value outside the
    lock (two threads may compute the same value once each; neither waits for the other). A value larger
    than the whole budget is returned but not kept."""

    def __init__(self, max_bytes: int, max_items: int | None = None, size_of=nbytes):
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be at least 0, got {max_bytes}")
        self.max_bytes, self.max_items, self.size_of = int(max_bytes), max_items, size_of
        self._items: OrderedDict = OrderedDict()  # key -> (value, bytes)
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key, make):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key][0]
        value = make()
        self.put(key, value)
        return value

    def put(self, key, value) -> None:
        size = self.size_of(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.max_bytes:
                return
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes or (self.max_items is not None and len(self._items) > self.max_items):
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def make_room(self, nbytes: int) -> None:
        """Drop the least recently used values until `nbytes` more fit: what putting a value of that size would
        drop, dropped before the value is made (model.registry: a new trace is written into the memory of
        the ones it pushes out, model/buffers.py)."""
        with self._lock:
            while self._items and self._bytes + nbytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def peek(self, key):
        """The value kept for `key`, or None; its place in the order is left as it is."""
        with self._lock:
            item = self._items.get(key)
        return None if item is None else item[0]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        """What the kept values hold, as `size_of` counts them."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._items
