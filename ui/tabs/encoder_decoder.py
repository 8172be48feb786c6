"""Tab "Encoder-decoder": the dates model's cross-attention, step by step decoding, greedy vs beam."""
from __future__ import annotations

import html
import re

import gradio as gr

from analysis.alignment import month_attention, month_span, most_month_attentive_head
from analysis.heads import head_name, parse_head_name
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.controls import PRESENTER_FIRST
from ui.page.context import Context, figure_font, screen_height
from ui.page.links import Linked
from ui.page.outputs import UNCHANGED, Change
from model.registry import ModelRegistry
from ui.page.labels import head_choices
from ui.page.messages import MAX_BEAM, InputError, check_beam, check_index, clean_text
from viz import cross
from viz.heatmap import attention_heatmap

TAB = TabSpec(id="encoder_decoder", label="Encoder-decoder", figure="#cross-heat",
              query="&model=dates&text=3+March+1999")

MODEL = "dates"
EXAMPLE = "Saturday, 21st of November 2026"

EXPLANATION = """
**An encoder reads, a decoder writes.** The dates model's encoder reads the written date with ordinary
self-attention (every character may see every other). The decoder writes the ISO date one character at
a time: its own self-attention is masked so it sees only what it has written so far, and its
*cross-attention* lets each output character look back at the encoder's characters. To write the month
digits the decoder should look at the month ("November", "Nov.", "11") wherever it is: the step slider
shows what each character looked at as it was written. Type a date in the text box above. Every date it
was trained on is a full date with a year from 1900 to 2099, the day written as digits, in many forms
("21st of November 2026", "November 21, 2026", "21 Nov 2026", "11/21/2026", "21.11.2026", "2026-11-21",
with or without a weekday). A date without a year ("June 12") or with the day spelled out ("the
twelfth") is outside what it learned: it still writes a full ISO date, and the parts it could not read
are guesses. This tab always shows the dates model, whichever model is
chosen above: lm and GPT-2 are decoders alone, mlm and minilm (BERT) encoders alone, so none of them has
cross-attention to show.
"""

BEAM_EXPLANATION = """
**Greedy versus beam search.** Greedy decoding takes the single most likely character at every step and
never takes a choice back. Beam search keeps the *width* best partial outputs alive and compares whole
outputs by their total log-probability (the sum of each character's log-probability; closer to 0 is
more likely). With a confident model both agree; the beams show what the runners-up were.
"""


def opening_head(registry: ModelRegistry) -> str:
    """The head the tab opens on: evaluation's best cross head, else the best month-aligned head on an
    example date, else the last layer's first head."""
    if MODEL not in registry.available:
        return "L1 H1"
    choices = head_choices(registry, MODEL, "cross")
    loaded = registry.get(MODEL)
    best = registry.history(MODEL).head("best_cross_head")
    if best is not None and head_name(best.layer, best.head) in choices:
        return head_name(best.layer, best.head)
    try:
        found = most_month_attentive_head(registry.attention(MODEL, EXAMPLE, "cross").probs, EXAMPLE)
    except (InputError, ValueError):
        found = None
    if found is not None:
        return head_name(found[0], found[1])
    return head_name(loaded.config.n_decoder_layers - 1, 0)


def _layer_head(registry: ModelRegistry, text, head_label) -> tuple[int, int]:
    try:
        layer0, head0 = parse_head_name(head_label)
    except ValueError as e:
        raise InputError(str(e)) from None
    cross_att = registry.attention(MODEL, text, "cross")
    check_index(layer0 + 1, cross_att.n_layers, "layer")
    check_index(head0 + 1, cross_att.n_heads, "head")
    return layer0, head0


YEAR = re.compile(r"(?<!\d)(19|20)\d\d(?!\d)")  # the years it was trained on: 1900 to 2099


def written_tokens(trace) -> list[str]:
    """What each decoder row writes: row i reads target_tokens[i] and writes target_tokens[i + 1] (the last
    row writes the end of the output). The cross-attention rows are labelled with these, so the framed row
    and the step's caption name the same character."""
    rows = trace.attention["cross"].probs.shape[2]
    return (list(trace.target_tokens[1:]) + ["</s>"])[:rows]


# the encoder's and the decoder's heads sit side by side: each plot is what half the row leaves beside its row
# labels and colour bar (not the default 560 px), and its labels are sized for those cells
HALF_PLOT_PX = {False: 420, True: 340}
KINDS_PX = 30  # the header's attention-kind row, which the dates model adds


