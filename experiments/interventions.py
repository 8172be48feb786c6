"""Interventions: knock heads out and measure what the model's output does; ask which input
tokens the output depends on (gradient × input).

Every experiment runs the one forward pass with model/switches.py's switches; nothing here
copies the network. An output is compared by the log-probability the model gives to the
*reference*: what the unablated model predicts for this input (the next token for lm, the
filler of the first <mask> for mlm, the whole ISO string for dates, the label for a
classifier). Encoders without an output head (a sentence encoder such as MiniLM) are compared
by the cosine similarity of their sentence vector to the unablated one.

    from model import api
    from experiments import interventions
    from model.switches import Switches
    dates = api.load("dates")
    before, after = interventions.compare(dates, "3 March 1999", Switches(ablate={("cross", 1, 2)}))
    before.text, after.text, before.score - after.score
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model import tokenizer as tok
from model.attention import causal_mask
from model.switches import PLAIN, Switches

TOP_K = 5


@dataclass
class Outcome:
    """What the model outputs for one input under one set of switches.

    what     what the output is: "next token", "fill-in", "ISO date", "label" or "sentence vector"
    text     the output as the app shows it (next token and continuation, filler, ISO string, label)
    score    log-probability of the reference output (cosine similarity for a sentence vector: 1 = unchanged)
    top      the top guesses with probabilities (empty for a sentence vector)
    reference  the reference output's ids (what `score` measures)
    """

    what: str
    text: str
    score: float
    top: list[tuple[str, float]] = field(default_factory=list)
    reference: list[int] = field(default_factory=list)
    vector: np.ndarray | None = None


def has_vocab_head(loaded) -> bool:
    return getattr(loaded.model, "to_vocab", None) is not None


def _ids(loaded, text: str) -> torch.Tensor:
    return torch.tensor([loaded.encode(text).ids], device=loaded.device)


def _sentence_vector(loaded, ids: torch.Tensor, switches: Switches) -> torch.Tensor:
    """Mean of the last layer's vectors over the tokens, as sentence encoders pool (k,)."""
    features, _ = loaded.model.features(ids, switches=switches)
    return features[0].float().mean(0)


def _mask_position(loaded, ids: list[int]) -> int:
    mask_id = loaded.special(tok.MASK)
    positions = [i for i, t in enumerate(ids) if t == mask_id]
    if not positions:
        raise ValueError("Put a <mask> in the text: the masked model's output is its fill-in for it, "
                         "e.g. 'The cat sat on the <mask>.'")
    return positions[0]


def read_logits(loaded, ids: torch.Tensor, position: int, switches: Switches = PLAIN, record=False):
    """((v,) logits, recording): the last layer's vectors of every position, projected onto the vocabulary only at
    the one `position` a score reads (a next token's, a <mask>'s). All of smollm2's 512 positions would be 29 GFLOP
    (~0.4 s on one core), and as much again in a backward pass through them."""
    features, rec = loaded.model.features(ids, record=record, switches=switches)
    return loaded.model.to_vocab(loaded.model.lm_transform(features[0, position])), rec


def _decoder_logp(loaded, src: torch.Tensor, target: list[int], switches: Switches) -> torch.Tensor:
    """(n,) log-probabilities of each token of `target` after <s>, teacher-forced."""
    bos, eos = loaded.special(tok.BOS), loaded.special(tok.EOS)
    dec_in = torch.tensor([[bos] + target], device=loaded.device)
    logits, _ = loaded.model(src, dec_in, switches=switches)
    logp = torch.log_softmax(logits[0].float(), -1)  # (n + 1, v)
    wanted = torch.tensor(target + [eos], device=loaded.device)
    return logp[torch.arange(len(wanted)), wanted]


@torch.no_grad()
def outcome(loaded, text: str, switches: Switches = PLAIN, reference: Outcome | None = None,
            describe: bool = True) -> Outcome:
    """The model's output for `text` under `switches`, scored against `reference` (default: itself).
    describe=False skips decoding the output text (the score alone, for head importance)."""
    switches = PLAIN if changes_nothing(switches) else switches  # the plain run's own path (its cached continuation)
    arch = loaded.arch
    if arch == "encoder-decoder":
        if reference is not None and not describe:
            written = ""
        else:
            written = loaded.translate(text, switches=switches)
        target = reference.reference if reference else loaded.tokenizer.encode(written).ids
        score = float(_decoder_logp(loaded, _ids(loaded, text), target, switches).sum())
        return Outcome("ISO date", written, score, reference=list(target))
    if arch == "classifier":
        return _classifier_outcome(loaded, text, switches, reference)
    ids = _ids(loaded, text)
    if not has_vocab_head(loaded):
        vector = _sentence_vector(loaded, ids, switches)
        ref = torch.as_tensor(reference.vector, device=vector.device) if reference else vector
        score = float(torch.nn.functional.cosine_similarity(vector, ref, dim=0))
        return Outcome("sentence vector", f"{vector.numel()}-dimensional sentence vector", score,
                       vector=vector.cpu().numpy())
    if arch == "decoder":
        position, what, keep = -1, "next token", (tok.EOS,)
    else:
        position, what, keep = _mask_position(loaded, ids[0].tolist()), "fill-in", ()
    first, continuation = [], ""
    if arch == "decoder" and describe:  # the continuation's first step reads the prompt as the score does: kept
        continuation = " → " + loaded.generate(text, 8, switches=switches, first=first)
    if first:
        logp = first[0]
    else:
        logits, _ = read_logits(loaded, ids, position, switches)
        logp = torch.log_softmax(loaded._no_specials(logits, keep=keep), -1)
    best = int(logp.argmax())
    ref = reference.reference[0] if reference else best
    top = logp.exp().topk(TOP_K)
    guesses = [(loaded.label(int(i)), float(p)) for p, i in zip(top.values, top.indices)]
    return Outcome(what, loaded.label(best) + continuation, float(logp[ref]), guesses, [ref])


