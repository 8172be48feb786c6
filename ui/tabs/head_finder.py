"""The Head finder tab: every head of the chosen model measured over a corpus (headfinder/), on one scatter by any two
scores, coloured by layer; the heads ranked by one score; a head opened, on the text that shows its score, in the
one-head view of Every head. /head_finder(model, score) answers the same numbers as JSON.

Handlers are plain functions of (registry, inputs) so tests can call them without a server.
"""
from __future__ import annotations

import gradio as gr

from analysis.heads import parse_head_name
from headfinder.store import SCORE_NAMES, SCORES, Scores, check_score, finder_for
from model.registry import ModelRegistry
from ui.page import components
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED, Change
from ui.page.tabspec import TabSpec
from ui.runtime import tile_click
from viz import head_finder as figures

TAB = TabSpec(id="head_finder", label="Head finder", figure="#finder-scatter", query="&model=smollm2")
RANKED = 10  # the ranking's rows: "the ten strongest induction heads"
POLL_SECONDS = 2  # while a brought model is measured, the page asks how far it is this often
HEIGHT = {False: 500, True: 440}
CHOICES = [(SCORE_NAMES[s], s) for s in SCORES]
VIEW_TAB = "attention"  # a head opens in Every head's one-head view

INTRO = ("On one sentence a head's label is a guess. Here every head is measured over a corpus: the share of its "
         "attention on the **previous** token, on the **first** token (a sink) and on **itself**, how many bits its "
         "attention spreads over (**entropy**) and how far back it looks on average (**mean distance**), each "
         "averaged over the corpus's texts; **induction** is measured as Olsson et al. do, on random words said twice "
         "(the share on the word that followed the current word last time). Pick two scores for the axes and one to "
         "rank by; click (or tap) a point, or pick a head below, to open it on the text that shows its score best "
         "(for induction, the random words said twice) in Every head's one-head view.")


def ranking(scores: Scores, score: str, limit: int = RANKED) -> dict[str, list]:
    """The `limit` strongest heads by `score` as table columns: rank, head, the mean and its spread over the corpus."""
    ranked = scores.ranked(score)[:limit]
    heads = [scores.head(name) for name in ranked]
    return {"rank": list(range(1, len(ranked) + 1)), "head": ranked,
            SCORE_NAMES[score]: [h[score] for h in heads],
            "± spread (sd over texts)": [h["spread"].get(score) for h in heads]}


def about(scores: Scores, model: str, scores_shown: tuple[str, ...]) -> str:
    """What the numbers are measured on, and which scores this model's heads lack and why."""
    corpus, repeated = scores.corpus, scores.data.get("repeated")
    said = (f"**{model}**: {len(scores.heads)} heads measured over **{corpus['name']}** ({corpus['texts']} texts, "
            f"{corpus['tokens']:,} tokens)")
    if repeated:
        said += f"; induction over {repeated['sequences']} sequences of {repeated['words']} random words said twice"
    said += "."
    missing = {}
    for kind, reasons in scores.data["not_applicable"].items():
        for score, why in reasons.items():
            if score in scores_shown:
                missing.setdefault(score, (kind, why))
    for score, (kind, why) in missing.items():
        where = "" if kind == "self" else f" ({kind} heads)"
        said += f"\n\n*{SCORE_NAMES[score]}* is left out{where}: {why}."
    return said


def finder_view(registry: ModelRegistry, model, x_score, y_score, score, presenter):
    """(about, scatter, ranking, the head picker's choices, the progress timer). While a brought model is measured
    for the first time (in a worker process), the about says how far it is and the timer asks again."""
    for chosen in (x_score, y_score, score):
        check_score(chosen)
    finder = finder_for(registry)
    try:
        scores = finder.scores(model)
    except InputError:
        if finder.status(model) != "computing":
            raise
        done, total = finder.progress(model)
        note = (f"**Measuring every head of {model}** over {total - 1} texts of the corpus and random words said "
                f"twice, once: {done} of {total} steps done. The numbers are kept for the next time.")
        return note, None, components.table({"rank": [], "head": []}), Change(choices=[], value=None), \
            Change(active=True)
    heads = scores.heads
    nan = float("nan")
    values = {s: [nan if h[s] is None else h[s] for h in heads] for s in {x_score, y_score}}
    ranked = scores.ranked(score)
    font = figure_font(presenter)
    title = f"Every head of {model}: {SCORE_NAMES[x_score]} against {SCORE_NAMES[y_score]}"
    height = screen_height(presenter) or HEIGHT[False]
    fig = figures.scatter([h["head"] for h in heads], [h["layer"] for h in heads], values[x_score], values[y_score],
                          SCORE_NAMES[x_score], SCORE_NAMES[y_score], ranked,
                          title + f"<br><sub>ringed and numbered: the {figures.NAMED} strongest by {SCORE_NAMES[score]}"
                          + (f", {ranked[0]} first</sub>" if ranked else "</sub>"),
                          font_size=font, height=height)
    choices = [(f"{name} ({scores.head(name)[score]:.2f})", name) for name in ranked]
    return (about(scores, model, (x_score, y_score, score)), fig, components.table(ranking(scores, score)),
            Change(choices=choices, value=None), Change(active=False))


