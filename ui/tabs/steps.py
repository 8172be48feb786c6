"""Tab "Step by step": one head's attention taken apart, with live temperature and scaling."""
from __future__ import annotations

import math

import gradio as gr

from ui.page.tabspec import TabSpec
from ui.page import components
from ui.tabs import qk

from analysis.heads import kv_group, sharing_note
from analysis.steps import MAX_TEMPERATURE, MIN_TEMPERATURE, attention_steps, simple_attention
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from ui.page.outputs import UNCHANGED, visible
from ui.page.messages import warn
from model.registry import ModelRegistry
from viz import steps as viz_steps
from viz.panels import note_figure

TAB = TabSpec(id="steps", label="Step by step")

EXPLANATION = """
**Attention, one operation at a time.** The simplest self-attention has no parameters at all: every
token scores every other token by the dot product of their vectors, a softmax turns each row of scores
into weights that sum to 1, and each output is the weighted average of the inputs (without parameters a
token's best match is almost always itself: look at the diagonal of the first map). A trained head first
projects each token into a *query* (what am I looking for?), a *key* (what do I offer?) and a *value*
(what do I pass on?); the score is query·key, divided by √d, where d is the number of dimensions of a
head's queries and keys: q·k is a sum of d products, so its variance grows with d (about d when the
entries have variance 1), and without the division a wider head's scores would spread further and push
softmax towards one-hot. Forbidden keys are set to −∞ by the mask. Move the temperature T (every score is divided
by it): at the left end (T = 0.01) each row becomes one-hot (hard attention), at the right end (T = 100)
uniform; the middle (T = 1) is the model as trained.
"""


def temperature_from_slider(log10_temperature: float) -> float:
    """The step-by-step view's slider is log-scaled: -2 -> 0.01, 0 -> 1, 2 -> 100 (clamped to that range).
    No value (a slider the page has not drawn yet, an API call sending none) is T = 1."""
    value = 10.0 ** float(0.0 if log10_temperature is None else log10_temperature)
    return float(min(MAX_TEMPERATURE, max(MIN_TEMPERATURE, value)))


def slider_from_temperature(temperature) -> float:
    """The slider position (log10 T, clamped to -2..2) for a temperature typed into the T box; T = 1 when the box
    holds no positive number yet (while typing)."""
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        value = 1.0
    if not math.isfinite(value) or value <= 0:
        value = 1.0
    return round(math.log10(min(MAX_TEMPERATURE, max(MIN_TEMPERATURE, value))), 4)


def temperature_warning(typed: float, shown: float) -> str:
    """Why a typed T is not the T drawn; division by zero is named only for a T of zero or less."""
    why = " (T = 0 would divide by zero)" if typed <= 0 else ""
    return f"T must be between {MIN_TEMPERATURE:g} and {MAX_TEMPERATURE:g}{why}: showing T = {shown:g}."


def shown_temperature(log10_temperature: float) -> float:
    """T as the box beside the slider shows it: three significant digits (1, 0.316, 31.6)."""
    return float(f"{temperature_from_slider(log10_temperature):.3g}")


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
                                                 temperature=temperature, max_height=screen_height(presenter))
    return (
        viz_steps.caption(steps, q.shape[-1]) + model_note(registry.get(model).config, head0, att.kind),
        simple,
        viz_steps.scores_figure(steps, att.queries, att.keys, font_size=font),
        viz_steps.output_figure(steps, v, att.queries, att.keys, font_size=font),
    )


def model_note(config, head0: int, kind: str) -> str:
    """What differs in a Llama-family head: q and k turned by position, keys and values shared."""
    notes = []
    if config.positions == "rotary" and kind == "self":
        notes.append("Q and K are shown after their turn by position (rotary positions, RoPE: Q = R_pos·X·W_q; "
                     "the Positions tab shows why their product then depends only on the distance between tokens)")
    shared = sharing_note(head0, config.n_heads, config.kv_heads)
    if shared:
        notes.append(f"{shared}, so K and V here are the same for each of them; only Q is this head's own")
    return "".join(f"  \n{note}." for note in notes)


