"""Tab "Copying from context": random words, repeated; the induction head that copies them, the
previous-token head that feeds it, and what knocking either out does to the loss."""
from __future__ import annotations

import gradio as gr
import numpy as np
import pandas as pd

from analysis import induction
from analysis.heads import head_name, parse_head_name
from experiments import copying
from model.switches import ABLATION_METHODS, ABLATION_WORDS, Switches
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from ui.page.outputs import Change, hidden, show
from ui.page.messages import InputError, shown
from model.registry import ModelRegistry
from ui.page.labels import head_choices
from viz import induction as viz

TAB = TabSpec(id="induction", label="Copying from context")
TAB_ID = TAB.id
STRONGEST = "strongest induction head"
DEFAULT_WORDS = 15

EXPLANATION = """
**Transformers copy from their context.** Below is a "sentence" of random words, written twice. The first
time, no model can guess the next word. The second time, a model that *copies* can: find where the current
word appeared before, and predict the word that came after it. Transformers learn this with two heads in a
row (Olsson et al., 2022). A **previous-token head** in an earlier layer writes into each position which
token came just before it. An **induction head** in a later layer then looks for the position whose
previous token matches the current token, which is the position *after* the earlier occurrence, and copies
that word forward. On the repeated sentence the induction head's attention is a **stripe** running
parallel to the diagonal: with *n* words written twice, word *k* of the second copy looks at word *k* + 1 of
the first, *n* − 1 places to its left.

The loss on the second copy against the first is **in-context learning as one number**: how much the model
gained from having seen the words once. Knock a head out (its output set to zero, or its weights made
uniform) and see what the second copy costs without it. The model learned this from training text in
which some spans repeat; the Learning tab shows the head forming.
"""


def decoder_name(registry: ModelRegistry, name: str) -> tuple[str, str]:
    """The causal lm to use and a note when it is not the chosen model (copying needs a decoder)."""
    if name in registry.available and registry.arch(name) == "decoder":
        return name, ""
    fallback = next((n for n in registry.available if registry.arch(n) == "decoder"), None)
    if fallback is None:
        raise InputError("Copying from context needs a causal language model (lm), and none is loaded.")
    return fallback, (f"*{name} is not a causal language model (it reads the whole sentence at once, so it "
                      f"could see the answer): showing {fallback}.*\n\n")


def _losses(loaded, ids, switches=None):
    losses, probs = copying.token_losses(loaded, ids[None], switches or Switches())
    return losses[0], probs[0]


def measure(registry: ModelRegistry, name: str, seed, words, method: str = "zero") -> dict:
    """Everything the view shows, as numbers: the sentence, scores per head, the circuit, and the
    copy losses intact and with each circuit head (and both) knocked out."""
    loaded = registry.get(name)
    try:
        seed, words = int(seed or 0), int(words or DEFAULT_WORDS)
        ids = copying.repeated_ids(loaded, 1, words, seed)[0]
    except (TypeError, ValueError) as e:
        raise InputError(str(e)) from None
    if method not in ABLATION_METHODS:
        raise InputError(f"How to knock a head out: one of {', '.join(ABLATION_METHODS)}, not {shown(method)}.")
    losses, probs = _losses(loaded, ids)
    scores = induction.induction_scores(probs, ids)
    previous = induction.previous_token_scores(probs)
    induction_head, previous_head = induction.circuit(scores, previous)
    how = ABLATION_WORDS[method]
    conditions = {"intact": ()}
    conditions[f"without the induction head {head_name(*induction_head)} ({how})"] = (induction_head,)
    if previous_head is not None:
        conditions[f"without the previous-token head {head_name(*previous_head)} ({how})"] = (previous_head,)
        conditions[f"without both ({how})"] = (induction_head, previous_head)
    token_losses, rows = {}, []
    for label, heads in conditions.items():
        off = losses if not heads else _losses(
            loaded, ids, Switches(ablate={("self", l, h) for l, h in heads}, method=method))[0]
        token_losses[label] = off
        first, second = induction.copy_losses(off, words)
        rows.append({"model": label, "loss on the first copy": round(first, 2),
                     "loss on the second copy": round(second, 2), "gained from the context": round(first - second, 2)})
    return dict(name=name, ids=ids, tokens=[loaded.label(int(i)) for i in ids], words=words, probs=probs,
                induction=scores, previous=previous, induction_head=induction_head, previous_head=previous_head,
                token_losses=token_losses, table=pd.DataFrame(rows), method=method)


