"""What a tiled overview of attention maps draws, as numbers (numpy): each map max-pooled to what a tile can
show, and a few numbers per query row that its text alternative reads. The every-head grid and the layer
averages are drawn from these (viz.tiles.tiled_overview), never from every weight.

This is the tested reference. experiments/view_numbers.py computes the same numbers with torch where the trace is
(on a GPU), so that only these small arrays cross to the host; a test checks that the two agree.

    maps = pooled_maps(att.probs, att.mask)        # (L, H, t, s) -> tiles (L, H, t', s') and row numbers
    averages = pooled_maps(layer_average(att.probs)[None], att.mask)   # one row of L tiles
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.head_stats import averaged_rows, head_numbers, row_entropy

# The most rows and columns a tile of a tiled overview draws. A tile is drawn ~80 px wide (12 heads side by
# side): it cannot show 512 columns. Longer inputs are max-pooled into blocks of k x k token pairs, so a
# one-token stripe (a previous-token head's diagonal, a sink's column) survives as a stripe of full
# strength; the figure says so, and the head opened in detail shows every weight.
TILE_CELLS = 64
# row_summary reads a stack of at most this many weights (1 MB of float32: lm's 16 heads at 128 tokens) in whole-stack
# passes, where the processor's cache holds it anyway: each numpy call costs a few microseconds whatever its size, and
# one map at a time made the 16 maps of a 32-token grid 64 calls (a sixth of the every-head view's time)
WHOLE_STACK_CELLS = 1 << 18


def pool_block(count: int, cells: int = TILE_CELLS) -> int:
    """k for k x k max pooling that draws `count` tokens in at most `cells` rows or columns (1: none)."""
    return max(1, -(-count // cells))


def max_pool(tiles: np.ndarray, block: int, mask=None) -> np.ndarray:
    """(..., t, s) -> (..., ceil(t/k), ceil(s/k)): the largest value of each k x k block (a block cut short
    by the edge takes the largest of what it has). NaN, and cells where the (t, s) mask is False, count as 0.
    Unpooled (k = 1) only the mask and NaN are applied."""
    tiles = np.asarray(tiles, dtype=np.float32)
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    if mask is not None and mask.all():  # nothing hidden (an encoder): no masked copy of every weight
        mask = None
    t, s = tiles.shape[-2:]
    if block == 1:  # the same fmax against 0, in one call
        return np.fmax(np.float32(0), tiles if mask is None else np.where(mask, tiles, np.float32(0)))
    rows, cols = -(-t // block), -(-s // block)
    # every k-th row, then every k-th column, folded in with fmax (which passes over NaN): a few passes over
    # strided slices, several times faster than numpy's max over a reshaped block axis
    pooled = np.zeros(tiles.shape[:-2] + (rows, s), dtype=np.float32)
    for k in range(block):
        part = tiles[..., k::block, :]
        if mask is not None:
            part = np.where(mask[k::block], part, np.float32(0))
        np.fmax(pooled[..., :part.shape[-2], :], part, out=pooled[..., :part.shape[-2], :])
    if block > 1:
        rows_pooled, pooled = pooled, np.zeros(tiles.shape[:-2] + (rows, cols), dtype=np.float32)
        for k in range(block):
            part = rows_pooled[..., k::block]
            np.fmax(pooled[..., :part.shape[-1]], part, out=pooled[..., :part.shape[-1]])
    return pooled


def layer_average(probs) -> np.ndarray:
    """(L, H, t, s) -> (L, t, s): each layer's attention averaged over its heads (rows still sum to 1)."""
    probs = np.asarray(probs, dtype=np.float32)
    if probs.ndim != 4:
        raise ValueError(f"probs must have 4 dimensions, got shape {probs.shape}; pass trace.attention[kind].probs")
    return probs.mean(axis=1)


@dataclass
class RowSummary:
    """What a text alternative reads of each query row of n (t, s) maps (viz.describe.describe_rows):

    top       (n, t) int    the key with the row's largest weight (the first of equals)
    weight    (n, t) float32  that largest weight
    positive  (n, t) int    how many of its weights are above 0
    live      (n, t) bool   whether the row has any weight at all (its sum is above 0)
    width     s, the keys each row has
    A map holding NaN is read with NaN as 0."""

    top: np.ndarray
    weight: np.ndarray
    positive: np.ndarray
    live: np.ndarray
    width: int


