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
from ui.page.messages import InputError, clean_text
from ui.page.outputs import UNCHANGED, Change
from ui.page.tabspec import TabSpec
from ui.runtime import tile_click
from ui.tabs.routes import ROUTES_EXPLANATION, THRESHOLD, quoted, routes_numbers, routes_view
from viz import describe
from viz import patching as viz
from viz.heatmap import attention_heatmap
from viz.panels import note_figure

TAB = TabSpec(id="patching", label="Causal tracing", figure="#patching-residual")
TAB_ID = TAB.id
# lm: "Monday, Tuesday," predicts " T", "Friday, Saturday," predicts " S" (tests/app/handlers/test_patching_app.py)
CLEAN, CORRUPTED = "Monday, Tuesday,", "Friday, Saturday,"
MAX_TOKEN_CHARS = 100
# the tab's inputs a link (and a lesson's step) sets: ?clean=...&corrupted=...&target=...&contrast=...
CLEAN_PROMPT = Linked("clean", default=CLEAN, low=0, high=MAX_CHARS)
CORRUPTED_PROMPT = Linked("corrupted", default=CORRUPTED, low=0, high=MAX_CHARS)
TARGET, CONTRAST = (Linked(name, default="", low=0, high=MAX_TOKEN_CHARS) for name in ("target", "contrast"))
SITE_TITLES = {"residual": "Patching the residual stream after each layer",
               "attention": "Patching the attention's output", "mlp": "Patching the feed-forward's output",
               "heads": "Patching one head's output at the answer position"}
# the order the exact grids stream in: where the answer is restored, then which heads carry it (cheaper: one
# position), then the two sublayers
STREAMED = ("residual", "heads", "attention", "mlp")
PROGRESS_S = 0.3  # the exact grids are redrawn at most this often while they stream in

EXPLANATION = """
**Which activations carry the answer?** Attention weights say where a head looks, not what made the answer.
*Causal tracing* (Meng et al. 2022) asks it directly. Run a **clean** prompt and a **corrupted** one that
differs in a word, each with its answer: the *target* (by default the clean prompt's top next token) and the
*contrast* (the corrupted prompt's). Then run the corrupted prompt again with **one** activation copied in from
the clean run, and measure the logit difference target − contrast: **0** is the corrupted run, **1** the clean
run. A cell near 1 holds what the model needs to give the clean answer. The **preview** estimates every cell at
once from one backward pass (gradient × the change, *attribution patching*); the **exact** grid runs one
patched forward pass per cell, and the agreement between the two is stated as a correlation.
"""



def _prompt(text, which: str, limit: int) -> str:
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError(f"The {which} prompt is empty: type two prompts that differ in a word, such as "
                         f"“{CLEAN}” and “{CORRUPTED}”.")
    return clean_text(text, limit)


def _token(text, what: str) -> str | None:
    """A typed target or contrast token ("" or None: the default); spaces are kept (" Paris" is one token)."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise InputError(f"The {what} must be text (one token, e.g. ' Paris'), not {type(text).__name__}.")
    if len(text) > MAX_TOKEN_CHARS or not text.isprintable():
        raise InputError(f"The {what} must be one token: at most {MAX_TOKEN_CHARS} printable characters.")
    return text


def job_of(registry: ModelRegistry, clean, corrupted, name, target, contrast) -> dict:
    """The request checked: model, both prompts cleaned, the tokens as typed."""
    loaded = registry.get(name)
    limit = registry.max_chars(name)
    return dict(model=name, clean=_prompt(clean, "clean", limit), corrupted=_prompt(corrupted, "corrupted", limit),
                target=_token(target, "target"), contrast=_token(contrast, "contrast"), arch=loaded.arch)


def _key(job: dict, what: str) -> tuple:
    return (what, job["model"], job["clean"], job["corrupted"], job["target"] or "", job["contrast"] or "")


def tracing(registry: ModelRegistry, job: dict) -> patching.Tracing:
    """The pair, both runs' numbers and the preview (cached by the request)."""
    loaded = registry.get(job["model"])

    def make():
        try:
            pair = patching.prepare(loaded, job["clean"], job["corrupted"], job["target"], job["contrast"])
            runs = patching.record(loaded, pair)
        except PatchingError as e:
            raise InputError(str(e)) from None
        return patching.Tracing(pair, runs.clean_diff, runs.corrupted_diff, runs.clean_probs, runs.corrupted_probs,
                                patching.preview(loaded, pair, runs))

    return registry.cached(_key(job, "patching"), make)