def summary(m: dict, note: str = "") -> str:
    rows = m["table"].set_index("model")
    intact = rows.iloc[0]
    sentence = " ".join(t.replace("▁", "") for t in m["tokens"][1 : 1 + m["words"]])
    layer, head = m["induction_head"]
    text = (f"{note}**The sentence** ({m['words']} random words, then the same words again): *{sentence}*\n\n"
            f"**Loss on the first copy: {intact['loss on the first copy']:.2f} nats; on the second: "
            f"{intact['loss on the second copy']:.2f} nats.** The model gained "
            f"{intact['gained from the context']:.2f} nats a word from having read the words once "
            f"(e^{intact['gained from the context']:.1f} ≈ {np.exp(intact['gained from the context']):,.0f}× "
            f"more probability on the right word). The strongest induction head is **{head_name(layer, head)}** "
            f"(score {m['induction'][layer, head]:.2f})")
    if m["previous_head"] is not None:
        pl, ph = m["previous_head"]
        text += (f"; the strongest previous-token head before it is **{head_name(pl, ph)}** "
                 f"(score {m['previous'][pl, ph]:.2f}). The two are outlined in red in the maps below.")
        knocked = rows.iloc[1]
        text += (f" Knock out {head_name(layer, head)} ({ABLATION_WORDS[m['method']]}) and the second copy costs "
                 f"**{knocked['loss on the second copy']:.2f} nats** instead of "
                 f"{intact['loss on the second copy']:.2f}.")
    else:
        text += ", outlined in red in the maps below."
    return text


def forming(registry: ModelRegistry, name: str, font_size: int) -> Change:
    """The best head's induction score during training, from the model's training history (hidden for a
    model saved without the probe's record)."""
    history = registry.history(name)
    steps, scores = history.induction
    if not len(steps):
        return hidden(clear=True)
    return show(viz.forming_figure(steps, scores, history.snapshots, font_size=font_size))


def view(registry: ModelRegistry, model, seed, words, head, method, presenter):
    """(summary, stripe, scores, losses, table, head choices, forming) for one repeated sentence."""
    font = figure_font(presenter)
    name, note = decoder_name(registry, model)
    m = measure(registry, name, seed, words, method)
    choices = [STRONGEST] + head_choices(registry, name, "self")
    chosen = head if head in choices else STRONGEST
    layer, head0 = m["induction_head"] if chosen == STRONGEST else parse_head_name(chosen)
    stripe = viz.stripe_figure(m["probs"][layer, head0], m["tokens"], layer, head0, m["induction"][layer, head0],
                               m["words"], font_size=font, max_height=screen_height(presenter))
    marked = [m["induction_head"]] + ([m["previous_head"]] if m["previous_head"] is not None else [])
    scores = viz.scores_figure(m["induction"], m["previous"], font_size=font, marked=marked)
    shown = {k: v for i, (k, v) in enumerate(m["token_losses"].items()) if i < 2}  # intact, induction head off
    losses = viz.losses_figure(m["tokens"], shown, m["words"], font_size=font)
    return (summary(m, note), stripe, scores, losses, components.table(m["table"]),
            Change(choices=choices, value=chosen), forming(registry, name, font))


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        with gr.Row(elem_classes=[PRESENTER_SECOND]):  # presenter mode: under the figure
            new = gr.Button("New random sentence", variant="primary", elem_id="copying-new", scale=1)
            seed = components.Number(value=0, precision=0, minimum=0,
                                     label="sentence number", elem_id="copying-seed", scale=1)
            words = components.ClampedSlider(4, 60, value=DEFAULT_WORDS, step=1, label="words", elem_id="copying-words",
                                             scale=2)
            head = gr.Dropdown(choices=[STRONGEST], value=STRONGEST, label="head shown", elem_id="copying-head",
                               scale=2)
            method = gr.Radio(list(ABLATION_METHODS), value="zero", label="knock out by", elem_id="copying-method",
                              scale=1)
        text = gr.Markdown()
        table = gr.Dataframe(label="loss (nats a word) on each copy, intact and with heads knocked out",
                             interactive=False, elem_id="copying-table")
        stripe = components.Plot(show_label=False, elem_id="copying-stripe", elem_classes=[PRESENTER_FIRST])
        scores = components.Plot(show_label=False, elem_id="copying-scores")
        losses = components.Plot(show_label=False, elem_id="copying-losses")
        formed = components.Plot(show_label=False, visible=False, elem_id="copying-forming")
        gr.Markdown("**Watch it form.** Above: the best head's induction score, measured every 50 steps while "
                    "the model trained (shown for a model whose training recorded it). The dots are the snapshots "
                    "the Learning tab keeps: open it, type a sentence written twice, and pick the induction head "
                    "to see the stripe appear.")

    def on_view(model, seed_value, words_value, head_value, method_value, presenter):
        return view(ctx.registry, model, seed_value, words_value, head_value, method_value, presenter)

    inputs = [ctx.model, seed, words, head, method, ctx.presenter]
    outputs = [text, stripe, scores, losses, table, head, formed]
    # words.input, not .release: .release missed a number typed in the slider's box and drew the value before
    # arrow keys moved it; .input fires on every way of moving it, and always_last draws the last one
    ctx.listen(on_view, inputs=inputs, outputs=outputs, api_name="copying",
               triggers=ctx.triggers + [seed.submit, words.input, head.input, method.input])
    seeded = ctx.on([new.click], lambda s: int(s or 0) + 1, inputs=[seed], outputs=[seed], queue=False)
    ctx.on(seeded, on_view, inputs=inputs, outputs=outputs)
