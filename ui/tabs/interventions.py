"""Tab "Interventions": knock heads out and watch the output; attention beside rollout and attribution.

Handlers are pure functions of the registry and the inputs (tests call them directly); the
model work is experiments/interventions.py, the numbers analysis/attribution.py, the figures
viz/interventions.py.
"""
from __future__ import annotations

import dataclasses
import html

import gradio as gr
import numpy as np

from analysis.attribution import cross_rollout, shares
from analysis.heads import head_name
from experiments import importance as head_map, interventions
from model import tokenizer as tok
from model.switches import ABLATION_METHODS, ABLATION_WORDS, Switches
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.tabs import flow
from ui.page.controls import PRESENTER_FIRST
from ui.page.context import Context, figure_font, screen_height
from ui.page.outputs import UNCHANGED, Change
from model.registry import ModelRegistry, attention_of
from ui.page.links import Linked
from ui.page.labels import KIND_LABELS, head_choices, parse_heads
from ui.page.messages import InputError, clean_text
from viz import interventions as viz
from viz.heatmap import attention_heatmap
from viz.labels import markdown_label

TAB = TabSpec(id="interventions", label="Interventions", figure="#importance")

EXPLANATION = """
**Test a story about a head.** A heatmap suggests what a head does ("this head finds the month");
knocking it out shows whether the output needs it. (Dates: try *21 November 2026* and knock out the
month head; then *3 March 1999*, where other heads cover for it.) *Zero* removes the head's output, so it adds
nothing to the next layer; *uniform* keeps the head but spreads its weights evenly over the tokens it
may see, so it can no longer choose where to look. The same forward pass runs, with a switch on the
chosen heads; every other weight is unchanged.

The **importance map** knocks out one head at a time and measures how far the output moves: the drop in
log-probability of what the intact model predicted (for a sentence encoder without an output head,
1 − the cosine similarity of its sentence vector). A head can look striking and matter little; a plain
one can carry the answer. Pick a head under the map to see its attention. Where knocking out every head would
take many forward passes (a long text, a model with many heads), the map is an estimate from one pass, and
the summary above it says so and measures the heads the estimate ranks first.
"""
ATTRIBUTION_EXPLANATION = """
**Attention is not explanation.** Three answers to "which input tokens does this output depend on?":
the **last layer's attention** (mean over heads) from the output position; **rollout**, which follows
the mixing through every layer, counting the residual connection as half of each layer
(Abnar & Zuidema, 2020); and **gradient × input**, which asks the model itself how much the output's
score changes with each token's embedding. Each row is scaled to sum to 1; gradient × input is shown as
**absolute shares** (a token that pushes the score down counts as much as one that pushes it up, since only the
size is kept). They often disagree: later
layers read vectors that already mix many tokens, so the last layer's weights alone say little, and a
token can matter through the feed-forward layers and the residual stream without being looked at.
"""
# the heads knocked out, as a link (and a lesson's step) sets them: ?knockout=L25 H5, L24 H1
KNOCKOUT = Linked("knockout", default="", low=0, high=2000)
MONTH_ROW = 6  # the dates output character explained by default: the month's second digit (YYYY-MM-DD)
WHAT_CHANGE = {"sentence vector": "1 − cosine similarity of the sentence vector"}


def kinds_of(registry: ModelRegistry, name: str) -> dict[str, tuple[int, int]]:
    """Attention kind -> (layers, heads) for the model."""
    return {kind: registry.shape(name, kind) for kind in registry.kinds(name)}


def head_label(kind: str, layer: int, head: int, single: bool) -> str:
    return head_name(layer, head) if single else f"{kind} {head_name(layer, head)}"


def _check_method(method) -> str:
    if method not in ABLATION_METHODS:
        raise InputError(f"The method must be one of {', '.join(ABLATION_METHODS)}, not {str(method)[:20]!r}.")
    return method


def ablate(registry: ModelRegistry, text, name, heads, method="zero") -> dict:
    """The /ablate endpoint: the output before and after knocking out `heads`, and how far it moved."""
    loaded = registry.get(name)
    text = clean_text(text, registry.max_chars(name))
    chosen = parse_heads(heads, registry, name)
    switches = Switches(ablate=chosen, method=_check_method(method))
    try:
        before, after = interventions.compare(loaded, text, switches, plain_outcome(registry, name, text))
    except ValueError as e:  # e.g. no <mask> for the masked model
        raise InputError(str(e)) from None
    single = list(kinds_of(registry, name)) == ["self"]
    return {"model": name, "what": before.what, "method": method,
            "heads": [head_label(*h, single) for h in sorted(chosen)],
            "before": before.text, "after": after.text, "change": round(interventions.change(before, after), 6),
            "before_top": [[label, round(p, 6)] for label, p in before.top],
            "after_top": [[label, round(p, 6)] for label, p in after.top]}


