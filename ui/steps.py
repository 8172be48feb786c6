"""Tab "Step by step": one head's attention taken apart, with live temperature and scaling."""
from __future__ import annotations

import gradio as gr

from ui import components

from analysis.steps import MAX_TEMPERATURE, MIN_TEMPERATURE, attention_steps, simple_attention
from ui.context import Context, figure_font, friendly
from ui.models import ModelRegistry
from viz import steps as viz_steps
from viz.panels import note_figure

EXPLANATION = """
**Attention, one operation at a time.** The simplest self-attention has no parameters at all: every
token scores every other token by the dot product of their vectors, a softmax turns each row of scores
into weights that sum to 1, and each output is the weighted average of the inputs (without parameters a
token's best match is almost always itself: look at the diagonal of the first map). A trained head first
projects each token into a *query* (what am I looking for?), a *key* (what do I offer?) and a *value*
(what do I pass on?); the score is query·key, divided by √d so that long vectors do not make softmax
too peaked, with forbidden keys set to −∞ by the mask. Move the temperature T (every score is divided
by it): at the left end (T = 0.01) each row becomes one-hot (hard attention), at the right end (T = 100)
uniform; the middle (T = 1) is the model as trained.
"""


def temperature_from_slider(log10_temperature: float) -> float:
    """The step-by-step view's slider is log-scaled: -2 -> 0.01, 0 -> 1, 2 -> 100 (clamped to that range)."""
    value = 10.0 ** float(log10_temperature)
    return float(min(MAX_TEMPERATURE, max(MIN_TEMPERATURE, value)))


def live_view(registry: ModelRegistry, text, model, layer, head, kind, presenter, log_temperature, scale):
    """What the temperature and scaling change: caption, parameter-free map, scores and output."""
    att, layer0, head0 = registry.layer_head(model, text, layer, head, kind)
    font = figure_font(presenter)
    temperature = temperature_from_slider(log_temperature)
    q, k, v = att.q[layer0, head0], att.k[layer0, head0], att.v[layer0, head0]
    steps = attention_steps(q, k, v, att.mask, scale=bool(scale), temperature=temperature)
    if att.kind == "cross":
        simple = note_figure("The parameter-free version is self-attention: a sequence attending to itself. "
                             "Choose encoder or decoder attention to see it.", font_size=font)
    else:
        x = att.inputs[layer0]  # (t, k) the vectors entering this layer
        plain = simple_attention(x, att.mask, scale=bool(scale), temperature=temperature)
        simple = viz_steps.parameter_free_figure(plain.probs, att.queries, font_size=font, scaled=bool(scale),
                                                 temperature=temperature)
    return (
        viz_steps.caption(steps, q.shape[-1]),
        simple,
        viz_steps.scores_figure(steps, att.queries, att.keys, font_size=font),
        viz_steps.output_figure(steps, v, att.queries, att.keys, font_size=font),
    )


def view(registry: ModelRegistry, text, model, layer, head, kind, presenter, log_temperature=0.0, scale=True):
    """Everything on the tab: caption, parameter-free map, Q/K/V, scores, output."""
    att, layer0, head0 = registry.layer_head(model, text, layer, head, kind)
    font = figure_font(presenter)
    qkv = viz_steps.qkv_figure(att.q[layer0, head0], att.k[layer0, head0], att.v[layer0, head0], att.queries,
                               att.keys, font_size=font)
    caption, simple, scores, output = live_view(registry, text, model, layer, head, kind, presenter,
                                                log_temperature, scale)
    return caption, simple, qkv, scores, output


def build(ctx: Context) -> None:
    with ctx.tab("Step by step", id="steps"):
        gr.Markdown(EXPLANATION)
        with gr.Row():
            temperature = components.Slider(-2, 2, value=0, step=0.05, label="temperature, log₁₀ scale",
                                    info="−2 → 0.01 (hard, argmax-like) · 0 → 1 (as trained) · 2 → 100 (uniform)")
            scale = gr.Checkbox(value=True, label="divide scores by √d (scaling)")
        caption = gr.Markdown()
        simple = gr.Plot(show_label=False, label="parameter-free attention")
        qkv = gr.Plot(show_label=False, label="queries, keys, values")
        scores = gr.Plot(show_label=False, label="scores to weights")
        output = gr.Plot(show_label=False, label="weighted sum")

    inputs = [ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, ctx.presenter, temperature, scale]

    @friendly
    def on_view(text, model, layer, head, kind, presenter, log_temperature, scaled):
        return view(ctx.registry, text, model, layer, head, kind, presenter, log_temperature, scaled)

    @friendly
    def on_live(text, model, layer, head, kind, presenter, log_temperature, scaled):
        return live_view(ctx.registry, text, model, layer, head, kind, presenter, log_temperature, scaled)

    ctx.listen(on_view, inputs=inputs, outputs=[caption, simple, qkv, scores, output], api_name="steps",
               triggers=ctx.head_triggers)
    gr.on([temperature.release, scale.change], on_live, inputs=inputs, outputs=[caption, simple, scores, output],
          api_name="steps_live")
