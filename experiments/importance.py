"""The head-importance map, knocked out or estimated: which one a text gets, and the estimate itself.

interventions.head_importance knocks each head out alone. A decoder's or encoder's heads run in batch rows from
their own layer up (interventions._batched_importance): heads × (L + 1) / 2 forward passes' worth of arithmetic
(minilm 42, smollm2 140): minilm at 459 tokens took 22 s where its trace took 1.0 s (2026-11-26, a busy 2-core
machine). Beyond EXACT_FLOPS of that arithmetic the map is estimated from one forward pass (and, with an output
head, one backward pass), and the head it ranks first is knocked out for real from its layer up (1.3 s in all):

- a model with an output head (next token, fill-in), to first order, as attribution patching does
  (experiments/patching.py's preview): change ≈ −∂score/∂o · Δo, with o the head's output (its weighted sum of
  values, before W_O) and Δo what the knock-out does to it: −o (zero), or the output of uniform weights − o;
- a sentence vector, whose 1 − cosine has no first-order term (the cosine is largest at the intact vector): each
  head's Δo, through W_O, carried to the sentence vector by the residual stream and the layer norms alone (how the
  later heads and feed-forward layers would answer it is left out), and 1 − cosine measured there.

On short texts either ranks the heads much as the knock-outs do (tests/experiments/test_importance.py), but neither
is exact, and a first-order one understates a head whose removal breaks the model (smollm2 on three short texts,
zero and uniform: Spearman 0.81-0.91 with the knock-outs, but the strongest knock-out moved the output 0.34-8.3
where the estimate's largest was 0.06-0.56, and its top head was never the estimate's): so the head it ranks first
is measured, and the summary gives that number.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from experiments import interventions
from experiments.patching import Hooks
from model import tokenizer as tok
from model.attention import causal_mask
from model.block import RMSNorm
from model.switches import Switches
from model.trace import Trace
from model.transformer import Recording

# The arithmetic the exact map may cost (a few seconds on the 2-core CPU a Space has): minilm is knocked out
# exactly up to 44 tokens, lm and mlm at any length; smollm2 and a 12 × 12-head BERT or GPT-2 hardly ever.
EXACT_FLOPS = 40e9
MEASURED = 3  # where estimated, the estimate's first heads knocked out for real (each a forward pass from its layer)
ESTIMATED = ("decoder", "encoder")  # the batched knock-outs' models; dates and the classifier are always exact


def forward_passes(config) -> float:
    """The exact map's arithmetic in forward passes of the same text: each layer's heads run that layer and every
    one above it."""
    return config.n_heads * (config.n_layers + 1) / 2


def knockout_flops(config, tokens: int) -> float:
    """The exact map's arithmetic (multiply-adds twice: the projections and the feed-forward per token, q·k and
    weights·v per pair), as ui/runtime/events.py counts a forward pass."""
    per_layer = 2 * tokens * (4 * config.d_model ** 2 + 2 * config.d_model * config.d_ff) \
        + 4 * tokens ** 2 * config.d_model
    return forward_passes(config) * config.n_layers * per_layer


def exact_tokens(config) -> int:
    """The longest text (in tokens, up to the model's context) whose map is knocked out exactly; 0: none."""
    low, high = 0, config.max_len
    while low < high:  # the largest n with knockout_flops(n) <= EXACT_FLOPS (it grows with n)
        middle = (low + high + 1) // 2
        low, high = (middle, high) if knockout_flops(config, middle) <= EXACT_FLOPS else (low, middle - 1)
    return low


def is_estimated(loaded, tokens: int) -> bool:
    return loaded.arch in ESTIMATED and knockout_flops(loaded.config, tokens) > EXACT_FLOPS


def first_order(loaded, text: str) -> bool:
    """Whether the text's map is the first-order estimate, whose GradientPass also gives the explanations' gradient
    × input (a model with an output head, on a text too long to knock every head out)."""
    return interventions.has_vocab_head(loaded) and is_estimated(loaded, len(loaded.encode(text).ids))


@dataclass
class HeadMap:
    """What the importance map shows.

    maps       attention kind -> (L, H): each head's change knocked out alone (interventions.change), or its estimate
    estimated  whether `maps` is the estimate
    checked    where estimated: the head the estimate ranks first, knocked out alone for real: (kind, layer, head,
               change), 0-based
    measured   where estimated: the estimate's first MEASURED heads knocked out alone for real, the largest
               measured change first (checked among them)
    tokens     the text's length in tokens, which decided
    """

    maps: dict[str, np.ndarray]
    estimated: bool
    tokens: int
    checked: tuple[str, int, int, float] | None = None
    measured: tuple[tuple[str, int, int, float], ...] = ()


def importance(loaded, text: str, kinds: dict[str, tuple[int, int]], method: str = "zero",
               plain=None, gradient=None) -> HeadMap:
    """interventions.head_importance's maps, or where that costs more than EXACT_FLOPS the estimate, with the
    head it ranks first knocked out for real (one more forward pass). plain: a function giving the plain
    interventions.outcome of the text, where the caller keeps one (the knock-outs score against it; the estimate
    scores against its own pass's). gradient: a function giving the text's GradientPass, where the caller keeps one
    (the explanations read their gradient × input from the same pass)."""
    tokens = len(loaded.encode(text).ids)
    if not is_estimated(loaded, tokens):
        before = plain() if plain is not None else None
        return HeadMap(interventions.head_importance(loaded, text, kinds, method, before), False, tokens)
    (kind, (layers, _)), = kinds.items()  # a decoder's or encoder's one kind, "self"
    effect, before, entering = _estimate(loaded, text, layers, method, gradient)
    measured = []
    for index in np.argsort(-effect, axis=None, kind="stable")[:MEASURED]:
        layer, head = (int(i) for i in np.unravel_index(int(index), effect.shape))
        change = _knocked_out_alone(loaded, text, before, entering[layer], Switches(ablate={(kind, layer, head)},
                                                                                     method=method), layer)
        measured.append((kind, layer, head, change))
    return HeadMap({kind: effect}, True, tokens, measured[0], tuple(sorted(measured, key=lambda m: -m[3])))


@torch.no_grad()
def _knocked_out_alone(loaded, text: str, before: interventions.Outcome, entering: torch.Tensor, switches: Switches,
                       layer: int) -> float:
    """interventions.change of one head knocked out for real: the forward pass from the head's layer up, from the
    stream entering it in the estimate's own pass (the layers below do not change), scored as interventions.outcome
    scores it."""
    model = loaded.model
    features = model.resume(entering.detach(), layer, switches)  # (1, t, k), after the final norm
    if before.what == "sentence vector":
        vector = features[0].float().mean(0)
        intact = torch.as_tensor(before.vector, device=vector.device)
        after = torch.nn.functional.cosine_similarity(vector, intact, dim=0)
    else:
        keep = (tok.EOS,) if loaded.arch == "decoder" else ()
        position = -1 if loaded.arch == "decoder" else interventions._mask_position(
            loaded, interventions._ids(loaded, text)[0].tolist())
        logits = model.to_vocab(model.lm_transform(features[0, position]))
        after = torch.log_softmax(loaded._no_specials(logits, keep=keep), -1)[before.reference[0]]
    return before.score - float(after)


def _uniform_output(loaded, layer: int, entering: torch.Tensor) -> torch.Tensor:
    """(1, h, t, d): what the layer's heads output with uniform weights over the keys each query may see."""
    block = loaded.model.stack.blocks[layer]
    attention = block.self_attention
    read = block.norm1(entering) if block.pre_norm else entering
    values = attention.share(attention.split_heads(attention.tovalues(read), attention.kv_heads))  # (1, h, t, d)
    t = values.shape[2]
    if loaded.model.causal:
        allowed = causal_mask(t, device=values.device, window=loaded.model.config.sliding_window).to(values.dtype)
    else:
        allowed = torch.ones(t, t, dtype=values.dtype, device=values.device)
    return (allowed / allowed.sum(-1, keepdim=True)) @ values


def _knocked_out(loaded, method: str, layer: int, heads: dict, entering: dict) -> torch.Tensor:
    """(1, h, t, d) Δo: what knocking each head of the layer out does to its output. heads and entering: each
    layer's head outputs o (1, h, t, d) and the stream entering it (1, t, k), of the intact pass."""
    output = heads[layer].detach()
    if method == "zero":
        return -output
    return _uniform_output(loaded, layer, entering[layer].detach()) - output


def estimate(loaded, text: str, layers: int, heads: int, method: str = "zero") -> np.ndarray:
    """(L, H) the estimated change of knocking out each head alone (the module's docstring: which estimate)."""
    return _estimate(loaded, text, layers, method)[0]


def _estimate(loaded, text: str, layers: int, method: str, gradient=None) -> tuple[np.ndarray, interventions.Outcome,
                                                                                    dict]:
    """The estimate, the intact output as interventions.outcome scores it, and the residual stream entering each
    layer (layer -> (1, t, k)), all from the estimate's own pass. gradient: a function giving the text's
    GradientPass, where the caller keeps one (a model with an output head)."""
    if method not in ("zero", "uniform"):
        raise ValueError(f"unknown ablation method {method!r}")
    if interventions.has_vocab_head(loaded):
        found = gradient() if gradient is not None else gradient_pass(loaded, text)
        return _first_order(loaded, layers, method, found)
    return _through_the_norms(loaded, text, layers, method)


@dataclass
class GradientPass:
    """One forward and one backward pass of the intact output's score (the log-probability of the reference token,
    as interventions.outcome scores it), on the explicit attention path interventions.attribution takes: what the
    first-order estimate needs and the explanations' gradient × input, one pass for both (two passes of smollm2 at
    512 tokens took ~6 s; for either method, zero or uniform).

    before       the intact output as scored on this pass (its reference: the plain outcome's, where given)
    heads        layer -> (1, h, t, d) each head's output o, before W_O;  grads: ∂score/∂o, the same shapes
    entering     layer -> (1, t, k) the residual stream entering the layer
    attribution  (t,) gradient × input of the score (interventions.attribution's numbers)
    trace        with detail=True, the detailed trace of the same forward pass (api.LoadedModel.trace(detail=True,
                 scores=False, predictions=False)'s numbers, from the attention's batched path), else None
    """

    before: interventions.Outcome
    heads: dict[int, torch.Tensor]
    grads: dict[int, torch.Tensor]
    entering: dict[int, torch.Tensor]
    attribution: np.ndarray
    trace: Trace | None = None


def gradient_pass(loaded, text: str, reference: interventions.Outcome | None = None,
                  detail: bool = False) -> GradientPass:
    """The GradientPass of `text` on a model with an output head; reference: the plain interventions.outcome (whose
    token the score reads), else the pass's own top token. detail=True: its forward pass also records the text's
    detailed trace, which a view would otherwise run a forward pass of its own for (~2 s of smollm2's at 512
    tokens; it records every weight anyway, on the explicit path the gradients need)."""
    encoded = loaded.encode(text)
    ids = torch.tensor([encoded.ids], device=loaded.device)  # interventions._ids's
    hooks = Hooks(("residual_in", "heads"))
    with torch.enable_grad():
        if loaded.arch == "decoder":
            position, keep, what = -1, (tok.EOS,), "next token"
        else:
            position, keep, what = interventions._mask_position(loaded, ids[0].tolist()), (), "fill-in"
        # the weights' explicit path, as attribution's record=True runs it, without keeping the raw scores (the same
        # arithmetic: the gradients are attribution's bit for bit)
        logits, rec = interventions.read_logits(loaded, ids, position, Switches(hooks=hooks),
                                                Recording(scores=False, detail=detail))
        logp = torch.log_softmax(loaded._no_specials(logits, keep=keep), -1)
        best = int(logp.argmax()) if reference is None else reference.reference[0]
        score = logp[best]
        heads, inputs = hooks.recorded["heads"], rec.embeddings["input"]
        *grads, input_grad = torch.autograd.grad(score, [heads[layer] for layer in range(len(heads))] + [inputs])
    with torch.no_grad():
        attribution = (input_grad * inputs).sum(-1).detach().float().cpu().numpy()[0]  # gradient_times_input's
        trace = loaded.recorded_trace(rec, encoded.ids, encoded.tokens, encoded.truncated, scores=False) \
            if detail else None
    before = interventions.Outcome(what, loaded.label(best), float(score.detach()), reference=[best])
    detached = {site: {layer: x.detach() for layer, x in hooks.recorded[site].items()} for site in hooks.recorded}
    return GradientPass(before, detached["heads"], dict(enumerate(grads)), detached["residual_in"], attribution,
                        trace)


def _first_order(loaded, layers: int, method: str, found: GradientPass) -> tuple[np.ndarray, interventions.Outcome,
                                                                                 dict]:
    """change ≈ −∂score/∂o · Δo per head: the score is the log-probability of the intact output."""
    with torch.no_grad():
        rows = [-(found.grads[layer] * _knocked_out(loaded, method, layer, found.heads, found.entering))
                .sum((-1, -2))[0] for layer in range(layers)]  # each (h,)
    return torch.stack(rows).float().cpu().numpy(), found.before, found.entering


class NormStep:
    """What a small change δ (t, n, k) of a norm's input `at` (1, t, k) changes in its output, to first order: the
    norm's Jacobian at `at`, written out (torch.func.jvp through layer_norm took 5 of minilm's 6 s at 459 tokens).
    With ẑ = (z − mean) / σ, LayerNorm passes γ / σ · (δ − mean(δ) − ẑ · mean(ẑ δ)); RMSNorm, with ẑ = z / rms
    and no mean taken out, γ / rms · (δ − ẑ · mean(ẑ δ)). The means are one small matrix product per position, the
    positions first (a batch of them): a quarter of the time of taking the means one by one."""

    def __init__(self, norm, at: torch.Tensor):
        at = at[0].float()  # (t, k)
        if not isinstance(norm, RMSNorm):
            at = at - at.mean(-1, keepdim=True)
        scale = torch.sqrt(at.pow(2).mean(-1, keepdim=True) + norm.eps)  # (t, 1): σ, or the rms
        unit = at / scale  # ẑ, whose mean is 0 for LayerNorm: mean(ẑ δ) needs no centred δ
        taken = [unit] if isinstance(norm, RMSNorm) else [torch.ones_like(unit), unit]
        self.basis = torch.stack(taken, 1)  # (t, j, k): what the norm takes out of δ, along 1 and ẑ
        self.means = self.basis.transpose(1, 2) / at.shape[-1]  # (t, k, j): δ times it is mean(δ), mean(ẑ δ)
        weight = getattr(norm, "weight", None)
        self.gain = (1 / scale if weight is None else weight.float() / scale)[:, None]  # (t, 1, k): γ / σ

    def __call__(self, change: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(change, torch.bmm(change, self.means), self.basis, alpha=-1).mul_(self.gain)


@torch.no_grad()
def _through_the_norms(loaded, text: str, layers: int, method: str) -> tuple[np.ndarray, interventions.Outcome,
                                                                                 dict]:
    """1 − cosine of the sentence vector with each head's Δo carried up by the residual stream and the norms."""
    model = loaded.model
    hooks = Hooks(("residual_in", "attention", "mlp", "heads", "residual"))
    features, _ = model.features(interventions._ids(loaded, text), switches=Switches(hooks=hooks))
    vector = features[0].float().mean(0)  # (k,)
    recorded, blocks = hooks.recorded, model.stack.blocks
    steps = []  # each layer's norms, as the change passes them (post-norm: two per layer; pre-norm: the final one)
    for layer, block in enumerate(blocks):
        if not block.pre_norm:
            summed = recorded["residual_in"][layer] + recorded["attention"][layer]
            steps.append([NormStep(block.norm1, summed),
                          NormStep(block.norm2, block.norm1(summed) + recorded["mlp"][layer])])
        else:
            steps.append([])
    if blocks[-1].pre_norm:
        steps[-1].append(NormStep(model.stack.final_norm, recorded["residual"][len(blocks) - 1]))
    effect = np.zeros((layers, blocks[0].self_attention.heads), dtype=np.float32)
    for layer in range(layers):
        attention = blocks[layer].self_attention
        delta = _knocked_out(loaded, method, layer, recorded["heads"], recorded["residual_in"])[0].float()  # h, t, d
        weight = attention.unifyheads.weight.float().view(-1, attention.heads, attention.d)  # (k, h, d)
        change = torch.einsum("htd,khd->thk", delta, weight)  # (t, h, k): each head's Δ to the stream
        for above in range(layer, len(blocks)):
            for step in steps[above]:
                change = step(change)
        moved = vector[None] + change.mean(0)  # (h, k)
        effect[layer] = (1 - torch.nn.functional.cosine_similarity(moved, vector[None], dim=-1)).cpu().numpy()
    score = float(torch.nn.functional.cosine_similarity(vector, vector, dim=0))  # as interventions.outcome's
    return effect, interventions.Outcome("sentence vector", f"{vector.numel()}-dimensional sentence vector", score,
                                         vector=vector.cpu().numpy()), recorded["residual_in"]