def plain_outcome(registry: ModelRegistry, name, text) -> interventions.Outcome:
    """The model's own output for the (cleaned) text, with its continuation, kept in the registry's cache: the
    knock-outs compare with it and the explanations explain it, so the tab runs it once per text, not per view or
    per head picked (ValueError, e.g. no <mask> for the masked model, for the caller to word)."""
    return registry.cached(("outcome", name, text), lambda: interventions.outcome(registry.get(name), text))


def _summary(result: dict, month: str) -> str:
    heads = ", ".join(result["heads"]) or "none (choose heads above)"
    what = WHAT_CHANGE.get(result["what"], f"drop in log-probability of the intact {result['what']}")
    verdict = ("**The output changed.**" if result["before"] != result["after"]
               else "The output is the same" + (" (its probability may still move)." if result["heads"] else "."))
    if result["what"] == "sentence vector":  # no text to compare: say how far the vector turned
        verdict = (f"The sentence vector after is at cosine similarity **{1 - result['change']:.4f}** to the intact "
                   "one (1 = unchanged; sentence encoders compare meanings by this number).")
    if result["what"] == "ISO date" and result["heads"]:
        was, now = result["before"][5:7], result["after"][5:7]
        verdict += (f" The month digits: {was} → {now}, " + ("**the month broke**." if was != now else "unchanged."))
    return (f"Knocked out ({ABLATION_WORDS[result['method']]}): **{html.escape(heads)}**{month}  \n"
            f"{before_after(result)}\n\n{verdict} Change: **{result['change']:.3f}** ({what}).")


def before_after(result: dict) -> str:
    """The outputs before and after as a Markdown table; a causal lm's "next → continuation" in two columns."""
    if result["what"] != "next token":
        return (f"| | {result['what']} |\n|---|---|\n| before | {markdown_label(result['before'])} |\n"
                f"| after | {markdown_label(result['after'])} |")
    rows = []
    for when in ("before", "after"):
        nxt, _, more = result[when].partition(" → ")
        more = markdown_label(more.strip()) if more.strip() else \
            "(none: " + markdown_label(nxt) + " ends the text)" if nxt == "</s>" else "(none)"
        rows.append(f"| {when} | {markdown_label(nxt)} | {more} |")
    return ("| | next token | continuation (written greedily, up to 8 tokens) |\n|---|---|---|\n" + "\n".join(rows))


def knocked_out(registry: ModelRegistry, settings) -> Change:
    """The heads picker as a link (or a lesson's step) opens it: the link's model's heads, those it knocks out picked."""
    picked = [h.strip() for h in settings.knockout.split(",") if h.strip()]
    if settings.model not in registry.available:
        return Change(value=[])
    choices = head_choices(registry, settings.model)
    return Change(choices=choices, value=[h for h in picked if h in choices])


def month_head(registry: ModelRegistry) -> str | None:
    """'cross L2 H3': the cross-attention head `python -m training.evaluate dates` found looking at the month."""
    if "dates" not in registry.available:
        return None
    best = registry.history("dates").head("best_cross_head")
    return f"cross {head_name(best.layer, best.head)}" if best else None


