"""Information-flow routes (Ferrando and Voita 2024): which earlier positions, through which heads and
feed-forward blocks, make up the residual stream at one position.

In a pre-norm model the stream after layer l at position i is a sum of parts, exactly:

    x_i^(l) = x_i^(l-1)                                   the stream before the layer (the residual connection)
            + Σ_h Σ_j α_ij^h · W_O^h v_j^h                  head h of the attention, reading position j
            + b_O                                          the attention's output bias (GPT-2; none in Llama)
            + f_i                                          what the feed-forward adds at i

(v_j^h is head h's value of position j, W_O^h its slice of the output matrix; the value's own bias is part of
v_j^h.) The importance of a part c of the whole x is its proximity (Ferrando and Voita 2024):
max(0, ‖x‖₁ − ‖x − c‖₁), how much closer in L1 to x the part is than the zero vector, divided by the sum of
the proximities of all the parts of x, so that at every (layer, position) the importances add up to 1.

    routes = routes.flow_routes(api.load("lm"), "The cat sat on the mat")
    routes.attention[l, i, j]     # layer l+1's attention from j into i, all heads;  routes.heads[l, h, i, j] per head
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from experiments.patching import Hooks, PatchingError, answer_position, check_model
from model.switches import Switches

MAX_TOKENS = 128  # the routes of a longer text are refused (every layer holds heads × tokens² parts)
CHUNK_FLOATS = 4 << 20  # floats one chunk of parts may hold (16 MB)


@dataclass
class LayerParts:
    """The parts of the stream after one layer at the query positions asked (q of them).

    before (q, k)      x^(l-1): the stream entering the layer
    heads (q, h, s, k) α_ij^h · W_O^h v_j^h for every head h and position j
    bias (k,)          b_O (zeros where the model has none)
    mlp (q, k)         the feed-forward's output
    whole (q, k)       x^(l): the stream after the layer, as the forward pass computed it
    """

    before: torch.Tensor
    heads: torch.Tensor
    bias: torch.Tensor
    mlp: torch.Tensor
    whole: torch.Tensor

    def total(self) -> torch.Tensor:
        """(q, k) the sum of the parts: equal to `whole` (tests/experiments/test_routes.py)."""
        return self.before + self.heads.sum((1, 2)) + self.bias + self.mlp


@dataclass
class Recorded:
    """One forward pass's residual streams, attention weights, values and output matrices."""

    residual_in: list[torch.Tensor]  # per layer (t, k)
    residual: list[torch.Tensor]
    mlp: list[torch.Tensor]
    probs: list[torch.Tensor]  # per layer (h, t, s)
    values_out: list[torch.Tensor]  # per layer (h, s, k): W_O^h v_j^h
    bias: list[torch.Tensor]  # per layer (k,)


def check_routes_model(loaded) -> None:
    check_model(loaded)
    if loaded.config.norm != "pre":
        raise PatchingError(f"{loaded.name} normalises after each sublayer (post-norm), so its stream is not a sum "
                            "of the parts the layers add. Routes need a pre-norm model (lm, mlm, GPT-2, Llama).")


@torch.inference_mode()
def record(loaded, ids: list[int]) -> Recorded:
    hooks = Hooks(("residual_in", "residual", "mlp"))
    _, recording = loaded.model.features(torch.tensor([ids], device=loaded.device), record=True,
                                         switches=Switches(hooks=hooks))
    probs, values_out, bias = [], [], []
    for rec in recording.layers["self"]:
        h, d = rec.v.shape[1], rec.v.shape[-1]
        k = rec.out_weight.shape[0]
        w_o = rec.out_weight.view(k, h, d)  # head h owns columns h·d … (h+1)·d
        values_out.append(torch.einsum("hsd,khd->hsk", rec.v[0].float(), w_o.float()))  # (h, s, k)
        probs.append(rec.probs[0].float())  # (h, t, s)
        bias.append(rec.out_bias.detach().float() if rec.out_bias is not None else torch.zeros(k))
    by = {site: [hooks.recorded[site][l][0].float() for l in sorted(hooks.recorded[site])]
          for site in ("residual_in", "residual", "mlp")}
    return Recorded(by["residual_in"], by["residual"], by["mlp"], probs, values_out, bias)


