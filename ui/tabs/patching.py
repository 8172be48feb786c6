"""Tab "Causal tracing": patch a corrupted prompt with one activation of a clean one and see how much of the
clean answer comes back (experiments/patching.py), and the routes information takes to one prediction (experiments/routes.py).

The view draws the preview (attribution patching, one backward pass) at once and hands a job to a hidden box;
its change streams the exact grids, a layer at a time, beside the preview (exact_stream). /patch and
/flow_routes give the numbers to API callers."""
from __future__ import annotations

import json
import threading
import time
import uuid
from collections import OrderedDict

import gradio as gr
import numpy as np

from analysis import patching as numbers
from analysis.heads import head_name, parse_head_name
from experiments import patching
from experiments.patching import PatchingError
from ui.page import components
from ui.page.context import PRESENTER_FIRST, Context, figure_font
from model.registry import MAX_CHARS, ModelRegistry
from ui.page.links import Linked
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED, Change
from ui.page.tabspec import TabSpec
from ui.runtime import tile_click
from ui.tabs.patching_jobs import (CLEAN, CORRUPTED, MAX_TOKEN_CHARS, cache_key, checked_prompt, cached_grids, exact_rows,
                                  job_of, patch_numbers, tracing)
from ui.tabs.patching_summary import SITE_TITLES, estimating, exact_summary, strongest_head
from ui.tabs.routes import ROUTES_EXPLANATION, THRESHOLD, routes_numbers, routes_view
from viz import describe
from viz import patching as viz
from viz.heatmap import attention_heatmap
from viz.panels import note_figure

TAB = TabSpec(id="patching", label="Causal tracing", figure="#patching-residual")
TAB_ID = TAB.id
# the tab's inputs a link (and a lesson's step) sets: ?clean=...&corrupted=...&target=...&contrast=...
CLEAN_PROMPT = Linked("clean", default=CLEAN, low=0, high=MAX_CHARS)
CORRUPTED_PROMPT = Linked("corrupted", default=CORRUPTED, low=0, high=MAX_CHARS)
TARGET, CONTRAST = (Linked(name, default="", low=0, high=MAX_TOKEN_CHARS) for name in ("target", "contrast"))
PROGRESS_S = 0.3  # the exact grids are redrawn at most this often while they stream in
# a click on a cell of the heads map brings the head's attention, drawn below the map, into view
SCROLL_TO_HEAD_JS = """(...values) => {
    const el = document.getElementById('patching-head-attention');
    if (el && String(values[0] || '').trim()) el.scrollIntoView({behavior: 'smooth', block: 'start'});
    return values; }"""
# and again, at once, when the head's figures are in: while they were computing the page below the map could be too
# short to scroll the head's attention to the top, and a redraw may cut a smooth scroll short (a loaded machine did)
HEAD_IN_VIEW_JS = """(value) => {
    const el = document.getElementById('patching-head-attention');
    if (!el || !String(value || '').trim()) return;
    const top = el.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight / 2) el.scrollIntoView({block: 'start'}); }"""

EXPLANATION = """
**Which activations carry the answer?** Attention weights say where a head looks, not what made the answer.
*Causal tracing* (Meng et al. 2022) asks it directly. Run a **clean** prompt and a **corrupted** one that
differs in a word, each with its answer: the *target* (by default the clean prompt's top next token) and the
*contrast* (the corrupted prompt's). Then run the corrupted prompt again with **one** activation copied in from
the clean run, and measure the logit difference target − contrast: **0** is the corrupted run, **1** the clean
run. A cell near 1 holds what the model needs to give the clean answer. The **preview** estimates every cell at
once from one backward pass (gradient × the change, *attribution patching*): an estimate. The **exact** grid
runs one patched forward pass per cell; once it is in, each preview cell it shows wrong is marked × and the
summary says where.
"""


