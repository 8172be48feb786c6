"""What really flows through a head: attention weighted by the size of what it moves.

Head h writes, at position i, Σ_j α_ij · W_O^h v_j into the residual stream. The weight α_ij says how much
of value j the head takes; the vector α_ij · W_O^h v_j is what actually arrives. A key whose value is tiny
after W_O (a [CLS] or [SEP] "sink") can hold most of the weight and add almost nothing (Kobayashi et al.,
2020, "Attention is not only a weight"). This module measures both, from a detailed Trace
(api.LoadedModel.trace(detail=True)): numpy only.

Dimension letters: L layers, H heads, t query positions, s key positions, d per-head size, k model size.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.attribution import RESIDUAL


def _head_values(att, layer: int) -> np.ndarray:
    """(H, s, d) one layer's values, one set per query head (grouped-query models share a set among heads)."""
    v = att.v[layer]
    heads = att.probs.shape[1]
    return np.repeat(v, heads // v.shape[0], axis=0) if v.shape[0] != heads else v


def written_values(att, layer: int) -> np.ndarray:
    """(H, s, k) W_O^h v_j: each key's value as head h writes it into the residual stream (before α)."""
    if att.out_weight is None:
        raise ValueError("this needs a detailed trace: trace(text, detail=True)")
    v = _head_values(att, layer).astype(np.float64)  # (H, s, d)
    heads, _, d = v.shape
    w = np.asarray(att.out_weight[layer], dtype=np.float64).reshape(-1, heads, d)  # (k, H, d)
    return np.matmul(v, w.transpose(1, 2, 0))  # (H, s, d) @ (H, d, k): one BLAS product per head


def value_sizes(att, layer: int) -> np.ndarray:
    """(H, s) ‖W_O^h v_j‖ for every head of one layer, without the (H, s, k) vectors themselves: with the Gram matrix
    G_h = W_O^hᵀ W_O^h (d, d), ‖W_O^h v‖² = v · G_h v, a d × d product per key instead of d × k (smollm2: 64 against
    576; its 30 layers' written_values at 512 tokens took 1.2 s of What flows' 2.4). float64 throughout: the
    off-diagonal terms of a sink's small ‖W_O v‖ cancel far above float64's rounding."""
    if att.out_weight is None:
        raise ValueError("this needs a detailed trace: trace(text, detail=True)")
    v = _head_values(att, layer).astype(np.float64)  # (H, s, d)
    heads, _, d = v.shape
    w = np.asarray(att.out_weight[layer], dtype=np.float64).reshape(-1, heads, d).transpose(1, 0, 2)  # (H, k, d)
    gram = np.matmul(w.transpose(0, 2, 1), w)  # (H, d, d)
    squared = (np.matmul(v, gram) * v).sum(-1)  # (H, s)
    return np.sqrt(np.maximum(squared, 0.0))


def weighted_vectors(att, layer: int, head: int) -> np.ndarray:
    """(t, s, k) α_ij · W_O^h v_j for one head: row i summed over j is what the head writes at position i."""
    return att.probs[layer, head].astype(np.float64)[:, :, None] * written_values(att, layer)[head][None]


def norms(att, layer: int) -> np.ndarray:
    """(H, t, s) ‖α_ij · W_O^h v_j‖ = α_ij · ‖W_O^h v_j‖ for every head of one layer."""
    sizes = value_sizes(att, layer)  # (H, s)
    # the float32 weights widened as the product reads them: the same float64 products, without a float64 copy
    return np.multiply(att.probs[layer], sizes[:, None, :], dtype=np.float64)


def normalised(values: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Rows as shares of their sum (a row of zeros stays zeros): comparable with attention's rows. in_place: the
    shares are written over `values` (non-negative, as norms gives them: a row summing to 0 is all zeros already)."""
    total = values.sum(-1, keepdims=True)
    return np.divide(values, total, out=values if in_place else np.zeros_like(values), where=total > 0)


def norm_shares(att) -> np.ndarray:
    """(L, H, t, s) every head's ‖α_ij · W_O^h v_j‖, normalised per row so each row sums to 1, as α's do."""
    return np.stack([normalised(norms(att, layer)) for layer in range(att.n_layers)]).astype(np.float32)


def head_shares(att, layer: int, head: int) -> np.ndarray:
    """(t, s) one head's row shares of ‖α_ij · W_O^h v_j‖ (norm_shares[layer, head], without the other heads)."""
    sizes = value_sizes(att, layer)[head]  # (s,)
    return normalised(att.probs[layer, head].astype(np.float64) * sizes[None, :]).astype(np.float32)


@dataclass
class FlowSummary:
    """What the view needs from every head, computed one layer at a time (the (L, H, t, s) stack of shares is
    never held: 73 MB for minilm at 512 tokens).

    weight, norm  (L, H) each head's share of weight and of ‖α·W_O v‖ on the special keys (special_shares)
    rollout       (t, t) norm_rollout of the shares
    """

    weight: np.ndarray
    norm: np.ndarray
    rollout: np.ndarray


def summarise(att, special: list[int], residual: float = RESIDUAL) -> FlowSummary:
    """special_shares and norm_rollout of norm_shares(att), one layer's shares at a time."""
    t = att.probs.shape[-1]
    rows = slice(1, None) if att.causal and att.probs.shape[-2] > 1 else slice(None)
    weight = att.probs[..., rows, :][..., special].sum(-1).mean(-1) if special else np.zeros(att.probs.shape[:2])
    moved, result = np.zeros(att.probs.shape[:2]), np.eye(t)
    for layer in range(att.n_layers):
        shares = normalised(norms(att, layer), in_place=True).astype(np.float32)  # (H, t, s), as norm_shares rounds
        if special:
            moved[layer] = shares[:, rows][..., special].sum(-1).mean(-1)
        mixed = (1 - residual) * shares.astype(np.float64).mean(0) + residual * np.eye(t)
        mixed /= mixed.sum(-1, keepdims=True)
        result = mixed @ result
    return FlowSummary(np.asarray(weight), moved, result.astype(np.float32))


def norm_rollout(shares: np.ndarray, residual: float = RESIDUAL) -> np.ndarray:
    """(t, t) attention rollout (analysis.attribution.rollout) with each layer's heads averaged by what they
    move rather than by their weights: the same residual mixing, the same product over layers."""
    shares = np.asarray(shares, dtype=np.float64)
    t = shares.shape[-1]
    result = np.eye(t)
    for layer in shares:
        mixed = (1 - residual) * layer.mean(0) + residual * np.eye(t)
        mixed /= mixed.sum(-1, keepdims=True)
        result = mixed @ result
    return result.astype(np.float32)


@dataclass
class SinkShares:
    """How much of the sink heads' weight, and of what they move, lands on the special tokens.

    heads    the (layer, head) pairs, 0-based, whose weight on the special keys is at least `threshold`
    weight   their mean share of attention weight on the special keys
    norm     their mean share of ‖α · W_O v‖ on the special keys
    """

    heads: list[tuple[int, int]]
    weight: float
    norm: float
    threshold: float


def special_shares(att, special: list[int], shares: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(L, H) each head's share of weight and share of norm on the `special` keys, averaged over the query rows
    (as analysis.head_stats does: without the first where it can look at itself alone, in a causal model)."""
    shares = norm_shares(att) if shares is None else shares
    rows = slice(1, None) if att.causal and att.probs.shape[-2] > 1 else slice(None)
    weight = att.probs[..., rows, :][..., special].sum(-1).mean(-1)
    moved = shares[..., rows, :][..., special].sum(-1).mean(-1)
    return weight, moved


def sink_shares(att, special: list[int], threshold: float = 0.5, shares: np.ndarray | None = None) -> SinkShares:
    """The heads that put at least `threshold` of their weight on the special keys ([CLS], [SEP]): their
    share of weight there against their share of what they move there."""
    return sinks_of(*special_shares(att, special, shares), threshold)


def sinks_of(weight: np.ndarray, moved: np.ndarray, threshold: float = 0.5) -> SinkShares:
    """sink_shares from (L, H) shares of weight and of norm on the special keys (special_shares, summarise)."""
    sinks = np.argwhere(weight >= threshold)
    if not len(sinks):
        return SinkShares([], float("nan"), float("nan"), threshold)
    pick = tuple(sinks.T)
    return SinkShares([(int(l), int(h)) for l, h in sinks], float(weight[pick].mean()), float(moved[pick].mean()),
                      threshold)