def step_view(registry: ModelRegistry, text, head_label, step, presenter):
    """Cross-attention with the decoding step framed, and that step's weights over the source."""
    font = figure_font(presenter)
    trace = registry.trace(MODEL, text)
    att = trace.attention["cross"]
    layer0, head0 = _layer_head(registry, text, head_label)
    rows = att.probs.shape[2]
    step0 = min(max(int(step or 1), 1), rows) - 1
    written = written_tokens(trace)
    probs = att.probs[layer0, head0]
    # presenter mode: the header is a row taller for the dates model (its three attention kinds)
    heat = cross.cross_figure(probs, written, att.keys, step=step0, font_size=font,
                              max_height=screen_height(presenter, above=KINDS_PX),
                              title=f"Cross-attention, decoder layer {layer0 + 1}, head {head0 + 1}: "
                                    "each output character (rows) × the input (columns)")
    bars = cross.step_figure(probs[step0], att.keys, written[step0], step0, font_size=font)
    return heat, bars


def shown_step(registry: ModelRegistry, text, step) -> int:
    """The decoding step the figures show for a typed or linked step: 1 to the translation's length."""
    rows = registry.trace(MODEL, text).attention["cross"].probs.shape[2]
    return min(max(int(step or 1), 1), rows)


def _self_head(registry: ModelRegistry, text, label, kind: str) -> tuple[int, int]:
    """0-based (layer, head) of the encoder's or decoder's own self-attention head, from 'L1 H2'."""
    try:
        layer0, head0 = parse_head_name(label or "L1 H1")
    except ValueError as e:
        raise InputError(str(e)) from None
    att = registry.attention(MODEL, text, kind)
    check_index(layer0 + 1, att.n_layers, f"{kind} layer")
    check_index(head0 + 1, att.n_heads, "head")
    return layer0, head0


def view(registry: ModelRegistry, text, head_label, step, presenter, enc_head="L1 H1", dec_head="L1 H1"):
    """Translation, cross-attention, the decoding step, encoder and masked decoder self-attention.
    The self-attention panels have their own heads (enc_head, dec_head): head 3 of the encoder has nothing
    to do with cross-attention head 3."""
    if MODEL not in registry.available:
        raise InputError(registry.errors.get(MODEL, "The dates model is not installed."))
    text = clean_text(text, registry.max_chars(MODEL))
    font = figure_font(presenter)
    trace = registry.trace(MODEL, text)
    layer0, head0 = _layer_head(registry, text, head_label)
    output = "".join(trace.target_tokens[1:])
    shown = head_name(layer0, head0)  # the summary speaks of the head on screen only
    month = month_attention(trace.attention["cross"].probs, text)
    best = (f" On this date the cross-attention head shown, **{shown}**, puts {month[layer0, head0]:.0%} of the "
            "month digits' attention on the month." if month is not None else "")
    evaluated = registry.history(MODEL).head("best_cross_head")
    if evaluated is not None and (evaluated.layer, evaluated.head) == (layer0, head0):
        best += (f" Over {evaluated.examples or 'many'} validation dates it puts its strongest look on the "
                 f"month in {evaluated.score:.0%} of them: the tab opens on it.")
    summary = f"**{html.escape(text)}** → **{html.escape(output)}**.{best}"  # typed text is shown, not run
    if month_span(text) is None:
        summary += (f"  \nThis does not look like a date the model was trained on; type one in the text box, "
                    f"e.g. *{EXAMPLE}*.")
    elif YEAR.search(text) is None:
        summary += ("  \n⚠️ This date has no year (none from 1900 to 2099). Every date it was trained on had "
                    "one, so the output is not a reading of this date: the year, and often the day or month, "
                    "are guesses.")
    heat, bars = step_view(registry, text, head_label, step, presenter)
    encoder, decoder = trace.attention["encoder"], trace.attention["decoder"]
    enc_layer, enc_head0 = _self_head(registry, text, enc_head, "encoder")
    dec_layer, dec_head0 = _self_head(registry, text, dec_head, "decoder")
    width = HALF_PLOT_PX[bool(presenter)]
    enc_fig = attention_heatmap(encoder.probs[enc_layer, enc_head0], encoder.queries, encoder.keys, font_size=font,
                                max_width=width,
                                title=f"Encoder self-attention, layer {enc_layer + 1}, head {enc_head0 + 1}: "
                                      "no mask")
    dec_fig = attention_heatmap(decoder.probs[dec_layer, dec_head0], decoder.queries, decoder.keys,
                                mask=decoder.mask, font_size=font, max_width=width,
                                title=f"Decoder self-attention, layer {dec_layer + 1}, head {dec_head0 + 1}: "
                                      "masked")
    rows = trace.attention["cross"].probs.shape[2]
    slider = Change(minimum=1, maximum=max(rows, 2), value=min(max(int(step or 1), 1), rows))
    return summary, heat, bars, enc_fig, dec_fig, slider


def iso_date(registry: ModelRegistry, text, beam=1) -> str:
    """The dates model's ISO 8601 output for `text` (beam width 1 = greedy): the API's /translate."""
    beam = check_beam(beam)
    return registry.get(MODEL).translate(clean_text(text, registry.max_chars(MODEL)), beam=beam)


