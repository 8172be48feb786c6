"""Tab "Positions": sinusoidal and learned position vectors, and why attention needs them."""
from __future__ import annotations

import gradio as gr

from analysis.order import order_demo
from analysis.positions import cosine_similarity, position_table, sinusoidal_table
from ui import components
from ui.context import Context, figure_font, friendly
from ui.models import InputError, ModelRegistry, check_index, clean_text
from viz import positions as viz_positions
from viz.labels import token_labels

EXPLANATION = """
**Attention on its own ignores word order.** Each *score* q·k depends only on the two vectors involved;
the softmax then turns a row of scores into weights, so each *weight* also depends on every other key in
that row, but those are the same words whatever their order. So shuffling the words just shuffles the
rows and columns of the weights: "dog bites man" and "man bites dog" look the same. Transformers fix this by adding a *position vector* to each token embedding. The
original transformer (and our dates model) uses fixed sine and cosine waves of different wavelengths,
so every position gets a unique pattern and nearby positions look alike; GPT-style models such as our lm
learn one vector per position instead, and so do BERT models: choose minilm to see the position vectors
a real pretrained model learned.
"""

SHOWN_POSITIONS = 128  # rows drawn from the position tables (more if the sentence is longer)
DEFAULT_DIMS = "0, 1, 6, 20, 60"


def parse_dims(text, k: int) -> list[int]:
    """'0, 1, 6' -> [0, 1, 6], checked against the model's k dimensions; InputError otherwise."""
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
        viz_positions.tables_figure(tables, t, font_size=font),
        viz_positions.waves_figure(sinusoids, parse_dims(dims, k), t, font_size=font),
        viz_positions.similarity_figure(similarities, t, font_size=font),
        viz_positions.addition_figure(trace.token_embeddings, trace.position_embeddings, trace.tokens,
                                      font_size=font, normed=trace.normed_input),
    )


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
        demo = order_demo(loaded, clean_text(text), seed=seed, head=head0)
    except ValueError as e:  # e.g. a single token: nothing to shuffle
        raise InputError(str(e)) from None
    plain, positioned = viz_positions.order_figures(demo, font_size=font)
    summary = (f"Shuffled order: {' · '.join(token_labels(demo.shuffled_tokens))}  \n"
               f"Without positions the shuffled weights, put back in the original order, differ from the "
               f"original by at most **{demo.plain_difference:.1e}** (rounding): the same weights, permuted. "
               f"With positions they differ by up to **{demo.positioned_difference:.2f}**.")
    return summary, plain, positioned, seed


def build(ctx: Context) -> None:
    with ctx.tab("Positions", id="positions"):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        dims = components.Textbox(DEFAULT_DIMS, label="sinusoid dimensions to plot (comma-separated)", max_lines=1,
                                  elem_id="position-dims")
        tables = gr.Plot(show_label=False, label="position tables")
        waves = gr.Plot(show_label=False, label="sinusoids")
        similar = gr.Plot(show_label=False, label="similarity of positions")
        added = gr.Plot(show_label=False, label="token + position")
        gr.Markdown("### Shuffle the sentence\nThe first layer's chosen head, computed from the token embeddings "
                    "alone and from token embeddings plus positions (mask off, so only the vectors matter). "
                    "Columns list the same tokens as the rows, in the same order.")
        with gr.Row():
            seed = components.Number(0, label="shuffle seed", precision=0, minimum=0, maximum=2**32 - 1,
                                     elem_id="shuffle-seed")
            shuffle = gr.Button("Shuffle again")
        summary = gr.Markdown(elem_id="shuffle-summary")
        plain = gr.Plot(show_label=False, label="without positions")
        positioned = gr.Plot(show_label=False, label="with positions")

    @friendly
    def on_view(text, model, dims_text, presenter):
        return view(ctx.registry, text, model, dims_text, presenter)

    @friendly
    def on_shuffle(text, model, head, seed_value, presenter):
        return shuffle_view(ctx.registry, text, model, head, seed_value, presenter)

    @friendly
    def on_shuffle_again(text, model, head, seed_value, presenter):
        return shuffle_view(ctx.registry, text, model, head, int(seed_value or 0) + 1, presenter)

    ctx.listen(on_view, inputs=[ctx.text, ctx.model, dims, ctx.presenter], outputs=[tables, waves, similar, added],
               api_name="positions")
    # a bad entry ("abc", 9999, nothing) is one warning on the page; the four figures stay
    ctx.page_event([dims.submit], on_view, inputs=[ctx.text, ctx.model, dims, ctx.presenter],
                   outputs=[tables, waves, similar, added], api_name="positions_dims")
    shuffle_inputs = [ctx.text, ctx.model, ctx.head, seed, ctx.presenter]
    shuffle_outputs = [summary, plain, positioned, seed]
    ctx.listen(on_shuffle, inputs=shuffle_inputs, outputs=shuffle_outputs, api_name="shuffle",
               triggers=ctx.triggers + [ctx.head.input, seed.submit])
    shuffle.click(on_shuffle_again, inputs=shuffle_inputs, outputs=shuffle_outputs, api_name="shuffle_again")

    @friendly
    def on_seed_typed(text, model, head, seed_value, presenter):
        if seed_value is None:  # the box is empty while a new seed is typed
            return gr.skip(), gr.skip(), gr.skip()
        return shuffle_view(ctx.registry, text, model, head, seed_value, presenter)[:3]

    # arrow keys and typing change the seed without Enter: redraw then too, leaving the box alone (an
    # answer arriving late must not overwrite what is being typed)
    seed.input(on_seed_typed, inputs=shuffle_inputs, outputs=shuffle_outputs[:3], api_name="shuffle_seed",
               api_visibility="undocumented", trigger_mode="always_last")
