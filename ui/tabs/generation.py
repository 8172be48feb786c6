"""Tab "Generation": the model writes one token at a time, each new query reading the key/value cache
(/generate_steps). A step slider and Play show, for step t, the token written, the new query's attention row,
and the cache growing by the same number of bytes per token; both costs (with and without the cache) are
measured live. What a visitor generates lives in their session (gr.State), bounded in bytes."""
from __future__ import annotations

import gradio as gr
import numpy as np

from analysis import generation as costs_of
from analysis import sampling
from experiments import generation
from ui.page import components
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from model.registry import ModelRegistry
from ui.page.links import Linked
from ui.page.messages import InputError, check_index, clean_text, shown
from ui.page.outputs import Change, UNCHANGED
from ui.page.tabspec import TabSpec
from viz import generation as viz_generation
from viz.labels import markdown_label
from viz.figure import no_taller
from viz.panels import note_figure

TAB = TabSpec(id="generation", label="Generation", figure="#generation-row")
TAB_ID = TAB.id
MAX_TOKENS = generation.MAX_NEW_TOKENS  # new tokens one generation writes, at most
DEFAULT_TOKENS = 32
PROMPT_TOKENS = 64  # the prompt is cut to this many tokens: rows stay short enough to draw and keep
SESSION_BYTES = 8 << 20  # what one visitor's generation may hold in their session (its attention rows, float32)
MODES = ("greedy", "sample")
# the tab's settings a link (and a lesson's step) sets
TOKENS = Linked("generation_tokens", default=DEFAULT_TOKENS, low=1, high=MAX_TOKENS)
MODE = Linked("generation_mode", default="greedy", low=0, high=10, choices=MODES)
TEMPERATURE = Linked("generation_temperature", default=1.0, low=0.0, high=sampling.MAX_TEMPERATURE)
TOP_K = Linked("generation_top_k", default=0, low=0, high=sampling.MAX_TOP_K)
TOP_P = Linked("generation_top_p", default=1.0, low=sampling.MIN_TOP_P, high=1.0)
SEED = Linked("generation_seed", default=0, low=0, high=sampling.MAX_SEED)
PLAY_SECONDS = 0.8  # Play's pace: one step per tick of the page's timer
EXPLANATION = """
**A language model writes one token at a time.** Each step adds one *query*: the newest token's, in every layer
and head. It attends over the *keys* and *values* of every token before it (and itself), which never change once
computed, so the model keeps them in the **key/value cache** instead of recomputing them: writing a token then
costs one position, not the whole text again. The cache is why serving long texts takes memory, why
*grouped-query attention* shares one key/value head among several query heads (a smaller cache), and why a
*sliding window* (Mistral) bounds it: positions that fall out of the window are dropped.
Press **Generate**, then **Play** (or drag the step slider).
"""


def _refuse(e: ValueError, temperature, top_k, top_p):
    return InputError(f"Generation: {e} (got T = {shown(temperature)}, top-k = {shown(top_k)}, "
                      f"top-p = {shown(top_p)}).")


def sizes(loaded) -> costs_of.Sizes:
    """The numbers that fix the model's cost per token, from its config and its first attention layer."""
    config, attention = loaded.config, loaded.model.stack.blocks[0].self_attention
    return costs_of.Sizes(config.n_layers, config.d_model, attention.heads, attention.kv_heads, attention.d,
                          config.d_ff, config.feed_forward == "swiglu", config.vocab_size,
                          next(loaded.model.parameters()).element_size(), config.sliding_window)