def exact_rows(registry: ModelRegistry, job: dict, found: patching.Tracing, sites=STREAMED):
    """(site, layer, row) for every site and layer, as experiments.patching.exact_rows computes them."""
    loaded = registry.get(job["model"])
    runs = patching.record(loaded, found.pair)
    for site in sites:
        for layer, row in patching.exact_rows(loaded, found.pair, site, runs):
            yield site, layer, row


def exact_grid(registry: ModelRegistry, job: dict, found: patching.Tracing, site: str) -> np.ndarray:
    """One site's exact grid (cached by the request and the site): what /patch returns."""
    return registry.cached(_key(job, f"patching-{site}"),
                           lambda: np.stack([row for _, _, row in exact_rows(registry, job, found, (site,))]))


def cached_grids(registry: ModelRegistry, job: dict) -> dict:
    """site -> the exact grids already computed for this request, or {} unless every site's is."""
    grids = {site: registry.cache.peek(_key(job, f"patching-{site}")) for site in patching.SITES}
    return grids if all(grid is not None for grid in grids.values()) else {}


def _minus(value: float) -> str:
    """"− 1.70" or "+ 1.70": subtracting a negative number, written as people write it."""
    return f"− {value:.2f}" if value >= 0 else f"+ {-value:.2f}"


def pair_summary(found: patching.Tracing) -> str:
    """The two runs and the measure, in numbers."""
    pair = found.pair
    t, c = quoted(pair.target_label), quoted(pair.contrast_label)
    changed = [i + 1 for i in pair.changed]
    where = ", ".join(str(i) for i in changed) if changed else "no position"
    return (f"**Clean run:** p({t}) = {found.clean_probs[0]:.3f}, p({c}) = {found.clean_probs[1]:.3f}. "
            f"**Corrupted run:** p({t}) = {found.corrupted_probs[0]:.3f}, p({c}) = {found.corrupted_probs[1]:.3f}. "
            f"The logit difference {t} − {c} is {found.clean_diff:.2f} on the clean run and "
            f"{found.corrupted_diff:.2f} on the corrupted run; each cell shows "
            f"(d {_minus(found.corrupted_diff)}) / ({found.clean_diff:.2f} {_minus(found.corrupted_diff)}). "
            f"The prompts differ at position{'s' if len(changed) != 1 else ''} {where} (marked *), both "
            f"{len(pair.clean_ids)} tokens; the answer is read at position {pair.position + 1}.")


def exact_summary(found: patching.Tracing, exact: dict) -> str:
    """Where each exact grid restores the most, how far the preview agrees, and the strongest heads."""
    pair = found.pair
    lines = []
    for site in patching.GRID_SITES:
        (layer, position, value), = numbers.strongest(exact[site], 1)
        r = numbers.agreement(found.preview[site], exact[site])
        lines.append(f"- **{SITE_TITLES[site]}** restores the most at layer {layer + 1}, "
                     f"{quoted(pair.clean_tokens[position])} (position {position + 1}): {value:.2f}. "
                     f"Preview against exact: r = {r:.2f}.")
    restored = [(i, numbers.restoring_layers(exact["residual"], i)) for i in pair.changed]
    said = [f"{quoted(pair.clean_tokens[i])} (position {i + 1}) at layer{'s' if len(ls) > 1 else ''} "
            f"{numbers.layer_runs(ls)}" for i, ls in restored if ls]
    if said:
        lines[0] += (f" At the changed tokens, patching the residual stream restores at least {numbers.RESTORES:g} "
                     f"of the answer: {'; '.join(said)}.")
    heads = numbers.strongest(exact["heads"], 3)
    r = numbers.agreement(found.preview["heads"], exact["heads"])
    listed = ", ".join(f"{head_name(l, h)} {v:.2f}" for l, h, v in heads)
    lines.append(f"- **Heads** (each head's output at position {pair.position + 1}): the most restoring are "
                 f"{listed}. Preview against exact: r = {r:.2f}.")
    return pair_summary(found) + "\n\n" + "\n".join(lines)