def view(registry: ModelRegistry, text, name, heads, method, presenter):
    """Before/after, the guesses, the importance map, and the pickers' choices."""
    font = figure_font(presenter)
    choices = head_choices(registry, name)
    kept = [h for h in (heads or []) if h in choices] if isinstance(heads, list) else heads
    result = ablate(registry, text, name, kept, method)
    month = month_head(registry) if registry.arch(name) == "encoder-decoder" else None
    note = f" (the month head, as measured: {month})" if month and month in (kept or []) else ""
    # a date or a sentence vector has no list of guesses: the summary's change measures it
    guesses = Change(visible=bool(result["before_top"]), value=viz.guesses_figure(
        result["before_top"], result["after_top"], result["what"], font_size=font) if result["before_top"] else None)
    found = importance_maps(registry, text, name, method)
    maps = found.maps
    what = WHAT_CHANGE.get(result["what"], "drop in log-probability")
    importance = viz.importance_figure(maps, what, font_size=font, method=method, estimated=found.estimated,
                                       max_height=screen_height(presenter))
    top = max(((kind, *np.unravel_index(int(np.argmax(m)), m.shape)) for kind, m in maps.items()),
              key=lambda k: maps[k[0]][k[1], k[2]])
    single = list(maps) == ["self"]
    strongest = head_label(top[0], int(top[1]), int(top[2]), single)
    summary = _summary(result, note) + "  \n" + (
        estimate_note(registry, name, found, result["what"]) if found.estimated else
        f"Every head was measured, knocked out alone: for this input, knocking out **{strongest}** moves the output "
        f"most ({maps[top[0]][top[1], top[2]]:.3f}). " + CAUSAL_TRACING)
    return (summary, guesses, importance, Change(choices=choices, value=kept or [], multiselect=True),
            Change(choices=[c for c in choices if not c.endswith(" all")], value=strongest),
            Change(visible=month is not None, value=f"Knock out the month head ({month})" if month else ""))


def importance_maps(registry: ModelRegistry, text, name, method) -> head_map.HeadMap:
    """Each head's effect knocked out alone, or estimated where that would take too long (experiments/importance.py),
    kept in the registry's byte-bounded cache: it depends on the text and the method only, not on the heads picked,
    so picking other heads to knock out does not pay for it again."""
    text, method = clean_text(text, registry.max_chars(name)), _check_method(method)
    return registry.cached(("importance", name, text, method), lambda: head_map.importance(
        registry.get(name), text, kinds_of(registry, name), method, lambda: plain_outcome(registry, name, text),
        lambda: gradient_pass(registry, name, text)))


def gradient_pass(registry: ModelRegistry, name, text) -> head_map.GradientPass:
    """The (cleaned) text's forward and backward pass of the plain output's score, kept in the registry's cache: an
    estimated importance map (either method) and the explanations' gradient × input read the one pass. Where no
    detailed trace of the text is kept yet, its forward pass records the one the tab's other views read
    (registry.detailed: the picked head, the explanations, What flows, which the page computes after the map):
    the same weights, without a forward pass of their own (smollm2 at 512 tokens: ~2 s)."""
    def make():
        found = head_map.gradient_pass(registry.get(name), text, plain_outcome(registry, name, text),
                                       detail=not registry.keeps_detailed(name, text))
        if found.trace is not None:
            registry.detailed(name, text, recorded=found.trace)
        return dataclasses.replace(found, trace=None)  # the trace is kept (and its bytes counted) once, as detailed
    return registry.cached(("gradient pass", name, text), make)


ESTIMATES = {"first order": "how fast the output's score changes with the head's output (one backward pass), "
                            "times how much knocking the head out changes that output: a straight-line guess, "
                            "which can understate a head whose removal changes the model a lot",
             "through the norms": "what knocking the head out adds to the residual stream, carried up to the sentence "
                                  "vector through the layer norms alone (how the later heads and feed-forward layers "
                                  "would answer it is left out)"}
# how this map and Causal tracing's heads map differ (ui/tabs/patching.py): two questions, two rankings
CAUSAL_TRACING = ("This map asks which heads this one text's prediction needs (each head removed, the text "
                  "unchanged); Causal tracing's heads map asks which heads carry the difference between two prompts "
                  "(each head's output copied in from the other prompt's run), so a head can rank high here and "
                  "near 0 there.")


def estimate_note(registry: ModelRegistry, name, found: head_map.HeadMap, what: str) -> str:
    """What the reader is told when the map is an estimate: what was measured, what estimated and how, and the
    heads measured, by their measured change."""
    config = registry.get(name).config
    heads = sum(layers * per_layer for layers, per_layer in kinds_of(registry, name).values())
    exact = head_map.exact_tokens(config)
    where = (f"{name} has every head measured only on texts of at most {exact} token{'' if exact == 1 else 's'}"
             if exact else f"{name} never has every head measured")
    how = ESTIMATES["through the norms" if what == "sentence vector" else "first order"]
    single = list(kinds_of(registry, name)) == ["self"]
    measured = ", ".join(f"**{head_label(kind, layer, head, single)}** by **{change:.3f}**"
                         for kind, layer, head, change in found.measured)
    kind, layer, head, _ = found.checked
    return (f"**This map is estimated, not measured.** Measuring a head means running the model again with that head "
            f"knocked out; for all {heads} heads on this {found.tokens}-token text that would cost about "
            f"{head_map.forward_passes(config):.0f} runs of it ({where}). So each head's change is estimated from "
            f"one run instead: {how}. The estimate ranks **{head_label(kind, layer, head, single)}** first. Measured, "
            f"each knocked out alone, its first {len(found.measured)} heads move the output most to least: "
            f"{measured}. Knock out any other head above to measure it. " + CAUSAL_TRACING)


