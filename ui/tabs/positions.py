"""Tab "Positions": sinusoidal and learned position vectors, and why attention needs them."""
from __future__ import annotations

import gradio as gr

from analysis.positions import cosine_similarity, sinusoidal_table
from analysis.rotary import SHIFTS
from experiments.order import order_demo
from experiments.rotary import rotary_demo
from model.positions import position_table
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, Context, figure_font, screen_height
from ui.page.links import Linked
from ui.page.outputs import UNCHANGED, Change
from model.registry import ModelRegistry
from ui.page.messages import InputError, check_index, clean_text, cut_notice
from viz import positions as viz_positions
from viz.figure import no_taller
from viz import rotary as viz_rotary
from viz.labels import markdown_label, token_labels

TAB = TabSpec(id="positions", label="Positions")

EXPLANATION = """
**Attention on its own ignores word order.** Each *score* q·k depends only on the two vectors involved;
the softmax then turns a row of scores into weights, so each *weight* also depends on every other key in
that row, but those are the same words whatever their order. So shuffling the words just shuffles the
rows and columns of the weights: "dog bites man" and "man bites dog" look the same. Transformers fix this by adding a *position vector* to each token embedding. The
original transformer (and our dates model) uses fixed sine and cosine waves of different wavelengths,
so every position gets a unique pattern and nearby positions look alike; GPT-style models such as our lm
learn one vector per position instead, and so do BERT models: choose minilm to see the position vectors
a real pretrained model learned. Llama, Mistral and Qwen2 add nothing: they *turn* each query and key by
its position (rotary positions, at the bottom of this tab).
"""
ROTARY_EXPLANATION = """
### Rotary positions (RoPE)
Llama, Mistral and Qwen2 add no position vector. In every layer each head splits its query and key into
pairs of dimensions (i and i + d/2) and turns pair i by the angle *position × ω_i*, fast for the first pairs,
slowly for the last. A rotation keeps a vector's length, and turning q by m·ω and k by n·ω changes the
angle between them by (m − n)·ω only: **the score depends on how far apart two tokens are, not on where
they stand.** Above, the chosen head's query of the last token and key of an earlier token, in layer 1,
computed from the tokens alone; scores are q·k before the division by √d.
"""

SHOWN_POSITIONS = 128  # rows drawn from the position tables (more if the sentence is longer)
DEFAULT_DIMS = "0, 1, 6, 20, 60"


def parse_dims(text, k: int) -> list[int]:
    """'0, 1, 6' -> [0, 1, 6], checked against the model's k dimensions; InputError otherwise. The default
    set, untouched, keeps the dimensions a small model has (a tiny test checkpoint has fewer than 61)."""
    if str(text).strip() == DEFAULT_DIMS:
        return [d for d in (int(part) for part in DEFAULT_DIMS.split(",")) if d < k] or [0]
    try:
        dims = [int(part) for part in str(text).replace(";", ",").split(",") if part.strip()]
    except ValueError:
        raise InputError(f"Dimensions must be whole numbers separated by commas, e.g. {DEFAULT_DIMS}.") from None
    if not dims or len(dims) > 12:
        raise InputError("Choose between 1 and 12 dimensions, separated by commas.")
    bad = [d for d in dims if not 0 <= d < k]
    if bad:
        raise InputError(f"This model's vectors have dimensions 0 to {k - 1}; {bad} are out of range.")
    return dims


def view(registry: ModelRegistry, text, model, dims, presenter):
    """Position tables, waves, similarities, and what each position adds to the sentence's tokens."""
    font = figure_font(presenter)
    trace = registry.trace(model, text)
    loaded = registry.get(model)
    t, k = trace.position_embeddings.shape
    n = max(min(SHOWN_POSITIONS, loaded.config.max_len), t)
    sinusoids = sinusoidal_table(n, k)
    tables = {f"sinusoidal (fixed, k={k})": sinusoids}
    kind, own = position_table(loaded, n)
    if kind != "learned" and "lm" in registry.available:  # show learned vectors beside the fixed ones
        kind, own = position_table(registry.get("lm"), n)
        owner = "lm"
    else:
        owner = model
    if kind == "learned":
        tables[f"learned ({owner}, {'pretrained' if registry.get(owner).pretrained else 'trained'})"] = own
    similarities = {name: cosine_similarity(table) for name, table in tables.items()}
    return (
        no_taller(viz_positions.tables_figure(tables, t, font_size=font), screen_height(presenter)),
        viz_positions.waves_figure(sinusoids, parse_dims(dims, k), t, font_size=font),
        viz_positions.similarity_figure(similarities, t, font_size=font),
        viz_positions.addition_figure(trace.token_embeddings, trace.position_embeddings, trace.tokens,
                                      font_size=font, normed=trace.normed_input,
                                      rotary=loaded.config.positions == "rotary"),
    )


