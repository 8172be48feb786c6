"""Tab "Multi-head": every head of a layer side by side, and wide versus narrow heads."""
from __future__ import annotations

import gradio as gr

from model.sizes import head_sizes
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import Context, figure_font, screen_height
from model.registry import ModelRegistry
from viz import multihead as viz_multihead
from viz.figure import no_taller

TAB = TabSpec(id="multihead", label="Multi-head")

EXPLANATION = """
**Several heads look for different things at once.** One head produces one set of weights per token, so
it can only mix information in one way. A layer with *h* heads computes *h* attentions in parallel, each
with its own queries, keys and values, and joins their outputs. Below, every head of the chosen layer
reads the same sentence: compare where each one looks.
"""


def sizes_text(sizes, model: str) -> str:
    used = "wide" if sizes.wide else "narrow"
    return (
        f"**Wide or narrow?** The {model} model has embeddings of size k = {sizes.k} and h = {sizes.heads} heads. "
        f"*Narrow* heads (what {model} uses{'' if used == 'narrow' else ' not'}"
        f"{', but with shared keys and values: below' if shared(sizes) else ''}) split the embedding: each head "
        f"works in k/h = {sizes.d_narrow} dimensions, so all {sizes.heads} heads together cost "
        f"{sizes.params_narrow:,} parameters per attention layer — the same as one head of full size. "
        f"*Wide* heads each see all k = {sizes.d_wide} dimensions: richer, but {sizes.params_wide:,} parameters, "
        f"{sizes.params_wide / sizes.params_narrow:.2f}× as many (the weight matrices are exactly h = {sizes.heads} "
        f"times larger; {biases(sizes)}), for each of the model's {sizes.attention_layers} attention layers."
    ) + grouped_text(sizes, model)


def shared(sizes) -> bool:
    """Whether the model's query heads share keys and values (grouped-query attention)."""
    return bool(sizes.kv_heads) and sizes.kv_heads < sizes.heads


def grouped_text(sizes, model: str) -> str:
    """Grouped-query attention in words: which query heads share keys and values, and what that saves."""
    if not shared(sizes):
        return ""
    group = sizes.heads // sizes.kv_heads
    if sizes.kv_heads == 1:
        who = f"all {sizes.heads} query heads read the same keys and values (multi-query attention)"
    else:
        who = (f"heads H1–H{group} read the same keys and values, H{group + 1}–H{2 * group} the next"
               + (", and so on" if sizes.kv_heads > 2 else ""))
    return (f"  \n**Grouped-query attention.** {model}'s {sizes.heads} query heads share {sizes.kv_heads} "
            f"key/value head{'s' if sizes.kv_heads > 1 else ''}: {who}. Each head still has its own queries, so "
            f"each still has its own attention map. One of {model}'s attention layers has "
            f"{sizes.params_model:,} parameters: its keys and values are computed for {sizes.kv_heads} "
            f"head{'s' if sizes.kv_heads > 1 else ''}, not {sizes.heads}.")


def biases(sizes) -> str:
    if not sizes.qkv_bias and not sizes.out_bias:
        return "neither has biases"
    if not sizes.qkv_bias:
        return f"the {sizes.biases_narrow:,} biases of the output are the same in both"
    return (f"the biases of queries, keys, values and output: {sizes.biases_narrow:,} narrow, "
            f"{sizes.biases_wide:,} wide")


def view(registry: ModelRegistry, text, model, layer, kind, presenter):
    """All heads of one layer as one tiled figure, the wide/narrow explanation and the size table."""
    font = figure_font(presenter)
    att, layer0, _ = registry.layer_head(model, text, layer, 1, kind)
    mask = att.mask if att.causal else None
    loaded = registry.get(model)
    fig = viz_multihead.heads_figure(att.probs[layer0], layer0, mask=mask, font_size=font, queries=att.queries,
                                     keys=att.keys, kv_heads=loaded.config.kv_heads,
                                     max_height=screen_height(presenter))
    sizes = head_sizes(loaded.config, loaded.model)  # counted on the model's own modules
    return no_taller(fig, screen_height(presenter)), sizes_text(sizes, model), components.table(viz_multihead.sizes_table(sizes))


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        heads = components.Plot(show_label=False, label="every head of this layer")
        sizes = gr.Markdown()
        table = gr.Dataframe(label="one attention layer, narrow vs wide", interactive=False)

    def on_view(text, model, layer, kind, presenter):
        return view(ctx.registry, text, model, layer, kind, presenter)

    ctx.listen(on_view, inputs=[ctx.text, ctx.model, ctx.layer, ctx.kind, ctx.presenter],
               outputs=[heads, sizes, table], api_name="multihead",
               triggers=ctx.triggers + [ctx.layer.input, ctx.kind.input])
