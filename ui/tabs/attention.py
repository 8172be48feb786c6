"""The core tab: type a sentence, see every head of a trained model.

One head in detail, every head tiled in one figure, the average per layer, per-head
statistics (downloadable) and what the model predicts. Handlers are plain functions of
(registry, inputs) so tests can call them without a server.
"""
from __future__ import annotations

import gradio as gr
import numpy as np

from analysis import head_stats as stats
from analysis.overview import HostViews
from analysis.heads import head_name, kv_group, parse_head_name
from experiments.view_numbers import views as views_of
from headfinder.compare import corpus_note
from headfinder.store import finder_for
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.tabs import predictions, sampling
from ui.page.context import Context, figure_font, screen_height
from ui.page.messages import InputError, check_index, clean_text, warn
from ui.page.outputs import UNCHANGED, Change, visible
from ui.runtime import tile_click
from ui.runtime.events import quick
from model.registry import ModelRegistry, attention_of
from ui.page.labels import KIND_LABELS, head_choices
from viz import heatmap, narrow, tiles
from viz.labels import markdown_label, plain_label

TAB = TabSpec(id="attention", label="Every head", figure="#head-detail")
TAB_ID = TAB.id

# Scrolls only to a head the detail does not show yet: Gradio's dropdown also sends its event when it is
# opened and closed without a pick, and the page jumped up to the detail each time.
SCROLL_TO_DETAIL_JS = """(choice) => {
    const el = document.getElementById('head-detail'), m = /^L([0-9]+) H([0-9]+)(?: #[0-9]+)?$/.exec(choice || '');
    const title = ((el && el.querySelector('.gtitle')) || {}).textContent || '';
    const key = m ? `layer ${m[1]}, head ${m[2]}` : null, at = key ? title.toLowerCase().indexOf(key) : -1;
    const shown = at >= 0 && !/[0-9]/.test(title.charAt(at + key.length));
    if (el && !shown) el.scrollIntoView({behavior: 'smooth', block: 'start'});
    return choice; }"""


# ---- handlers: pure functions of the registry and the inputs ------------------------------------
def token_view(trace) -> list[tuple[str, str]]:
    """(token, id) pairs for gr.HighlightedText: the text exactly as the model reads it."""
    return [(token, str(int(i))) for token, i in zip(trace.tokens, trace.ids)]


def notice(registry: ModelRegistry, name: str, trace) -> str:
    """Markdown noting anything the viewer should know about this input (empty when all is normal)."""
    notes = []
    if trace.truncated:
        limit = registry.get(name).config.max_len
        notes.append(f"⚠️ The text is longer than the model's context: showing the first {limit} tokens.")
    return "\n\n".join(notes)


STATS_KEY = (
    "Averages over query tokens (in a causal model such as lm the first token is left out: it can only look at "
    "itself). *entropy_bits* is how many yes/no questions it takes to guess where a token looks: 0 for one token, "
    "log₂ n bits for n tokens equally; *spread* is the same as a share of its largest possible value, 0 for a head "
    "that looks at one token and 1 for one that looks at all equally. *mean_distance* is how many tokens away a "
    "token looks, on average (weighted by the attention). *previous*, *next*, *first* and *self* are the share of "
    "attention on the token just before, just after, on the first token and on the token itself; *special* is the "
    "share on the tokens the model adds itself ([CLS] and [SEP] in BERT, `<s>` in ours); *induction* is, for a "
    "token seen before in the sentence, the share on the token that followed it then (empty when no token repeats). "
    "Every share is from 0 to 1. A *label* is given only when it is measured: one pattern takes at least half the "
    "attention, or the spread is at least 0.8 (*broad*); else *mixed*.")


def stats_table(registry: ModelRegistry, name: str, text: str, kind: str | None) -> dict[str, list]:
    """Each head's statistics as plain columns (analysis.head_stats.head_columns; pd.DataFrame(...) for a
    frame): the table is rebuilt on every request, and a DataFrame would cost more than the statistics."""
    views = views_of(registry, name, text)
    return trace_stats(registry, name, views.trace, attention_of(views.trace, kind), views)