def beams_view(registry: ModelRegistry, text, width):
    """Greedy output and the `width` best beams, as tables with log-probabilities and probabilities."""
    loaded = registry.get(MODEL)
    text = clean_text(text, registry.max_chars(MODEL))
    width = check_beam(width)
    greedy = loaded.translations(text, 1)
    beams = loaded.translations(text, width) if width > 1 else greedy
    return components.table(cross.beams_table(greedy)), components.table(cross.beams_table(beams))


STEP = Linked("step", default=6, low=1, high=256)  # the decoding step, from 1 (a link may ask for any)
BEAM = Linked("beam", default=4, low=1, high=MAX_BEAM)  # the beam width


def build(ctx: Context) -> None:
    choices = head_choices(ctx.registry, MODEL, "cross") if MODEL in ctx.registry.available else ["L1 H1"]
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        summary = gr.Markdown(elem_id="dates-summary")
        with gr.Row():
            head = gr.Dropdown(choices, value=opening_head(ctx.registry), label="cross-attention head",
                               info="opens on the head that lines up output and input best")
            # its range follows the translation's length (the view redraws it); a link may ask for any step
            step = components.ModelSlider(1, 11, value=STEP.default, step=1, label="decoding step",
                                          info="which output character is being written", elem_id="decoding-step")
            ctx.link(STEP, step)
        heat = components.Plot(show_label=False, label="cross-attention", elem_id="cross-heat",
                               elem_classes=[PRESENTER_FIRST])
        bars = components.Plot(show_label=False, label="one decoding step", elem_id="step-bars")
        gr.Markdown("**Self-attention inside the encoder and the decoder.** These are other heads, with their "
                    "own weights: encoder head 3 is not related to cross-attention head 3, so each panel has "
                    "its own picker.")
        with gr.Row():
            with gr.Column():
                enc_head = gr.Dropdown(choices, value=choices[0], label="encoder self-attention head",
                                       elem_id="encoder-head")
                enc_fig = components.Plot(show_label=False, label="encoder self-attention")
            with gr.Column():
                dec_head = gr.Dropdown(choices, value=choices[0], label="decoder self-attention head",
                                       elem_id="decoder-head")
                dec_fig = components.Plot(show_label=False, label="decoder self-attention")
        gr.Markdown(BEAM_EXPLANATION)
        width = components.Slider(BEAM.low, BEAM.high, value=BEAM.default, step=1, label="beam width",
                                  elem_id="beam-width")
        ctx.link(BEAM, width)
        with gr.Row():
            greedy_table = gr.Dataframe(label="greedy (beam width 1)", interactive=False)
            beam_table = gr.Dataframe(label="beam search", interactive=False, elem_id="beam-table")

        def translate(text: str, beam: int = 1) -> str:
            """The dates model's ISO 8601 reading of `text`; beam is the beam width (1 = greedy, up to 8)."""
            return iso_date(ctx.registry, text, beam)

        ctx.api(translate, api_name="translate")  # API-only: the tab shows the same reading as its tables

    def on_view(text, head_label, step_value, presenter, enc_label, dec_label):
        return view(ctx.registry, text, head_label, step_value, presenter, enc_label, dec_label)

    def on_step(text, head_label, step_value, presenter):
        return step_view(ctx.registry, text, head_label, step_value, presenter)

    def on_beams(text, width_value):
        return beams_view(ctx.registry, text, width_value)

    ctx.listen(on_view, inputs=[ctx.text, head, step, ctx.presenter, enc_head, dec_head],
               outputs=[summary, heat, bars, enc_fig, dec_fig, step], api_name="encoder_decoder",
               triggers=ctx.triggers + [head.change, enc_head.input, dec_head.input])
    # .input fires on every way of moving a slider (dragging, arrow keys, typing in its box), not only on
    # the mouse's release; always_last draws the last position once the running redraw ends.
    drawn = ctx.on([step.input], on_step, inputs=[ctx.text, head, step, ctx.presenter], outputs=[heat, bars],
                   api_name="decoding_step", trigger_mode="always_last")

    def on_step_typed(text, step_value):
        """A step typed past the translation (99 of 11) shows in the box as the step the figures show."""
        try:
            fitted = shown_step(ctx.registry, text, step_value)
        except (InputError, TypeError, ValueError):  # the view itself answers a bad text or step
            return UNCHANGED
        return UNCHANGED if fitted == step_value else fitted

    # Fitted after the figures (.then), never as a second always_last listener of step.input: when a deferred
    # listener ends, Gradio 6.31's page sends the whole trigger again, so two such listeners of one trigger re-run
    # each other for as long as their calls overlap (a box typed to 99 sent both twice a second, for good;
    # tests/e2e/test_e2e_runtime_premises.py). A .then re-runs only itself.
    ctx.on(drawn, on_step_typed, inputs=[ctx.text, step], outputs=[step], trigger_mode="always_last",
           show_progress="hidden")
    ctx.listen(on_beams, inputs=[ctx.text, width], outputs=[greedy_table, beam_table], api_name="beams",
               triggers=[ctx.text.submit, ctx.analyze.click, width.input])
