"""Switches on the one forward pass, for the lecture's experiments.

Every experiment runs the same modules with the same weights; only these switches change:

    positions=False   no position vectors are added: attention sees the tokens as a set
    causal=False      the causal mask is left off (a decoder then reads the whole sentence)
    ablate            heads knocked out, as (kind, layer, head) 0-based; kind is "self" for
                      single-stack models, "encoder", "decoder" or "cross" for the encoder-decoder
    method            how a knocked-out head is silenced:
                      "zero"     its output (its weighted sum of values) is zero, so it adds nothing
                      "uniform"  its weights are uniform over the keys it may see: it still passes
                                 information on, but no longer chooses where to look
    hooks             an object whose edit(site, layer, tensor) sees (and may replace) what each layer computes
                      at the named sites: "residual_in", "heads", "attention", "mlp", "residual"
                      (experiments/patching.py records two runs and patches one with the other's activations)
(Mean-ablation, replacing a head's output by its average over a reference data set, is left out:
the average of this one input would leak later tokens into earlier ones in a causal model.)
"""
from __future__ import annotations

from dataclasses import dataclass, field

ABLATION_METHODS = ("zero", "uniform")
ABLATION_WORDS = {"zero": "output zeroed", "uniform": "weights made uniform"}  # each method in words, for the UI
KINDS = ("self", "encoder", "decoder", "cross")


@dataclass(frozen=True)
class Switches:
    positions: bool = True
    causal: bool = True
    ablate: frozenset = frozenset()
    method: str = "zero"
    rows: tuple = ()  # batch row i knocks out rows[i], one (kind, layer, head): many single knock-outs in one pass
    hooks: object = field(default=None, compare=False)  # one forward pass's recorder/patcher; not part of equality

    def __post_init__(self):
        if self.method not in ABLATION_METHODS:
            raise ValueError(f"method must be one of {ABLATION_METHODS}, got {self.method!r}")
        heads = frozenset(tuple(h) for h in self.ablate)
        for kind, layer, head in heads:
            if kind not in KINDS or int(layer) < 0 or int(head) < 0:
                raise ValueError(f"ablate takes (kind, layer, head) with kind in {KINDS} and 0-based numbers, "
                                 f"got {(kind, layer, head)!r}")
        object.__setattr__(self, "ablate", heads)
        rows = tuple(tuple(int(x) if i else x for i, x in enumerate(h)) for h in self.rows)
        if rows and heads:
            raise ValueError("knock heads out in every row (ablate) or one head per row (rows), not both")
        for kind, layer, head in rows:
            if kind not in KINDS or layer < 0 or head < 0:
                raise ValueError(f"rows takes (kind, layer, head) per batch row, got {(kind, layer, head)!r}")
        object.__setattr__(self, "rows", rows)

    def heads_off(self, kind: str, layer: int) -> tuple:
        """The heads of one attention layer to knock out, sorted; with `rows`, (batch row, head) pairs."""
        if self.rows:
            return tuple((row, h) for row, (k, l, h) in enumerate(self.rows) if k == kind and l == layer)
        return tuple(sorted(h for k, l, h in self.ablate if k == kind and l == layer))


PLAIN = Switches()
