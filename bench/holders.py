"""python -m bench.holders: the app, started as app.py starts it, that writes what holds its memory on SIGUSR1.

The soak (bench/soak.py --holders) starts the server through this module and signals it at each RSS reading; each
signal appends one JSON line to $ATTENTION_HOLDERS_OUT: the process's RSS and glibc's totals (mallinfo2: bytes in
use and free in the arenas, bytes mapped on their own), every ByteLRU's bytes and entries (the trace cache, the
encoded texts, the trained toy models, ...), the buffer pool's, every functools.lru_cache's entries, Gradio's
sessions and the State values they hold (ui.runtime.sessions.BUDGET), Gradio's queue's dicts, torch's thread
count, the objects the garbage collector tracks by type, and, with ATTENTION_TRACEMALLOC=1 in the environment, the
Python and numpy allocations grown most since the previous signal (tracemalloc: slow, a probe only).
"""
from __future__ import annotations

import collections
import ctypes
import functools
import gc
import json
import os
import signal
import sys
import threading
import time

OUT_ENV = "ATTENTION_HOLDERS_OUT"
TRACE_ENV = "ATTENTION_TRACEMALLOC"


class _MallInfo2(ctypes.Structure):  # glibc 2.33+'s struct mallinfo2 (malloc.h), every field a size_t
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _mallinfo() -> dict:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        m = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    mb = lambda n: round(n / 2**20, 1)
    return dict(arena_mb=mb(m.arena), in_use_mb=mb(m.uordblks), free_mb=mb(m.fordblks), mapped_mb=mb(m.hblkhd),
                mapped_blocks=m.hblks, top_free_mb=mb(m.keepcost))


def _smaps() -> dict:
    """/proc/self/smaps_rollup's RSS parts, in MB."""
    fields = {}
    try:
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if rest.strip().endswith("kB") and name in ("Rss", "Anonymous", "Shared_Clean", "Private_Clean",
                                                            "Private_Dirty", "Swap"):
                    fields[name.lower() + "_mb"] = round(int(rest.split()[0]) / 1024, 1)
    except OSError:
        pass
    return fields


def _regions(objects) -> dict:
    """Where the anonymous RSS lies (/proc/self/smaps): glibc's main arena ([heap]: every malloc below the mmap
    threshold, where the arenas are limited to one), mappings of exactly 1 MiB (Python's own object arenas, and
    any other mapping of that size), the rest; and the bytes of the mmap objects alive (model/buffers.py's
    mappings: a trace's arrays, those in the cache and any still read elsewhere)."""
    import mmap

    parts = collections.Counter()
    size = kind = None
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split()
                if "-" in head[0] and not head[0].endswith(":"):
                    start, end = (int(x, 16) for x in head[0].split("-"))
                    path = head[5] if len(head) > 5 else ""
                    size = end - start
                    kind = "heap" if path == "[heap]" else "one_mib" if not path and size == 1 << 20 else (
                        "other_anonymous" if not path else None)
                elif head[0] == "Rss:" and kind:
                    parts[kind + "_rss_mb"] += int(head[1]) / 1024
    except OSError:
        return {}
    live = 0
    for o in objects:
        if type(o) is mmap.mmap:
            try:
                live += len(o)
            except ValueError:  # closed
                pass
    return dict({k: round(v, 1) for k, v in parts.items()}, mmap_live_mb=round(live / 2**20, 1))


def _gradio(demo) -> dict:
    holder = getattr(demo, "state_holder", None)
    sessions = getattr(holder, "session_data", {}) if holder is not None else {}
    queue = getattr(demo, "_queue", None)
    from ui.runtime.sessions import BUDGET

    out = dict(sessions=len(sessions), state_values=len(BUDGET.kept), state_mb=round(BUDGET.total / 2**20, 1),
               state_data_entries=sum(len(getattr(s, "state_data", {})) for s in list(sessions.values())))
    if queue is not None:
        for name in ("pending_messages_per_session", "pending_event_ids_session", "event_ids_to_events",
                     "process_time_per_fn", "event_queue_per_concurrency_id", "active_jobs"):
            value = getattr(queue, name, None)
            if value is not None:
                out[f"queue.{name}"] = len(value)
        out["queue.waiting"] = sum(len(q.queue) for q in getattr(queue, "event_queue_per_concurrency_id", {}).values())
    for name in ("iterators", "iterators_to_reset", "pending_streams", "pending_diff_streams"):
        value = getattr(demo, name, None)
        if value is not None:
            out[f"blocks.{name}"] = len(value)
    return out


def _caches(objects) -> dict:
    from model.cache import ByteLRU

    caches, lrus = {}, {}
    for o in objects:
        if isinstance(o, ByteLRU):
            key = f"ByteLRU#{id(o) % 100000}(max {o.max_bytes >> 20} MB)"
            caches[key] = dict(mb=round(o.bytes / 2**20, 1), entries=len(o))
        elif isinstance(o, functools._lru_cache_wrapper):
            info = o.cache_info()
            if info.currsize:
                name = getattr(o, "__qualname__", None) or getattr(getattr(o, "__wrapped__", None), "__qualname__", "?")
                lrus[f"{getattr(o, '__module__', '?')}.{name}"] = info.currsize
    return dict(byte_lrus=caches, lru_caches=lrus)


def _pool() -> dict:
    import model.buffers as buffers

    pool = next((v for v in vars(buffers).values() if isinstance(v, buffers.Pool)), None)
    if pool is None:
        return {}
    return dict(pool_free_mb=round(sum(b.numel() for b in pool._free) * 4 / 2**20, 1), pool_free=len(pool._free),
                pool_returned=len(pool._returned))


_previous = {}


def _traced() -> list:
    import tracemalloc

    if not tracemalloc.is_tracing():
        return []
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    before = _previous.get("snapshot")
    _previous["snapshot"] = snapshot
    if before is None:
        return [f"traced now {tracemalloc.get_traced_memory()[0] / 2**20:.1f} MB"]
    return [str(s) for s in snapshot.compare_to(before, "lineno")[:30]]


def report(demo) -> dict:
    gc.collect()
    objects = gc.get_objects()
    types = collections.Counter(type(o).__qualname__ for o in objects)
    out = dict(time=time.time(), threads=threading.active_count(), **_smaps(), malloc=_mallinfo(),
               gradio=_gradio(demo), **_caches(objects), **_pool(), regions=_regions(objects), gc_objects=len(objects),
               types=types.most_common(40))
    try:
        import torch

        out["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    out["tracemalloc"] = _traced()
    del objects
    return out


def main() -> None:
    if os.environ.get(TRACE_ENV) == "1":
        import tracemalloc

        tracemalloc.start(4)
    import app

    built = {}
    build = app.build_demo

    def build_and_keep(*args, **kwargs):
        built["demo"] = build(*args, **kwargs)
        return built["demo"]

    app.build_demo = build_and_keep
    out = os.environ.get(OUT_ENV, "holders.jsonl")

    def on_signal(signum, frame):
        try:
            line = json.dumps(report(built.get("demo")), default=str)
        except Exception as e:  # a probe's fault must not end the server it watches
            line = json.dumps(dict(time=time.time(), error=f"{type(e).__name__}: {e}"))
        with open(out, "a") as f:
            f.write(line + "\n")

    signal.signal(signal.SIGUSR1, on_signal)
    sys.argv = ["app.py"]
    app.main()


if __name__ == "__main__":
    main()
