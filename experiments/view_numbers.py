"""The every-head views' numbers computed where the trace is (a GPU's memory), so that only what a view draws
crosses to the host: the pooled every-head grid, the pooled layer averages, each row's numbers for their text
alternatives, the head statistics (an (L, H) array each) and the one head open in detail.

The numpy analysis is the reference (analysis/overview.py, analysis/head_stats.head_numbers): every function
here is its twin, step for step, and tests/model/test_view_numbers.py checks that the two agree within 1e-5.
On a CPU the app reads the numpy path (as fast or faster there on one thread); on a GPU it keeps the trace on
the device (model.registry.ModelRegistry.kept) and reads it through DeviceViews (`views` picks).

    views(registry, name, text)                  # what the every-head tab reads: DeviceViews or HostViews
    trace = model.trace(text, predictions=False, scores=False, on_device=True)   # tensors stay on the GPU
    views = DeviceViews(trace)
    att = trace.attention["self"]
    views.heads(att), views.averages(att), views.numbers(att, aligned=True), views.head(att, 0, 3)
    full = to_host(trace)                        # the numpy Trace, for a view that needs every weight (model.trace)
"""
from __future__ import annotations

import numpy as np
import torch

from analysis.head_stats import MIN_CHOICES
from analysis.induction import induction_pairs
from analysis.overview import HostViews, PooledMaps, RowSummary, pool_block
from model.trace import AttentionTrace, Trace, host_array, to_host  # noqa: F401 (to_host: the other views' copy)


def _host(x: torch.Tensor) -> np.ndarray:
    return x.detach().cpu().numpy()


def row_summary(maps: torch.Tensor) -> RowSummary:
    """analysis.overview.row_summary of (n, t, s) maps on their device."""
    if maps.dim() != 3:
        raise ValueError(f"maps must be (n, t, s), got shape {tuple(maps.shape)}")
    p = maps.float()
    sums = p.sum(-1)
    if bool(sums.isnan().any()):
        p = torch.fmax(p, p.new_zeros(()))
        sums = p.sum(-1)
    top = p.argmax(-1)  # the first of equals, as numpy's
    weight = p.gather(-1, top[..., None])[..., 0]
    return RowSummary(top=_host(top), weight=_host(weight), positive=_host((p > 0).sum(-1)), live=_host(sums > 0),
                      width=p.shape[-1])