def open_head(registry: ModelRegistry, model, head, score):
    """A head opened in Every head's one-head view on the text that shows `score` best: (text, layer, head, kind,
    the tab to select, the open tab). head: its name ("L19 H7", or "cross L1 H2" for the dates model)."""
    check_score(score)
    scores = finder_for(registry).scores(model)
    name = tile_click.tile_name(head)
    info = scores.head(name)
    if info.get(score) is None:  # no example for a score the head lacks: the first text that shows any
        score = next(s for s in SCORES if info.get(s) is not None)
    layer, index = parse_head_name(name.split()[-2] + " " + name.split()[-1])
    kind = info.get("kind", "self")
    one_kind = len(registry.kinds(model)) == 1  # the kind picker is hidden, and holds the dates model's kinds only
    return (scores.example(name, score), layer + 1, index + 1, UNCHANGED if one_kind else kind,
            Change(selected=VIEW_TAB), VIEW_TAB)


def head_finder_api(registry: ModelRegistry):
    def head_finder(model: str, score: str) -> dict:
        """Every head of `model` measured over the corpus: {"model", "corpus": {"name", "texts", "tokens"}, "heads":
        [{"head", "layer", "index", "previous", "induction", "first", "self", "entropy_bits", "mean_distance",
        "kind", "spread"}], "ranked": head names by `score`, strongest first}. score: previous, induction, first,
        self, entropy_bits or mean_distance. A score with no meaning for a head is null (not_applicable says why)."""
        return finder_for(registry).answer(model, score)
    return head_finder


def build(ctx: Context) -> None:
    registry = ctx.registry
    with ctx.tab(TAB):
        gr.Markdown(INTRO, elem_classes=["tab-intro"])
        with gr.Row(elem_classes=[PRESENTER_SECOND]):  # presenter mode: right under the scatter
            x_score = components.Dropdown(CHOICES, value="previous", label="Across (x)", elem_id="finder-x")
            y_score = components.Dropdown(CHOICES, value="induction", label="Up (y)", elem_id="finder-y")
            score = components.Dropdown(CHOICES, value="induction", label="Rank by", elem_id="finder-score")
        status = gr.Markdown(elem_id="finder-about")
        scatter = components.Plot(show_label=False, label="Every head by two scores", elem_id="finder-scatter",
                                  elem_classes=[PRESENTER_FIRST])
        clicked = tile_click.clicked_tiles(tile_click.FINDER_BOX_ID, label="Head clicked in the head finder")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=280):
                table = gr.Dataframe(label=f"The {RANKED} strongest heads by the ranking's score", interactive=False,
                                     elem_id="finder-ranking", max_height=420)
            with gr.Column(scale=2, min_width=220):
                picker = components.ModelChoices(label="Open a head (strongest first)", choices=[], value=None,
                                                 interactive=True, elem_id="finder-open")
                gr.Markdown("A head opens in **Every head**'s one-head view, on the corpus text where its score was "
                            "highest (for induction, the random words said twice); the sentence box shows the text.")
        timer = gr.Timer(POLL_SECONDS, active=False)
        ctx.api(head_finder_api(registry), api_name="head_finder")  # inside the tab: a gr.Tabs holds only tabs

    settings = [ctx.model, x_score, y_score, score, ctx.presenter]
    outputs = [status, scatter, table, picker, timer]

    def run_view(model, x_score, y_score, score, presenter):
        return finder_view(registry, model, x_score, y_score, score, presenter)

    def ready(model, *_):  # Context.listen: answering from scores at hand is small work
        return finder_for(registry).status(model) == "ready"

    ctx.listen(run_view, inputs=settings, outputs=outputs, api_name="head_scatter",
               triggers=ctx.triggers + [x_score.input, y_score.input, score.input], quick=ready)
    ctx.on([timer.tick], run_view, inputs=settings, outputs=outputs, api_name="head_finder_progress",
           show_progress="hidden")
    opened = [ctx.text, ctx.layer, ctx.head, ctx.kind, ctx.tabs, ctx.current_tab]

    def run_open(model, head, score):
        if not head:
            return (UNCHANGED,) * 4 + (UNCHANGED, UNCHANGED)
        return open_head(registry, model, head, score)

    ctx.on([picker.input], run_open, inputs=[ctx.model, picker, score], outputs=opened, api_name="finder_open")
    ctx.on([clicked.change], run_open, inputs=[ctx.model, clicked, score], outputs=opened, api_name="finder_click")
