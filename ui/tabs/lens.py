"""Tab "Logit lens": what each layer already predicts, read through the model's own final norm and unembedding."""
from __future__ import annotations

import gradio as gr

from experiments.lens import NoLensError, lens_stack, logit_lens
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from ui.page.components import fit_controls
from model.registry import ModelRegistry
from ui.page.messages import InputError, clean_text, cut_notice
from viz import lens as viz_lens
from viz.figure import no_taller
from viz.labels import markdown_label
from viz.panels import note_figure

# "Lens", short: the tab bar holds more names on a row in presenter mode
TAB = TabSpec(id="lens", label="Lens", figure="#lens-top")
TAB_ID = TAB.id
# On lm the answer to this text appears partway up the stack (measured by tests/app/server/test_reading_views_api.py):
# after layer 1 the top token at "to" is "ient", from layer 2 on it is "be", its probability growing
EXAMPLE = "not able to"
EXPLANATION = """
**What does each layer already know?** Every layer adds to the *residual stream*: one vector per position that
runs from the embeddings up through the stack. The model reads only the last layer's vector: its final norm, then
its *unembedding* (one score per word of the vocabulary), then a softmax. The **logit lens** reads every layer's
vector the same way, as if the stack ended there. The bottom rows show what the first layers would predict;
the top row *is* the model's prediction (exactly: it is the same computation on the same vector). Watch
where the final answer first appears, and how sure each layer is of it. Earlier layers were never trained to be
read like this, so their guesses are rough: the lens shows a direction, not a promise.
"""


def reading(registry: ModelRegistry, name, text):
    """The lens reading of `text` (from the registry's detailed trace), or InputError for a model without a head."""
    loaded = registry.get(name)
    try:
        lens_stack(loaded)
    except NoLensError as e:
        raise InputError(str(e)) from None
    trace = registry.detailed(name, text)
    text = clean_text(text, registry.max_chars(name))
    return registry.cached(("lens", name, text), lambda: logit_lens(loaded, text, trace))


def asked_position(registry: ModelRegistry, name, found) -> int:
    """The position a lecture asks about: the first <mask> (a masked model), else the last token (lm); for the
    dates decoder the character whose answer settles latest."""
    if registry.arch(name) == "encoder" and any(token in ("<mask>", "[MASK]") for token in found.tokens):
        return next(i for i, token in enumerate(found.tokens) if token in ("<mask>", "[MASK]"))
    if found.stack == "decoder":
        return int(found.settled().argmax())
    return len(found.tokens) - 1


def first_on_top(found, i: int) -> int:
    """The first layer (0-based) whose top token at position i is the final answer; it may lose the top again."""
    return int((found.top_ids[:, i] == found.top_ids[-1, i]).argmax())


def window_notice(found) -> str:
    """A long input's window, in words (viz.lens.window_sentence), as its own line before the reading; "" where the
    lens reads every position."""
    said = viz_lens.window_sentence(found.start, len(found.tokens), found.n_positions)
    return f"{said}\n\n" if said else ""


def summary(registry: ModelRegistry, name, found) -> str:
    """The figure's reading of the asked position, in numbers taken from it. The quiz asks from which layer on the
    answer stays on top (LensReading.settled, the outlined cell); where it was on top earlier and lost it, the
    summary says so rather than calling the layer below the settling one "still" without it."""
    i = asked_position(registry, name, found)
    answer = markdown_label(found.top_tokens[-1][i])
    settle = int(found.settled()[i])
    first = first_on_top(found, i)
    where = markdown_label(found.tokens[i])
    probs = ", ".join(f"{found.final_probs[l, i]:.2f}" for l in range(found.n_layers))
    told = f"At **{where}** (position {found.start + i + 1}) the model's answer is **{answer}**. "
    if settle == 0:
        told += "It is the top token after every layer, from layer 1 on"
    else:
        below = markdown_label(found.top_tokens[settle - 1][i])
        if first == settle:
            told += (f"No layer below layer {settle + 1} puts it on top (after layer {settle} the top token is "
                     f"**{below}**); from layer {settle + 1} on it is **{answer}**")
        else:
            told += (f"It first becomes the top token after layer {first + 1}, but after layer {settle} the top "
                     f"token is **{below}**; from layer {settle + 1} on it is **{answer}** for good")
    told += f". The probability each layer gives it, layer 1 to {found.n_layers}: {probs}."
    side = (" The dates model is read on its decoder: each position is a character it has written, and the row "
            "says what it would write next." if found.stack == "decoder" else "")
    return cut_notice(registry, name, found.trace.truncated) + window_notice(found) + told + side


