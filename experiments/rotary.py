"""Rotary positions' forward pass: one head's query and key in layer 1, read with the positions off, and the
speeds the model turns them by (analysis.rotary has the numbers: RotaryDemo).

    from model import api
    from experiments.rotary import rotary_demo
    rotary_demo(api.load("lm"), "The cat sat on the mat").rows()   # scores at shifted positions
"""
from __future__ import annotations

import numpy as np

from analysis.rotary import RotaryDemo, key_position, scaling_note
from model.positions import rotary_frequencies
from model.switches import Switches


def rotary_demo(loaded, text: str, head: int = 0) -> RotaryDemo:
    """The demonstration for `text`: the last word's query and an earlier token's key in layer 1, head
    `head` (0-based), computed with positions off (the tokens alone). loaded: a model.api.LoadedModel."""
    enc = loaded.encode(text)
    if len(enc.ids) < 2:
        raise ValueError("Type at least two tokens: a query and a key at different positions.")
    kind = "encoder" if loaded.arch == "encoder-decoder" else "self"
    n_heads = loaded.config.n_heads
    if not 0 <= head < n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1}, got {head}")
    att = loaded.trace_ids(enc.ids, Switches(positions=False), predictions=False).attention[kind]
    # the last word's query, not a [SEP] or </s> the model added (What flows and Queries & keys ask the same)
    added = {i for i, t in enumerate(enc.ids) if t in loaded.added_ids}
    query_pos = max((i for i in range(len(enc.ids)) if i not in added), default=len(enc.ids) - 1)
    if query_pos == 0:
        raise ValueError("Type at least two tokens: a query and a key at different positions.")
    key_pos = key_position(query_pos, added)
    rotary = getattr(loaded.model.embed, "rotary", None)
    own = rotary is not None
    d = att.q.shape[-1]
    speeds = (rotary.speeds_for(len(enc.ids)).float().cpu().numpy() if own
              else rotary_frequencies(d).numpy())
    return RotaryDemo(model=loaded.name, head=head, query_token=enc.tokens[query_pos], key_token=enc.tokens[key_pos],
                      query_pos=query_pos, key_pos=key_pos, q=att.q[0, head, query_pos].astype(np.float64),
                      k=att.k[0, head, key_pos].astype(np.float64),
                      speeds=speeds.astype(np.float64), own=own, theta=loaded.config.rope_theta if own else 10000.0,
                      scaling=scaling_note(loaded.config) if own else "")

