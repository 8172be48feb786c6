"""glibc's allocator settings for a server that makes large arrays in many threads.

A 12 x 12-head model at 512 tokens makes ~13 MB arrays per layer in Gradio's worker threads. glibc gives
each thread an arena of its own (up to 8 per core) and, after the first large frees, raises its mmap
threshold to 32 MB, so these arrays come from the arenas and stay there when freed: measured, the server
grew to its start + 1.57 GB after 8 distinct 512-token requests on a BERT-base-sized model, while the
traces it kept were 0.9 GB of that (the rest was freed memory glibc held). With two arenas and every
allocation of 1 MB or more mapped on its own (and returned to the system when freed) it stayed at start +
0.89 GB: the kept traces alone.

The threshold is 32 MB, not 1 MB: at 1 MB every per-layer array of a forward pass (a 12 x 12-head layer's
weights at 512 tokens: 12.6 MB) was a fresh mapping, faulted in page by page and handed back at once, so the
trace cost 1.53 s of CPU where the plain forward pass costs 1.1 s (251,000 page faults; at 32 MB 1.15 s and
46,000 faults, 2026-11-26). Arrays of 32 MB and more (a whole trace's weights: 151 MB) are still mapped on
their own and returned when the trace leaves the cache (or first reused by the trace that pushes it
out: model/buffers.py); the two arenas keep at most what one request's smaller arrays need. A trace's arrays of
64 KB and more are mapped by model/buffers.py itself, so the ones the cache keeps leave no holes in the arenas.

What the two arenas free in the middle of their heaps stays theirs, though: a soak of mixed requests (bench/soak.py,
2026-11-28) grew the server in steps after its trace cache was full, and malloc_trim(0), called from outside into a
probe server after 150 mixed requests, gave back 153 MB of its 1,422 MB. `trim_regularly()` starts a thread that
calls malloc_trim every TRIM_EVERY_S seconds: glibc hands back the free pages of every arena (madvise), and the
next request faults in what it needs again (a few ms every 10 s, against page faults across a request's arrays).

`limit_allocator()` sets both through mallopt (the same as MALLOC_ARENA_MAX=2 and
MALLOC_MMAP_THRESHOLD_=33554432 in the environment, which must be set before Python starts); it does
nothing where the C library is not glibc. Call it before threads start (before torch and Gradio load).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import threading

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter numbers (malloc.h)
M_ARENA_MAX = -8
ARENAS = 2
MMAP_THRESHOLD = 32 << 20
TRIM_EVERY_S = 10.0


def _glibc():
    """glibc, or None where the C library is another (whose mallopt numbers mean other things)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # glibc only
    except (OSError, AttributeError):
        return None
    return libc


def limit_allocator() -> bool:
    """True when glibc took both settings."""
    libc = _glibc()
    if libc is None:
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, ARENAS)) and bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def trim() -> bool:
    """Hand the arenas' free pages back to the system now (glibc's malloc_trim); False where it cannot."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim.argtypes, libc.malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    libc.malloc_trim(0)
    return True


def trim_regularly(every_s: float = TRIM_EVERY_S) -> threading.Thread | None:
    """A daemon thread calling trim() every `every_s` seconds for as long as the process lives (None where the C
    library is not glibc)."""
    if _glibc() is None:
        return None
    stop = threading.Event()

    def loop():
        while not stop.wait(every_s):
            trim()

    thread = threading.Thread(target=loop, name="malloc-trim", daemon=True)
    thread.stop = stop  # tests end it
    thread.start()
    return thread
