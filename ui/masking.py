"""Tab "Masking": the causal lm beside the bidirectional mlm on the same sentence."""
from __future__ import annotations

import gradio as gr

from analysis.steps import attention_steps
from model.api import MASK_MARKERS
from ui.context import Context, figure_font, friendly
from ui.models import InputError, ModelRegistry
from viz import compare

EXPLANATION = """
**Masking decides what each token may look at.** The language model (lm) predicts the next word, so
while reading position *i* it must not see positions after *i*: its mask is lower-triangular, and the
scores above the diagonal are set to −∞ before the softmax, which turns them into weight 0. The masked
language model (mlm) fills in blanks and may look both ways, so it has no mask. Below, both read the
same sentence at the same layer and head; the last figure shows the lm's scores before and after its
mask. This tab always compares lm and mlm, whichever model is chosen above (the two share one tokenizer,
so they read the same tokens); minilm, a pretrained BERT, reads like mlm: both ways, with no mask.
"""


MASK_STAND_IN = "something"  # one token in the shared vocabulary, so lm and mlm read the same tokens


def view(registry: ModelRegistry, text, layer, head, presenter):
    """Masks, weights of lm and mlm side by side with their difference, and lm's scores before/after masking."""
    font = figure_font(presenter)
    if isinstance(text, str) and MASK_MARKERS.search(text):
        # only mlm has a mask token; a plain word keeps both models on the same tokens
        text = MASK_MARKERS.sub(MASK_STAND_IN, text)
        gr.Info(f"Comparing with each &lt;mask&gt; written as the word “{MASK_STAND_IN}”: only mlm knows "
                "the mask token.")
    lm, layer0, head0 = registry.layer_head("lm", text, layer, head, "self")
    mlm, mlm_layer0, mlm_head0 = registry.layer_head("mlm", text, layer, head, "self")
    if lm.queries != mlm.queries:
        raise InputError("The two models read this text as different tokens (a <mask> marker?). "
                         "Type a plain sentence to compare them.")
    tokens = lm.queries
    masks = compare.masks_figure(lm.mask, mlm.mask, tokens, font_size=font)
    side = compare.side_by_side_figure(lm.probs[layer0, head0], mlm.probs[mlm_layer0, mlm_head0], tokens,
                                       font_size=font, where=f" (layer {layer0 + 1}, head {head0 + 1})")
    steps = attention_steps(lm.q[layer0, head0], lm.k[layer0, head0], lm.v[layer0, head0], lm.mask)
    before_after = compare.before_after_figure(steps.scaled, steps.mask, steps.probs, tokens, font_size=font,
                                               model="the lm")
    return masks, side, before_after


def build(ctx: Context) -> None:
    with ctx.tab("Masking", id="masking"):
        gr.Markdown(EXPLANATION)
        masks = gr.Plot(show_label=False, label="masks")
        side = gr.Plot(show_label=False, label="lm and mlm side by side")
        before_after = gr.Plot(show_label=False, label="before and after the mask")
        gr.Markdown("Grey cells are −∞: the query is not allowed to see that key, and after the softmax its "
                    "weight is exactly 0. Each row still sums to 1 over the keys it may see.")

    @friendly
    def on_view(text, layer, head, presenter):
        return view(ctx.registry, text, layer, head, presenter)

    ctx.listen(on_view, inputs=[ctx.text, ctx.layer, ctx.head, ctx.presenter], outputs=[masks, side, before_after],
               api_name="masking", triggers=ctx.head_triggers)
