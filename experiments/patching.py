"""Causal tracing between two prompts: run a corrupted prompt with one activation copied in from a clean one,
and measure how much of the clean answer comes back (Meng et al. 2022; per head, Wang et al. 2022).

    from model import api
    from experiments import patching
    lm = api.load("lm")
    pair = patching.prepare(lm, "The cat sat on the", "The dog sat on the")   # target/contrast: each run's top token
    runs = patching.record(lm, pair)
    patching.preview(lm, pair, runs)["residual"]     # (L, t) attribution patching: one backward pass
    patching.exact(lm, pair, "residual", runs)       # (L, t) one patched forward pass per cell

The measure is the logit difference d = logit(target) − logit(contrast) at the answer position (the last token;
a masked model's <mask>), normalised: (d_patched − d_corrupted) / (d_clean − d_corrupted), so 0 is the
corrupted run and 1 the clean run. Sites, at (layer, position):
    residual    the residual stream after the layer
    attention   what the layer's attention adds to it;  mlp  what its feed-forward adds
    heads       one head's output (its weighted sum of values, before W_O) at the answer position: (layer, head)
Every run is the model's one forward pass with a Hooks object in its switches (model/switches.py); the exact
grid restarts each layer's batch from the corrupted run's residual stream entering that layer (model.resume);
a causal model's runs each cell on the positions from the patch on only (experiments/patch_suffixes.py).
The pair itself (the prompts, the answer position, the target and contrast tokens and the single tokens
that spell the same words) is experiments/patch_pair.py's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

import numpy as np
import torch

from experiments import patch_pair, patch_suffixes
from experiments.patch_cells import BATCH_BYTES, Hooks, answer_diff, differing, final_head
from experiments.patch_pair import (  # noqa: F401 (the pair is part of this module's API)
    MAX_TOKENS, Pair, PatchingError, answer_position, check_model, keep_tokens, prepare, token_id)
from model.switches import Switches

SITES = ("residual", "attention", "mlp", "heads")
GRID_SITES = SITES[:3]  # layers × positions; heads is layers × heads at the answer position


class Token(NamedTuple):
    """A token as the views name it: its label ("▁Paris"), as typed (' Paris') and its probability on a run."""
    label: str
    typed: str
    p: float


@dataclass
class Runs:
    """The clean and the corrupted run, recorded at every site.

    clean, corrupted   site -> (L, ...) tensors: "residual_in", "residual", "attention", "mlp" (L, t, k),
                       "heads" (L, h, t, d)
    clean_diff, corrupted_diff   the logit difference target − contrast of each run
    clean_probs, corrupted_probs  (target, contrast) probabilities of each run
    likelier    "target": the target's spellings (Pair.target_spellings) on the clean run, "contrast": the
                contrast's on the corrupted run, each a list of Token, the likeliest first; "clean", "corrupted":
                [that run's top token]
    """

    clean: dict[str, torch.Tensor]
    corrupted: dict[str, torch.Tensor]
    clean_diff: float
    corrupted_diff: float
    clean_probs: tuple[float, float] = (0.0, 0.0)
    corrupted_probs: tuple[float, float] = (0.0, 0.0)
    n_layers: int = 0
    n_heads: int = 0
    likelier: dict[str, list[Token]] = field(default_factory=dict)

    def normalise(self, diff):
        return (diff - self.corrupted_diff) / (self.clean_diff - self.corrupted_diff)


RECORDED = ("residual_in", "residual", "attention", "mlp", "heads")


def logit_diff(loaded, pair: Pair, features: torch.Tensor) -> torch.Tensor:
    """(b,) target − contrast logits at the answer position from the final vectors (b, t, k): only the two
    rows of the unembedding are read, not the whole vocabulary."""
    return answer_diff(loaded, pair, features[:, pair.position])


def _run(loaded, ids: list[int], hooks: Hooks) -> torch.Tensor:
    """The features (1, t, k) of one plain forward pass with hooks."""
    features, _ = loaded.model.features(torch.tensor([ids], device=loaded.device), switches=Switches(hooks=hooks))
    return features


def _stacked(hooks: Hooks) -> dict[str, torch.Tensor]:
    return {site: torch.cat([by_layer[l] for l in sorted(by_layer)]) for site, by_layer in hooks.recorded.items()}


@torch.inference_mode()
def record(loaded, pair: Pair) -> Runs:
    """Both runs, every site recorded."""
    out, likelier = {}, {}
    for which, ids in (("clean", pair.clean_ids), ("corrupted", pair.corrupted_ids)):
        hooks = Hooks(RECORDED)
        features = _run(loaded, ids, hooks)
        transform, weight, bias = final_head(loaded)
        logits = torch.nn.functional.linear(transform(features[0, pair.position]), weight, bias)
        probs = torch.softmax(loaded._no_specials(logits, keep=keep_tokens(loaded)), -1)
        out[which] = (_stacked(hooks), float(logit_diff(loaded, pair, features)[0]),
                      (float(probs[pair.target]), float(probs[pair.contrast])))
        spelt = pair.target_spellings if which == "clean" else pair.contrast_spellings
        likelier[which] = [_token(loaded, int(probs.argmax()), probs)]
        likelier["target" if which == "clean" else "contrast"] = sorted(
            (_token(loaded, i, probs) for i in spelt), key=lambda t: -t.p)
    (clean, d_clean, p_clean), (corrupted, d_corrupted, p_corrupted) = out["clean"], out["corrupted"]
    if abs(d_clean - d_corrupted) < 1e-6:
        raise PatchingError(f"Both prompts give the same logit difference {pair.target_label!r} − "
                            f"{pair.contrast_label!r} ({d_clean:.3f}), so there is nothing to restore: choose "
                            "prompts (or tokens) on which the model's answers differ.")
    layers, heads = clean["heads"].shape[:2]
    return Runs(clean, corrupted, d_clean, d_corrupted, p_clean, p_corrupted, layers, heads, likelier)


def _token(loaded, token: int, probs: torch.Tensor) -> Token:
    return Token(loaded.label(token), patch_pair.typed(loaded, token), float(probs[token]))


@torch.inference_mode()
def patched(loaded, pair: Pair, runs: Runs, cells: list[tuple]) -> float:
    """The normalised measure of one plain corrupted forward pass, every block run, with each cell patched in
    from the clean run: cells are (site, layer, position) or ("heads", layer, head[, position]). The direct,
    unoptimised path (the tests hold the exact grid to it); no cells gives 0."""
    patches: dict[tuple, list] = {}
    for site, layer, *where in cells:
        patches.setdefault((site, layer), []).append(where)
    hooks_patches = {}
    for (site, layer), places in patches.items():
        if site == "heads":
            heads = [p[0] for p in places]
            positions = [p[1] if len(p) > 1 else pair.position for p in places]
            index = (torch.zeros(len(heads), dtype=torch.long), torch.tensor(heads), torch.tensor(positions))
            values = runs.clean["heads"][layer, heads, positions]  # (n, d)
        else:
            positions = [p[0] for p in places]
            index = (torch.zeros(len(positions), dtype=torch.long), torch.tensor(positions))
            values = runs.clean[site][layer, positions]  # (n, k)
        hooks_patches[(site, layer)] = tuple(i.to(loaded.device) for i in index), values
    features = _run(loaded, pair.corrupted_ids, Hooks(patches=hooks_patches))
    return float(runs.normalise(logit_diff(loaded, pair, features)[0]))


def _chunks(n: int, t: int, k: int) -> int:
    """How many batch rows one pass may hold within BATCH_BYTES."""
    return max(1, BATCH_BYTES // max(1, t * k * 4 * 24))


@torch.inference_mode()
def exact_rows(loaded, pair: Pair, site: str, runs: Runs) -> Iterator[tuple[int, np.ndarray]]:
    """(layer, row) for each layer in turn, layer 0 first: row (t,) is the normalised measure with the site
    patched at each position (site "heads": (h,), each head patched at the answer position). One batched
    forward pass a layer (a batch row per cell), started from the corrupted run's stream entering the layer:
    the blocks below a patch compute what they computed before, so they are not run again."""
    if site not in SITES:
        raise PatchingError(f"site must be one of {', '.join(SITES)}, not {site!r}.")
    model = loaded.model
    t, k = len(pair.corrupted_ids), runs.corrupted["residual"].shape[-1]
    device = loaded.device
    if patch_suffixes.applies(loaded, t):
        yield from patch_suffixes.exact_rows(loaded, pair, site, runs)
        return
    for layer in range(runs.n_layers):
        clean, differs = differing(pair, site, runs, layer)
        row = torch.zeros(len(clean), dtype=torch.float32)
        step = _chunks(len(differs), t, k)
        for first in range(0, len(differs), step):
            cells = differs[first:first + step]
            n = len(cells)
            rows = torch.arange(n, device=device)
            if site == "residual":  # the stream after this layer, patched, enters the next layer
                x = runs.corrupted["residual"][layer].expand(n, t, k).clone()
                x[rows, cells] = clean[cells]
                features = model.resume(x, layer + 1)
            else:
                x = runs.corrupted["residual_in"][layer].expand(n, t, k)
                where = (rows, cells, torch.full_like(cells, pair.position)) if site == "heads" else (rows, cells)
                hooks = Hooks(patches={(site, layer): (where, clean[cells])})
                features = model.resume(x, layer, Switches(hooks=hooks))
            row[cells.cpu()] = runs.normalise(logit_diff(loaded, pair, features)).float().cpu()
        yield layer, row.numpy()


def exact(loaded, pair: Pair, site: str, runs: Runs | None = None) -> np.ndarray:
    """The whole exact grid: (L, t), or (L, h) for heads."""
    runs = runs or record(loaded, pair)
    return np.stack([row for _, row in exact_rows(loaded, pair, site, runs)])


def preview(loaded, pair: Pair, runs: Runs | None = None) -> dict[str, np.ndarray]:
    """Attribution patching (Nanda 2023; Syed et al. 2023): every site's grid at once from one forward and one
    backward pass of the corrupted run, d(measure)/d(activation) · (clean − corrupted activation), the first-order
    estimate of patching that activation. Exact where the measure is linear in it. site -> (L, t) or (L, h)."""
    runs = runs or record(loaded, pair)
    hooks = Hooks(SITES, track=True)
    with torch.enable_grad():
        features = _run(loaded, pair.corrupted_ids, hooks)
        diff = runs.normalise(logit_diff(loaded, pair, features)[0])
        order = [(site, layer) for site in SITES for layer in sorted(hooks.recorded[site])]
        grads = torch.autograd.grad(diff, [hooks.recorded[s][l] for s, l in order], allow_unused=True)
    grid = {site: [] for site in SITES}
    for (site, layer), grad in zip(order, grads):
        if grad is None:  # the answer does not read this site (a masked model's last layer elsewhere)
            grad = torch.zeros_like(hooks.recorded[site][layer])
        change = (runs.clean[site][layer] - runs.corrupted[site][layer]).float()  # (t, k) or (h, t, d)
        effect = (grad[0].float() * change).sum(-1)  # (t,) or (h, t)
        grid[site].append(effect[:, pair.position] if site == "heads" else effect)
    return {site: torch.stack(rows).detach().cpu().numpy() for site, rows in grid.items()}


@dataclass
class Tracing:
    """Everything a causal-tracing view shows, as numpy (for analysis/ and viz/).

    pair         the prompts and tokens;  clean_diff, corrupted_diff  the raw logit differences
    preview      site -> (L, t) (heads: (L, h)) attribution-patching estimate
    exact        site -> the exact grid, where computed
    likelier     the target's and the contrast's spellings and each run's top token (Runs.likelier)
    """

    pair: Pair
    clean_diff: float
    corrupted_diff: float
    clean_probs: tuple[float, float]
    corrupted_probs: tuple[float, float]
    preview: dict[str, np.ndarray]
    exact: dict[str, np.ndarray] = field(default_factory=dict)
    likelier: dict[str, list[Token]] = field(default_factory=dict)

    @classmethod
    def of(cls, pair: Pair, runs: Runs, preview: dict[str, np.ndarray]) -> "Tracing":
        return cls(pair, runs.clean_diff, runs.corrupted_diff, runs.clean_probs, runs.corrupted_probs, preview,
                   likelier=runs.likelier)


def trace(loaded, clean: str, corrupted: str, target: str | None = None, contrast: str | None = None,
          sites=SITES) -> Tracing:
    """The preview and the exact grids of `sites` for one pair."""
    pair = prepare(loaded, clean, corrupted, target, contrast)
    runs = record(loaded, pair)
    found = Tracing.of(pair, runs, preview(loaded, pair, runs))
    for site in sites:
        found.exact[site] = exact(loaded, pair, site, runs)
    return found
