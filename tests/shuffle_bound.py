"""How far Positions' shuffle may move a head's weights with the positions off: only rounding (issue 58's derived
tolerances, tests/tolerances.reordered), for any model the shuffle runs on: our own, BERT, Llama, Qwen2."""
from __future__ import annotations

import numpy as np

from model.switches import Switches
from tests import tolerances


def reordered_bound(loaded, text: str, head: int) -> np.ndarray:
    """(t, t) how far the shuffled pass's weights, put back in the first order, may be from the first pass's: the
    same input rows in another order, whose first layer's q, k, scores and softmax a kernel may sum otherwise
    (tolerances.reordered, the positions off as the demo has them). head: 0-based."""
    encoder = loaded.arch == "encoder-decoder"
    att = loaded.trace_ids(loaded.encode(text).ids, Switches(positions=False, causal=False)).attention[
        "encoder" if encoder else "self"]
    layer = (loaded.model.encoder if encoder else loaded.model.stack).blocks[0].self_attention
    return tolerances.reordered(att.inputs[0], layer.toqueries.weight.detach(), layer.tokeys.weight.detach(),
                                att.q[0], att.k[0], att.probs[0], layer.d ** -0.5)[head]
