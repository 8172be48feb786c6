"""The large float32 arrays of a trace on the CPU (every head's weights, the queries, keys, values and inputs
of every layer), written into memory that earlier traces used, once nothing reads those any more.

Memory fresh from the system is mapped and zeroed by the kernel page by page as it is first written: a 12 x
12-head trace at 512 tokens (151 MB of weights) cost 0.11 x the plain forward pass more written into fresh
memory than into memory written before (37,000 page faults; 2026-11-26, this project's 2-core machine). Huge
pages (numpy's madvise) cut the faults to 600 but not the time. So a buffer `empty` hands out comes back here
when the last array or tensor on it is gone (weakref.finalize on the numpy array torch holds), and `empty`
takes one of the same size from here before asking the system; nothing is ever written into memory that an
array still reads.

Each buffer is memory mapped for it alone (`mapped`), not taken from the C allocator's arenas: a trace's arrays stay
in the cache for many requests, and in an arena, once freed, they left holes among the requests' shorter-lived
arrays that stayed resident (a soak grew by the arenas' free memory after its cache was full: docs/memory.md).

What is kept unused is bounded (KEEP_BYTES) and `release_unused` gives it back to the system. The app's
registry pushes out of its cache the traces a new one would push out before it computes the new one, and
gives back what the new one did not reuse after (model.registry.ModelRegistry._compute_trace): between
requests nothing is kept here, and the server holds no more than its cache.
"""
from __future__ import annotations

import collections
import math
import mmap
import threading
import weakref

import numpy as np
import torch

# bytes: a trace's arrays from 64 KB up are mapped on their own. At 1 MB, a soak's small-model traces (a
# 60-word sentence on minilm: ~230 KB a layer's weights) stayed in the arenas among the requests' temporaries, and
# the arenas' free memory grew by 190 MB over 4,000 requests after the cache was full (docs/memory.md); under
# 64 KB a page's rounding would waste over 6%.
SMALLEST = 64 << 10
KEEP_BYTES = 512 << 20  # the most kept unused (a notebook that drops traces of many lengths)


class Pool:
    """Float32 buffers of at least SMALLEST bytes on the CPU, handed out again once unused."""

    def __init__(self, keep_bytes: int = KEEP_BYTES):
        self.keep_bytes = keep_bytes
        self._free: list[torch.Tensor] = []  # flat, oldest first; read and changed under the lock
        # what the finalizers give back: a finalizer runs wherever the last reference goes, even inside this
        # class's own locked code (a garbage collection), so it only appends here, which needs no lock
        self._returned: collections.deque[torch.Tensor] = collections.deque()
        self._returned_bytes = 0  # what _returned holds: past keep_bytes a buffer goes back to the system at once
        self._lock = threading.Lock()

    def empty(self, shape: tuple[int, ...]) -> torch.Tensor:
        """An uninitialised float32 CPU tensor of `shape`, in a buffer of the same size that is unused, if any."""
        count = math.prod(shape)
        if count * 4 < SMALLEST:
            return torch.empty(shape, dtype=torch.float32)
        with self._lock:
            self._collect()
            at = next((i for i, b in enumerate(self._free) if b.numel() == count), None)
            flat = None if at is None else self._free.pop(at)
        if flat is None:
            flat = mapped(count)
        handed = flat.numpy().reshape(shape)  # the array the tensor below holds while it, or a view of it, lives
        weakref.finalize(handed, self._give_back, flat).atexit = False
        return torch.from_numpy(handed)

    def _give_back(self, flat: torch.Tensor) -> None:
        """(a finalizer: no lock) Keep an unused buffer for reuse while what came back since the last collection
        is within keep_bytes; past it the buffer is dropped, so memory a notebook lets go of between two traces
        is not held (the count is approximate under threads, the bound is not far off)."""
        size = flat.numel() * 4
        if self._returned_bytes + size <= self.keep_bytes:
            self._returned_bytes += size
            self._returned.append(flat)

    def _collect(self) -> None:
        """(under the lock) What came back joins the unused buffers, the oldest going past keep_bytes."""
        while self._returned:
            flat = self._returned.popleft()
            self._returned_bytes -= flat.numel() * 4
            self._free.append(flat)
        while sum(b.numel() for b in self._free) * 4 > self.keep_bytes:
            self._free.pop(0)

    def release_unused(self) -> None:
        """Give what is kept unused back to the system."""
        with self._lock:
            self._collect()
            self._free.clear()

    @property
    def unused_bytes(self) -> int:
        with self._lock:
            self._collect()
            return sum(b.numel() for b in self._free) * 4


def mapped(count: int) -> torch.Tensor:
    """A flat float32 CPU tensor of `count` numbers in memory mapped for it alone (anonymous, private, its pages
    made present at once: one system call, not a page fault per 4 KB), handed back to the system when the last
    array on it goes. Not from the allocator's arenas: a trace's arrays stay in the cache for many requests, and
    in an arena the holes evicted traces leave between shorter-lived memory stayed resident (docs/memory.md)."""
    flags = mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0)
    memory = mmap.mmap(-1, max(count, 1) * 4, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return torch.from_numpy(np.frombuffer(memory, dtype=np.float32, count=count))


POOL = Pool()


def empty(shape: tuple[int, ...], device) -> torch.Tensor:
    """An uninitialised float32 tensor of `shape` on `device`; on the CPU from POOL."""
    device = torch.device(device)
    if device.type == "cpu":
        return POOL.empty(tuple(shape))
    return torch.empty(shape, dtype=torch.float32, device=device)


def release_unused() -> None:
    POOL.release_unused()