def rotary_summary(demo, rows: list[dict]) -> str:
    """What the numbers below show, in words; every number is one of the table's."""
    same, other = rows[:-1], rows[-1]
    query, key = markdown_label(demo.query_token), markdown_label(demo.key_token)
    if demo.own:
        who = (f"**{demo.model} uses rotary positions** (θ = {demo.theta:g}{demo.scaling}): nothing is added to its embeddings "
               "(the position vector in *What the position adds* on this tab is zero); its heads turn q and k instead.")
    else:
        who = (f"**{demo.model} adds position vectors and does not rotate.** Here is what RoPE (θ = 10000, as in "
               f"Llama 2) would do to its vectors; list a Llama, Mistral or Qwen2 folder in ATTENTION_MODELS to see "
               "a model's own rotation.")
    moved = "; ".join(f"at positions {r['query position m'] + 1} and {r['key position n'] + 1} "
                      f"**{r['rotary score']:.4f}**" for r in same)
    added = ", ".join(f"{r['added sinusoids']:.4f}" for r in same)
    return (f"{who}  \nThe query of *{query}* (position {demo.query_pos + 1}, turned by m = {demo.query_pos} steps: "
            f"the rotation counts from 0) and the key of *{key}* (position {demo.key_pos + 1}, n = {demo.key_pos}), "
            f"layer 1, head {demo.head + 1}, score {moved}: the same, because both turn by the same "
            f"extra angle and only the offset m − n = {demo.offset} counts. With the key one position nearer "
            f"(offset {other['offset m − n']}) the score is **{other['rotary score']:.4f}**.  \n"
            f"**Adding sinusoids instead** (to q and k, for the comparison) gives {added} for the same three places: "
            "(q + p_m)·(k + p_n) = q·k + q·p_n + p_m·k + p_m·p_n, and only the last term depends on the offset "
            f"alone. A learned vector per position follows no rule at all: nothing ties position {same[0]['key position n'] + 1} "
            f"to position {same[-1]['key position n'] + 1}.")


def rotary_view(registry: ModelRegistry, text, model, head, presenter):
    """(summary, one pair turned by position, the score slid along a text, the table of scores)."""
    font = figure_font(presenter)
    loaded = registry.get(model)
    head0 = check_index(head, loaded.config.n_heads, "head")
    text = clean_text(text, registry.max_chars(model))  # the one rule every view keeps (model.inputs.char_limit)
    try:
        demo = rotary_demo(loaded, text, head=head0)
    except ValueError as e:  # a single token: no offset to show
        raise InputError(str(e)) from None
    rows = demo.rows(SHIFTS)
    columns = {name: [row[name] for row in rows] for name in rows[0]}
    # RoPE's m and n count from 0, as its angle m·θ does; beside them the positions a student reads, from 1
    columns = {"query m": columns.pop("query position m"),
               "query at position": [r["query position m"] + 1 for r in rows],
               "key n": columns.pop("key position n"), "key at position": [r["key position n"] + 1 for r in rows],
               **columns}
    return (cut_notice(registry, model, loaded.encode(text).truncated) + rotary_summary(demo, rows),
            viz_rotary.rotation_figure(demo, font_size=font, max_height=screen_height(presenter)),
            viz_rotary.offset_figure(demo, font_size=font), components.table(columns))


def shuffle_view(registry: ModelRegistry, text, model, head, seed, presenter):
    """First-layer weights of one head without/with positions, original and shuffled."""
    font = figure_font(presenter)
    loaded = registry.get(model)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise InputError("The shuffle seed must be a whole number.") from None
    if not 0 <= seed < 2**32:
        raise InputError("The shuffle seed must be between 0 and 4294967295.")
    head0 = check_index(head, loaded.config.n_heads, "head")
    try:
        demo = order_demo(loaded, clean_text(text, registry.max_chars(model)), seed=seed, head=head0)
    except ValueError as e:  # e.g. a single token: nothing to shuffle
        raise InputError(str(e)) from None
    plain, positioned = viz_positions.order_figures(demo, font_size=font)
    summary = (f"Shuffled order: {' · '.join(token_labels(demo.shuffled_tokens))}  \n"
               f"Without positions the shuffled weights, put back in the original order, differ from the "
               f"original by at most **{demo.plain_difference:.1e}** (rounding): the same weights, permuted. "
               f"With positions they differ by up to **{demo.positioned_difference:.2f}**.")
    return summary, plain, positioned, seed


ROTARY_PART, ROTARY_MODEL = "rotary-part", "rotary-model"
# The tab's rotary part first where the model turns its queries and keys (it adds no position vectors to show):
# its summary says so by a class, and the part moves up, above presenter mode's first figure too. The part begins
# with its turned pair, the words under it, so that on a 1280 x 720 projector the figure is on the first screen. (A
# rule moving the figure alone above the words lost to this one: Gradio copies every rule under
# ".gradio-container.gradio-container-<version> .contain", which outweighs "body.presenter" and cannot match it.)
ROTARY_FIRST = f"\n[role=tabpanel]:has(.{ROTARY_MODEL}) .{ROTARY_PART} {{ order: -4; }}\n"