def trace_stats(registry: ModelRegistry, name: str, trace, att, views=None) -> dict[str, list]:
    """stats_table of a trace at hand and one of its attention kinds. views: what computes the numbers
    (experiments.view_numbers.views; by default numpy on the trace's arrays)."""
    views = HostViews(trace) if views is None else views
    if att.kind != "self":
        return stats.columns(views.numbers(att, aligned=att.kind != "cross"), att.n_layers, att.n_heads)
    added = registry.get(name).added_ids  # the special tokens the model added ([CLS], [SEP], <s>) by position
    special = [i for i, token_id in enumerate(trace.ids) if int(token_id) in added]
    special_name = "/".join(dict.fromkeys(trace.tokens[i] for i in special)) or "special"
    numbers = views.numbers(att, aligned=True, special_keys=special if special else None, ids=trace.ids)
    return stats.columns(numbers, att.n_layers, att.n_heads, special_name)


def against_corpus(registry: ModelRegistry, text, name, kind=None) -> str:
    """Where this sentence's head table disagrees with the head finder's corpus scores (headfinder.compare); empty
    while the model has none at hand (a brought model is measured from the Head finder tab, not from here)."""
    finder = finder_for(registry)
    if finder.status(name) != "ready":
        return ""
    att = attention_of(views_of(registry, name, text).trace, kind)
    return corpus_note(finder.scores(name, start=False), stats_table(registry, name, text, att.kind), kind=att.kind)


def analyze(registry: ModelRegistry, text, name, kind=None, presenter=False, layer=None, head=None):
    """Everything about the sentence that does not depend on the chosen head (which is only outlined in
    the grid when layer and head, 1-based, are given).

    Returns (notice, tokens, all-heads figure, layer-average figure, stats columns, the name of the
    head open in detail for the picker, or None). What the model predicts is `predictions` (its own endpoint,
    /predict: generating text costs more than drawing every head)."""
    # read once: every part below is of this one trace, the grid first (HostViews' one pass over every weight)
    views = views_of(registry, name, text, whole=True)
    trace, att = views.trace, attention_of(views.trace, kind)
    font = figure_font(presenter)
    selected = selected_head(att, layer, head)
    grid = heads_grid(att, font, selected, registry.get(name).config.kv_heads, views)
    average_title = f"Average over the {att.n_heads} heads of each layer"
    averages = views.averages(att)
    average = narrow.narrow_strip(tiles.layer_average_overview(averages, font_size=font, title=average_title),
                                  averages, [f"L{layer + 1} mean" for layer in range(att.n_layers)], average_title,
                                  font_size=font)
    columns = trace_stats(registry, name, trace, att, views)
    return (notice(registry, name, trace), token_view(trace), grid, average, columns,
            head_name(*selected) if selected else None)


def selected_head(att, layer, head) -> tuple[int, int] | None:
    """0-based (layer, head) of the head open in detail (None when none is given), checked against this
    attention's heads: an API call may name any model, and its sliders' range is checked here."""
    if layer is None or head is None:
        return None
    return check_index(layer, att.n_layers, "layer"), check_index(head, att.n_heads, "head")


def heads_grid(att, font: int, selected: tuple[int, int] | None, kv_heads: int = 0, views=None):
    """kv_heads: the model's key/value heads; fewer than its query heads box the groups that share them.
    views: what pools the heads (experiments.view_numbers.views; by default numpy on att's arrays)."""
    maps = (views or HostViews(None)).heads(att)
    grid = tiles.all_heads_overview(maps, att.queries, att.keys, font_size=font, selected=selected, kv_heads=kv_heads,
                                    # two lines: as one, presenter mode's larger type ran it off the figure's right edge
                                    title=f"Every head ({KIND_LABELS[att.kind]}): rows are layers, columns are heads"
                                          + "<br>click a tile to open it above" + (" (▶ the one open)" if selected else ""))
    # a phone draws one layer's heads instead (viz/narrow.py): the layer of the head open
    return narrow.narrow_grid(grid, maps, att.queries, att.keys, selected[0] if selected else 0,
                              KIND_LABELS[att.kind], font_size=font, selected=selected, kv_heads=kv_heads)


def head_view(registry: ModelRegistry, name, text, layer, head, kind=None):
    """(views, attention, 0-based layer, 0-based head) from 1-based UI numbers, checked against the model."""
    views = views_of(registry, name, text)
    att = attention_of(views.trace, kind)
    return views, att, check_index(layer, att.n_layers, "layer"), check_index(head, att.n_heads, "head")


