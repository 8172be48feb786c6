"""The "step by step" view: one head's attention, one operation at a time.

Takes arrays only: the head's q, k, v (tokens × dims) and an AttentionSteps-like
object (any object with scores, scaled, masked, probs, output, mask, factor,
temperature, entropy, max_entropy arrays/values; see model/steps.py).
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from viz.heatmap import attention_heatmap
from viz.panels import Panel, heatmap_row

HARD, UNIFORM = 0.15, 0.85  # mean entropy / its uniform maximum: below is "nearly one-hot", above "nearly uniform"


def parameter_free_figure(probs, tokens, font_size: int = 12, scaled: bool = False, max_height: int | None = None,
                          temperature: float = 1.0) -> go.Figure:
    """softmax(X Xᵀ) on the layer's input vectors: attention before any learned parameters.
    The title shows the scaling (by √ of the model width) and a temperature other than 1."""
    scores = "X Xᵀ / √d<sub>model</sub>" if scaled else "X Xᵀ"
    if temperature == 1:
        how = f"softmax({scores}) of the layer's inputs"
    else:
        how = f"softmax({f'({scores})' if scaled else scores} / T) of the layer's inputs, T={temperature:.3g}"
    return attention_heatmap(probs, tokens, tokens, title=f"Without parameters: {how}", font_size=font_size,
                             max_height=max_height)


def qkv_figure(q, k, v, queries, keys, font_size: int = 12, bias: bool = False, rotary: bool = False,
               shared: str = "") -> go.Figure:
    """Queries (t, d), keys (s, d) and values (s, d) as tokens × dimensions heatmaps. bias: the model adds a
    bias to each projection (BERT, GPT-2), and the panel titles write it. rotary: q and k were turned by
    their positions (RoPE) after the projection, and the titles say so. shared: the heads these keys and
    values belong to with grouped-query attention ("H1–H2"), or ""."""
    for name, a in (("q", q), ("k", k), ("v", v)):
        if np.asarray(a).ndim != 2:
            raise ValueError(f"{name} must be (tokens, dims) for one head, got shape {np.shape(a)}")

    def formula(m: str) -> str:
        projected = f"X·W<sub>{m}</sub>" + (f" + b<sub>{m}</sub>" if bias else "")
        if rotary and m in "qk":  # turned after the projection, bias included
            projected = f"R<sub>pos</sub>·({projected})" if bias else f"R<sub>pos</sub>·{projected}"
        return f"{m.upper()} = {projected}"

    turned = " turned by position" if rotary else ""
    of = f", of {shared}" if shared else ""
    # a turned or shared projection's title is two lines: on one, three side by side ran into each other
    gap = "<br>" if rotary or shared else " "
    panels = [
        Panel(q, f"{formula('q')}{gap}(queries{turned})", queries, None, value="query", col_title="dimension"),
        Panel(k, f"{formula('k')}{gap}(keys{turned}{of})", keys, None, value="key", col_title="dimension"),
        Panel(v, f"{formula('v')}{gap}(values{of})", keys, None, value="value", col_title="dimension"),
    ]
    return heatmap_row(panels, title="Each token's query, key and value vector for this head", font_size=font_size)


def scores_figure(steps, queries, keys, font_size: int = 12) -> go.Figure:
    """Raw q·k -> scaled (and divided by the temperature) -> masked -> softmax, left to right. A head whose
    mask hides nothing (an unmasked model) has no masking step to show."""
    d_factor = steps.factor
    scale_text = f"× {d_factor:.3g}" if d_factor != 1 else "not scaled"
    panels = [
        Panel(steps.scores, "1. raw scores q·k", queries, keys, value="score"),
        Panel(steps.scaled, f"2. {scale_text}, ÷ T={steps.temperature:.3g}", queries, keys, value="scaled score"),
    ]
    if not np.asarray(steps.mask).all():
        masked = np.where(steps.mask, steps.masked, np.float32(np.nan))  # -inf drawn as grey blanks
        panels.append(Panel(masked, "3. masked (grey = −∞)", queries, keys, value="masked score"))
    panels.append(Panel(steps.probs, f"{len(panels) + 1}. softmax: weights", queries, keys, signed=False,
                        value="weight"))
    return heatmap_row(panels, title="From scores to weights: each row is one query", font_size=font_size)


def output_figure(steps, v, queries, keys, font_size: int = 12) -> go.Figure:
    """weights (t, s) × values (s, d) = outputs (t, d): each output row is a weighted sum of value rows."""
    panels = [
        Panel(steps.probs, "weights W", queries, keys, signed=False, value="weight"),
        Panel(v, "× values V", keys, None, value="value", col_title="dimension"),
        Panel(steps.output, "= output Y = W·V", queries, None, value="output", col_title="dimension"),
    ]
    return heatmap_row(panels, title="The weighted sum: y<sub>i</sub> = Σ<sub>j</sub> w<sub>ij</sub> v<sub>j</sub>",
                       font_size=font_size)


def caption(steps, d: int) -> str:
    """Plain-language summary of the current settings: how peaked the rows are, and why."""
    entropy = np.asarray(steps.entropy, dtype=np.float64)
    most = np.asarray(steps.max_entropy, dtype=np.float64)
    rows = most > 0  # rows that could spread at all (one allowed key is always one-hot)
    spread = float((entropy[rows] / most[rows]).mean()) if rows.any() else 0.0
    top = np.asarray(steps.probs).max(-1)
    t = steps.temperature
    if spread < HARD:
        shape = "each row is almost one-hot (hard attention): every token copies the value of the one key it scores highest"
    elif spread > UNIFORM:
        shape = "each row is almost uniform: every token averages the values of all the keys it may see"
    else:
        shape = "each row is a soft mix: a few keys share most of the weight"
    scaling = (f"scores divided by √d = √{d} ≈ {math.sqrt(d):.2f}" if steps.factor != 1
               else f"no 1/√d scaling, so scores are √{d} ≈ {math.sqrt(d):.1f} times larger and softmax is sharper")
    # bits over the queries the head statistics table averages (it leaves out a first token that can only look
    # at itself, as in a causal model), so both views give the same number for a head
    first_alone = len(entropy) > 1 and int(np.asarray(steps.mask)[0].sum()) == 1
    bits = (entropy[1:] if first_alone else entropy) / math.log(2)
    which = "every token but the first, which can only look at itself" if first_alone else "every token"
    return (f"**Temperature {t:.3g}, {scaling}:** {shape}.  \n"
            f"Mean entropy {bits.mean():.2f} bits ({which}, as in the head statistics; "
            f"{spread:.0%} of uniform); "
            f"on average the top key of a row gets weight {top.mean():.2f}.")
