"""The Interventions tab's section "What flows": attention weight beside what a head really moves,
‖α_ij · W_O v_j‖ (Kobayashi et al., 2020) (/value_weighted)."""
from __future__ import annotations

from typing import Callable

import gradio as gr

from analysis import flow
from analysis.attribution import rollout
from ui.page import components
from ui.page.context import Context, figure_font
from model.registry import ModelRegistry, attention_of
from ui.page.messages import check_index, clean_text, cut_notice
from viz import flow as viz_flow
from viz.labels import markdown_label
from viz.panels import note_figure

# Measured on minilm with this sentence (tests/app/server/test_reading_views_api.py checks the numbers quoted here and in the README)
SINK_SENTENCE = "The animal didn't cross the street because it was too tired."
EXPLANATION = """
**Attention weight is where a head looks; what it adds is α·W_O v.** At position *i* a head writes
Σ_j α_ij · W_O v_j into the residual stream: each key's value *v_j*, turned by the head's output matrix W_O,
scaled by the weight α_ij. A key with a large weight but a tiny W_O v_j adds almost nothing. So beside α
(left) this view draws the size of each term, ‖α_ij · W_O v_j‖, as a share of its row (right): where the
two maps differ, the weights mislead. The classic case is a *sink*: heads of BERT-like models that "have nothing
to do" put their weight on `[CLS]` or `[SEP]`, whose values are small, so the weight is parked, not used.
Below, every head's share of weight on the special tokens against its share of norm, and attention
rollout (layers chained, weights only) beside the same rollout of the norms.
"""


def special_positions(registry: ModelRegistry, name, trace) -> list[int]:
    """Where the tokens the model adds itself sit ([CLS] and [SEP], <s>). A causal model that adds none (a Llama
    such as smollm2) parks weight on its first token, the one key every later token sees: [0]. None for the
    dates encoder."""
    loaded = registry.get(name)
    added = [i for i, token_id in enumerate(trace.ids) if int(token_id) in loaded.added_ids]
    return added or ([0] if loaded.arch == "decoder" and len(trace.ids) > 1 else [])


def first_token_note(registry: ModelRegistry, name, trace, special: list[int]) -> str:
    """Why the sink is measured on the first word, for a causal model that adds no start token ('' otherwise)."""
    if special != [0] or int(trace.ids[0]) in registry.get(name).added_ids:
        return ""
    return (f"{name} adds no start token, so its sink is the first token, **{markdown_label(trace.tokens[0])}**: "
            "every later token can see it, and heads with nothing to do park their weight there. ")


def attention_rollout(registry: ModelRegistry, name, text, att):
    """rollout(att.probs) of the text's detailed trace, kept with the traces: this section and the Interventions
    tab's explanations draw the same one (on smollm2 at 512 tokens ~0.6 s a time)."""
    key = ("rollout", name, clean_text(text, registry.max_chars(name)), att.kind)
    return registry.cached(key, lambda: rollout(att.probs))