def figures(found: patching.Tracing, exact: dict, presenter) -> list:
    """The four comparison figures: residual, attention, mlp (layers × positions) and heads (layers × heads)."""
    font = figure_font(presenter)
    pair = found.pair
    columns = viz.column_labels(pair.clean_tokens, pair.corrupted_tokens)
    layers, heads = found.preview["heads"].shape
    out = []
    for site in patching.SITES:
        names, axis = ((columns, "position (clean token; * = changed)") if site != "heads"
                       else ([f"H{h + 1}" for h in range(heads)], "head"))
        grid = exact.get(site)
        best = numbers.strongest(grid if grid is not None and np.isfinite(grid).all() else found.preview[site], 1)[0]
        clickable = (tile_click.cell_tiles([head_name(l, h) for l in range(layers) for h in range(heads)],
                                           heads) if site == "heads" else None)
        out.append(viz.comparison_figure(found.preview[site], grid, names, SITE_TITLES[site], axis, font_size=font,
                                         mark=best[:2], meta=clickable,
                                         alt=describe.patching_alt(SITE_TITLES[site], found.preview[site], grid,
                                                                   names)))
    return out


def strongest_head(found: patching.Tracing, exact: dict) -> str:
    layer, head, _ = numbers.strongest(exact.get("heads", found.preview["heads"]), 1)[0]
    return head_name(layer, head)


def head_view(registry: ModelRegistry, name, clean, chosen, presenter):
    """The chosen head's attention on the clean prompt."""
    text = _prompt(clean, "clean", registry.max_chars(name))
    try:
        layer, head = parse_head_name(chosen)
    except ValueError:
        raise InputError(f"Pick a head such as L1 H1, not {chosen!r}.") from None
    att = registry.attention(name, text)
    if not (0 <= layer < att.n_layers and 0 <= head < att.n_heads):
        raise InputError(f"{name} has no head {chosen}: it has {att.n_layers} layers of {att.n_heads} heads.")
    return attention_heatmap(att.probs[layer, head], att.queries, att.keys, title=f"{chosen} on the clean prompt",
                             mask=att.mask, font_size=figure_font(presenter))


def on_click(registry: ModelRegistry, value, name, clean, presenter):
    """(the dropdown's pick, the head's attention) for a cell clicked in the heads map ("L3 H1 #4")."""
    chosen = tile_click.tile_name(value)
    if not chosen:
        return UNCHANGED, UNCHANGED
    return chosen, head_view(registry, name, clean, chosen, presenter)


def view(registry: ModelRegistry, clean, corrupted, name, target, contrast, presenter=False, position=0,
         threshold=THRESHOLD):
    """(summary, residual, attention, mlp, heads, head choice, head attention, routes text, routes, job): the
    preview at once; the exact grids where already computed, else a job for exact_stream."""
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
    grids = figures(found, exact or {}, presenter)
    layers, heads = found.preview["heads"].shape
    choices = [head_name(l, h) for l in range(layers) for h in range(heads)]
    chosen = strongest_head(found, exact or {})
    summary = exact_summary(found, exact) if exact else (
        pair_summary(found) + "\n\n*Preview shown; computing the exact grids…*")
    route_text, route_figure = routes_view(registry, name, job["clean"], position, threshold, presenter)
    ticket = UNCHANGED if exact else json.dumps({**job, "nonce": uuid.uuid4().hex})
    return (summary, *grids, Change(choices=choices, value=chosen),
            head_view(registry, name, job["clean"], chosen, presenter), route_text, route_figure, ticket)


class Latest:
    """The newest exact-grid job of each visitor (the last `most` visitors): an older stream of theirs stops."""

    def __init__(self, most: int = 4096):
        self._jobs: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._most = most

    def start(self, visitor: str, job: str) -> None:
        with self._lock:
            self._jobs[visitor] = job
            self._jobs.move_to_end(visitor)
            while len(self._jobs) > self._most:
                self._jobs.popitem(last=False)

    def is_latest(self, visitor: str, job: str) -> bool:
        with self._lock:
            return self._jobs.get(visitor) == job


