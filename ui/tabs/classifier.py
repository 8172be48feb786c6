"""Tab "Classifier": the lecture notes' second transformer reads a definition and names its category.

Handlers are pure functions of the registry and the inputs (tests call them directly); the model
work is model.api (classify, classification) and experiments.interventions (gradient × input), the
numbers analysis.pooling and analysis.attribution, the figures viz.classifier and viz.interventions.
The tab always reads with the "classifier" model, whichever model the picker shows.
"""
from __future__ import annotations

import html

import gradio as gr
import numpy as np

from analysis import pooling as pooling_math
from analysis.attribution import rollout, shares
from analysis.heads import head_name
from experiments import interventions
from model.switches import ABLATION_METHODS, ABLATION_WORDS, Switches
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, Context, figure_font, screen_height
from ui.page.outputs import Change, hidden, show
from model.registry import ModelRegistry
from ui.page.labels import head_choices, parse_heads
from ui.page.messages import InputError, clean_text
from viz import classifier as viz
from viz.figure import no_taller
from viz.interventions import explanations_figure, guesses_figure
from viz.labels import markdown_label

TAB = TabSpec(id="classifier", label="Classifier")

MODEL = "classifier"
TOP_K = 5
EXAMPLE = "a large grey animal with a long trunk"
# Definitions the model is torn about, where knocking out one head changes the label (checked by a test
# against the shipped weights); a confident one such as EXAMPLE survives any single head.
GRADIENTS = "|gradient × input|"  # absolute shares: a token pushing the score down counts as much as one pushing up
ABLATION_EXAMPLES = ["a tree with sweet red fruit", "to walk slowly", "make a loud sound"]

EXPLANATION = """
**One decision for a whole sentence.** The language model makes a guess at every position; a classifier
makes one guess for the whole text. This one reads a definition written the way WordNet writes them
(*a large grey animal with a long trunk*, *move quickly on foot*) and names which of WordNet's 45
categories it belongs to (noun.animal, noun.artifact, verb.motion, …). An encoder, with no mask, turns every
token into a vector that has looked at the whole sentence; **pooling** turns those *t* vectors into one, and a
linear layer scores each category. Pooling comes in three kinds: the **mean** of the vectors, their **max**
(each dimension keeps its largest value), or the vector of a **[CLS] token** put first (here `<s>`), which can
only gather the sentence through attention. Type a definition in the text box above.
"""
ABLATE_EXPLANATION = """
**Knock out a head** and the same forward pass runs with that head silenced (*zero*: its output is dropped;
*uniform*: it looks everywhere equally). If the label changes, the decision needed that head for this text.
*Find a head* tries every head alone and picks the one whose loss hurts the current label most. A confident
decision survives any single head; a less sure one may not: try *a tree with sweet red fruit*.
"""


def _model(registry: ModelRegistry):
    return registry.get(MODEL)


def check_definition(text) -> str:
    """The text, cleaned, or InputError in the words a person typing a definition needs."""
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError(f"Type a definition first, for example “{EXAMPLE}”.")
    return clean_text(text)


def classify(registry: ModelRegistry, text, k: int = TOP_K) -> dict[str, float]:
    """{category: probability} for the k likeliest categories (gr.Label's value); the /classify endpoint."""
    text = check_definition(text)
    try:
        return dict(_model(registry).classify(text, k))
    except ValueError as e:  # e.g. nothing left to read
        raise InputError(str(e)) from e


def explanations(registry: ModelRegistry, text: str, decision) -> dict[str, np.ndarray]:
    """name -> (t,) shares of the input tokens: where the decision's information comes from, three ways."""
    loaded = _model(registry)
    probs = registry.trace(MODEL, text).attention["self"].probs  # (L, H, t, t)
    features, pooling = decision.features, decision.pooling
    flowed = pooling_math.pooling_weights(features, pooling) @ rollout(probs)  # (t,) into the pooled vector
    grads = interventions.attribution(loaded, text)
    if pooling == "cls":
        first = {"[CLS]'s attention (last layer, mean of heads)": shares(probs[-1].mean(0)[0])}
    else:
        best = int(np.argmax(decision.probs))
        first = {f"share of the pooled vector ({pooling})": shares(pooling_math.token_shares(features, pooling)),
                 "part of the score": shares(pooling_math.score_contributions(features, decision.weights[best],
                                                                              pooling))}
    return {**first, "rollout into the pooled vector": shares(flowed), GRADIENTS: shares(grads)}


def view(registry: ModelRegistry, text, presenter):
    """Summary, the top categories (gr.Label value), which tokens the decision draws on, each token's part of
    the score, and the vectors before and after pooling."""
    text = check_definition(text)
    loaded = _model(registry)
    font = figure_font(presenter)
    try:
        decision = loaded.classification(text)
    except ValueError as e:
        raise InputError(str(e)) from e
    top = decision.top(TOP_K)
    category, probability = top[0]
    best = decision.labels.index(category)
    rows = explanations(registry, text, decision)
    grads = rows[GRADIENTS]
    strongest = [decision.tokens[i] for i in np.argsort(-grads)[:3] if i > 0 or decision.pooling == "cls"]
    shown = text if len(text) <= 160 else text[:157] + "…"
    summary = (f"**{html.escape(shown)}** → **{category}** ({probability:.0%}). This model uses "
               f"**{viz.POOLING_NAMES[decision.pooling]}**. By gradient × input (its size: absolute shares) it leans most on "
               + ", ".join(f"*{markdown_label(t)}*" for t in strongest) + ".")
    if decision.truncated:
        summary += f"  \n⚠️ Only the first {loaded.config.max_len} tokens were read."
    contributions = pooling_math.score_contributions(decision.features, decision.weights[best], decision.pooling)
    return (summary, dict(top),
            explanations_figure(decision.tokens, rows, font_size=font,
                                title=f"Which tokens the decision ({category}) draws on"),
            no_taller(viz.contributions_figure(decision.tokens, contributions, category, font_size=font),
                      screen_height(presenter)),
            viz.pooling_figure(decision.tokens, decision.features, decision.pooled, decision.pooling, font_size=font))