def grid_view(registry: ModelRegistry, text, name, layer, head, kind=None, presenter=False):
    """The grid with the head open in detail outlined, and that head's name for the picker."""
    views = views_of(registry, name, text)
    att = attention_of(views.trace, kind)
    selected = selected_head(att, layer, head)
    return (heads_grid(att, figure_font(presenter), selected, registry.get(name).config.kv_heads, views),
            head_name(*selected) if selected else None)


def show_head(registry: ModelRegistry, text, name, layer, head, kind=None, presenter=False, quiz=False):
    """The detail figure of one head (layer and head are 1-based, as shown); in quiz mode without its weights."""
    views, att, layer0, head0 = head_view(registry, name, text, layer, head, kind)
    title = f"Layer {layer0 + 1}, head {head0 + 1} · {KIND_LABELS[att.kind]}"
    config = registry.get(name).config
    group = kv_group(head0, config.n_heads, config.kv_heads)
    if len(group) > 1:  # grouped-query attention: say whose keys and values these are
        title += f" · keys and values shared by H{group[0] + 1}–H{group[-1] + 1}"
    if quiz:
        title = f"Quiz · layer {layer0 + 1}, head {head0 + 1}: where does each token look?"
    return heatmap.attention_heatmap(
        views.head(att, layer0, head0), att.queries, att.keys, mask=att.mask, font_size=figure_font(presenter),
        title=title, hidden=bool(quiz), max_height=screen_height(presenter))


def quiz_choices(registry: ModelRegistry, text, name, kind=None) -> tuple[list, list, int]:
    """The quiz's pickers: (query rows, key columns) as (label, index) pairs, and the row asked first
    (the last token: in a causal model it has the most keys to choose from)."""
    att = attention_of(views_of(registry, name, text).trace, kind)
    rows = [(f"{i + 1}: {plain_label(token)}", i) for i, token in enumerate(att.queries)]  # text, not HTML
    keys = [(f"{j + 1}: {plain_label(token)}", j) for j, token in enumerate(att.keys)]
    return rows, keys, len(rows) - 1


def reveal(registry: ModelRegistry, text, name, layer, head, kind, presenter, row, guess):
    """The quiz answered: the head's weights with the asked row outlined and the class's guess marked,
    and a sentence saying where the row really looks and how the guess fared."""
    views, att, layer0, head0 = head_view(registry, name, text, layer, head, kind)
    probs = views.head(att, layer0, head0)  # (t, s)
    t, s = probs.shape
    # No row picked: the one the quiz asks first (quiz_choices). The panel shows it picked, but under load
    # Gradio 6 can restore the picker's empty state as it shows the panel (visible=False takes it out of the page;
    # visible="hidden" drew the panel twice), and the class's Reveal must still answer.
    if row is None:
        row = t - 1
    if not isinstance(row, int) or not 0 <= row < t:
        raise InputError("Pick the token that looks (a row) among the sentence's tokens.")
    if guess is not None and (not isinstance(guess, int) or not 0 <= guess < s):
        raise InputError("Pick the class's guess among the tokens it can look at.")
    weights = probs[row]
    keys = [markdown_label(token) for token in att.keys]  # escaped once (html.escape on token_labels: "&lt;s&gt;")
    best = int(np.argmax(weights))
    figure = heatmap.attention_heatmap(
        probs, att.queries, att.keys, mask=att.mask, font_size=figure_font(presenter),
        title=f"Revealed · layer {layer0 + 1}, head {head0 + 1} · {KIND_LABELS[att.kind]}", row=row, guess=guess,
        max_height=screen_height(presenter))
    answer = (f"**{markdown_label(att.queries[row])}** looks most at **{keys[best]}** "
              f"({weights[best]:.0%} of its attention).")
    if guess is not None and not att.mask[row, guess]:  # a later token, in a causal model
        answer += (f" The class guessed **{keys[guess]}**, which this token cannot see: the mask hides the tokens "
                   "after it, so it gets no attention at all.")
    elif guess is not None:
        rank = int((weights[att.mask[row]] > weights[guess]).sum()) + 1
        verdict = "Right!" if guess == best else f"It ranks {rank} of {int(att.mask[row].sum())} keys."
        answer += f" The class guessed **{keys[guess]}**: {weights[guess]:.0%}. {verdict}"
    return figure, answer


def pick_tile(choice: str) -> tuple[int, int]:
    """1-based (layer, head) from a tile name 'L1 H2' chosen beside the grid."""
    try:
        layer0, head0 = parse_head_name(choice)
    except ValueError as e:
        raise InputError(f"Choose a head like 'L1 H2' ({e}).") from None
    return layer0 + 1, head0 + 1