def exact_stream(registry: ModelRegistry, ticket, presenter, wanted=lambda: True):
    """Yields (summary, residual, attention, mlp, heads, head choice) as the exact grids come in, a layer at a
    time; the last yield has every grid and the agreements. wanted(): False once the visitor has asked for
    another pair, and the stream stops (a real model's four grids take a minute on two cores)."""
    if not ticket:
        return
    try:
        job = json.loads(ticket)
    except (TypeError, ValueError):
        raise InputError("This causal tracing request is damaged: press Trace again.") from None
    job.pop("nonce", None)
    found = tracing(registry, job)
    layers = found.preview["heads"].shape[0]
    partial = {site: np.full_like(found.preview[site], np.nan) for site in patching.SITES}
    shown_at = time.monotonic()
    for step, (site, layer, row) in enumerate(exact_rows(registry, job, found)):
        if not wanted():
            return
        partial[site][layer] = row
        if layer == layers - 1:
            registry.cache.put(_key(job, f"patching-{site}"), partial[site])
        if time.monotonic() - shown_at >= PROGRESS_S:
            shown_at = time.monotonic()
            done = step + 1
            yield (pair_summary(found) + f"\n\n*Computing the exact grids: {done} of {layers * len(patching.SITES)} "
                   f"layers done ({SITE_TITLES[site].lower()}, layer {layer + 1} of {layers})…*",
                   *figures(found, partial, presenter), UNCHANGED)
    exact = partial
    yield exact_summary(found, exact), *figures(found, exact, presenter), Change(value=strongest_head(found, exact))


def patch_numbers(registry: ModelRegistry, clean, corrupted, model, target, contrast, site) -> dict:
    """/patch: one site's exact grid and preview as numbers."""
    if site not in patching.SITES:
        raise InputError(f"site must be one of {', '.join(patching.SITES)}, not {site!r}.")
    try:
        patching.check_model(registry.get(model))
    except PatchingError as e:
        raise InputError(str(e)) from None
    job = job_of(registry, clean, corrupted, model, target, contrast)
    found = tracing(registry, job)
    exact = {site: exact_grid(registry, job, found, site)}
    pair = found.pair
    return {"clean_tokens": pair.clean_tokens, "corrupted_tokens": pair.corrupted_tokens,
            "position": pair.position + 1, "target": pair.target_label, "contrast": pair.contrast_label,
            "clean_logit_diff": found.clean_diff, "corrupted_logit_diff": found.corrupted_diff, "site": site,
            "rows": "layers", "columns": "heads" if site == "heads" else "positions",
            "exact": exact[site].astype(float).round(4).tolist(),
            "preview": found.preview[site].astype(float).round(4).tolist(),
            "agreement": round(numbers.agreement(found.preview[site], exact[site]), 4)}


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

    def on_exact(request: gr.Request, value, presenter):
        visitor = getattr(request, "session_hash", None) or uuid.uuid4().hex
        latest.start(visitor, value)
        yield from exact_stream(registry, value, presenter, lambda: latest.is_latest(visitor, value))

    # a newer pair of the same visitor stops the older stream (Latest); two streams at once for the whole server
    ctx.on([ticket.change], on_exact, inputs=[ticket, ctx.presenter],
           outputs=[summary, residual, attention, mlp, heads, head], trigger_mode="multiple", show_progress="minimal",
           concurrency_limit=2, concurrency_id="causal-tracing")
    ctx.on([head.input], lambda name, text, chosen, presenter: head_view(registry, name, text, chosen, presenter),
           inputs=[ctx.model, clean, head, ctx.presenter], outputs=[head_plot], trigger_mode="always_last")
    # a click on a cell of the heads map is the same pick, typed by the page script into a hidden box
    ctx.on([clicked.change], lambda value, name, text, presenter: on_click(registry, value, name, text, presenter),
           inputs=[clicked, ctx.model, clean, ctx.presenter], outputs=[head, head_plot], trigger_mode="always_last")
    ctx.on([threshold.input, position.submit],
           lambda name, text, at, level, presenter: routes_view(registry, name, text, at, level, presenter),
           inputs=[ctx.model, clean, position, threshold, ctx.presenter], outputs=[route_text, route_plot],
           trigger_mode="always_last")