def figures(found: patching.Tracing, exact: dict, presenter, head: str | None = None) -> list:
    """The four comparison figures: residual, attention, mlp (layers × positions) and heads (layers × heads).
    The heads map outlines `head` (None: the strongest, as strongest_head chooses it); each preview marks the
    cells its exact grid, where computed, shows wrong."""
    font = figure_font(presenter)
    pair = found.pair
    columns = viz.column_labels(pair.clean_tokens, pair.corrupted_tokens)
    layers, heads = found.preview["heads"].shape
    out = []
    for site in patching.SITES:
        names, axis = ((columns, "position (clean token; * = changed)") if site != "heads"
                       else ([f"H{h + 1}" for h in range(heads)], "head"))
        grid = exact.get(site)
        done = grid is not None and np.isfinite(grid).all()
        if site == "heads":
            best = parse_head_name(head or strongest_head(found, exact if done else {}))
        else:
            best = numbers.strongest(grid if done else found.preview[site], 1)[0][:2]
        clickable = (tile_click.cell_tiles([head_name(l, h) for l in range(layers) for h in range(heads)],
                                           heads) if site == "heads" else None)
        wrong = None if grid is None else np.logical_or(*numbers.wrong_cells(found.preview[site], grid))
        out.append(viz.comparison_figure(found.preview[site], grid, names, SITE_TITLES[site], axis, font_size=font,
                                         mark=best, meta=clickable, wrong=wrong,
                                         alt=describe.patching_alt(SITE_TITLES[site], found.preview[site], grid,
                                                                   names, wrong)))
    return out


def head_view(registry: ModelRegistry, name, clean, chosen, presenter):
    """The chosen head's attention on the clean prompt."""
    text = checked_prompt(clean, "clean", registry.max_chars(name))
    try:
        layer, head = parse_head_name(chosen)
    except ValueError:
        raise InputError(f"Pick a head such as L1 H1, not {chosen!r}.") from None
    att = registry.attention(name, text)
    if not (0 <= layer < att.n_layers and 0 <= head < att.n_heads):
        raise InputError(f"{name} has no head {chosen}: it has {att.n_layers} layers of {att.n_heads} heads.")
    return attention_heatmap(att.probs[layer, head], att.queries, att.keys, title=f"{chosen} on the clean prompt",
                             mask=att.mask, font_size=figure_font(presenter))


def heads_map(registry: ModelRegistry, job: dict, presenter, head: str):
    """The heads map redrawn with `head` outlined, from what is already computed for the request (UNCHANGED
    where its preview is not: a pick never starts a trace)."""
    found = registry.cache.peek(cache_key(job, "patching"))
    if found is None:
        return UNCHANGED
    grid = registry.cache.peek(cache_key(job, "patching-heads"))
    return figures(found, {} if grid is None else {"heads": grid}, presenter, head)[3]


def pick(registry: ModelRegistry, chosen, clean, corrupted, name, target, contrast, presenter):
    """(the picker's head, its attention, the heads map with its cell outlined) for a head picked or clicked."""
    figure = head_view(registry, name, clean, chosen, presenter)
    job = job_of(registry, clean, corrupted, name, target, contrast)
    return chosen, figure, heads_map(registry, job, presenter, chosen)


def on_click(registry: ModelRegistry, value, clean, corrupted, name, target, contrast, presenter):
    """pick() for a cell clicked in the heads map ("L3 H1 #4"); an empty box changes nothing."""
    chosen = tile_click.tile_name(value)
    return pick(registry, chosen, clean, corrupted, name, target, contrast, presenter) if chosen else (UNCHANGED,) * 3


def view(registry: ModelRegistry, clean, corrupted, name, target, contrast, presenter=False, position=0,
         threshold=THRESHOLD):
    """(summary, residual, attention, mlp, heads, head choice, head attention, routes text, routes, job): the
    preview at once; the exact grids where already computed, else a job for exact_stream. The head picker, the
    heads map's outlined cell and the head's attention name one head."""
    font = figure_font(presenter)
    try:
        patching.check_model(registry.get(name))
    except PatchingError as e:
        note = note_figure(str(e), font_size=font)
        return (f"**No causal tracing for {name}.** {e}", note, note, note, note, UNCHANGED, note,
                f"**No routes for {name}.**", note, UNCHANGED)
    job = job_of(registry, clean, corrupted, name, target, contrast)
    found = tracing(registry, job)
    exact = cached_grids(registry, job)
    chosen = strongest_head(found, exact)
    grids = figures(found, exact, presenter, chosen)
    layers, heads = found.preview["heads"].shape
    choices = [head_name(l, h) for l in range(layers) for h in range(heads)]
    summary = exact_summary(found, exact) if exact else estimating(found)
    route_text, route_figure = routes_view(registry, name, job["clean"], position, threshold, presenter)
    ticket = UNCHANGED if exact else json.dumps({**job, "nonce": uuid.uuid4().hex})
    return (summary, *grids, Change(choices=choices, value=chosen),
            head_view(registry, name, job["clean"], chosen, presenter), route_text, route_figure, ticket)


