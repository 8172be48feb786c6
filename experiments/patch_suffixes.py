"""The exact causal-tracing grid of a causal model, computed on suffixes only (experiments/patching.py uses it).

In a causal model position i reads tokens 0..i only, so a patch at position p changes nothing before p: at every
layer the positions before p keep the corrupted run's keys and values (model/kv_cache.py). A patched cell then
needs the forward pass of positions p..t−1 only, reading the corrupted run's cached keys and values below p.
For a 12-token pair that halves the work; for a head patched at the last position it is one token instead of 12.

One layer's cells are packed into one sequence, each cell's suffix after the other's, so they share one pass:
    cell r   the suffix p_r .. t−1, its first token patched
    keys     the corrupted run's t cached positions, then every packed token's own
    mask     a packed token at position q of cell r reads cached positions < p_r and cell r's own tokens ≤ q
             (a sliding window shorter than the text is not packed: applies() says no)
    rotation each packed token is turned by its own position (rotary models)
The numbers equal a plain patched run's (tests/experiments/test_patching.py holds every cell to one).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import torch

from experiments.patch_cells import BATCH_BYTES, Hooks, answer_diff, differing
from model.kv_cache import KVCache, LayerCache
from model.switches import Switches

PASS_TOKENS = 256  # packed suffix tokens a pass holds: more makes its attention (n × n) cost more than it saves


def applies(loaded, t: int) -> bool:
    """A causal model whose corrupted keys can all be kept (a sliding window at least as long as the text)."""
    model = loaded.model
    window = model.config.sliding_window if hasattr(model, "config") else 0
    return (loaded.arch == "decoder" and hasattr(model, "new_cache") and getattr(model, "causal", False)
            and (not window or window >= t))


@torch.inference_mode()
def corrupted_cache(loaded, ids: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every layer's keys and values of the plain corrupted run, each (1, h_kv, t, d)."""
    cache = loaded.model.new_cache()
    loaded.model.step(torch.tensor([ids], device=loaded.device), cache)
    return [(layer.keys, layer.values) for layer in cache.layers]


def packed_positions(starts: list[int], t: int, device) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """(positions, cell of each packed token, offset of each cell's first token) for cells starting at `starts`."""
    positions = torch.cat([torch.arange(p, t, device=device) for p in starts])
    cell = torch.cat([torch.full((t - p,), r, device=device) for r, p in enumerate(starts)])
    offsets, at = [], 0
    for p in starts:
        offsets.append(at)
        at += t - p
    return positions, cell, offsets


def packed_mask(positions: torch.Tensor, cell: torch.Tensor, starts: torch.Tensor, t: int) -> torch.Tensor:
    """(n, t + n) bool: which keys each packed token may read (the module docstring's rule)."""
    cached = torch.arange(t, device=positions.device)
    before = cached[None, :] < starts[cell][:, None]  # (n, t): the corrupted run's positions before the cell's start
    own = (cell[:, None] == cell[None, :]) & (positions[None, :] <= positions[:, None])  # (n, n)
    return torch.cat((before, own), dim=1)


def run_cells(loaded, joins: list[int], starts: list[int], streams: list[torch.Tensor], kv, answer: int,
              hooks=None) -> torch.Tensor:
    """The final vectors (n, k) at the answer position of n cells, all in one pass up the layers. Cell r joins the
    packed sequence at block joins[r] (its patch's layer, or the next one for a patched residual stream; the
    number of layers: no block at all) with streams[r] (t − starts[r], k), its suffix of the stream entering that
    block; joins must not decrease. Below its join a cell's suffix is the corrupted run's, so it need not be run.
    hooks patch inside the blocks at packed indexes: cell r's first token comes after the suffixes of cells < r."""
    model = loaded.model
    t, device = streams[0].size(0) + starts[0], streams[0].device
    positions, cell, offsets = packed_positions(starts, t, device)
    starts_t = torch.tensor(starts, device=device)
    cos_sin = model.embed.rotation(t)
    blocks = model.stack.blocks
    x, r = None, 0
    for layer in range(joins[0], len(blocks)):
        joining = []
        while r < len(joins) and joins[r] == layer:
            joining.append(streams[r])
            r += 1
        if joining:
            x = torch.cat(([x[0]] if x is not None else []) + joining)[None]
        n = x.size(1)
        mask = packed_mask(positions[:n], cell[:n], starts_t, t)
        rotation = None if cos_sin is None else tuple(part[positions[:n]] for part in cos_sin)
        keys, values = kv[layer]
        x, _ = blocks[layer](x, mask, rotation=rotation, past=LayerCache(0, keys, values), hooks=hooks, layer=layer)
    if r < len(joins):  # the cells patched after the last block: nothing left to run
        x = torch.cat(([x[0]] if x is not None else []) + streams[r:])[None]
    features = model.stack.final_norm(x)
    return features[0, [offset + answer - p for offset, p in zip(offsets, starts)]]


def exact_rows(loaded, pair, site: str, runs) -> Iterator[tuple[int, np.ndarray]]:
    """patching.exact_rows for a causal model: every cell runs only its suffix, and the cells of many layers share
    one pass up the layers (as many as PASS_TOKENS and BATCH_BYTES allow); a row is yielded once its cells are done."""
    t, k = len(pair.corrupted_ids), runs.corrupted["residual"].shape[-1]
    layers, device = runs.n_layers, loaded.device
    kv = corrupted_cache(loaded, pair.corrupted_ids)
    most = max(t, min(PASS_TOKENS, BATCH_BYTES // (k * 4 * 24)))  # packed tokens a pass holds
    units, rows = [], {}  # units: (layer, cell, join, start, stream, clean value a hook patches in) in join order
    for layer in range(layers):
        clean, cells = differing(pair, site, runs, layer)
        rows[layer] = torch.zeros(len(clean), dtype=torch.float32)
        for cell in cells.tolist():
            if site == "residual":  # the stream after this layer, patched, enters the next layer
                stream = runs.corrupted["residual"][layer, cell:].clone()
                stream[0] = clean[cell]
                units.append((layer, cell, layer + 1, cell, stream, None))
            else:
                start = pair.position if site == "heads" else cell
                units.append((layer, cell, layer, start, runs.corrupted["residual_in"][layer, start:], clean[cell]))
    done = 0
    while done < len(units):
        group, size = [], 0
        for unit in units[done:]:
            if group and size + t - unit[3] > most:
                break
            group.append(unit)
            size += t - unit[3]
        patches, at = {}, 0
        for layer, cell, join, start, stream, value in group:
            if value is not None:  # a hook patches the cell's first packed token inside block `layer`
                index = (0, cell, at) if site == "heads" else (0, at)
                patches.setdefault((site, layer), []).append((index, value))
            at += t - start
        hooks = Hooks(patches={
            key: (tuple(torch.tensor(i, device=device) for i in zip(*(ix for ix, _ in got))),
                  torch.stack([v for _, v in got])) for key, got in patches.items()})
        answers = run_cells(loaded, [u[2] for u in group], [u[3] for u in group],
                           [u[4] for u in group], kv, pair.position, hooks)
        diffs = runs.normalise(answer_diff(loaded, pair, answers)).float().cpu()
        for (layer, cell, *_), diff in zip(group, diffs):
            rows[layer][cell] = diff
        done += len(group)
        for layer in [l for l in rows if done == len(units) or l < units[done][0]]:  # rows whose cells are all done
            yield layer, rows.pop(layer).numpy()
    for layer in sorted(rows):
        yield layer, rows.pop(layer).numpy()