def _switches(registry: ModelRegistry, heads, method) -> Switches:
    if method not in ABLATION_METHODS:
        raise InputError(f"Choose how to knock heads out: one of {', '.join(ABLATION_METHODS)}.")
    names = [heads] if isinstance(heads, str) else list(heads or [])
    if not names:
        raise InputError("Choose at least one head to knock out, or press “Find a head”.")
    _model(registry)  # loaded, or a message saying it is not
    return Switches(ablate=parse_heads(names, registry, MODEL), method=method)


def ablate_view(registry: ModelRegistry, text, heads, method, presenter):
    """What knocking out `heads` does to the decision: a summary and the top guesses before and after."""
    text = check_definition(text)
    switches = _switches(registry, heads, method)
    loaded = _model(registry)
    before, after = loaded.classify(text, TOP_K), loaded.classify(text, TOP_K, switches)
    was, now = before[0][0], after[0][0]
    kept = dict(loaded.classify(text, None, switches))[was]
    names = ", ".join(head_name(l, h) for _, l, h in sorted(switches.ablate))
    if was != now:
        summary = (f"Knocking out **{names}** ({ABLATION_WORDS[method]}) **changes the label**: {was} ({before[0][1]:.0%}) → "
                   f"**{now}** ({after[0][1]:.0%}).")
    else:
        summary = (f"Knocking out **{names}** ({ABLATION_WORDS[method]}) keeps the label **{was}**: "
                   f"{before[0][1]:.0%} → {kept:.0%}.")
    figure = guesses_figure(before, after, "category", font_size=figure_font(presenter))
    return summary, figure


def strongest_head(registry: ModelRegistry, text, method) -> str:
    """The single head whose knock-out moves the current label most: one that changes it if any does."""
    text = check_definition(text)
    loaded = _model(registry)
    label = loaded.classify(text, 1)[0][0]
    best, best_key = None, None
    for name in head_choices(registry, MODEL):
        guesses = dict(loaded.classify(text, None, _switches(registry, [name], method)))
        changed = max(guesses, key=guesses.get) != label
        key = (changed, -guesses[label])
        if best_key is None or key > best_key:
            best, best_key = name, key
    return best


def build(ctx: Context) -> None:
    registry = ctx.registry
    choices = head_choices(registry, MODEL) if MODEL in registry.available else []
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        summary = gr.Markdown(elem_id="classifier-summary")
        with gr.Row(equal_height=False, elem_classes=[PRESENTER_FIRST]):  # in presenter mode above the summary
            with gr.Column(scale=2):
                categories = gr.Label(num_top_classes=TOP_K, label="Categories", elem_id="classifier-label")
            with gr.Column(scale=3):
                contributions = components.Plot(show_label=False, label="each token's part of the score")
        explain = components.Plot(show_label=False, label="which tokens the decision draws on")
        pooled = components.Plot(show_label=False, label="pooling")
        gr.Markdown(ABLATE_EXPLANATION)
        heads, method = components.head_picker(choices, "classifier")
        with gr.Row():
            knock = gr.Button("Knock out", variant="primary", elem_id="classifier-knock")
            find = gr.Button("Find a head", elem_id="classifier-find")
        ablation = gr.Markdown(elem_id="classifier-ablation")
        # hidden until a knock-out: an empty plot box drew a broken-figure icon under the buttons
        guesses = components.Plot(show_label=False, label="categories before and after", visible=False,
                          elem_id="classifier-guesses")

        def classify_endpoint(text: str) -> dict[str, float]:
            """The classifier's top categories for a definition, as {category: probability} (gr.Label's value)."""
            return classify(registry, text)

        ctx.api(classify_endpoint, api_name="classify")  # inside the tab: a gr.Tabs may hold only tabs

    def on_view(text, presenter):
        return view(registry, text, presenter)

    def on_ablate(text, chosen, how, presenter):
        summary_text, figure = ablate_view(registry, text, chosen, how, presenter)
        return summary_text, show(figure)

    def on_find(text, how, presenter):
        name = strongest_head(registry, text, how)
        return (Change(value=[name]), *on_ablate(text, [name], how, presenter))

    def on_new_text(text, chosen, how, presenter):
        """A new definition: the knock-out shown follows it (the chosen heads knocked out again), or goes if
        none is chosen; it used to stay, describing the last definition under the new one's categories."""
        return on_ablate(text, chosen, how, presenter) if chosen else ("", hidden(clear=True))

    ctx.listen(on_view, inputs=[ctx.text, ctx.presenter], outputs=[summary, categories, explain, contributions, pooled],
               api_name="classifier")
    ctx.listen(on_new_text, inputs=[ctx.text, heads, method, ctx.presenter], outputs=[ablation, guesses],
               api_name="classifier_ablation_follows", api_visibility="private")
    ctx.on([knock.click], on_ablate, inputs=[ctx.text, heads, method, ctx.presenter], outputs=[ablation, guesses],
           api_name="classifier_ablate", public=True)
    ctx.on([find.click], on_find, inputs=[ctx.text, method, ctx.presenter], outputs=[heads, ablation, guesses],
           api_name="classifier_find_head", public=True)