def view(registry: ModelRegistry, text, name, presenter=False, quiz=False):
    """(notice, top tokens figure, final answer figure): the lens of `text`; quiz mode asks before it shows."""
    font = figure_font(presenter)
    try:
        found = reading(registry, name, text)
    except InputError as e:
        if "word-prediction head" not in str(e):
            raise
        note = note_figure(str(e), font_size=font)
        return f"**No logit lens for {name}.** {e}", note, note
    if quiz:
        i = asked_position(registry, name, found)
        hidden = note_figure("Quiz: the lens is hidden until you press Reveal.", font_size=font)
        return (cut_notice(registry, name, found.trace.truncated) + window_notice(found)
                + f"**Quiz.** At **{markdown_label(found.tokens[i])}** (position {found.start + i + 1}), from which of the "
                f"{found.n_layers} layers on is the model's final answer the top token after every layer (it may "
                "be on top earlier and lose it)? Vote, then press Reveal."), hidden, hidden
    asked = asked_position(registry, name, found)
    mark = (int(found.settled()[asked]), asked)
    top = viz_lens.lens_heatmap(found.top_probs, found.top_tokens, found.tokens, found.alternatives, found.alt_probs,
                                title="The top token after each layer (colour: its probability)", font_size=font,
                                mark=mark, max_height=screen_height(presenter), first=found.start)
    final = viz_lens.lens_heatmap(found.final_probs, found.top_tokens, found.tokens, found.alternatives,
                                  found.alt_probs, value="p(final answer)", font_size=font, numbers=True,
                                  title="The probability each layer gives the final answer (the top row's token)",
                                  mark=mark, first=found.start)
    # presenter mode: the top tokens' figure whole on a 1280 x 720 projector's first screen (it ended at 845 px)
    return summary(registry, name, found), no_taller(top, screen_height(presenter)), final


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])
        with gr.Row():
            example = gr.Button(f"Lecture example (lm): “{EXAMPLE}”", size="sm", elem_id="lens-example", scale=0,
                                min_width=240)
        with gr.Row(equal_height=True, elem_classes=[PRESENTER_SECOND]):  # presenter mode: under the figure
            notice = gr.Markdown(elem_id="lens-summary")
            reveal = ctx.reveal_button("lens-reveal")
        top = components.Plot(show_label=False, label="top token after each layer", elem_id="lens-top",
                              elem_classes=[PRESENTER_FIRST])
        final = components.Plot(show_label=False, label="probability of the final answer", elem_id="lens-final")
        gr.Markdown("Hover a cell for the five likeliest tokens after that layer. The outlined cell is where the "
                    "answer at the asked position settles (the first layer from which it stays on top).")

    def on_view(text, model, presenter=False, quiz=False):
        return view(ctx.registry, text, model, presenter, quiz)

    ctx.listen(on_view, inputs=[ctx.text, ctx.model, ctx.presenter, ctx.quiz],
               outputs=[notice, top, final], api_name="logit_lens", triggers=ctx.triggers + [ctx.quiz.input])
    ctx.on([reveal.click], on_view, inputs=[ctx.text, ctx.model, ctx.presenter],
           outputs=[notice, top, final])  # quiz left out: the view in full
    def on_example(layer, head):
        return (EXAMPLE, "lm") + fit_controls(ctx.registry, "lm", layer, head, None)

    ctx.on([example.click], on_example, inputs=[ctx.layer, ctx.head],
           outputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind], preprocess=False, api_name="lens_example")