HEAD_PLOT_PX = {False: 320, True: 240}  # the one head's plot width in its column: normal, presenter mode


def head_view(registry: ModelRegistry, text, name, picked, presenter):
    """The attention of the head picked under the importance map."""
    if not picked:
        return UNCHANGED
    (kind, layer, head), = parse_heads(picked, registry, name)
    att = attention_of(registry.detailed(name, text), kind)  # the trace the tab's other views read
    # the head sits in the right-hand column, under its picker: its plot is what that column leaves beside the
    # query labels and the colour bar (about 240 px in presenter mode's type), not the default 560
    return attention_heatmap(att.probs[layer, head], att.queries, att.keys, mask=att.mask,
                             font_size=figure_font(presenter), max_width=HEAD_PLOT_PX[bool(presenter)],
                             title=f"{picked}: {KIND_LABELS[kind]}")


def explanations(registry: ModelRegistry, text, name, row, presenter):
    """Last-layer attention, rollout and gradient × input for the output, over the input tokens."""
    loaded = registry.get(name)
    text = clean_text(text, registry.max_chars(name))
    # the detailed trace What flows reads below (ui/tabs/flow.py): the same weights, one forward pass for both
    trace = registry.detailed(name, text)
    if loaded.arch == "encoder-decoder":
        written = trace.target_tokens[1:] + ["</s>"]
        row = min(max(int(row if row is not None else MONTH_ROW), 0), len(written) - 1)
    try:  # the output's first token (the reference's text up to " → ")
        plain = (plain_outcome(registry, name, text) if interventions.has_vocab_head(loaded)
                 or loaded.arch in ("encoder-decoder", "classifier") else None)  # a sentence vector: its own pass
        if head_map.first_order(loaded, text):  # the estimated map's pass: its gradient × input, the same numbers
            reference, grads = plain, gradient_pass(registry, name, text).attribution
        else:
            reference, grads = interventions.explained(loaded, text, row, describe=False, reference=plain)
    except ValueError as e:
        raise InputError(str(e)) from None
    if loaded.arch == "encoder-decoder":
        cross = trace.attention["cross"].probs
        attention = cross[-1].mean(0)[row]
        rolled = cross_rollout(cross, trace.attention["encoder"].probs)[row]
        about = f"the output character {markdown_label(written[row])} (number {row + 1} of the output)"
    else:
        probs = trace.attention["self"].probs
        last, rolled_all = probs[-1].mean(0), flow.attention_rollout(registry, name, text, trace.attention["self"])
        rows = _output_rows(loaded, trace)
        attention, rolled = last[rows].mean(0), rolled_all[rows].mean(0)
        about = f"the {reference.what} ({markdown_label(reference.text.split(' → ')[0])})"
    figure = viz.explanations_figure(trace.tokens, {"attention (last layer)": shares(attention),
                                                    "rollout": shares(rolled), "|gradient × input|": shares(grads)},
                                     font_size=figure_font(presenter))
    return f"Explaining {about}.", figure


def _output_rows(loaded, trace) -> list[int]:
    """The positions whose final vectors make the output: the last token (next token), the <mask>,
    [CLS] (a classifier pooled on it), or every token (mean/max pooling, a sentence vector)."""
    if loaded.arch == "decoder":
        return [len(trace.tokens) - 1]
    if loaded.arch == "encoder" and interventions.has_vocab_head(loaded):
        mask_id = loaded.special(tok.MASK)
        return [i for i, t in enumerate(trace.ids) if t == mask_id][:1] or [0]
    if getattr(loaded.config, "pooling", None) == "cls":
        return [0]
    return list(range(len(trace.tokens)))


