"""Tab "Masking": what the causal mask does, shown on the same weights (the lm with and without its mask),
and how the causal lm and the bidirectional mlm differ, compared by what their heads do."""
from __future__ import annotations

import html

import gradio as gr

from analysis import head_stats as stats
from analysis.steps import attention_steps
from model.api import MASK_MARKERS
from model.switches import Switches
from model.trace import for_views
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import Context, figure_font, screen_height
from ui.page.messages import InputError, clean_text, inform
from model.registry import ModelRegistry
from viz import compare

TAB = TabSpec(id="masking", label="Masking")

EXPLANATION = """
**Masking decides what each token may look at.** The language model (lm) predicts the next word, so
while reading position *i* it must not see positions after *i*: its mask is lower-triangular, and the
scores above the diagonal are set to −∞ before the softmax, which turns them into weight 0. The masked
language model (mlm) fills in blanks and may look both ways, so it has no mask.

**The mask on the same weights.** The second figure runs the *same* lm twice on your sentence, once with
its mask left off and once with it on, at the layer and head chosen above: only the mask differs. In
layer 1 the scores are identical and only the softmax changes (each row's weight is shared among fewer
keys); from layer 2 on the scores differ too, because without the mask the earlier layers also read
ahead. The lm was trained with its mask, so the mask-off run is an experiment, not a model anyone trained.

**lm and mlm compared by what their heads do.** Two separately trained models number their heads
arbitrarily: head 2 of layer 1 in lm and in mlm are unrelated. So the table lists each model's heads by
the pattern measured on this sentence (as in the head statistics of *Every head*), and the last figure
puts side by side the head of each model that does the chosen pattern most. The two share one tokenizer,
so they read the same tokens. This tab always uses lm and mlm, whichever model is chosen above; minilm, a
pretrained BERT, reads like mlm: both ways, with no mask.
"""

MASK_STAND_IN = "something"  # one token in the shared vocabulary, so lm and mlm read the same tokens
PATTERNS = {"previous": "the previous token", "next": "the next token", "first": "the first token (<s>)",
            "self": "itself"}
UNMASKED = Switches(causal=False)


def unmasked_lm(registry: ModelRegistry, text: str):
    """The lm's trace of `text` with the causal mask left off (the same weights)."""
    text = clean_text(text, registry.max_chars("lm"))
    # kept with the other traces (read-only, shared by every user)
    return registry.cached(("lm without its mask", text),
                           lambda: for_views(registry.get("lm").trace(text, switches=UNMASKED))).attention["self"]


def best_head(frame, pattern: str) -> tuple[int, int, float]:
    """0-based (layer, head) of the head with the largest share on `pattern`, and that share."""
    row = frame.loc[frame[pattern].idxmax()]
    return int(row["layer"]) - 1, int(row["head_in_layer"]) - 1, float(row[pattern])


def fit_to(value, count: int):
    """A number past `count` as `count`; anything else as it is (for the usual checks and messages)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > count:
        return count
    return value


def view(registry: ModelRegistry, text, layer, head, presenter, pattern="previous"):
    """Masks; the lm's head with and without its mask; both models' heads by measured type; the two heads
    (one per model) that put the most weight on `pattern`."""
    font = figure_font(presenter)
    if pattern not in PATTERNS:
        raise InputError(f"Choose a pattern: one of {', '.join(PATTERNS)}.")
    if isinstance(text, str) and MASK_MARKERS.search(text):
        # only mlm has a mask token; a plain word keeps both models on the same tokens
        text = MASK_MARKERS.sub(MASK_STAND_IN, text)
        inform(f"Comparing with each &lt;mask&gt; written as the word “{MASK_STAND_IN}”: only mlm knows "
               "the mask token.", escaped=True)
    # The tab always compares lm and mlm, whichever model is chosen above: a layer or head past lm's own
    # (the sliders follow the chosen model, e.g. minilm's 6 x 12) shows lm's last one and says so
    asked = (layer, head)
    layer, head = (fit_to(value, count) for value, count in zip(asked, registry.shape("lm", "self")))
    lm, layer0, head0 = registry.layer_head("lm", text, layer, head, "self")
    fitted = f" (lm has {lm.n_layers} layers of {lm.n_heads} heads)" if (layer, head) != asked else ""
    mlm = registry.attention("mlm", text, "self")
    if lm.queries != mlm.queries:
        raise InputError("The two models read this text as different tokens (a <mask> marker?). "
                         "Type a plain sentence to compare them.")
    tokens = lm.queries
    masks = compare.masks_figure(lm.mask, mlm.mask, tokens, font_size=font, max_height=screen_height(presenter))

    off = unmasked_lm(registry, text)
    with_mask = attention_steps(lm.q[layer0, head0], lm.k[layer0, head0], lm.v[layer0, head0], lm.mask)
    without = attention_steps(off.q[layer0, head0], off.k[layer0, head0], off.v[layer0, head0], off.mask)
    effect = compare.mask_effect_figure(
        without.scaled, without.probs, with_mask.scaled, with_mask.mask, with_mask.probs, tokens, font_size=font,
        title=f"The same lm, layer {layer0 + 1}, head {head0 + 1}{fitted}, run without and with its causal mask")

    frames = {name: stats.head_stats(att.probs, att.mask, aligned=True) for name, att in (("lm", lm), ("mlm", mlm))}
    types = compare.head_types_table(frames)
    (lm_layer, lm_head, lm_share), (mlm_layer, mlm_head, mlm_share) = (best_head(frames[n], pattern)
                                                                         for n in ("lm", "mlm"))
    where = html.escape(PATTERNS[pattern])  # Plotly would read <s> as markup
    matched = compare.matched_heads_figure(
        lm.probs[lm_layer, lm_head], mlm.probs[mlm_layer, mlm_head], tokens,
        f"lm L{lm_layer + 1} H{lm_head + 1}: {lm_share:.2f} on {where}"
        + (" (its mask forbids it)" if pattern == "next" else ""),
        f"mlm L{mlm_layer + 1} H{mlm_head + 1}: {mlm_share:.2f} on {where}",
        title=f"Each model's head that looks most at {where}", font_size=font)
    return masks, effect, types, matched


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        masks = components.Plot(show_label=False, label="masks")
        effect = components.Plot(show_label=False, label="the lm without and with its mask", elem_id="mask-effect")
        gr.Markdown("Grey cells are −∞: the query is not allowed to see that key, and after the softmax its "
                    "weight is exactly 0. Each row still sums to 1 over the keys it may see.")
        types = gr.Dataframe(label="Heads by what they do on this sentence (the number: the share of attention on "
                                   "that pattern; for a broad head, its spread, 0 = one token, 1 = all equally)",
                             interactive=False, elem_id="head-types", wrap=True,
                             column_widths=["22%", "39%", "39%"])
        pattern = gr.Radio([(f"looks at {where}", key) for key, where in PATTERNS.items()], value="previous",
                           label="Compare the heads that look most at…", elem_id="mask-pattern")
        matched = components.Plot(show_label=False, label="lm and mlm heads matched by pattern", elem_id="matched-heads")

    def on_view(text, layer, head, presenter, pattern_value):
        return view(ctx.registry, text, layer, head, presenter, pattern_value)

    ctx.listen(on_view, inputs=[ctx.text, ctx.layer, ctx.head, ctx.presenter, pattern],
               outputs=[masks, effect, types, matched], api_name="masking",
               triggers=ctx.head_triggers + [pattern.input])