# ---- the tab ------------------------------------------------------------------------------------------
# the head statistics as a CSV file, from the table the browser shows (a cell with a comma, quote or
# line break is quoted, as RFC 4180 says)
CSV_JS = r"""(table, model) => {
  const cell = (v) => {
    const s = v === null || v === undefined ? "" : String(v);
    return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  };
  const lines = [table.headers, ...table.data].map((row) => row.map(cell).join(","));
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([lines.join("\n") + "\n"], {type: "text/csv"}));
  link.download = `head_stats_${String(model).replace(/[^\w.-]/g, "_")}.csv`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  return [];
}"""


def build(ctx: Context) -> None:
    registry = ctx.registry
    with ctx.tab(TAB):
        info = gr.Markdown(elem_id="attention-notice")
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                detail = components.Plot(show_label=False, label="One head: each row shows where that token looks",
                                 elem_id="head-detail")
            with gr.Column(scale=2):
                with gr.Group(visible=False, elem_id="quiz-panel") as quiz_panel:
                    gr.Markdown("**Quiz.** Pick a token (a row). Where will it look? Let the class guess a "
                                "column, then reveal the weights.")
                    quiz_row = components.ModelChoices(label="The token that looks (row)", choices=[],
                                                       elem_id="quiz-row")
                    quiz_guess = components.ModelChoices(label="The class's guess (column)", choices=[],
                                                         elem_id="quiz-guess")
                    quiz_reveal = gr.Button("Reveal", variant="primary", elem_id="quiz-reveal")
                    quiz_answer = gr.Markdown(elem_id="quiz-answer")
                # the tokens sit beside the figure, not above it: on a projector the figure starts higher
                tokens = gr.HighlightedText(label="Tokens as the model reads them (label = token id)",
                                            show_legend=False, combine_adjacent=False, elem_id="tokens")
                predicted = gr.Markdown(label="Predictions", elem_id="predictions")
                sample_view = sampling.build(ctx)  # temperature, top-k, top-p and a seeded sample (/generate)
        # quiz mode hides what would give the answer away: the quizzed head's tile, its layer's average, its row
        quiz_hidden = gr.Markdown("*Quiz mode: every head, the layer averages and the head statistics are hidden "
                                  "until you untick it, as they would give the answer away.*", visible=False,
                                  elem_id="quiz-hidden")
        with gr.Column(elem_id="overview") as overview:
            with gr.Row(equal_height=False):
                with gr.Column(scale=5):
                    grid = components.Plot(show_label=False, label="Every head at once", elem_id="all-heads")
                    clicked = tile_click.clicked_tiles()  # a click on a tile (ui/runtime/tile_click.py)
                with gr.Column(scale=1, min_width=160):
                    # its choices follow the model (and kind) alone, below: /analyze sends only the value
                    tile = components.ModelChoices(label="Open a head in detail", value=None, interactive=True,
                                                   choices=head_choices(registry, ctx.model.value, "self"), elem_id="tile-picker")
                    gr.Markdown("Click (or tap) a tile, or pick a head here, to open it in detail above (the page "
                                "scrolls up to it); its tile is outlined in orange. Point at a tile to read its query and "
                                "key tokens. Every tile uses the same 0 – 1 colour scale.")
            average = components.Plot(show_label=False, label="Average over heads, per layer", elem_id="layer-average")
            with gr.Accordion("Head statistics", open=True):
                gr.Markdown(STATS_KEY)
                table = gr.Dataframe(label="Per head", interactive=False, elem_id="head-stats", max_height=420)
                corpus = gr.Markdown(elem_id="head-corpus")  # where this sentence disagrees with the corpus
                # made in the browser from the table shown: nothing is written on the server
                download = gr.Button("Download CSV", size="sm", elem_id="stats-csv")

    def run_analyze(text, name, kind, presenter, layer, head):
        note, token_pairs, grid_fig, average_fig, columns, shown = analyze(
            registry, text, name, kind, presenter, layer, head)
        if note:
            warn(note, escaped=True)
        trace = views_of(registry, name, text).trace  # cached: the trace analyze just read
        note = "\n\n".join(part for part in (note, predictions.token_notes(trace)) if part)
        return note, token_pairs, grid_fig, average_fig, components.table(columns), shown

    def run_predict(text, name):
        return predictions.predictions(registry, name, text)

    def run_show_head(text, name, layer, head, kind, presenter, quiz=False):
        return show_head(registry, text, name, layer, head, kind, presenter, quiz)

    def run_quiz_panel(text, name, kind, quiz):
        clean_text(text)  # bad input: the one message every view gives, and nothing redrawn
        if not quiz:
            return UNCHANGED, UNCHANGED, ""
        rows, keys, first = quiz_choices(registry, text, name, kind)
        return Change(choices=rows, value=first), Change(choices=keys, value=None), ""

    def run_reveal(text, name, layer, head, kind, presenter, row, guess):
        return reveal(registry, text, name, layer, head, kind, presenter, row, guess)

    def run_grid(text, name, layer, head, kind, presenter):
        return grid_view(registry, text, name, layer, head, kind, presenter)

    def run_pick_tile(choice):
        if not choice:
            return UNCHANGED, UNCHANGED
        return pick_tile(choice)

    def small(text, name, *_):  # Context.listen: these views may compute on the event loop
        return quick(registry, name, text)

    # the detail first: a dispatcher runs a tab's views in this order, sending each when ready
    ctx.listen(run_show_head, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, ctx.presenter, ctx.quiz],
               outputs=[detail], api_name="head", triggers=ctx.head_triggers + [ctx.quiz.input],
               quick=small)
    # another head is another question: the class guesses again, and the last head's answer goes
    ctx.listen(run_quiz_panel, inputs=[ctx.text, ctx.model, ctx.kind, ctx.quiz],
               outputs=[quiz_row, quiz_guess, quiz_answer], api_name="quiz",
               triggers=ctx.head_triggers + [ctx.quiz.input])
    ctx.on([quiz_reveal.click], run_reveal, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, ctx.presenter,
                                                 quiz_row, quiz_guess], outputs=[detail, quiz_answer],
           api_name="reveal", public=True)
    # the grid outlines the head open in detail: redrawn (alone) when the head changes
    ctx.listen(run_grid, inputs=[ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, ctx.presenter],
               outputs=[grid, tile], api_name="grid", triggers=[ctx.layer.input, ctx.head.input],
               quick=small)
    ctx.listen(run_analyze, inputs=[ctx.text, ctx.model, ctx.kind, ctx.presenter, ctx.layer, ctx.head],
               outputs=[info, tokens, grid, average, table, tile], api_name="analyze",
               triggers=ctx.triggers + [ctx.kind.input], quick=small)
    ctx.listen(run_predict, inputs=[ctx.text, ctx.model], outputs=[predicted], api_name="predict")

    def run_against_corpus(text, name, kind):
        return against_corpus(registry, text, name, kind)

    ctx.listen(run_against_corpus, inputs=[ctx.text, ctx.model, ctx.kind], outputs=[corpus], api_name="head_corpus",
               triggers=ctx.triggers + [ctx.kind.input], quick=small)
    sample_view()
    ctx.on([ctx.model.change, ctx.kind.change], lambda name, kind: Change(choices=head_choices(
        registry, name, kind or "self")), inputs=[ctx.model, ctx.kind], outputs=[tile], queue=False)
    ctx.on([download.click], None, inputs=[table, ctx.model], js=CSV_JS)
    # The quiz panel is shown and hidden with the box, never in the message that sets its pickers: Gradio applies a
    # group's `visible` by re-reading each child's state a tick later, which can put back a picker's old value
    # (a new head's quiz kept the last guess on screen, its row picker empty, in a loaded test run)
    ctx.on([ctx.quiz.change], lambda on: (visible(not on), visible(on), visible(on)), inputs=[ctx.quiz],
           outputs=[overview, quiz_hidden, quiz_panel], queue=False)
    # the detail view sits above the grid: bring it into view as it redraws (setting the layer and head redraws
    # the views that follow them, as the sliders would)
    ctx.on([tile.input], run_pick_tile, inputs=[tile], outputs=[ctx.layer, ctx.head], api_name="pick_head",
           js=SCROLL_TO_DETAIL_JS)
    # a click on a tile is the same pick, typed by the page script into a hidden box
    ctx.on([clicked.change], lambda value: run_pick_tile(tile_click.tile_name(value)), inputs=[clicked],
           outputs=[ctx.layer, ctx.head], api_name="click_head", js=SCROLL_TO_DETAIL_JS)