def view(registry: ModelRegistry, text, model, layer, head, kind, presenter, log_temperature=0.0, scale=True):
    """Everything on the tab: caption, parameter-free map, Q/K/V, scores, output."""
    att, layer0, head0 = registry.layer_head(model, text, layer, head, kind)
    font = figure_font(presenter)
    config = registry.get(model).config
    group = kv_group(head0, config.n_heads, config.kv_heads)
    qkv = viz_steps.qkv_figure(att.q[layer0, head0], att.k[layer0, head0], att.v[layer0, head0], att.queries,
                               att.keys, font_size=font, bias=config.qkv_bias, rotary=config.positions == "rotary",
                               shared=f"H{group[0] + 1}–H{group[-1] + 1}" if len(group) > 1 else "")
    caption, simple, scores, output = live_view(registry, text, model, layer, head, kind, presenter,
                                                log_temperature, scale)
    return caption, simple, qkv, scores, output


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        with gr.Row(equal_height=True, elem_classes=[PRESENTER_SECOND]):  # presenter mode: under the figure, then the caption
            # The slider moves T on a log scale (its own number box, log10 T, is hidden by ui.page.controls.CSS);
            # the box beside it shows T itself and takes a typed T.
            temperature = components.Slider(-2, 2, value=0, step=0.05, label="temperature T (log scale)",
                                            info="left 0.01 (hard, argmax-like) · middle 1 (as trained) · right 100 (uniform)", elem_id="temperature", scale=3)
            shown_t = components.Number(1.0, label="T (type, Enter)", elem_id="temperature-value",
                                scale=1, min_width=120)
            scale = gr.Checkbox(value=True, label="divide scores by √d (scaling)", elem_id="scaling", scale=1)
        # the T the box last showed (from the slider or typed): its blur redraws only a T typed since, so a
        # click on the slider, which takes the focus from the box, leaves the knob where it was clicked.
        # Inside the tab: a gr.Tabs holds only tabs.
        last_t = gr.State(1.0)
        caption = gr.Markdown(elem_id="steps-caption")
        simple = components.Plot(show_label=False, label="parameter-free attention", elem_classes=[PRESENTER_FIRST])
        qkv = components.Plot(show_label=False, label="queries, keys, values")
        # quiz mode hides this head's scores and weights: they answer the Queries & keys quiz below
        quiz_hidden = gr.Markdown("*Quiz mode: this head's scores and weights are hidden until you untick it, as "
                                  "they would answer the question in Queries & keys below.*", visible=False,
                                  elem_id="steps-quiz-hidden")
        scores = components.Plot(show_label=False, label="scores to weights", elem_id="steps-scores")
        output = components.Plot(show_label=False, label="weighted sum")
        qk_view = qk.build(ctx)  # one head's queries and keys in two dimensions (/qk_space)

    inputs = [ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, ctx.presenter, temperature, scale]

    def on_view(text, model, layer, head, kind, presenter, log_temperature, scaled):
        return view(ctx.registry, text, model, layer, head, kind, presenter, log_temperature, scaled)

    def on_live(text, model, layer, head, kind, presenter, log_temperature, scaled):
        return live_view(ctx.registry, text, model, layer, head, kind, presenter, log_temperature, scaled)

    ctx.listen(on_view, inputs=inputs, outputs=[caption, simple, qkv, scores, output], api_name="steps",
               triggers=ctx.head_triggers)
    qk_view()
    ctx.on([ctx.quiz.change], lambda on: (visible(not on), visible(not on), visible(on)),
           inputs=[ctx.quiz], outputs=[scores, output, quiz_hidden], queue=False)
    # .input fires on every way of moving the slider (dragging, arrow keys); always_last drops the
    # positions passed while a redraw was running and draws the last one.
    live_outputs = [caption, simple, scores, output]
    ctx.on([temperature.input, scale.change], on_live, inputs=inputs, outputs=live_outputs, api_name="steps_live",
           trigger_mode="always_last")
    def on_slider_t(log_temperature):
        shown = shown_temperature(log_temperature)
        return shown, shown

    ctx.on([temperature.input], on_slider_t, inputs=[temperature], outputs=[shown_t, last_t], api_name="steps_t_shown",
           queue=False, show_progress="hidden")

    def on_typed_t(text, model, layer, head, kind, presenter, typed, scaled, last):
        if typed is None or typed == last:  # the box is empty while a T is typed, or shows the T drawn
            return UNCHANGED
        position = slider_from_temperature(typed)
        shown = shown_temperature(position)
        if float(f"{typed:.3g}") != shown:  # 0, -3, 1000: the box shows the T drawn, and says why
            warn(temperature_warning(typed, shown))
        return (position, shown, shown) + live_view(ctx.registry, text, model, layer, head, kind, presenter,
                                                    position, scaled)

    ctx.on([shown_t.submit, shown_t.blur], on_typed_t, inputs=inputs[:-2] + [shown_t, scale, last_t],
           outputs=[temperature, shown_t, last_t] + live_outputs, api_name="steps_typed_t", trigger_mode="always_last")