def output_rows_choices(registry: ModelRegistry, text, name) -> tuple[list, int | None]:
    """The output characters of the dates model to explain, and the one explained first
    (([], None) for other models)."""
    if registry.arch(name) != "encoder-decoder":
        return [], None
    written = registry.trace(name, text).target_tokens[1:] + ["</s>"]
    return [(f"{i + 1}: {token}", i) for i, token in enumerate(written)], min(MONTH_ROW, len(written) - 1)



def build(ctx: Context) -> None:
    registry = ctx.registry
    default = registry.default
    choices = head_choices(registry, default) if default else []
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        heads, method = components.head_picker(choices, "ablate")
        ctx.link(KNOCKOUT, heads, shown=lambda settings: knocked_out(registry, settings))
        with gr.Row():
            knock = gr.Button("Knock out", variant="primary", elem_id="ablate-run")
            month = gr.Button("Knock out the month head", visible=False, elem_id="ablate-month")
            clear = gr.Button("Restore every head", elem_id="ablate-clear")
        summary = gr.Markdown(elem_id="ablate-summary")
        guesses = components.Plot(show_label=False, label="guesses before and after", elem_id="ablate-guesses")
        with gr.Row(equal_height=False, elem_classes=[PRESENTER_FIRST]):
            with gr.Column(scale=3):
                importance = components.Plot(show_label=False, label="head importance", elem_id="importance")
            with gr.Column(scale=2):
                picked = components.ModelChoices(choices=[], label="Open a head", elem_id="importance-pick")
                one_head = components.Plot(show_label=False, label="the picked head's attention", elem_id="importance-head")
        gr.Markdown(ATTRIBUTION_EXPLANATION)
        row = components.ModelChoices(choices=[], label="Output character to explain", visible=False,
                                      elem_id="explain-row")
        about = gr.Markdown(elem_id="explain-about")
        explained = components.Plot(show_label=False, label="attention, rollout, gradient × input", elem_id="explain")
        flow_view = flow.build(ctx)  # weight beside ‖α·W_O v‖, and the two rollouts (/value_weighted)

        def api_ablate(text: str, model: str, heads: str, method: str = "zero") -> dict:
            """Knock out heads ("L2 H3, L1 H1"; for dates "cross L2 H3", "encoder all", ...) by zeroing their
            output (method "zero") or making their weights uniform ("uniform"). Returns the output before and
            after, and "change": the drop in log-probability of the intact output (1 - cosine for minilm)."""
            return ablate(registry, text, model, heads, method)

        ctx.api(api_ablate, api_name="ablate")  # inside the tab: a gr.Tabs may hold only tabs

    def on_view(text, name, chosen, how, presenter):
        return view(registry, text, name, chosen, how, presenter)

    def on_explain(text, name, presenter):
        choices, first = output_rows_choices(registry, text, name)
        note, figure = explanations(registry, text, name, first, presenter)
        return Change(choices=choices, value=first, visible=bool(choices)), note, figure

    def on_row(text, name, chosen_row, presenter):
        return explanations(registry, text, name, chosen_row, presenter)

    def on_pick(text, name, chosen, presenter):
        return head_view(registry, text, name, chosen, presenter)

    view_inputs = [ctx.text, ctx.model, heads, method, ctx.presenter]
    view_outputs = [summary, guesses, importance, heads, picked, month]
    ctx.listen(on_view, inputs=view_inputs, outputs=view_outputs, api_name="interventions",
               triggers=ctx.triggers + [knock.click, method.input])
    ctx.listen(on_explain, inputs=[ctx.text, ctx.model, ctx.presenter], outputs=[row, about, explained],
               api_name="explanations")
    flow_view()
    ctx.page_event([row.input], on_row, inputs=[ctx.text, ctx.model, row, ctx.presenter], outputs=[about, explained],
                   api_name="explain_output")
    ctx.on([picked.change], on_pick, inputs=[ctx.text, ctx.model, picked, ctx.presenter], outputs=[one_head],
           api_name="importance_head", public=True)
    month_chosen = ctx.on([month.click], lambda: [month_head(registry)], outputs=[heads], api_name="month_head")
    ctx.on(month_chosen, on_view, inputs=view_inputs, outputs=view_outputs, api_name="knock_out_month")
    cleared = ctx.on([clear.click], lambda: [], outputs=[heads], api_name="restore_heads")
    ctx.on(cleared, on_view, inputs=view_inputs, outputs=view_outputs, api_name="restore_view")