def max_pool(tiles: torch.Tensor, block: int) -> torch.Tensor:
    """analysis.overview.max_pool of (..., t, s) maps whose hidden cells are already 0: the largest of each
    k x k block, NaN and anything below 0 as 0 (numpy's fmax from zeros)."""
    tiles = torch.fmax(tiles.float(), tiles.new_zeros((), dtype=torch.float32))
    if block == 1:
        return tiles
    t, s = tiles.shape[-2:]
    rows, cols = -(-t // block), -(-s // block)
    # zeros past the edge: every weight here is at least 0, so a block cut short keeps the largest it has
    padded = torch.nn.functional.pad(tiles, (0, cols * block - s, 0, rows * block - t))
    return padded.reshape(*tiles.shape[:-2], rows, block, cols, block).amax(dim=(-3, -1))


def pooled_maps(maps: torch.Tensor, mask: torch.Tensor | None = None) -> PooledMaps:
    """analysis.overview.pooled_maps of (R, C, t, s) maps on their device; one row of maps at a time, so that
    the working memory is one layer's, not the trace's again."""
    if maps.dim() != 4:
        raise ValueError(f"maps must be (R, C, t, s), got shape {tuple(maps.shape)}")
    rows, cols, t, s = maps.shape
    if mask is not None and bool(mask.all()):
        mask = None
    block = pool_block(max(t, s))
    tiles, summaries = [], []
    for row in maps:
        shown = row.float() if mask is None else torch.where(mask, row.float(), row.new_zeros((), dtype=torch.float32))
        tiles.append(max_pool(shown, block))
        summaries.append(row_summary(shown))
    rows_numbers = RowSummary(*(np.concatenate([getattr(r, f) for r in summaries])
                                for f in ("top", "weight", "positive", "live")), width=s)
    return PooledMaps(tiles=_host(torch.stack(tiles)), block=block, shape=(t, s), rows=rows_numbers)


def head_numbers(probs: torch.Tensor, mask: torch.Tensor | None = None, aligned: bool | None = None,
                 special_keys=None, ids=None) -> dict[str, np.ndarray]:
    """analysis.head_stats.head_numbers of (L, H, t, s) weights on their device: (L, H) float64 arrays."""
    if probs.dim() != 4:
        raise ValueError(f"probs must be (L, H, t, s), got shape {tuple(probs.shape)}")
    n_layers, n_heads, t, s = probs.shape
    device = probs.device
    aligned = (t == s) if aligned is None else aligned
    if aligned and t != s:
        raise ValueError(f"aligned=True needs square attention, got t={t}, s={s}; pass aligned=False for cross-attention")
    mask = torch.ones(t, s, dtype=torch.bool, device=device) if mask is None else mask.to(device=device, dtype=torch.bool)
    first_row_alone = t > 1 and int(mask[0].sum()) == 1
    start = 1 if first_row_alone else 0  # a causal model's first row looks at itself only: left out
    query_pos = torch.arange(start, t, device=device)
    n_rows = t - start
    tiny = torch.finfo(torch.float32).tiny
    entropy, distance_sums = [], []
    if aligned:
        distance = (torch.arange(t, device=device)[:, None] - torch.arange(s, device=device)[None, :]).abs().float()
        distance[:start] = 0  # rows left out of the averages get distance 0
    for layer in probs:  # one layer's temporaries at a time
        p = layer[:, start:].float()  # (H, r, s)
        entropy.append(-(torch.log2(p.clamp_min(tiny)) * p).sum(-1, dtype=torch.float64))  # (H, r)
        if aligned:
            distance_sums.append(layer.float().reshape(n_heads, -1) @ distance.reshape(-1))
    entropy = torch.stack(entropy)  # (L, H, r)
    choices = mask[start:].sum(-1)  # (r,)
    max_entropy = torch.log2(choices.clamp_min(1).double())
    nan = torch.tensor(float("nan"), dtype=torch.float64, device=device)
    spread = torch.where(max_entropy > 0, entropy / torch.where(max_entropy > 0, max_entropy, 1.0), nan)
    if bool((choices >= MIN_CHOICES).any()):
        spread = torch.where(choices >= MIN_CHOICES, spread, nan)
    p = probs[:, :, start:]
    rows = torch.arange(n_rows, device=device)
    out = {"entropy_bits": entropy.mean(-1), "spread": torch.nanmean(spread, -1), "first": p[..., 0].float().mean(-1)}
    missing = torch.full((n_layers, n_heads), float("nan"), dtype=torch.float64, device=device)
    if aligned:
        out["mean_distance"] = torch.stack(distance_sums) / n_rows
        out["self"] = p[..., rows, query_pos].float().mean(-1)
        before = query_pos >= 1
        out["previous"] = p[..., rows[before], query_pos[before] - 1].float().mean(-1) if bool(before.any()) else missing
        after = query_pos + 1 < s
        out["next"] = p[..., rows[after], query_pos[after] + 1].float().mean(-1) if bool(after.any()) else missing
    else:
        out.update(mean_distance=missing, self=missing, previous=missing, next=missing)
    keys = sorted(set(int(k) for k in special_keys)) if special_keys is not None else []
    out["special"] = p[..., keys].float().sum(-1).mean(-1) if keys else missing
    out["induction"] = missing
    if aligned and ids is not None and len(ids) == t:
        queries, targets = induction_pairs(ids)
        if len(queries):
            out["induction"] = probs[..., torch.as_tensor(queries, device=device),
                                     torch.as_tensor(targets, device=device)].float().mean(-1)
    return {name: _host(value).astype(np.float64) for name, value in out.items()}


class DeviceViews:
    """analysis.overview.HostViews for a trace kept on its device (its attention arrays torch tensors):
    each method computes there and copies only its answer to the host."""

    def __init__(self, trace: Trace):
        self.trace = trace

    @staticmethod
    def _mask(att: AttentionTrace, probs: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(np.asarray(att.mask, dtype=bool), device=probs.device)

    def head(self, att: AttentionTrace, layer: int, head: int) -> np.ndarray:
        return host_array(att.probs[layer, head])

    def heads(self, att: AttentionTrace) -> PooledMaps:
        return pooled_maps(att.probs, self._mask(att, att.probs))

    def averages(self, att: AttentionTrace) -> PooledMaps:
        # float32 as numpy's mean of float32 weights
        return pooled_maps(att.probs.float().mean(1)[None], self._mask(att, att.probs))

    def numbers(self, att: AttentionTrace, aligned: bool, special_keys=None, ids=None) -> dict[str, np.ndarray]:
        return head_numbers(att.probs, self._mask(att, att.probs), aligned=aligned, special_keys=special_keys, ids=ids)


def views(registry, name: str, text: str, whole: bool = False):
    """What the every-head views read of `text` (analysis.overview.HostViews' methods): the numbers computed
    where the registry keeps the model's trace (model.registry.ModelRegistry.on_device: on a GPU, DeviceViews of
    the trace kept there, so only what is drawn is copied), else numpy on the host trace. whole: the caller reads
    every view, heads() first (HostViews' one pass)."""
    if registry.on_device(name):
        return DeviceViews(registry.kept(name, text))
    return HostViews(registry.trace(name, text), whole=whole)
