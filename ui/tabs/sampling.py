"""Sampling in the Every head tab's predictions: temperature, top-k, top-p and a seed, the next-token distribution
before and after them, and a seeded sample (/generate)."""
from __future__ import annotations

from typing import Callable

import gradio as gr

from analysis import sampling
from ui.page import components
from ui.page.context import Context, figure_font
from ui.page.links import Linked
from model.registry import ModelRegistry
from ui.page.messages import InputError, clean_text, cut_notice, shown
from viz import sampling as viz_sampling
from viz.labels import markdown_label
from viz.panels import note_figure

MAX_TOKENS, MAX_SEED = sampling.MAX_TOKENS, sampling.MAX_SEED
# what a link keeps of the panel (/generate's temperature, top_k, top_p, seed and tokens); a link that sets any
# opens the panel
SAMPLE_TEMPERATURE = Linked("sample_temperature", default=1.0, low=0.0, high=sampling.MAX_TEMPERATURE)
SAMPLE_TOP_K = Linked("sample_top_k", default=0, low=0, high=sampling.MAX_TOP_K)
SAMPLE_TOP_P = Linked("sample_top_p", default=1.0, low=sampling.MIN_TOP_P, high=1.0)
SAMPLE_SEED = Linked("sample_seed", default=0, low=0, high=MAX_SEED)
SAMPLE_TOKENS = Linked("sample_tokens", default=sampling.DEFAULT_TOKENS, low=1, high=MAX_TOKENS)
EXPLANATION = ("**Sampling.** Greedy decoding always takes the likeliest token (the continuation above also skips any token that would repeat a run of 3 tokens). Sampling draws one at random "
               "with the model's probabilities, after three optional changes, in this order: the **temperature** T "
               "divides every score before the softmax (T below 1 sharpens the distribution, T = 0 is greedy, above 1 "
               "flattens it); **top-k** keeps the k likeliest tokens (0: all); **top-p** keeps the fewest likeliest "
               "tokens whose probabilities add up to p (1: all). What is kept is shared out again to sum to 1. The "
               "**seed** fixes the random draws: the same settings and seed always write the same text.")


def _range(setting: Linked) -> tuple:
    """A slider's minimum, maximum and value, from what a link takes."""
    return setting.low, setting.high, setting.default


def view(registry: ModelRegistry, text, name, temperature=1.0, top_k=0, top_p=1.0, seed=0, tokens=sampling.DEFAULT_TOKENS,
         presenter=False, quiz=False):
    """(the distribution before and after the settings, the seeded sample as Markdown)."""
    font = figure_font(presenter)
    model = registry.get(name)
    text = clean_text(text, registry.max_chars(name))  # the one rule every view keeps (model.inputs.char_limit)
    if model.arch != "decoder" or not model.has_lm_head:
        message = (f"Sampling writes the next token, so it needs a model that predicts one (lm, or a GPT-2 or Llama "
                   f"folder); {name} does not: it {'fills in blanks' if model.arch == 'encoder' and model.has_lm_head else 'writes no text token by token here'}.")
        return note_figure(message, font_size=font), f"**No sampling for {name}.** {message}"
    try:
        temperature, top_k, top_p = sampling.check(temperature, top_k, top_p)
    except ValueError as e:
        raise InputError(f"Sampling: {e} (got T = {shown(temperature)}, top-k = {shown(top_k)}, "
                         f"top-p = {shown(top_p)}).") from None
    seed = components.whole(seed, 0, MAX_SEED, "seed")
    tokens = components.whole(tokens, 1, MAX_TOKENS, "number of tokens")
    encoded = model.encode(text)
    ids = encoded.ids
    tokens = max(0, min(tokens, model.config.max_len - len(ids)))
    if tokens == 0:  # the text fills the context: nothing can be drawn after it, so nothing is said to be
        message = (f"The text fills {name}'s context of {model.config.max_len:,} tokens"
                   f"{' (the rest was cut)' if encoded.truncated else ''}, so no token can be drawn after it: "
                   "shorten the text to sample a continuation.")
        return note_figure(message, font_size=font), f"**Nothing to sample.** {message}"
    steps = sampling.distribution(model.next_logits(ids), temperature, top_k, top_p)
    settings = f"T = {temperature:g}, top-k = {top_k or 'off'}, top-p = {top_p:g}"
    if quiz:  # the distribution before the settings alone: what they keep, and the sample, are the answer
        figure = viz_sampling.distribution_figure({"before": steps.before}, model.label, font_size=font,
                                                  only_before=True, title=f"The next token, before the settings<br><sub>{settings}</sub>")
        return figure, (f"**Quiz.** With {settings}, how many tokens can still be drawn, and what probability does "
                        "the likeliest get after them? Vote, then press “Reveal the sample” to see the distribution "
                        "after the settings and a seeded sample.")
    drawn = sampling.generate(model.next_logits, ids, tokens, temperature, top_k, top_p, seed, end=model.end_id)
    first = drawn.ids[0] if drawn.ids else model.end_id
    stages = {"before": steps.before, "tempered": steps.tempered, "top_k": steps.top_k, "after": steps.after}
    figure = viz_sampling.distribution_figure(stages, model.label, font_size=font, sampled=first,
                                              title=f"The next token, before and after the settings<br><sub>{settings}</sub>")
    kept = int((steps.after > 0).sum())
    written = markdown_label(model.written(drawn.ids)) if drawn.ids else "(nothing)"
    label = markdown_label(model.label(first)) if first is not None else "the end"
    greedy = (" *(T = 0: plain greedy decoding, each token the likeliest; the greedy continuation above also "
              "bans repeated runs of tokens, so the two part where that ban steps in)*" if temperature == 0 else "")
    return figure, (
        f"**Seeded sample** ({settings}, seed {seed}): …{written}{greedy}"
        + (" *(then the end of the line)*" if drawn.finished else "")
        + f"\n\n{kept:,} token{'s' if kept != 1 else ''} can be drawn next (of {len(steps.after):,}). The first token "
          f"drawn, **{label}**, has probability {steps.after[first]:.3f} after the settings and "
          f"{steps.before[first]:.3f} before them (marked “drawn” in the figure).")