def view(registry: ModelRegistry, text, name, layer, head, presenter=False, quiz=False):
    """(numbers, one head's α beside its norm shares, every head's sink shares, the two rollouts)."""
    font = figure_font(presenter)
    trace = registry.detailed(name, text)
    att = attention_of(trace, None)  # self-attention; the dates model's encoder
    layer0, head0 = check_index(layer, att.n_layers, "layer"), check_index(head, att.n_heads, "head")
    mask = att.mask if att.causal else None
    where = f"layer {layer0 + 1}, head {head0 + 1}" + (" (encoder)" if att.kind == "encoder" else "")
    special = special_positions(registry, name, trace)
    # every head's numbers once per text, kept with the traces (a new head reads one head's shares only)
    key = ("flow", name, clean_text(text, registry.max_chars(name)))
    summary = registry.cached(key, lambda: flow.summarise(att, special))
    alpha, moved = att.probs[layer0, head0], flow.head_shares(att, layer0, head0)
    row = max((i for i in range(len(att.queries)) if i not in special), default=len(att.queries) - 1)
    by_weight, by_norm = int(alpha[row].argmax()), int(moved[row].argmax())
    tokens = [markdown_label(token) for token in att.keys]
    if quiz:
        head_fig = viz_flow.head_figure(alpha, None, att.queries, att.keys, mask, font_size=font,
                                        title=f"{where}: the weights (what it moves is hidden until Reveal)")
        hidden = note_figure("Quiz: hidden until you press Reveal.", font_size=font)
        question = (cut_notice(registry, name, trace.truncated) + f"**Quiz.** The last word, **{tokens[row]}**, puts most weight on **{tokens[by_weight]}** "
                    f"({alpha[row, by_weight]:.2f}). Does that key also bring the most into its vector? Vote, then "
                    "press Reveal.")
        return question, head_fig, hidden, hidden
    head_fig = viz_flow.head_figure(alpha, moved, att.queries, att.keys, mask, font_size=font,
                                    title=f"{where}: where it looks (α) and what it moves (‖α·W_O v‖, row shares)")
    told = (cut_notice(registry, name, trace.truncated) + f"In {where}, the last word **{tokens[row]}** puts most weight on **{tokens[by_weight]}** "
            f"({alpha[row, by_weight]:.2f} of its weight, {moved[row, by_weight]:.2f} of what it moves); "
            + ("that key also moves the most." if by_norm == by_weight else
               f"the most is moved from **{tokens[by_norm]}** ({moved[row, by_norm]:.2f} of the norm, "
               f"{alpha[row, by_norm]:.2f} of the weight)."))
    if special:
        weight, norm = summary.weight, summary.norm
        names = "/".join(dict.fromkeys(trace.tokens[i] for i in special))
        sink_fig = viz_flow.sink_figure(weight, norm, names, font_size=font, selected=(layer0, head0))
        sinks = flow.sinks_of(weight, norm)
        told += (f"\n\n{first_token_note(registry, name, trace, special)}This head puts {weight[layer0, head0]:.2f} "
                 f"of its weight on {markdown_label(names)} and "
                 f"{norm[layer0, head0]:.2f} of what it moves. ")
        if sinks.heads:
            told += (f"**{len(sinks.heads)} of the {weight.size} heads** put at least half their weight there "
                     f"(averaged over every token{' but the first, which sees only itself' if att.causal else ''}): together they give those tokens **{sinks.weight:.2f} of their "
                     f"weight but {sinks.norm:.2f} of what they move**.")
        else:
            told += "No head puts half its weight there on this sentence."
    else:
        sink_fig = note_figure("This model adds no special tokens to its input: no sink to measure.", font_size=font)
    roll = viz_flow.rollout_figure(attention_rollout(registry, name, text, att), summary.rollout, att.queries,
                                   font_size=font, title="Every layer chained: attention rollout beside norm-based rollout")
    return told, head_fig, sink_fig, roll


def build(ctx: Context) -> Callable[[], None]:
    """The section, built inside the Interventions tab (ui/tabs/interventions.py); returns the function that registers
    its view (after the tab's own, which the tab's dispatcher runs first)."""
    with ctx.section("What flows: attention weight beside ‖α·W_O v‖", "flow", EXPLANATION) as (numbers, reveal):
        one_head = components.Plot(show_label=False, label="weight and norm of one head", elem_id="flow-head")
        sinks = components.Plot(show_label=False, label="every head: weight vs norm on the special tokens", elem_id="flow-sinks")
        roll = components.Plot(show_label=False, label="attention rollout and norm-based rollout", elem_id="flow-rollout")
        gr.Markdown("Rollout (Abnar & Zuidema, 2020) averages each layer's heads, counts the residual connection as "
                    "half the layer and multiplies the layers: row *i* is how much each input token reached position "
                    "*i* at the top. The right map does the same with each head's rows of ‖α·W_O v‖ shares. "
                    "For the dates model this section shows the encoder.")

    def on_view(text, model, layer, head, presenter=False, quiz=False):
        return view(ctx.registry, text, model, layer, head, presenter, quiz)

    ctx.on([reveal.click], on_view, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.presenter],
           outputs=[numbers, one_head, sinks, roll])  # quiz left out: in full
    return lambda: ctx.listen(on_view, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.presenter, ctx.quiz],
                              outputs=[numbers, one_head, sinks, roll], api_name="value_weighted",
                              triggers=ctx.head_triggers + [ctx.quiz.input])