SEED = Linked("seed", default=0, low=0, high=2**32 - 1)  # the shuffle's seed


def build(ctx: Context) -> None:
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        dims = components.Textbox(DEFAULT_DIMS, label="sinusoid dimensions to plot (comma-separated)", max_lines=1,
                                  elem_id="position-dims")
        tables = components.Plot(show_label=False, label="position tables",
                                 elem_classes=[PRESENTER_FIRST])  # in presenter mode above the dimensions box
        waves = components.Plot(show_label=False, label="sinusoids")
        similar = components.Plot(show_label=False, label="similarity of positions")
        added = components.Plot(show_label=False, label="token + position")
        gr.Markdown("### Shuffle the sentence\nThe first layer's chosen head, computed from the token embeddings "
                    "alone and from token embeddings plus positions (mask off, so only the vectors matter). "
                    "Columns list the same tokens as the rows, in the same order.")
        with gr.Row():
            seed = components.Number(SEED.default, label="shuffle seed", precision=0, minimum=SEED.low,
                                     maximum=SEED.high, elem_id="shuffle-seed")
            ctx.link(SEED, seed)
            shuffle = gr.Button("Shuffle again")
        summary = gr.Markdown(elem_id="shuffle-summary")
        plain = components.Plot(show_label=False, label="without positions")
        positioned = components.Plot(show_label=False, label="with positions")
        # a rotary model (smollm2) has no position table: its rotary part comes first (CSS ROTARY_FIRST), its
        # figure first of all, the words under it
        turned = components.Plot(show_label=False, label="a query/key pair turned by position",
                                 elem_classes=[ROTARY_PART])
        gr.Markdown(ROTARY_EXPLANATION, elem_classes=[ROTARY_PART])
        rotary_summary_md = gr.Markdown(elem_id="rotary-summary", elem_classes=[ROTARY_PART])
        slid = components.Plot(show_label=False, label="score against position", elem_classes=[ROTARY_PART])
        scores = gr.Dataframe(label="the same query and key at different positions", interactive=False,
                              elem_id="rotary-scores", elem_classes=[ROTARY_PART])

    def on_view(text, model, dims_text, presenter):
        return view(ctx.registry, text, model, dims_text, presenter)

    def on_shuffle(text, model, head, seed_value, presenter):
        return shuffle_view(ctx.registry, text, model, head, seed_value, presenter)

    def on_shuffle_again(text, model, head, seed_value, presenter):
        return shuffle_view(ctx.registry, text, model, head, int(seed_value or 0) + 1, presenter)

    ctx.listen(on_view, inputs=[ctx.text, ctx.model, dims, ctx.presenter], outputs=[tables, waves, similar, added],
               api_name="positions")
    # a bad entry ("abc", 9999, nothing) is one warning on the page; the four figures stay
    ctx.page_event([dims.submit], on_view, inputs=[ctx.text, ctx.model, dims, ctx.presenter],
                   outputs=[tables, waves, similar, added], api_name="positions_dims",
                   api_visibility="private")
    shuffle_inputs = [ctx.text, ctx.model, ctx.head, seed, ctx.presenter]
    shuffle_outputs = [summary, plain, positioned, seed]
    ctx.listen(on_shuffle, inputs=shuffle_inputs, outputs=shuffle_outputs, api_name="shuffle",
               triggers=ctx.triggers + [ctx.head.input, seed.submit])
    ctx.on([shuffle.click], on_shuffle_again, inputs=shuffle_inputs, outputs=shuffle_outputs,
           api_name="shuffle_again")

    def on_rotary(text, model, head, presenter):
        summary_text, *rest = rotary_view(ctx.registry, text, model, head, presenter)
        rotary = ctx.registry.get(model).config.positions == "rotary"
        return (Change(value=summary_text, elem_classes=[ROTARY_PART] + ([ROTARY_MODEL] if rotary else [])), *rest)

    ctx.listen(on_rotary, inputs=[ctx.text, ctx.model, ctx.head, ctx.presenter],
               outputs=[rotary_summary_md, turned, slid, scores], api_name="rotary",
               triggers=ctx.triggers + [ctx.head.input])

    def on_seed_typed(text, model, head, seed_value, presenter):
        if seed_value is None:  # the box is empty while a new seed is typed
            return UNCHANGED, UNCHANGED, UNCHANGED
        return shuffle_view(ctx.registry, text, model, head, seed_value, presenter)[:3]

    # arrow keys and typing change the seed without Enter: redraw then too, leaving the box alone (an
    # answer arriving late must not overwrite what is being typed)
    ctx.on([seed.input], on_seed_typed, inputs=shuffle_inputs, outputs=shuffle_outputs[:3], api_name="shuffle_seed",
           trigger_mode="always_last")