def _classifier_outcome(loaded, text, switches, reference):
    guesses = loaded.classify(text, k=None, switches=switches)  # every label, most likely first
    probs = dict(guesses)
    label = reference.text if reference else guesses[0][0]
    return Outcome("label", guesses[0][0], float(np.log(max(probs[label], 1e-12))), guesses[:TOP_K])


def changes_nothing(switches: Switches) -> bool:
    """Whether the switches leave the forward pass as it is (no head knocked out, positions and mask on, no hooks):
    a knock-out method with no heads to knock out."""
    return (not switches.ablate and not switches.rows and switches.positions and switches.causal
            and switches.hooks is None)


def compare(loaded, text: str, switches: Switches, before: Outcome | None = None) -> tuple[Outcome, Outcome]:
    """(before, after): the plain output and the output under `switches`, both scored against
    the plain one. before.score - after.score is how much the change hurt the reference.
    before: the plain outcome(loaded, text) already at hand. Switches that change nothing give the plain output
    again without running the model (on smollm2 at 512 tokens a forward pass and a continuation, or with "uniform"
    eight whole passes: only the plain run has a key/value cache)."""
    before = outcome(loaded, text) if before is None else before
    if changes_nothing(switches):
        return before, replace(before)
    return before, outcome(loaded, text, switches, reference=before)


def change(before: Outcome, after: Outcome) -> float:
    """How much the output moved: the drop in log-probability of the reference output, or for a
    sentence vector 1 - cosine similarity (0 = unchanged)."""
    return before.score - after.score


def head_importance(loaded, text: str, kinds: dict[str, tuple[int, int]], method: str = "zero",
                    before: Outcome | None = None) -> dict[str, np.ndarray]:
    """For each attention kind ("self", or "encoder"/"decoder"/"cross") with (layers, heads): an
    (L, H) array of how much knocking out that one head moves the output (see `change`).
    before: the plain outcome(loaded, text) already at hand."""
    before = outcome(loaded, text) if before is None else before
    maps = {}
    for kind, (layers, heads) in kinds.items():
        if loaded.arch in ("decoder", "encoder"):  # one head a batch row: a few passes instead of L × H
            maps[kind] = _batched_importance(loaded, text, before, kind, layers, heads, method)
            continue
        effect = np.zeros((layers, heads), dtype=np.float32)
        for layer in range(layers):
            for head in range(heads):
                switches = Switches(ablate={(kind, layer, head)}, method=method)
                after = outcome(loaded, text, switches, before, describe=False)
                effect[layer, head] = change(before, after)
        maps[kind] = effect
    return maps


BATCH_CELLS = 4_000_000  # attention weights (rows × heads × t × t) one batched pass may hold