def row_summary(maps) -> RowSummary:
    """RowSummary of an (n, t, s) stack of maps (a 12 x 12-head trace at 512 tokens is 151 MB of float32),
    one map at a time: its few passes then read a map the processor's cache still holds (a third faster than
    each pass over the whole stack). NaN is read as 0 (a copy is made only where some row sums to NaN)."""
    p = np.asarray(maps, dtype=np.float32)
    if p.ndim != 3:
        raise ValueError(f"maps must be (n, t, s), got shape {p.shape}")
    n, t, s = p.shape
    if p.size <= WHOLE_STACK_CELLS:  # small: a few passes over the whole stack, not four numpy calls per map
        sums = p.sum(axis=2)
        if not np.isnan(sums).any():
            top = p.argmax(axis=2)
            weight = np.take_along_axis(p, top[..., None], axis=2)[..., 0]
            return RowSummary(top=top, weight=weight, positive=np.count_nonzero(p > 0, axis=2), live=sums > 0, width=s)
        return row_summary(np.fmax(p, np.float32(0)))
    sums, top = np.empty((n, t), dtype=np.float32), np.empty((n, t), dtype=np.intp)
    positive, above = np.empty((n, t), dtype=np.intp), np.empty((t, s), dtype=bool)
    for i in range(n):
        sums[i] = p[i].sum(axis=1)
        if np.isnan(sums[i]).any():
            break
        top[i] = p[i].argmax(axis=1)
        positive[i] = np.count_nonzero(np.greater(p[i], 0, out=above), axis=1)
    else:
        weight = np.take_along_axis(p, top[..., None], axis=2)[..., 0]  # the row's largest, without another pass
        return RowSummary(top=top, weight=weight, positive=positive, live=sums > 0, width=s)
    p = np.fmax(p, np.float32(0))  # NaN as 0
    return row_summary(p)


@dataclass
class PooledMaps:
    """An (R, C) grid of (t, s) maps as a tiled overview draws it.

    tiles   (R, C, t', s') float32: each map max-pooled in k x k blocks (masked cells and NaN as 0)
    block   k (1: not pooled)
    shape   (t, s) of the maps before pooling
    rows    RowSummary of the R·C maps (masked cells as 0), row-major, for the text alternative"""

    tiles: np.ndarray
    block: int
    shape: tuple[int, int]
    rows: RowSummary