class Latest:
    """The newest exact-grid job of each visitor (the last `most` visitors): an older stream of theirs stops.
    It also keeps the head the visitor picked since their job started, which the stream then outlines and keeps."""

    def __init__(self, most: int = 4096):
        self._jobs: OrderedDict = OrderedDict()  # visitor -> [job, picked head or None]
        self._lock = threading.Lock()
        self._most = most

    def start(self, visitor: str, job: str) -> None:
        with self._lock:
            self._jobs[visitor] = [job, None]
            self._jobs.move_to_end(visitor)
            while len(self._jobs) > self._most:
                self._jobs.popitem(last=False)

    def is_latest(self, visitor: str, job: str) -> bool:
        with self._lock:
            return (self._jobs.get(visitor) or [None])[0] == job

    def pick(self, visitor: str, head: str) -> None:
        with self._lock:
            if visitor in self._jobs:
                self._jobs[visitor][1] = head

    def picked(self, visitor: str) -> str | None:
        with self._lock:
            return (self._jobs.get(visitor) or [None, None])[1]


def exact_stream(registry: ModelRegistry, ticket, presenter, wanted=lambda: True, picked=lambda: None):
    """Yields (summary, residual, attention, mlp, heads, head choice, head attention) as the exact grids come in, a
    layer at a time; the last yield has every grid and the agreements. wanted(): False once the visitor has asked
    for another pair, and the stream stops (a real model's four grids take a minute on two cores). picked(): the
    head the visitor opened since the stream began, or None; the heads map outlines it, and at the end the exact
    grid's strongest head replaces the preview's only where the visitor opened none (the summary says which)."""
    if not ticket:
        return
    try:
        job = json.loads(ticket)
    except (TypeError, ValueError):
        raise InputError("This causal tracing request is damaged: press Trace again.") from None
    job.pop("nonce", None)
    found = tracing(registry, job)
    first = strongest_head(found, {})  # the head view() opened
    layers = found.preview["heads"].shape[0]
    partial = {site: np.full_like(found.preview[site], np.nan) for site in patching.SITES}
    shown_at = time.monotonic()
    for step, (site, layer, row) in enumerate(exact_rows(registry, job, found)):
        if not wanted():
            return
        partial[site][layer] = row
        if layer == layers - 1:
            registry.cache.put(cache_key(job, f"patching-{site}"), partial[site])
        if time.monotonic() - shown_at >= PROGRESS_S:
            shown_at = time.monotonic()
            progress = (f"Computing the exact grids: {step + 1} of {layers * len(patching.SITES)} layers done "
                        f"({SITE_TITLES[site].lower()}, layer {layer + 1} of {layers})…")
            yield (estimating(found, progress), *figures(found, partial, presenter, picked() or first), UNCHANGED,
                   UNCHANGED)
    exact, opened = partial, picked()
    shown = opened or strongest_head(found, exact)
    head = (UNCHANGED, UNCHANGED) if opened or shown == first else (
        Change(value=shown), head_view(registry, job["model"], job["clean"], shown, presenter))
    yield exact_summary(found, exact, shown), *figures(found, exact, presenter, shown), *head