def build(ctx: Context) -> Callable[[], None]:
    """The sampling panel, built inside the Every head tab's column (ui/tabs/attention.py). Returns the function that
    registers its view: called after the tab's own views, as a dispatcher runs a tab's views in registration
    order (the head in detail first)."""
    # folded by default: its 12 tokens drawn one forward pass at a time would cost every click more than the
    # rest of the tab, so the view computes on the page only while the panel is open (ctx.listen's section)
    with gr.Accordion("Sampling: temperature, top-k, top-p", open=False, elem_id="sampling") as panel:
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])
        with gr.Row():
            temperature_box = components.Setting(*_range(SAMPLE_TEMPERATURE), step=0.05, label="temperature T",
                                      elem_id="sample-temperature", min_width=120)
            top_k_box = components.Setting(*_range(SAMPLE_TOP_K), step=1, label="top-k (0: off)", elem_id="sample-top-k",
                                min_width=120)
        with gr.Row():
            top_p_box = components.Setting(*_range(SAMPLE_TOP_P), step=0.01, label="top-p (1: off)", elem_id="sample-top-p",
                                min_width=120)
            seed_box = components.Number(value=SAMPLE_SEED.default, precision=0, label="seed",
                                         elem_id="sample-seed", min_width=80)
            tokens_box = components.Setting(*_range(SAMPLE_TOKENS), step=1, label="tokens", elem_id="sample-tokens",
                                 min_width=120)
        reveal = ctx.reveal_button("sample-reveal", "Reveal the sample")  # the head's quiz has its Reveal above
        distribution = components.Plot(show_label=False, label="the next-token distribution", elem_id="sample-distribution")
        sample = gr.Markdown(elem_id="sample-text")

    def on_view(text, model, temperature, top_k, top_p, seed, tokens, presenter=False, quiz=False):
        return view(ctx.registry, text, model, temperature, top_k, top_p, seed, tokens, presenter, quiz)

    settings = [temperature_box, top_k_box, top_p_box, seed_box, tokens_box]
    for setting, box in zip((SAMPLE_TEMPERATURE, SAMPLE_TOP_K, SAMPLE_TOP_P, SAMPLE_SEED, SAMPLE_TOKENS), settings):
        ctx.link(setting, box, opens=panel)
    ctx.on([reveal.click], on_view, inputs=[ctx.text, ctx.model, *settings, ctx.presenter],
           outputs=[distribution, sample])  # quiz left out: in full
    return lambda: ctx.listen(on_view, inputs=[ctx.text, ctx.model, *settings, ctx.presenter, ctx.quiz],
                              outputs=[distribution, sample], api_name="generate", section=panel,
                              triggers=ctx.triggers + [c.input for c in settings] + [ctx.quiz.input])