def pooled_maps(maps, mask=None, each=None) -> PooledMaps:
    """PooledMaps of (R, C, t, s) maps; mask: optional (t, s) bool, True where a query may look. each: called
    with (r, c, map) for every map as read (unmasked), right after its own numbers, while it is in the cache.

    One map at a time, every number of it while the processor's cache still holds it: its tile and the
    RowSummary numbers are row_summary's and max_pool's (the same numbers), but a 12 x 12-head trace at 512
    tokens is read from memory once, not in several passes over 151 MB (90 -> 49 ms of CPU, 2026-11-26).
    A map holding NaN makes every map read with NaN, and anything below 0, as 0 (row_summary's rule)."""
    maps = np.asarray(maps, dtype=np.float32)
    if maps.ndim != 4:
        raise ValueError(f"maps must be (R, C, t, s), got shape {maps.shape}")
    rows, cols, t, s = maps.shape
    mask = None if mask is None else np.asarray(mask, dtype=bool)
    if mask is not None and mask.shape != (t, s):
        raise ValueError(f"mask shape {mask.shape} does not match the maps' (t, s) = {(t, s)}")
    if mask is not None and mask.all():  # nothing hidden (an encoder)
        mask = None
    block = pool_block(max(t, s))
    if each is None and maps.size <= WHOLE_STACK_CELLS:  # small: a few whole-stack passes, not ~7 numpy calls a map
        shown = maps if mask is None else np.where(mask, maps, np.float32(0))
        return PooledMaps(tiles=max_pool(shown, block), block=block, shape=(t, s),
                          rows=row_summary(shown.reshape(rows * cols, t, s)))
    flat = maps.reshape(rows * cols, t, s)
    n = len(flat)
    tiles = np.empty((n, -(-t // block), -(-s // block)), dtype=np.float32)
    top, positive = np.empty((n, t), dtype=np.intp), np.empty((n, t), dtype=np.intp)
    weight, live = np.empty((n, t), dtype=np.float32), np.empty((n, t), dtype=bool)
    shown = np.zeros((t, s), dtype=np.float32)  # one map as drawn: its hidden cells are never written, so stay 0
    above, ones, queries = np.empty((t, s), dtype=bool), np.ones(s, dtype=np.float32), np.arange(t)
    count = np.uint16 if s < 2 ** 16 else np.intp  # a narrower count is summed faster
    clamped, restart, i = False, 0, 0
    while i < n:
        if clamped:
            np.copyto(shown, np.fmax(flat[i], np.float32(0)), where=True if mask is None else mask)
        elif mask is not None:
            np.copyto(shown, flat[i], where=mask)
        p = shown if clamped or mask is not None else flat[i]
        sums = p @ ones  # only its sign and NaN are read: a matrix-vector product is the fastest sum
        if not clamped and np.isnan(sums).any():
            clamped, restart = True, i  # NaN as 0, in every map, from the first one again
            i = 0
            continue
        tiles[i] = max_pool(p, block)
        top[i] = p.argmax(axis=1)  # the first of equals
        weight[i] = p[queries, top[i]]
        positive[i] = np.add.reduce(np.greater(p, 0, out=above), axis=1, dtype=count)
        live[i] = sums > 0
        if each is not None and (not clamped or i >= restart):  # once per map
            each(*divmod(i, cols), flat[i])
        i += 1
    return PooledMaps(tiles=tiles.reshape(rows, cols, *tiles.shape[1:]), block=block, shape=(t, s),
                      rows=RowSummary(top=top, weight=weight, positive=positive, live=live, width=s))


class HostViews:
    """The numbers the every-head views draw (the grid, the layer averages, the head statistics, one head in
    detail), from a trace held on the host as numpy arrays. experiments.view_numbers.DeviceViews computes the same
    from a trace kept on its device; a view reads either through these four methods.

    whole=True: the caller reads every view of each attention kind (the every-head tab's /analyze), heads()
    first. The one pass heads() makes over every weight then also keeps each layer's sum and each head's row
    entropies, which averages() and numbers() read instead of passing over the 151 MB of a 12 x 12-head trace
    at 512 tokens twice more (the same numbers: tests/analysis/test_overview.py)."""

    def __init__(self, trace, whole: bool = False):
        self.trace = trace
        self.whole = whole
        self._kept: dict[int, _Kept] = {}  # id(att.probs) -> what heads()' pass kept

    def head(self, att, layer: int, head: int) -> np.ndarray:
        """(t, s) float32: one head's weights (0-based layer and head)."""
        return att.probs[layer, head]

    def heads(self, att) -> PooledMaps:
        """Every head of one attention kind, (L, H) tiles."""
        if not self.whole or att.probs.size <= WHOLE_STACK_CELLS:  # small: averages() and numbers() pass again
            return pooled_maps(att.probs, att.mask)
        kept = _Kept(att.probs, att.mask)
        maps = pooled_maps(att.probs, att.mask, each=kept.read)
        self._kept[id(att.probs)] = kept
        return maps

    def averages(self, att) -> PooledMaps:
        """Each layer's average over its heads, one row of L tiles."""
        kept = self._kept.get(id(att.probs))
        return pooled_maps((layer_average(att.probs) if kept is None else kept.average())[None], att.mask)

    def numbers(self, att, aligned: bool, special_keys=None, ids=None) -> dict[str, np.ndarray]:
        """analysis.head_stats.head_numbers of one attention kind."""
        kept = self._kept.get(id(att.probs))
        return head_numbers(att.probs, att.mask, aligned=aligned, special_keys=special_keys, ids=ids,
                            entropy=None if kept is None else kept.entropy)


class _Kept:
    """What HostViews(whole=True) keeps from its pass over every head: each layer's sum over its heads (made
    layer_average's mean by average()) and head_numbers' row entropies, each computed as they are."""

    def __init__(self, probs: np.ndarray, mask):
        n_layers, n_heads, t, s = probs.shape
        mask = np.ones((t, s), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
        self.rows = averaged_rows(mask)
        self.n_heads = n_heads
        self.sums = np.empty((n_layers, t, s), dtype=np.float32)
        self.entropy = np.empty((n_layers, n_heads, len(range(t)[self.rows])), dtype=np.float64)
        self._terms = np.empty(self.entropy.shape[-1:] + (s,), dtype=np.float32)

    def read(self, layer: int, head: int, probs: np.ndarray) -> None:
        # head by head in order, as numpy's mean over the heads axis adds them
        if head == 0:
            np.copyto(self.sums[layer], probs)
        else:
            np.add(self.sums[layer], probs, out=self.sums[layer])
        row_entropy(probs[self.rows], self.entropy[layer, head], self._terms)

    def average(self) -> np.ndarray:
        """layer_average: the sums divided as numpy's mean divides them (by an integer count)."""
        return np.true_divide(self.sums, np.intp(self.n_heads), out=self.sums, casting="unsafe")
