"""The byte-bounded cache the app keeps its traces in."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from model.cache import ByteLRU, nbytes


def test_it_holds_at_most_its_bytes_and_drops_the_least_recently_used():
    cache = ByteLRU(max_bytes=3 * 8000 + 2000)
    arrays = {k: np.zeros(1000) for k in "abcd"}  # 8,000 bytes each
    for key in "abc":
        cache.get(key, lambda k=key: arrays[k])
    cache.get("a", lambda: pytest.fail("a is kept"))  # a is now the most recent
    cache.get("d", lambda: arrays["d"])
    assert "b" not in cache and {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    assert cache.bytes <= cache.max_bytes and len(cache) == 3


def test_a_value_larger_than_the_budget_is_returned_but_not_kept():
    cache = ByteLRU(max_bytes=1000)
    big = np.ones(10_000)
    assert cache.get("big", lambda: big) is big
    assert "big" not in cache and cache.bytes == 0


def test_a_count_limit_applies_as_well():
    cache = ByteLRU(max_bytes=1 << 30, max_items=2)
    for key in range(5):
        cache.get(key, lambda k=key: str(k))
    assert len(cache) == 2 and 4 in cache and 3 in cache


def test_sizes_count_arrays_once_and_views_as_their_base():
    base = np.zeros((100, 100), dtype=np.float32)
    assert nbytes(base) == 40_000
    assert nbytes([base, base, base[:10]]) < 41_000
    assert nbytes({"x": base, "y": np.ones(10)}) >= 40_080


def test_threads_never_leave_it_over_budget():
    cache = ByteLRU(max_bytes=50 * 800)

    def work(offset):
        for i in range(300):
            cache.get((offset, i % 70), lambda: np.zeros(100))  # 800 bytes each

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.bytes == sum(nbytes(cache.peek(k)) for k in list(cache._items)) <= cache.max_bytes


def test_making_room_drops_what_putting_that_many_bytes_would_drop_first():
    cache = ByteLRU(max_bytes=3 * 8000 + 2000)
    for key in "abc":
        cache.get(key, lambda: np.zeros(1000))  # 8,000 bytes each
    cache.get("a", lambda: pytest.fail("a is kept"))
    cache.make_room(8000)
    assert "b" not in cache and "a" in cache and "c" in cache and cache.bytes == 16_000
    cache.make_room(0)  # room enough already: nothing more goes
    assert len(cache) == 2
    cache.make_room(10 ** 9)  # more than the budget: everything goes
    assert len(cache) == 0 and cache.bytes == 0
