"""The Step by step tab's section "Queries & keys": one head's queries and keys in one 2-D picture, and why a
query picks its keys (/qk_space)."""
from __future__ import annotations

from typing import Callable

import gradio as gr
import numpy as np

from analysis import qk
from analysis.heads import sharing_note
from ui.page import components
from ui.page.context import Context, figure_font
from model.registry import ModelRegistry, attention_of
from ui.page.messages import check_index, cut_notice
from viz import qk as viz_qk
from viz.labels import markdown_label

EXPLANATION = """
**Why does a head look where it looks?** Each token gives the head a *query* (blue circle: what it is looking
for) and a *key* (red diamond: what it offers). The score of a query for a key is their **dot product**:
large when the two point the same way, negative when they point apart. So a query picks the keys that point
its way, and softmax turns the scores into weights. The head's vectors have many dimensions; the picture
shows the two directions in which this sentence's queries and keys, taken together, spread the most
(a principal component analysis). The percentages say how much of that spread the two axes keep: the
picture is a shadow, not the whole story (and it is centred on the mean of all the points, so a direction in
it is a hint, not a score), so each grey line joins a query to the key the head *really* weights most, computed
in every dimension.
"""


def view(registry: ModelRegistry, text, name, layer, head, presenter=False, quiz=False):
    """(numbers, the 2-D picture, the full q and k as JSON: labels, vectors, the scores and the two axes' variance)."""
    font = figure_font(presenter)
    trace = registry.trace(name, text)
    att = attention_of(trace, None)  # self-attention; the dates model's encoder
    layer0, head0 = check_index(layer, att.n_layers, "layer"), check_index(head, att.n_heads, "head")
    q, k, probs = att.q[layer0, head0], att.k[layer0, head0], att.probs[layer0, head0]
    picture = qk.project(q, k, probs)
    where = f"layer {layer0 + 1}, head {head0 + 1}" + (" (encoder)" if att.kind == "encoder" else "")
    exported = {"queries": list(att.queries), "keys": list(att.keys), "q": q.tolist(), "k": k.tolist(),
                "explained_variance": [round(float(v), 4) for v in picture.explained]}
    added = registry.get(name).added_ids  # asked about: the last word, not a [SEP] the model added
    row = max((i for i, t in enumerate(trace.ids) if int(t) not in added), default=len(att.queries) - 1)
    allowed = att.mask[row]
    scores = np.where(allowed, picture.scores[row], np.nan)
    best = int(picture.strongest[row])
    keys = [markdown_label(token) for token in att.keys]
    figure = viz_qk.qk_figure(picture.queries, picture.keys, picture.explained, picture.strongest, att.queries,
                              att.keys, font_size=font, lines=not quiz,
                              title=f"{where}: queries and keys on the two axes of most spread")
    if quiz:
        return (cut_notice(registry, name, trace.truncated) + f"**Quiz.** Find the query of the last word, **{markdown_label(att.queries[row])}**. Which key will "
                "it weight most? Vote, then press Reveal to see the lines."), figure, None
    told = (cut_notice(registry, name, trace.truncated) + f"The two axes keep **{picture.explained[0]:.0%} and {picture.explained[1]:.0%}** of the spread of "
            f"this head's {len(q)} queries and {len(k)} keys ({q.shape[1]} dimensions each). The last word, "
            f"**{markdown_label(att.queries[row])}**, scores **{keys[best]}** highest: q·k = {scores[best]:.2f} "
            f"(the mean over the keys it may see is {np.nanmean(scores):.2f}), which softmax turns into a weight of "
            f"{probs[row, best]:.2f}.")
    config = registry.get(name).config
    shared = sharing_note(head0, config.n_heads, config.kv_heads) if att.kind != "cross" else ""
    if shared:  # as Step by step says it: the keys drawn here are also those of the other heads in the group
        told += f"  \n{shared}: the keys drawn here are theirs too; only the queries are this head's own."
    return told, figure, exported


def build(ctx: Context) -> Callable[[], None]:
    """The section, built inside the Step by step tab (ui/tabs/steps.py); returns the function that registers its view
    (after the tab's own, which the tab's dispatcher runs first)."""
    with ctx.section("Queries & keys: why a head looks where it looks", "qk", EXPLANATION) as (numbers, reveal):
        picture = components.Plot(show_label=False, label="queries and keys in two dimensions", elem_id="qk-space")
        gr.Markdown("For the dates model this section shows the encoder's self-attention.")
        with gr.Accordion("Every dimension: the head's queries and keys as numbers", open=False):
            exported = gr.JSON(label="q and k (scores are q·k, before the division by √d)", elem_id="qk-vectors")

    def on_view(text, model, layer, head, presenter=False, quiz=False):
        return view(ctx.registry, text, model, layer, head, presenter, quiz)

    ctx.on([reveal.click], on_view, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.presenter],
           outputs=[numbers, picture, exported])  # quiz left out: in full
    return lambda: ctx.listen(on_view, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.presenter, ctx.quiz],
                              outputs=[numbers, picture, exported], api_name="qk_space",
                              triggers=ctx.head_triggers + [ctx.quiz.input])