def build(ctx: Context) -> None:
    registry = ctx.registry
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])
        with gr.Row():
            clean = components.Textbox(value=CLEAN, label="clean prompt", elem_id="patching-clean", scale=2)
            corrupted = components.Textbox(value=CORRUPTED, label="corrupted prompt", elem_id="patching-corrupted",
                                           scale=2)
        with gr.Row(equal_height=True):
            target = components.Textbox(value="", label="target token (empty: the clean prompt's top next token)",
                                        elem_id="patching-target", scale=2)
            contrast = components.Textbox(value="", label="contrast token (empty: the corrupted prompt's)",
                                          elem_id="patching-contrast", scale=2)
            run = gr.Button("Trace", variant="primary", elem_id="patching-run", scale=1)
        for setting, box in zip((CLEAN_PROMPT, CORRUPTED_PROMPT, TARGET, CONTRAST), (clean, corrupted, target, contrast)):
            ctx.link(setting, box)
        summary = gr.Markdown(elem_id="patching-summary")
        residual = components.Plot(show_label=False, label="residual stream", elem_id="patching-residual",
                                   elem_classes=[PRESENTER_FIRST])
        attention = components.Plot(show_label=False, label="attention output", elem_id="patching-attention")
        mlp = components.Plot(show_label=False, label="feed-forward output", elem_id="patching-mlp")
        heads = components.Plot(show_label=False, label="heads", elem_id="patching-heads")
        head = gr.Dropdown(choices=[], label="see a head's attention (the strongest is chosen first; or click a "
                           "cell of the heads map)", elem_id="patching-head")
        clicked = tile_click.clicked_tiles(tile_click.HEADS_MAP_BOX_ID, "Head clicked in the heads map")
        head_plot = components.Plot(show_label=False, label="the head's attention", elem_id="patching-head-attention")
        gr.Markdown(ROUTES_EXPLANATION, elem_classes=["tab-intro"])
        with gr.Row():
            position = components.Number(value=0, precision=0, minimum=0, label="position (0: the last token)",
                                         elem_id="patching-position", scale=1)
            threshold = components.Slider(0.01, 0.5, value=THRESHOLD, step=0.01, label="edge threshold",
                                          elem_id="patching-threshold", scale=3)
        route_text = gr.Markdown(elem_id="patching-routes-summary")
        route_plot = components.Plot(show_label=False, label="information-flow routes", elem_id="patching-routes")
        ticket = gr.Textbox(visible=False, elem_id="patching-job")

        def patch(clean: str, corrupted: str, model: str = "lm", target: str = "", contrast: str = "",
                  site: str = "residual") -> dict:
            """Causal tracing as numbers: one site's exact grid (layers × positions; heads: layers × heads) and
            its preview, the tokens and the measure. site: residual, attention, mlp or heads."""
            return patch_numbers(registry, clean, corrupted, model, target, contrast, site)

        def flow_routes(text: str, model: str = "lm", position: int = 0, threshold: float = THRESHOLD) -> dict:
            """Information-flow routes into one position (1-based; 0: the last token) as nodes and edges."""
            return routes_numbers(registry, text, model, position, threshold)

        ctx.api(patch, api_name="patch")
        ctx.api(flow_routes, api_name="flow_routes")

    def on_view(clean, corrupted, model, target, contrast, presenter=False, position=0, threshold=THRESHOLD):
        return view(registry, clean, corrupted, model, target, contrast, presenter, position, threshold)

    inputs = [clean, corrupted, ctx.model, target, contrast, ctx.presenter, position, threshold]
    outputs = [summary, residual, attention, mlp, heads, head, head_plot, route_text, route_plot, ticket]
    ctx.listen(on_view, inputs=inputs, outputs=outputs, api_name="causal_tracing",
               triggers=[ctx.presenter.input, run.click, clean.submit, corrupted.submit,
                         target.submit, contrast.submit])
    latest = Latest()

    def visitor(request: gr.Request) -> str:
        return getattr(request, "session_hash", None) or uuid.uuid4().hex

    def on_exact(request: gr.Request, value, presenter):
        who = visitor(request)
        latest.start(who, value)
        yield from exact_stream(registry, value, presenter, lambda: latest.is_latest(who, value),
                                lambda: latest.picked(who))

    # a newer pair of the same visitor stops the older stream (Latest); two streams at once for the whole server
    ctx.on([ticket.change], on_exact, inputs=[ticket, ctx.presenter],
           outputs=[summary, residual, attention, mlp, heads, head, head_plot], trigger_mode="multiple",
           show_progress="minimal", concurrency_limit=2, concurrency_id="causal-tracing")

    def on_pick(request: gr.Request, chosen, *values):  # the head's attention and the heads map outlining it
        latest.pick(visitor(request), chosen)
        return pick(registry, chosen, *values)[1:]

    def on_tile(request: gr.Request, value, *values):  # on_click, the head kept as the visitor's pick
        chosen = tile_click.tile_name(value)
        return (chosen, *on_pick(request, chosen, *values)) if chosen else on_click(registry, value, *values)

    pair_inputs = [clean, corrupted, ctx.model, target, contrast, ctx.presenter]
    ctx.on([head.input], on_pick, inputs=[head, *pair_inputs], outputs=[head_plot, heads], trigger_mode="always_last")
    # a click on a cell of the heads map is the same pick, typed by the page script into a hidden box; the page
    # brings the head's attention into view
    tile = ctx.on([clicked.change], on_tile, inputs=[clicked, *pair_inputs], outputs=[head, head_plot, heads],
                  trigger_mode="always_last", js=SCROLL_TO_HEAD_JS)
    ctx.on(tile, None, inputs=[clicked], js=HEAD_IN_VIEW_JS)
    ctx.on([threshold.input, position.submit],
           lambda name, text, at, level, presenter: routes_view(registry, name, text, at, level, presenter),
           inputs=[ctx.model, clean, position, threshold, ctx.presenter], outputs=[route_text, route_plot],
           trigger_mode="always_last")
