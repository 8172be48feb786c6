"""The logit lens: what each layer already predicts.

After every layer the residual stream holds one vector per position. The model reads only the last
layer's, through its final norm (layer norm or RMSNorm, where it has one) and its unembedding (the
projection onto the vocabulary, with BERT's transform before it). The lens reads every layer's the
same way (model.readout), so after the last layer it gives exactly the model's own logits.

    reading = lens.logit_lens(api.load("lm"), "The capital of France is")
    reading.top_tokens[layer][position]     # the top token after that layer
    reading.final_probs                     # (L, t): the probability each layer gives the final answer
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from model.trace import Trace

TOP = 5  # alternatives kept per layer and position (the hover shows them)
# On a longer input the lens reads only the last LENS_WINDOW positions, where the answer comes out: every layer's
# unembedding of every position is its cost (smollm2 at 512 tokens: 870 GFLOP, 10-13 s on one core), and 128
# columns are what a projector shows (512 are 2.5 px each). The views say so beside the figure.
LENS_WINDOW = 128


class NoLensError(ValueError):
    """The model has no word-prediction head to read its layers through."""


@dataclass
class LensReading:
    """The logit lens of one text (numpy, for analysis/ and viz/).

    stack        which residual stream was read: "self" (one-stack models) or "decoder" (dates)
    tokens       the labels of the positions read (what each has read last): the last LENS_WINDOW of a longer input
    start        the first position read (0-based): column i is position start + i of the whole input
    top_ids      (L, t) the top token after each layer;  top_tokens the same as labels
    top_probs    (L, t) its probability
    final_probs  (L, t) the probability each layer gives the final answer (the last layer's top token)
    alternatives (L, t, TOP) the TOP likeliest tokens' labels after each layer;  alt_probs their probabilities
    trace        the detailed trace the lens was read from (one forward pass)
    """

    stack: str
    tokens: list[str]
    top_ids: np.ndarray
    top_tokens: list[list[str]]
    top_probs: np.ndarray
    final_probs: np.ndarray
    alternatives: list[list[list[str]]]
    alt_probs: np.ndarray
    trace: Trace
    start: int = 0

    @property
    def n_positions(self) -> int:
        """The input's whole length (the positions read are its last len(tokens))."""
        return self.start + len(self.tokens)

    @property
    def n_layers(self) -> int:
        return self.top_ids.shape[0]

    def settled(self) -> np.ndarray:
        """(t,) for each position, the first layer (0-based) from which every layer's top token is the final one."""
        same = self.top_ids == self.top_ids[-1]  # (L, t)
        # the last layer always agrees; walk down while the layers below still agree
        from_top = np.cumprod(same[::-1], axis=0)[::-1]  # 1 where this layer and every one above agree
        return self.n_layers - from_top.sum(0)


def lens_stack(loaded) -> str:
    """The residual stream the lens reads, or NoLensError saying why this model has none."""
    if loaded.arch == "classifier":
        raise NoLensError(f"{loaded.name} has no word-prediction head: it names a category for the whole text, "
                          "so there is no next word to read from its layers.")
    if getattr(loaded.model, "to_vocab", None) is None or not hasattr(loaded.model, "readout"):
        raise NoLensError(f"{loaded.name} has no word-prediction head: it was published without one (it was "
                          "trained to turn a whole sentence into one vector), so its layers cannot be read as words.")
    return "decoder" if loaded.arch == "encoder-decoder" else "self"


@torch.inference_mode()
def readout(loaded, residual: np.ndarray) -> torch.Tensor:
    """(L, t, k) residual vectors -> (L, t, v) logits, one layer at a time with the shape the forward pass used
    (batch of one), so that the last layer's logits are bit for bit the model's own. Every logit at once: for
    the tests' short texts (smollm2 at 512 tokens would hold 3 GB); the lens itself reads layer by layer (_read)."""
    model = loaded.model
    layers = torch.from_numpy(np.ascontiguousarray(residual)).to(loaded.device)
    return torch.cat([model.readout(layer[None]) for layer in layers]).float()


@torch.inference_mode()
def _read(loaded, residual: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the lens draws of (L, t, k) residual vectors, one layer's (t, v) distribution at a time (readout's
    arithmetic, the same numbers): the TOP likeliest tokens after each layer (L, t, TOP) ids and probabilities,
    and the probability each layer gives the final answer, the last layer's top token (L, t). Never every
    layer's distribution at once (30 layers x 512 positions x 49,152 tokens of smollm2 are 3 GB)."""
    model = loaded.model
    layers = torch.from_numpy(np.ascontiguousarray(residual)).to(loaded.device)
    n, t = layers.shape[:2]
    ids = torch.empty(n, t, TOP, dtype=torch.long)
    probs = torch.empty(n, t, TOP)
    final_probs = torch.empty(n, t)
    final = None
    unembedding = model.to_vocab
    v = unembedding.weight.shape[0]
    # one layer's logits and distribution, written into the same two buffers layer after layer: a new (t, v) tensor
    # each time (100 MB each for smollm2 at 512 tokens) cost fresh pages, ~0.09 s a layer beside the 0.4 s product
    logits = torch.empty(t, v, dtype=unembedding.weight.dtype, device=loaded.device)
    distribution = torch.empty(t, v, device=loaded.device)
    for layer in reversed(range(n)):  # the last first: its top token is the answer every layer is scored on
        _unembed(unembedding, model.readout_input(layers[layer][None])[0], logits)
        torch.softmax(logits if logits.dtype == torch.float32 else logits.float(), -1, out=distribution)  # (t, v)
        top = distribution.topk(TOP, dim=-1)
        final = top.indices[:, 0] if final is None else final
        ids[layer], probs[layer] = top.indices.cpu(), top.values.cpu()
        final_probs[layer] = distribution.gather(-1, final[:, None])[:, 0].cpu()
    return ids.numpy(), probs.numpy(), final_probs.numpy()


def _unembed(unembedding: torch.nn.Linear, features: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """unembedding(features) for (t, k) features, written into out (t, v): the product nn.Linear itself runs (addmm
    with its bias, else mm), so the same numbers bit for bit (tests/experiments/test_lens.py)."""
    if unembedding.bias is not None:
        return torch.addmm(unembedding.bias, features, unembedding.weight.t(), out=out)
    return torch.mm(features, unembedding.weight.t(), out=out)


def logit_lens(loaded, text: str, trace: Trace | None = None, window: int | None = LENS_WINDOW) -> LensReading:
    """Read `text`'s residual stream after every layer as the model reads its last one.
    trace: a detailed trace of `text` already at hand (api.LoadedModel.trace(detail=True)); else one is made.
    window: read only the last `window` positions (None: every position); the positions read get the same numbers
    as in a read of every position (each position's row is read on its own)."""
    stack = lens_stack(loaded)
    trace = loaded.trace(text, detail=True) if trace is None else trace
    if stack not in trace.residual:
        raise ValueError("the logit lens needs a detailed trace: trace(text, detail=True)")
    residual = trace.residual[stack]
    start = max(0, residual.shape[1] - window) if window else 0
    alt_ids, alt_probs, final_probs = _read(loaded, residual[:, start:])
    label = loaded.label
    alternatives = [[[label(i) for i in position] for position in layer] for layer in alt_ids.tolist()]
    return LensReading(
        stack=stack,
        tokens=list(trace.target_tokens if stack == "decoder" else trace.tokens)[start:],
        top_ids=alt_ids[..., 0],
        top_tokens=[[alts[0] for alts in layer] for layer in alternatives],
        top_probs=alt_probs[..., 0],
        final_probs=final_probs,
        alternatives=alternatives,
        alt_probs=alt_probs,
        trace=trace,
        start=start,
    )
