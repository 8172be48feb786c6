"""A trace's large arrays are written into memory earlier traces used, once nothing reads it (model/buffers.py)."""
from __future__ import annotations

import gc

import numpy as np
import torch

from model import buffers
from model.buffers import SMALLEST, Pool
from model.registry import ModelRegistry

BIG = (SMALLEST // 4 // 64, 64)  # float32: SMALLEST bytes exactly


def test_a_buffer_is_handed_out_again_only_once_every_array_on_it_is_gone():
    pool = Pool()
    first = pool.empty(BIG)
    first.fill_(1.0)
    row = first[3]  # a torch view
    host = first.numpy()[2:5]  # a numpy view, as a trace holds its arrays
    address = first.data_ptr()
    del first
    gc.collect()
    assert pool.unused_bytes == 0  # views still read it
    other = pool.empty(BIG)
    assert other.data_ptr() != address
    del row
    gc.collect()
    assert pool.unused_bytes == 0
    assert host.sum() == 3 * 64  # what the views read is untouched
    del host
    gc.collect()
    assert pool.unused_bytes == SMALLEST
    again = pool.empty(BIG)
    assert again.data_ptr() == address and pool.unused_bytes == 0
    assert pool.empty((BIG[0] // 2, 64)).data_ptr() != address  # another size: fresh memory


def test_small_arrays_and_what_is_kept_unused_stay_within_their_bounds():
    pool = Pool(keep_bytes=2 * SMALLEST)
    small = pool.empty((4, 4))
    assert small.shape == (4, 4) and small.dtype == torch.float32
    held = [pool.empty(BIG) for _ in range(3)]
    del held
    gc.collect()
    assert pool.unused_bytes == 2 * SMALLEST  # the oldest went back to the system
    pool.release_unused()
    assert pool.unused_bytes == 0


def test_the_registry_writes_a_new_trace_into_the_memory_of_the_one_it_pushes_out(model_assets):
    """The cache holds one lm trace at 200 tokens: the next one is written where the first was, with the same
    numbers as on its own, and between requests nothing is kept unused."""
    registry = ModelRegistry.load(model_assets, names=("lm",))
    lm = registry.get("lm")
    texts = [" ".join(["the cat sat on a warm mat"] * 30) + f" {word}" for word in ("once", "twice")]
    first = registry.trace("lm", texts[0])
    registry.cache.max_bytes = registry.cache.bytes * 5 // 4  # room for one
    address = first.attention["self"].probs.ctypes.data
    assert first.attention["self"].probs.nbytes >= SMALLEST
    del first
    second = registry.trace("lm", texts[1])
    assert len(registry.cache) == 1 and second.attention["self"].probs.ctypes.data == address
    assert buffers.POOL.unused_bytes == 0
    alone = lm.trace(texts[1], predictions=False, scores=False)
    for field in ("probs", "q", "k", "v", "inputs"):
        np.testing.assert_array_equal(getattr(second.attention["self"], field), getattr(alone.attention["self"], field))