def layer_parts(recorded: Recorded, layer: int, queries: torch.Tensor) -> LayerParts:
    """The parts of the stream after `layer` (0-based) at the query positions `queries` (q,)."""
    probs = recorded.probs[layer][:, queries]  # (h, q, s)
    heads = probs.permute(1, 0, 2)[..., None] * recorded.values_out[layer][None]  # (q, h, s, k)
    return LayerParts(recorded.residual_in[layer][queries], heads, recorded.bias[layer],
                      recorded.mlp[layer][queries], recorded.residual[layer][queries])


def proximity(part: torch.Tensor, whole: torch.Tensor) -> torch.Tensor:
    """max(0, ‖x‖₁ − ‖x − c‖₁) over the last dimension; whole broadcasts against part."""
    return (whole.abs().sum(-1) - (whole - part).abs().sum(-1)).clamp(min=0)


@dataclass
class Routes:
    """The importances of every part of every (layer, position)'s stream, as numpy.

    tokens      the positions' labels;  position  the prediction's position (0-based)
    heads (L, h, t, t)   [l, h, i, j]: head h of layer l+1 reading position j, in the stream at i after layer l+1
    attention (L, t, t)  the same summed over heads
    residual (L, t)      the stream before the layer;  mlp (L, t)  the feed-forward;  bias (L, t)  b_O
    At each [l, i]: attention[l, i].sum() + residual + mlp + bias = 1 (a position nobody reads is all 0).
    """

    tokens: list[str]
    position: int
    heads: np.ndarray
    attention: np.ndarray
    residual: np.ndarray
    mlp: np.ndarray
    bias: np.ndarray

    @property
    def n_layers(self) -> int:
        return self.heads.shape[0]


@torch.inference_mode()
def importances(recorded: Recorded, t: int) -> dict[str, np.ndarray]:
    layers = len(recorded.probs)
    h, k = recorded.values_out[0].shape[0], recorded.values_out[0].shape[-1]
    out = {"heads": np.zeros((layers, h, t, t), np.float32), "residual": np.zeros((layers, t), np.float32),
           "mlp": np.zeros((layers, t), np.float32), "bias": np.zeros((layers, t), np.float32)}
    step = max(1, CHUNK_FLOATS // (h * t * k))
    for layer in range(layers):
        for first in range(0, t, step):
            queries = torch.arange(first, min(t, first + step))
            parts = layer_parts(recorded, layer, queries)
            whole = parts.whole  # (q, k)
            near = {"heads": proximity(parts.heads, whole[:, None, None]),  # (q, h, s)
                    "residual": proximity(parts.before, whole), "mlp": proximity(parts.mlp, whole),
                    "bias": proximity(parts.bias[None], whole)}
            total = (near["heads"].sum((1, 2)) + near["residual"] + near["mlp"] + near["bias"]).clamp(min=1e-30)
            out["heads"][layer, :, first:first + len(queries)] = (
                near["heads"] / total[:, None, None]).permute(1, 0, 2).numpy()
            for name in ("residual", "mlp", "bias"):
                out[name][layer, first:first + len(queries)] = (near[name] / total).numpy()
    return out


def flow_routes(loaded, text: str, position: int | None = None) -> Routes:
    """The routes into `text`'s stream at every position; `position` (0-based) is the prediction the view starts
    from: None for the last token (a masked model: its first <mask>, else the last token)."""
    check_routes_model(loaded)
    if not isinstance(text, str) or not text.strip():
        raise PatchingError("Type a sentence first: the text box is empty.")
    encoded = loaded.encode(text)
    t = len(encoded.ids)
    if t > MAX_TOKENS:
        raise PatchingError(f"The text is {t} tokens; the routes are drawn for at most {MAX_TOKENS}. Shorten it.")
    if position is None:
        try:
            position = answer_position(loaded, encoded.ids, "")
        except PatchingError:
            position = t - 1
    if not 0 <= position < t:
        raise PatchingError(f"Choose a position between 1 and {t} (the text is {t} tokens).")
    found = importances(record(loaded, encoded.ids), t)
    return Routes(list(encoded.tokens), position, found["heads"], found["heads"].sum(1), found["residual"],
                  found["mlp"], found["bias"])
