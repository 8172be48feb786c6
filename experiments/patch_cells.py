"""What the exact causal-tracing grid's two ways share (experiments/patching.py: one batch row a cell;
experiments/patch_suffixes.py: a causal model's cells packed as suffixes): the Hooks a forward pass runs with, the
cells of a layer worth a pass, the measure read from the final vectors, and how much one pass may hold. `pair` and
`runs` below are experiments.patching's Pair and Runs.
"""
from __future__ import annotations

import torch

BATCH_BYTES = 64 << 20  # activations one batched forward pass may hold (rows × tokens × width × 4 bytes × ~24)


class Hooks:
    """What one forward pass records and replaces (model/switches.py, hooks).

    record   the sites whose tensors to keep: recorded[site][layer] is what the pass used there
    patches  (site, layer) -> (index, values): tensor.index_put(index, values) replaces those entries, e.g.
             index (rows, positions) for a (b, t, k) site, (rows, heads, positions) for "heads" (b, h, t, d)
    track    start the autograd graph at the stream entering the first block run (attribution patching)
    """

    def __init__(self, record=(), patches: dict | None = None, track: bool = False):
        self.record, self.patches, self.track = frozenset(record), patches or {}, track
        self.recorded: dict[str, dict[int, torch.Tensor]] = {}

    def edit(self, site: str, layer: int, value: torch.Tensor) -> torch.Tensor:
        if self.track and site == "residual_in":
            value, self.track = value.detach().requires_grad_(True), False
        patch = self.patches.get((site, layer))
        if patch is not None:
            index, values = patch
            value = value.index_put(index, values.to(value.dtype))
        if site in self.record:
            self.recorded.setdefault(site, {})[layer] = value
        return value


def final_head(loaded):
    """(transform, weights, bias) reading a final vector as the model's logits (lm_transform then to_vocab)."""
    model = loaded.model
    return model.lm_transform, model.to_vocab.weight, model.to_vocab.bias


def answer_diff(loaded, pair, answers: torch.Tensor) -> torch.Tensor:
    """(b,) target − contrast logits from the final vectors at the answer position (b, k)."""
    transform, weight, bias = final_head(loaded)
    h = transform(answers)  # (b, k)
    rows = weight[[pair.target, pair.contrast]]  # (2, k)
    logits = h.float() @ rows.float().T  # (b, 2)
    if bias is not None:
        logits = logits + bias[[pair.target, pair.contrast]].float()
    return logits[:, 0] - logits[:, 1]


def differing(pair, site: str, runs, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(clean, cells): the site's clean activations at one layer, (t, k) or (h, d) for heads at the answer
    position, and the cells whose clean activation differs from the corrupted one. The others change nothing:
    exactly 0, no pass needed (in a causal model every position before the first changed token)."""
    clean, corrupted = runs.clean[site][layer], runs.corrupted[site][layer]  # (t, k), or (h, t, d)
    if site == "heads":
        clean, corrupted = clean[:, pair.position], corrupted[:, pair.position]  # (h, d)
    return clean, (clean != corrupted).any(-1).nonzero()[:, 0]