def run(registry: ModelRegistry, text, name, tokens=DEFAULT_TOKENS, temperature=0.0, top_k=0, top_p=1.0, seed=0,
        timed: bool = False) -> dict:
    """One generation as plain data (what the session keeps): the prompt, every step, the sizes and, with
    timed=True, the costs measured. Bad input is an InputError naming what to change."""
    loaded = registry.get(name)
    if not generation.can_generate(loaded):
        raise InputError(f"{name} writes no text token by token (it {'fills in blanks' if loaded.arch == 'encoder' and loaded.has_lm_head else 'is not a causal language model with a word-prediction head'}); "
                         "generation needs lm, or a GPT-2 or Llama-family model.")
    text = clean_text(text, registry.max_chars(name))
    tokens = components.whole(tokens, 1, MAX_TOKENS, "number of tokens")
    try:
        temperature, top_k, top_p = sampling.check(temperature, top_k, top_p)
    except ValueError as e:
        raise _refuse(e, temperature, top_k, top_p) from None
    seed = components.whole(seed, 0, sampling.MAX_SEED, "seed")
    encoded = loaded.encode(text)
    room = min(PROMPT_TOKENS, loaded.config.max_len - 1)
    ids = encoded.ids[:room]
    cut = encoded.truncated or len(encoded.ids) > room
    s = sizes(loaded)
    # the rows kept: step t's is (layers, heads, prompt + t) float32; fewer tokens where they would not fit
    per_key = s.n_layers * s.n_heads * 4
    fits = next((n for n in range(tokens, 0, -1) if per_key * (n * len(ids) + n * (n - 1) // 2) <= SESSION_BYTES), 1)
    # every token asked is written: past an end-of-text token the model starts a new text, its cache still growing
    written = generation.generate_steps(loaded, ids, min(tokens, fits),
                                        sampling.chooser(temperature, top_k, top_p, seed), stop_at_end=False)
    result = dict(model=name, end_id=loaded.end_id, context=loaded.config.max_len, prompt_ids=written.prompt_ids, prompt_tokens=written.prompt_tokens, cut=cut,
                  asked=tokens, fits=fits, finished=written.finished, sizes=s, temperature=temperature,
                  top_k=top_k, top_p=top_p, seed=seed,
                  steps=[dict(token=st.token, id=st.id, probability=st.probability, drawn=st.drawn,
                              cache_bytes=st.cache_bytes, kept_from=st.kept_from) for st in written.steps],
                  attention=[st.attention for st in written.steps])
    if timed:
        lengths = costs_of.recompute_lengths(len(ids), len(written.steps))
        full = written.ids
        recompute = {n: generation.recompute_seconds(loaded, full[:n]) for n in lengths}
        result["costs"] = costs_of.costs(s, len(ids), [st.seconds for st in written.steps], recompute)
    return result


def endpoint_json(result: dict) -> dict:
    """/generate_steps' answer: exactly the prompt and the steps, attention nested [layer][head][key position]."""
    return {"prompt_tokens": list(result["prompt_tokens"]), "prompt_ids": [int(i) for i in result["prompt_ids"]],
            "steps": [{"token": st["token"], "id": int(st["id"]), "probability": round(float(st["probability"]), 6),
                       "attention": np.round(rows.astype(np.float64), 6).tolist(), "cache_bytes": int(st["cache_bytes"])}
                      for st, rows in zip(result["steps"], result["attention"])]}


def generate_steps(registry: ModelRegistry, text, model, tokens=DEFAULT_TOKENS, temperature=0.0, top_k=0, top_p=1.0,
                   seed=0) -> dict:
    return endpoint_json(run(registry, text, model, tokens, temperature, top_k, top_p, seed))


# ---- the tab: what step t shows ---------------------------------------------------------------------------
def _step_tokens(result: dict, i: int) -> list[str]:
    """The text the query of step i (from 0) reads: the prompt and the tokens written before it."""
    return list(result["prompt_tokens"]) + [st["token"] for st in result["steps"][:i]]


def _step_index(result: dict, step) -> int:
    return check_index(step, len(result["steps"]), "step")


def step_summary(result: dict, i: int, layer: int, head: int, quiz: bool = False) -> str:
    """What step i (from 0) did, in numbers taken from the session's generation (the figures draw the same)."""
    s, st = result["sizes"], result["steps"][i]
    tokens = _step_tokens(result, i)
    seen, kept_from = len(tokens), st["kept_from"]
    kept = seen - kept_from
    per_token = costs_of.bytes_per_token(s)
    query = markdown_label(tokens[-1])
    lines = [f"**Step {i + 1} of {len(result['steps'])}.** The newest query is **{query}** (position {seen}); "
             + ("it read the whole prompt in one pass, filling the cache" if i == 0 else
                f"it read the {kept} keys and values kept in each layer's cache")
             + ("." if quiz else f", and the model wrote **{markdown_label(st['token'])}** with probability "
                f"{st['probability']:.3f}" + (f" (drawn with probability {st['drawn']:.3f} after the settings)"
                                              if result["temperature"] > 0 else "") + ".")]
    before = result["steps"][i - 1]["cache_bytes"] if i else 0
    lines.append(f"The cache now holds {kept} positions × {per_token:,} bytes = **{st['cache_bytes']:,} bytes** "
                 + (f"(+{st['cache_bytes'] - before:,} since the step before)." if i else
                    f"(+{st['cache_bytes']:,}: the prompt's positions, all at once)."))
    if kept_from:
        lines.append(f"The sliding window keeps the last {s.window} positions: positions 1 to {kept_from} have "
                     "fallen out (grey) and can never be read again.")
    row = result["attention"][i][layer, head]
    if quiz:
        lines.append(f"**Quiz.** Which earlier token will head L{layer + 1} H{head + 1} look at most? Vote, then "
                     "press Reveal.")
    else:
        top = costs_of.top_key(row)
        lines.append(f"Head L{layer + 1} H{head + 1} puts most weight, {row[top]:.2f}, on "
                     f"**{markdown_label(tokens[top])}** (position {top + 1}).")
    return "\n\n".join(lines)


def step_view(result, step, layer, head, presenter=False, quiz=False):
    """(step text, the chosen head's row, every head of the layer, the cache) for step `step` (from 1)."""
    font = figure_font(presenter)
    if not result:
        note = note_figure("Press Generate (or Play) to write tokens.", font_size=font)
        return "Press **Generate** or **Play**: the model writes the tokens, then each step is shown here.", note, note, note
    s = result["sizes"]
    i = _step_index(result, step)
    layer, head = check_index(layer, s.n_layers, "layer"), check_index(head, s.n_heads, "head")
    tokens = _step_tokens(result, i)
    st, groups = result["steps"][i], s.n_heads // s.kv_heads
    rows = result["attention"][i][layer]  # (heads, n)
    where = f"step {i + 1}, layer {layer + 1}"
    if quiz:
        row = note_figure(f"Quiz: head L{layer + 1} H{head + 1}'s row is hidden until you press Reveal.", font_size=font)
    else:
        row = no_taller(viz_generation.row_figure(
            rows[head], tokens, st["kept_from"], font_size=font,
            title=f"Head L{layer + 1} H{head + 1}: the new query's weights ({where})"), screen_height(presenter))
    strip = viz_generation.strip_figure(rows, tokens, groups, st["kept_from"], font_size=font, hidden=quiz,
                                        title=f"Every head of layer {layer + 1} ({where})")
    total = len(result["prompt_ids"]) + max(len(result["steps"]) - 1, 0)
    cache = viz_generation.cache_figure(
        s.n_layers, s.kv_heads, groups, total, len(tokens), st["kept_from"], len(tokens) if i == 0 else 1,
        st["cache_bytes"], costs_of.bytes_per_token(s), font_size=font,
        title=f"The key/value cache after step {i + 1}: {st['cache_bytes']:,} bytes "
              f"({st['cache_bytes'] // s.n_layers:,} per layer)")
    return step_summary(result, i, layer, head, quiz), row, strip, cache


def memory_text(name: str, s: costs_of.Sizes) -> str:
    per_token, mha = costs_of.bytes_per_token(s), costs_of.bytes_per_token(costs_of.without_grouping(s))
    said = (f"**Memory.** Each token adds 2 (a key and a value) × {s.n_layers} layers × {s.kv_heads} key/value heads "
            f"× {s.d_head} head size × {s.bytes_per_number} bytes = **{per_token:,} bytes** to {name}'s cache. ")
    if s.kv_heads < s.n_heads:
        groups = s.n_heads // s.kv_heads
        said += (f"Its {s.n_heads} query heads share {s.kv_heads} key/value heads (grouped-query attention: query "
                 f"heads 1–{groups} read key/value head 1, and so on). Without it, with {s.n_heads} key/value heads, "
                 f"each token would add 2 × {s.n_layers} × {s.n_heads} × {s.d_head} × {s.bytes_per_number} = "
                 f"{mha:,} bytes ({s.n_heads // s.kv_heads}× as much).")
    else:
        said += (f"{name} has a key/value head for each of its {s.n_heads} query heads (no grouped-query attention), "
                 f"so {mha:,} bytes is also its size without grouping.")
    if s.window:
        said += f" Its sliding window keeps at most {s.window} positions: at most {s.window * per_token:,} bytes."
    return said


def costs_text(result: dict) -> str:
    c: costs_of.Costs = result["costs"]
    n = len(result["steps"])
    steps = f"steps 2 to {n}" if n > 1 else "step 1"
    return (f"**Cost per token, measured live on this machine** ({result['model']}, mean over {steps}): with the "
            f"cache **{c.cached_ms:.2f} ms**; recomputing the whole text **{c.recompute_ms:.2f} ms** "
            f"({c.speedup:.1f}× as long). Arithmetic: {c.cached_flops:,.0f} floating-point operations with the "
            f"cache against {c.recompute_flops:,.0f} recomputing ({c.flops_ratio:.1f}× as many). Both record every "
            "head's attention, as this view needs. In a small model the times differ less than the arithmetic: each "
            "step also pays a fixed cost per layer (launching each operation), however little it computes.\n\n" + memory_text(result["model"], result["sizes"]))


def notes_text(result: dict) -> str:
    said = []
    if result["cut"]:
        said.append(f"The text was cut to its first {len(result['prompt_ids'])} tokens (generation reads at most "
                    f"{PROMPT_TOKENS}, within the model's context).")
    if result["fits"] < result["asked"]:
        said.append(f"Only {result['fits']} tokens fit a session's memory for this model.")
    elif len(result["steps"]) < result["asked"]:
        said.append(f"Only {len(result['steps'])} tokens fit the model's context of {result['context']} tokens "
                    "after the text.")
    ends = [i + 1 for i, st in enumerate(result["steps"]) if st["id"] == result["end_id"]]
    if ends:
        said.append(f"The model wrote its end-of-text token at step {ends[0]}; it goes on, starting a new text "
                    "(a server would stop there).")
    return " ".join(said)


def settings_key(text, model, tokens, mode, temperature, top_k, top_p, seed) -> tuple:
    """What a generation was made from: Play makes a new one when any of it changed."""
    return (model, text, tokens, mode) + ((temperature, top_k, top_p, seed) if mode == "sample" else ())


def fitted(result: dict | None, layer, head) -> tuple:
    """The shared layer and head sliders' numbers within the generation's model (the sliders follow the picker,
    the session's generation may be another model's until it is made again)."""
    if not result or not all(components.is_number(v) for v in (layer, head)):
        return layer, head
    s = result["sizes"]
    return min(max(int(layer), 1), s.n_layers), min(max(int(head), 1), s.n_heads)


def build(ctx: Context) -> None:
    registry = ctx.registry
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])
        with gr.Row(equal_height=True, elem_classes=[PRESENTER_SECOND]):  # presenter mode: under the row
            tokens_box = components.Setting(1, MAX_TOKENS, value=DEFAULT_TOKENS, step=1, label="tokens to write",
                                 elem_id="generation-tokens", min_width=160)
            mode = components.Radio(list(MODES), value="greedy", label="choosing each token",
                                    elem_id="generation-mode", min_width=160)
            run_button = gr.Button("Generate", variant="primary", elem_id="generation-run", scale=0, min_width=110)
            play = gr.Button("▶ Play", elem_id="generation-play", scale=0, min_width=90)
            pause = gr.Button("❚❚ Pause", elem_id="generation-pause", scale=0, min_width=90)
        with gr.Accordion("Sampling settings (as the Every head tab's sampling panel)", open=False,
                          elem_id="generation-sampling") as sampling_panel:
            with gr.Row():
                temperature = components.Setting(0, sampling.MAX_TEMPERATURE, value=1.0, step=0.05, label="temperature T",
                                      elem_id="generation-temperature", min_width=120)
                top_k = components.Setting(0, sampling.MAX_TOP_K, value=0, step=1, label="top-k (0: off)",
                                elem_id="generation-top-k", min_width=120)
                top_p = components.Setting(sampling.MIN_TOP_P, 1.0, value=1.0, step=0.01, label="top-p (1: off)",
                                elem_id="generation-top-p", min_width=120)
                seed = components.Number(value=0, precision=0, label="seed", elem_id="generation-seed", min_width=80)
        step = components.Slider(1, DEFAULT_TOKENS, value=1, step=1, label="step", elem_id="generation-step-slider")
        ctx.link(TOKENS, tokens_box)
        ctx.link(MODE, mode)
        for setting, box in ((TEMPERATURE, temperature), (TOP_K, top_k), (TOP_P, top_p), (SEED, seed)):
            ctx.link(setting, box, opens=sampling_panel)
        notes = gr.Markdown(elem_id="generation-notes")
        with gr.Row(equal_height=True):
            summary = gr.Markdown(elem_id="generation-step")
            reveal = ctx.reveal_button("generation-reveal")
        row = components.Plot(show_label=False, label="the new query's attention row", elem_id="generation-row",
                              elem_classes=[PRESENTER_FIRST])
        strip = components.Plot(show_label=False, label="every head of the layer", elem_id="generation-strip")
        cache = components.Plot(show_label=False, label="the key/value cache", elem_id="generation-cache")
        costs = gr.Markdown(elem_id="generation-costs")
        state = gr.State(None)  # this visitor's generation (run's dict), at most SESSION_BYTES of rows
        timer = gr.Timer(PLAY_SECONDS, active=False)  # Play: the page ticks, each tick one short request

        def api_generate_steps(text: str, model: str, tokens: int = DEFAULT_TOKENS, temperature: float = 0.0,
                               top_k: int = 0, top_p: float = 1.0, seed: int = 0) -> dict:
            """The model writes up to 64 tokens after `text`, one step at a time with a key/value cache: greedy at
            temperature 0, else sampled (top_k 0 and top_p 1 are off; seed fixes the draws). Returns the prompt's
            tokens and ids, and per step the token, its id, the model's probability for it, the new query's
            attention [layer][head][key position] and the cache's bytes after the step."""
            return generate_steps(registry, text, model, tokens, temperature, top_k, top_p, seed)

        ctx.api(api_generate_steps, api_name="generate_steps")  # inside the tab: a gr.Tabs may hold only tabs

    settings = [ctx.text, ctx.model, tokens_box, mode, temperature, top_k, top_p, seed]
    shown_now = [ctx.layer, ctx.head, ctx.presenter, ctx.quiz]
    views = [summary, row, strip, cache]

    def make(text, model, tokens, how, t, k, p, s):
        if how not in MODES:
            raise InputError(f"Choose how each token is chosen: {' or '.join(MODES)}.")
        result = run(registry, text, model, tokens, t if how == "sample" else 0.0, k, p, s, timed=True)
        result["key"] = settings_key(text, model, tokens, how, t, k, p, s)
        return result

    def drawn(result, at, layer, head, presenter, quiz):
        layer, head = fitted(result, layer, head)
        return (Change(maximum=max(len(result["steps"]), 1), value=at), notes_text(result), costs_text(result),
                *step_view(result, at, layer, head, presenter, quiz))

    def current(result, at, text, model, tokens, how, t, k, p, s):
        """The session's generation if it was made from these settings (and the step shown), else a new one."""
        if result and result.get("key") == settings_key(text, model, tokens, how, t, k, p, s):
            return result, at if components.is_number(at) and 1 <= at <= len(result["steps"]) else 1
        return make(text, model, tokens, how, t, k, p, s), 1

    def on_view(result, at, text, model, tokens, how, t, k, p, s, layer, head, presenter=False, quiz=False):
        result, at = current(result, at, text, model, tokens, how, t, k, p, s)
        return (result, *drawn(result, int(at), layer, head, presenter, quiz))

    def on_generate(text, model, tokens, how, t, k, p, s, layer, head, presenter, quiz):
        result = make(text, model, tokens, how, t, k, p, s)  # made again: the costs measured again
        return (result, *drawn(result, 1, layer, head, presenter, quiz))

    def on_play(result, at, text, model, tokens, how, t, k, p, s, layer, head, presenter, quiz):
        result, at = current(result, at, text, model, tokens, how, t, k, p, s)
        if at >= len(result["steps"]):
            at = 1  # at the end: play again from the start
        return (result, *drawn(result, int(at), layer, head, presenter, quiz), Change(active=len(result["steps"]) > 1))

    def on_tick(result, at, layer, head, presenter, quiz):
        if not result or not components.is_number(at) or at >= len(result["steps"]):
            return (UNCHANGED,) * 5 + (Change(active=False),)
        at = int(at) + 1
        layer, head = fitted(result, layer, head)
        return (Change(value=at), *step_view(result, at, layer, head, presenter, quiz),
                Change(active=at < len(result["steps"])))

    def on_step(result, at, layer, head, presenter, quiz=False):
        layer, head = fitted(result, layer, head)
        return step_view(result, at, layer, head, presenter, quiz)

    outputs = [state, step, notes, costs, *views]
    # the tab draws with the shared controls (a new sentence or model, opening the tab), reusing the session's
    # generation while its settings stand; private: /generate_steps is the API's way to generation
    # another layer, head, presenter mode or quiz mode redraws through the page's dispatcher (one request a click,
    # only while this tab is open), like every view
    ctx.listen(on_view, inputs=[state, step] + settings + shown_now, outputs=outputs, api_name="generation_view",
               api_visibility="private", triggers=ctx.head_triggers + [ctx.quiz.input])
    ctx.on([run_button.click], on_generate, inputs=settings + shown_now, outputs=outputs)
    ctx.on([play.click], on_play, inputs=[state, step] + settings + shown_now, outputs=outputs + [timer])
    ctx.on([pause.click], lambda: Change(active=False), inputs=[], outputs=[timer])
    ctx.on([timer.tick], on_tick, inputs=[state, step] + shown_now, outputs=[step, *views, timer])
    ctx.on([step.input], on_step, inputs=[state, step] + shown_now, outputs=views)
    ctx.on([reveal.click], on_step, inputs=[state, step, ctx.layer, ctx.head, ctx.presenter], outputs=views)