@torch.no_grad()
def _batched_importance(loaded, text, before: Outcome, kind, layers, heads, method) -> np.ndarray:
    """head_importance of a decoder or encoder, each head knocked out alone in its own batch row; the same
    numbers as one pass per head (tests/experiments/test_interventions.py).

    A head knocked out in layer l changes nothing below l: that layer's rows join the batch at layer l, from the
    plain pass's residual stream entering it, and run only layers l … L (half the arithmetic of whole passes over
    30 layers, in one growing batch); only the position the score reads is projected onto the vocabulary."""
    ids = _ids(loaded, text)
    t = ids.shape[1]
    model = loaded.model
    stack = model.stack
    mask = causal_mask(t, device=ids.device, window=model.config.sliding_window) if model.causal else None
    rotation = model.embed.rotation(t)
    entering = []  # the plain residual stream entering each layer, (1, t, k)
    x = model.embed(ids, None, "input")
    for block in stack.blocks:
        entering.append(x)
        x, _ = block(x, mask, rotation=rotation)
    if has_vocab_head(loaded):
        position = -1 if loaded.arch == "decoder" else _mask_position(loaded, ids[0].tolist())
        keep = (tok.EOS,) if loaded.arch == "decoder" else ()
    per_pass = max(1, BATCH_CELLS // (heads * heads * t * t))  # layers whose rows one pass holds
    scores = []
    for first in range(0, layers, per_pass):
        group = range(first, min(layers, first + per_pass))
        switches = Switches(rows=tuple((kind, layer, head) for layer in group for head in range(heads)), method=method)
        x = None
        for number in range(first, len(stack.blocks)):
            if number in group:  # this layer's rows join the batch here, from the plain stream entering it
                joining = entering[number].expand(heads, -1, -1)
                x = joining if x is None else torch.cat([x, joining])
            x, _ = stack.blocks[number](x, mask, heads_off={"self": switches.heads_off(kind, number)},
                                        method=method, rotation=rotation)
        if not has_vocab_head(loaded):
            vectors = stack.final_norm(x).float().mean(1)  # (n, k)
            reference = torch.as_tensor(before.vector, device=vectors.device)[None]
            scores.append(torch.nn.functional.cosine_similarity(vectors, reference, dim=-1))
            continue
        logits = model.readout(x[:, position])  # (n, v): the one position the score reads
        logp = torch.log_softmax(loaded._no_specials(logits, keep=keep), -1)
        scores.append(logp[:, before.reference[0]])
    after = torch.cat(scores).float().cpu().numpy()
    return (before.score - after).reshape(layers, heads).astype(np.float32)


def gradient_times_input(score: torch.Tensor, inputs: torch.Tensor) -> np.ndarray:
    """(..., t) attribution of a scalar `score` to each input vector: Σ_k ∂score/∂x_tk · x_tk.
    inputs (..., t, k) must be a tensor the graph that computed `score` used (not a slice of one)."""
    (grad,) = torch.autograd.grad(score, inputs)
    return (grad * inputs).sum(-1).detach().float().cpu().numpy()


def explained(loaded, text: str, row: int | None = None, describe: bool = True,
              reference: Outcome | None = None) -> tuple[Outcome, np.ndarray]:
    """The model's output for `text` (`outcome`; describe=False: a decoder's next token without its
    continuation; reference: the plain outcome already at hand) and its gradient × input (`attribution`). A
    sentence vector's output is the gradient pass's own vector, so it takes one forward pass, not two (the
    explanations of a ~480-token text on minilm spent a fifth of their time on the second)."""
    if loaded.arch not in ("encoder-decoder", "classifier") and not has_vocab_head(loaded):
        grads, vector = _sentence_attribution(loaded, _ids(loaded, text), None)
        plain = Outcome("sentence vector", f"{vector.size}-dimensional sentence vector", 1.0, vector=vector)
        return plain, grads
    reference = outcome(loaded, text, describe=describe) if reference is None else reference
    return reference, attribution(loaded, text, reference, row)


def _sentence_attribution(loaded, ids: torch.Tensor, direction: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(t,) gradient × input of the sentence vector's length along `direction` (None: along itself, the
    unablated vector), and the sentence vector (k,)."""
    with torch.enable_grad():
        features, rec = loaded.model.features(ids, record=True)
        vector = features[0].float().mean(0)
        along = vector.detach() if direction is None else torch.as_tensor(direction, device=vector.device)
        score = vector @ along / along.norm().clamp(min=1e-12)  # length along the unablated vector
        grads = gradient_times_input(score, rec.embeddings["input"])[0]
    return grads, vector.detach().cpu().numpy()


def attribution(loaded, text: str, reference: Outcome | None = None, row: int | None = None) -> np.ndarray:
    """(t,) gradient × input of the reference output's score with respect to each input token's
    embedding (the source tokens for dates). row: for dates, one output character (0-based) instead
    of the whole output."""
    ids = _ids(loaded, text)
    if loaded.arch not in ("encoder-decoder", "classifier") and not has_vocab_head(loaded):
        return _sentence_attribution(loaded, ids, reference.vector if reference is not None else None)[0]
    reference = reference or outcome(loaded, text)
    model = loaded.model
    with torch.enable_grad():
        if loaded.arch == "encoder-decoder":
            bos, eos = loaded.special(tok.BOS), loaded.special(tok.EOS)
            target = reference.reference
            logits, rec = model(ids, torch.tensor([[bos] + target], device=loaded.device), record=True)
            logp = torch.log_softmax(logits[0].float(), -1)
            wanted = torch.tensor(target + [eos], device=loaded.device)
            per_row = logp[torch.arange(len(wanted)), wanted]
            score = per_row[row] if row is not None and 0 <= row < len(per_row) else per_row.sum()
            inputs = rec.embeddings["source"]
        elif loaded.arch == "classifier":
            logits, rec = model(ids, record=True)
            index = loaded.label_index(reference.text)  # the intact label: reference is always set here
            score = torch.log_softmax(logits[0].float(), -1)[index]
            inputs = rec.embeddings["input"]
        else:
            position = -1 if loaded.arch == "decoder" else _mask_position(loaded, ids[0].tolist())
            logits, rec = read_logits(loaded, ids, position, record=True)
            keep = (tok.EOS,) if loaded.arch == "decoder" else ()
            score = torch.log_softmax(loaded._no_specials(logits, keep=keep), -1)[reference.reference[0]]
            inputs = rec.embeddings["input"]
        return gradient_times_input(score, inputs)[0]
