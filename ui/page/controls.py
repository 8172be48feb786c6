"""The controls above the tabs (sentence, model, layer, head, kind, presenter mode, examples)
and the page-level wiring: fitting the controls to the chosen model, settings from the URL,
the "link to this view" box and presenter mode."""
from __future__ import annotations

import gradio as gr
import numpy as np

from analysis import head_stats as stats
from analysis.sampling import DEFAULT_TOKENS
from ui.page import components
from ui.page.context import PRESENTER_FIRST, Context  # noqa: F401 - PRESENTER_FIRST: the tabs import it from here too
from ui.page.links import (SAMPLING_SETTINGS, ViewSettings, lesson_link, make_link, parse_query, sampling_in_link,
                      sampling_settings, whole_number)
from model.registry import KINDS_BY_ARCH, ModelRegistry
from ui.page.labels import KIND_LABELS
from ui.page.messages import MAX_CHARS, InputError, clean_text, inform, warn
from ui.tabs.steps import shown_temperature, slider_from_temperature
from ui.page.outputs import UNCHANGED, Change

# Each example shows what its model really does, measured when clicked (example_claim) and checked against the
# shipped weights by tests/app/handlers/test_examples.py (lm's previous-token head, fill-ins mlm gets right, dates it reads,
# minilm's "it" -> "animal") and tests/app/handlers/test_classifier_app.py (training.evaluate.CLASSIFIER_EXAMPLES).
EXAMPLES = [
    ("He opened the door and walked into the room", "lm"),
    ("a person who plays the piano", "lm"),
    ("Mary gave roses to Susan", "lm"),
    ("the United <mask> of America", "mlm"),
    ("a person <mask> plays the piano", "mlm"),
    ("he was unable <mask> walk", "mlm"),
    ("Saturday, 21st of November 2026", "dates"),
    ("3 March 1999", "dates"),
    ("the 12th of june, 2024", "dates"),
    ("The animal didn't cross the street because it was too tired.", "minilm"),
    ("Tokenization splits unbelievably rare words into pieces.", "minilm"),
    ("Mary gave roses to Susan because she loves her.", "minilm"),
    ("a large grey animal with a long trunk", "classifier"),
    ("a tool with a heavy head used for driving nails", "classifier"),
    ("move quickly on foot", "classifier"),
]
DEFAULT_TEXT = EXAMPLES[0][0]
# Examples that show one link between two words: clicking one opens the head that puts the most attention
# from the first word on the second, measured on the sentence when clicked (minilm: layer 4, head 2, 0.68).
LINKED_EXAMPLES = {"The animal didn't cross the street because it was too tired.": ("it", "animal")}
FILLS = {"the United <mask> of America": "States", "a person <mask> plays the piano": "who",
         "he was unable <mask> walk": "to"}  # what mlm puts first in each blank
DATES = {"Saturday, 21st of November 2026": "2026-11-21", "3 March 1999": "1999-03-03",
         "the 12th of june, 2024": "2024-06-12"}
# Presenter mode: bigger type everywhere, by overriding the theme's size variables under one class.
CSS = """
body.presenter { --text-xxs: 14px; --text-xs: 16px; --text-sm: 18px; --text-md: 22px; --text-lg: 26px;
                 --text-xl: 30px; --text-xxl: 36px; --block-label-text-size: 18px; --block-info-text-size: 18px;
                 --block-title-text-size: 20px; --section-header-text-size: 22px; }
body.presenter .prose, body.presenter textarea, body.presenter input { font-size: 22px !important; }
/* On a projector the class has the lecturer: the page's intro paragraph gives its room to the figures. */
body.presenter #intro p, body.presenter .tab-intro { display: none; }  /* each tab's intro too (ui tab modules) */
/* Fourteen tabs share one row: narrow padding (on the measuring copy Gradio keeps too, or it folds tabs
   into its "..." menu), and in presenter mode a size at which every name still fits a 1280-px screen. */
.tab-wrapper .tab-container button { padding-left: 5px !important; padding-right: 5px !important; }
body.presenter .tab-wrapper .tab-container button { font-size: 13px !important; }
#tokens .token { font-family: ui-monospace, monospace; background-color: #dbeafe !important; }
#tokens .label { background-color: #1e3a8a !important; color: white !important; }
/* The temperature slider moves log10 T; the T box beside it (#temperature-value) shows T itself. */
#temperature .tab-like-container, #temperature .min_value, #temperature .max_value { display: none !important; }
/* Presenter mode enlarges what Gradio sizes in fixed pixels too: token chips, tables, check boxes, radios. */
body.presenter #tokens .token { font-size: 22px !important; padding: 6px 10px !important; margin: 3px !important; }
body.presenter #tokens .label { font-size: 15px !important; }
body.presenter table td, body.presenter table th, body.presenter table td *, body.presenter table th * {
    font-size: 19px !important; }
body.presenter table td { padding: 10px !important; }
body.presenter [role=tabpanel] .label-text, body.presenter [role=tabpanel] fieldset label span {
    font-size: 20px !important; }  /* in the tabs: the header's check boxes keep the compact size it was laid out for */
body.presenter [role=tabpanel] input[type=checkbox], body.presenter [role=tabpanel] input[type=radio] {
    width: 22px !important; height: 22px !important; }
body.presenter input[type=range] { height: 10px !important; }
/* 1280 x 720 in presenter mode: a lower header leaves the first screen to the tab's figure */
body.presenter #intro { display: none; }  /* the page's title too: the projector shows the app already */
body.presenter #model-notes { display: none; }  /* and the note on which weights were loaded */
body.presenter #kind .wrap { gap: 4px !important; }
body.presenter #kind label { padding: 0 8px !important; font-size: 14px !important; min-height: 0 !important; }
/* the hints under sliders and boxes read on a projector: the body's colour, not the theme's pale grey */
body.presenter [data-testid=block-info], body.presenter .info, body.presenter span.info {
    color: var(--body-text-color) !important; }
/* the model picker's entries as large as the rest of the page */
body.presenter ul.options li { font-size: 20px !important; padding: 6px 10px !important; }
/* messages at the bottom right: at the top they covered the Head slider and the mode check boxes */
body.presenter .presenter-first { order: -2; }
body.presenter .presenter-second { order: -1; }  /* right under the main figure */
.toast-wrap { top: auto !important; bottom: var(--size-4, 16px) !important; }
"""
PRESENTER_JS = "(on) => { document.body.classList.toggle('presenter', !!on); return []; }"


def previous_token_head(registry: ModelRegistry, name: str) -> tuple[int, int]:
    """1-based (layer, head) the page opens on: the model's strongest previous-token head as measured by
    `python -m training.evaluate` (a pattern a class recognises at once); for a pretrained model, as measured
    on its example; else layer 1, head 1."""
    if name not in registry.available:
        return 1, 1
    best = registry.history(name).head("previous_token_head")
    layers, heads = registry.shape(name)
    if best is None:  # a pretrained model has no training history: measure it on its example
        return measured_previous_token_head(registry, name) if registry.get(name).pretrained else (1, 1)
    layer, head = best.layer + 1, best.head + 1
    return (layer, head) if 1 <= layer <= layers and 1 <= head <= heads else (1, 1)


def measured_previous_token_head(registry: ModelRegistry, name: str) -> tuple[int, int]:
    """For a model without a training history (a pretrained one): the head that puts the most attention on
    the previous token, measured on the model's first lecture example (else the page's first sentence)."""
    text = next((t for t, m in EXAMPLES if m == name), DEFAULT_TEXT)
    if registry.arch(name) == "encoder-decoder":
        return 1, 1
    try:
        frame = stats.head_stats(registry.attention(name, text, "self").probs)
    except (InputError, ValueError):
        return 1, 1
    best = frame.loc[frame["previous"].idxmax()]
    return int(best["layer"]), int(best["head_in_layer"])


def linked_head(registry: ModelRegistry, name: str, text: str) -> tuple[int, int, float, str, str] | None:
    """For a LINKED_EXAMPLES sentence: the 1-based (layer, head) that puts the most attention from its first
    word on its second, that weight, and the two tokens, measured on this model; None for other texts."""
    words = LINKED_EXAMPLES.get(text)
    if words is None or name not in registry.available or registry.arch(name) == "encoder-decoder":
        return None
    att = registry.attention(name, text, "self")
    labels = [label.lstrip("▁").lower() for label in att.queries]
    if words[0] not in labels or words[1] not in labels:
        return None
    weight = att.probs[:, :, labels.index(words[0]), labels.index(words[1])]  # (L, H)
    layer, head = (int(i) for i in np.unravel_index(weight.argmax(), weight.shape))
    return layer + 1, head + 1, float(weight[layer, head]), words[0], words[1]


def example_claim(registry: ModelRegistry, text: str, name: str, layer: int, head: int) -> str | None:
    """What clicking an example shows, measured now on the shipped weights: the share the opening head puts on
    the previous token (lm), mlm's first answer for each blank, the dates model's output. None for others."""
    if name not in registry.available:
        return None
    arch = registry.arch(name)
    if arch == "decoder":
        att = registry.attention(name, text, "self")
        share = stats.head_stats(att.probs, att.mask)
        row = share[(share["layer"] == layer) & (share["head_in_layer"] == head)]
        if row.empty:
            return None
        return (f"Measured on this sentence: layer {layer}, head {head}, {name}'s previous-token head, puts "
                f"{float(row['previous'].iloc[0]):.2f} of each token's attention on the token just before it.")
    if arch == "encoder" and registry.get(name).has_lm_head:
        answers = registry.get(name).fill(clean_text(text, registry.max_chars(name)), 1)
        if not answers:
            return None
        firsts = " and ".join(f"“{token.lstrip('▁')}” ({p:.0%})" for (token, p), *_ in answers)
        return f"Measured now: {name} fills the blank with {firsts} first (its top 5 are under Predictions)."
    if arch == "encoder-decoder":
        return f"Measured now: {name} writes {registry.get(name).translate(clean_text(text))}."
    if arch == "classifier":
        category, p = registry.get(name).classify(clean_text(text), 1)[0]
        return (f"Measured now: {name} names it {category} ({p:.0%}); the Classifier tab shows which tokens "
                "decided it.")
    return None


def default_settings(registry: ModelRegistry) -> ViewSettings:
    model = "lm" if "lm" in registry.available else (registry.default or "lm")
    text = next((t for t, m in EXAMPLES if m == model), DEFAULT_TEXT)
    kinds = registry.kinds(model) if model in registry.available else ("self",)
    layer, head = previous_token_head(registry, model)
    return ViewSettings(text=text, model=model, layer=layer, head=head, kind=kinds[0])


def slider_max(count: int) -> int:
    """Gradio sliders need maximum > minimum; a one-layer model (tiny test models) gets a range of 2,
    and choosing 2 gives a friendly out-of-range message."""
    return max(int(count), 2)


def kind_choices() -> list[tuple[str, str]]:
    """Every attention kind a model with several kinds offers. The choices never change (a
    stale value could otherwise fail Gradio's check); a model with only "self" hides the radio
    and passes None, which the registry reads as the model's only kind."""
    kinds = dict.fromkeys(k for arch_kinds in KINDS_BY_ARCH.values() if len(arch_kinds) > 1 for k in arch_kinds)
    return [(KIND_SHORT.get(k, KIND_LABELS[k]), k) for k in kinds]


# Under the radio's label "Attention": short enough to sit side by side, so a model with several kinds (dates)
# keeps the header as low as the others (its three long names stacked made it 240 px in presenter mode).
KIND_SHORT = {"encoder": "encoder self", "decoder": "decoder self (masked)", "cross": "cross"}


def fit_controls(registry: ModelRegistry, name, layer, head, kind):
    """Slider ranges and the attention kind for the model (keeps the chosen numbers where they fit)."""
    kinds = registry.kinds(name)
    kind = kind if kind in kinds else kinds[0]
    layers, heads = registry.shape(name, kind)
    layer, head = min(max(whole_number(layer), 1), layers), min(max(whole_number(head), 1), heads)
    return (Change(minimum=1, maximum=slider_max(layers), value=layer, step=1),
            Change(minimum=1, maximum=slider_max(heads), value=head, step=1),
            Change(value=kind, visible=True) if len(kinds) > 1 else Change(visible=False))


def build_controls(demo: gr.Blocks, registry: ModelRegistry, player=None) -> tuple[Context, gr.Dropdown]:
    """The shared controls and the examples; returns the Context every tab builds against. player: the lesson
    player (ui/lessons/player.py), whose picker and buttons end the first row."""
    start = default_settings(registry)
    layers, heads = registry.shape(start.model, start.kind) if start.model in registry.available else (1, 1)
    kinds = registry.kinds(start.model) if start.model in registry.available else ("self",)
    if registry.errors:
        gr.Markdown("\n\n".join(f"⚠️ {message}" for message in registry.errors.values()), elem_id="load-errors")
    # One compact block above the tabs, so that on a 1280 x 720 projector in presenter mode the first
    # figure starts on the first screen: the examples are a picker, not a table that grows with every model.
    with gr.Row(equal_height=True, elem_id="input-row"):
        # no max_length: the browser would cut a long paste without a word; the server says what its limit is
        text = components.Textbox(label="Sentence", show_label=False, value=start.text, lines=1, max_lines=1, scale=5, min_width=320,
                                  placeholder="Type a sentence and press Enter", elem_id="sentence", container=False)
        model = gr.Dropdown(label="Model", show_label=False, choices=list(registry.names), value=start.model, elem_id="model",
                            scale=1, min_width=140, container=False)
        analyze = gr.Button("Show attention", variant="primary", elem_id="analyze", scale=1, min_width=150)
        if player is not None:  # in this row, not a row of its own: a projector's first screen has no room left
            player.build()
    with gr.Row(equal_height=True, elem_id="settings-row"):
        examples = components.Dropdown(choices=[(f"{name} · {example}", i) for i, (example, name) in enumerate(EXAMPLES)],
                                       value=None, label="Lecture examples", elem_id="examples", scale=3, min_width=260)
        layer = components.ModelSlider(1, slider_max(layers), value=start.layer, step=1, label="Layer", elem_id="layer",
                                       scale=2, min_width=160)
        head = components.ModelSlider(1, slider_max(heads), value=start.head, step=1, label="Head", elem_id="head",
                                      scale=2, min_width=160)
        # a single-kind model ignores the (hidden) value; it is never None so API callers may omit it
        kind = components.KindRadio(choices=kind_choices(), value=start.kind if len(kinds) > 1 else kind_choices()[0][1],
                        label="Attention", visible=len(kinds) > 1, elem_id="kind", scale=2)
        with gr.Column(scale=1, min_width=210):
            presenter = components.Checkbox(label="Presenter mode", value=False, elem_id="presenter")
            quiz = components.Checkbox(label="Quiz mode (answers hidden)", value=False, elem_id="quiz")
    # The tab the viewer has open (set on page load and tab change). None for API callers,
    # whose calls are therefore never skipped as "not on screen".
    current_tab = gr.State(None)
    ctx = Context(demo=demo, registry=registry, text=text, model=model, analyze=analyze, layer=layer, head=head,
                  kind=kind, presenter=presenter, current_tab=current_tab, quiz=quiz, open_sections=gr.State([]))
    return ctx, examples


# The tabs' own controls a link keeps (ui.page.links.TAB_SETTINGS), by elem_id (T: the log-scaled slider, its box beside).
TAB_SETTING_IDS = {"temperature": "temperature", "shown_temperature": "temperature-value", "step": "decoding-step",
                   "beam": "beam-width", "snapshot": "snapshot", "seed": "shuffle-seed",
                   "sample_temperature": "sample-temperature", "sample_top_k": "sample-top-k",
                   "sample_top_p": "sample-top-p", "sample_seed": "sample-seed", "sample_tokens": "sample-tokens"}
SAMPLING_PANEL_ID = "sampling"  # the accordion a link with sampling settings opens (ui/tabs/sampling.py)


def by_elem_id(ctx: Context, elem_id: str):
    """The component built with this elem_id, or a placeholder gr.State when its tab is left out (a test app)."""
    found = next((b for b in ctx.demo.blocks.values() if getattr(b, "elem_id", None) == elem_id), None)
    return found or gr.State(None)


def tab_settings_controls(ctx: Context) -> dict:
    """name -> the component (a placeholder gr.State when a tab is left out, e.g. in a test app)."""
    return {name: by_elem_id(ctx, elem_id) for name, elem_id in TAB_SETTING_IDS.items()}


def link_inputs_order(controls: dict) -> list:
    """view_link takes the tab settings in TAB_SETTINGS order, without the T box (it follows the slider)."""
    return [c for name, c in controls.items() if name != "shown_temperature"]


def tab_settings_values(registry: ModelRegistry, settings: ViewSettings) -> tuple:
    """What on_load sets the tab controls to, in TAB_SETTING_IDS order."""
    snapshots = len(registry.get(settings.model).snapshot_files) if settings.model in registry.available else 0
    snapshot = gr.Slider(minimum=1, maximum=max(snapshots, 2),
                         value=settings.snapshot if 0 < settings.snapshot <= snapshots else max(snapshots, 1))
    return (slider_from_temperature(settings.temperature), float(f"{settings.temperature:.3g}"), settings.step,
            settings.beam, snapshot, settings.seed, *(getattr(settings, name) for name in SAMPLING_SETTINGS))


def tab_ids(tabs: gr.Tabs) -> list[str]:
    return [str(child.id) for child in tabs.children if getattr(child, "id", None) is not None]


def wire_page(ctx: Context, examples: gr.Dropdown, player=None) -> None:
    """Call after every tab is built: chains the registered listeners after model changes,
    example clicks and the page load, and keeps the link box and presenter mode in step.
    player: the lesson player (ui/lessons/player.py), whose steps open as the page load opens a link."""
    registry, ids = ctx.registry, tab_ids(ctx.tabs)
    defaults = default_settings(registry)
    controls = [ctx.layer, ctx.head, ctx.kind]
    current_tab = ctx.current_tab
    with gr.Row():
        link = gr.Textbox(label="Link to this view", interactive=False, buttons=["copy"], elem_id="view-link")

    def on_model(name, layer, head, kind):
        return fit_controls(registry, name, layer, head, kind)

    # unchecked: the picker's second event (ui/runtime/repeats.py) carries the old layer, past the range the first has
    # just shrunk ("Value 6 is greater than maximum value 2"); fit_controls fits any value, refuses a bad model
    model_event = ctx.on([ctx.model.input], on_model, inputs=[ctx.model] + controls, outputs=controls,
                         api_name="fit_controls", preprocess=False)
    ctx.run_after(model_event, "model")
    kind_event = ctx.on([ctx.kind.input], on_model, inputs=[ctx.model] + controls, outputs=controls,
                        api_name="fit_kind", preprocess=False)
    ctx.run_after(kind_event, "kind", like=ctx.kind.input)

    def on_example(index, request: gr.Request):
        if index is None:  # the picker opened and closed without a pick (Gradio sends input on every blur)
            return UNCHANGED
        if not isinstance(index, int) or not 0 <= index < len(EXAMPLES):
            raise InputError("Pick one of the lecture examples.")
        text, name = EXAMPLES[index]
        layer, head = previous_token_head(registry, name)
        # the pick's second event (ui/runtime/repeats.py) sets the same controls again (skipping would let its views read
        # the controls before the first set them), and says nothing: the message is shown once
        say = not ctx.repeats.seen(request, "example", index)
        linked = linked_head(registry, name, text)
        if linked is not None:
            layer, head, weight, source, target = linked
            message = (f"Measured on this sentence: layer {layer}, head {head} puts {weight:.2f} of the attention "
                       f"from “{source}” on “{target}”, the most of any head in {name}.")
        else:
            message = example_claim(registry, text, name, layer, head) if say else None
        if say and message:
            inform(message, escaped=True)
        # the picker goes back to its label: closing it later sends None, not this example again (which put
        # the example back over what the student had typed since), and picking this example again is a change
        return (text, name) + fit_controls(registry, name, layer, head, None) + (None,)

    example_event = ctx.on([examples.input], on_example, inputs=[examples],
                           outputs=[ctx.text, ctx.model] + controls + [examples], api_name="example")
    ctx.run_after(example_event, "example")

    tab_controls = tab_settings_controls(ctx)

    def apply_view(settings: ViewSettings, notes: list[str], select_tab: bool = False) -> tuple:
        """What opening a view sets (the load_outputs below), from settings read as a link is: the page load's
        and a lesson step's (ui/lessons/player.py) one code path."""
        for note in notes:  # they quote the link's parameters, which anyone can write
            warn(note)
        fitted = fit_controls(registry, settings.model, settings.layer, settings.head, settings.kind) \
            if settings.model in registry.available else (UNCHANGED,) * 3
        # the page opens on the default tab by itself: selecting it again would fire the tab's own redraw
        # beside the load's, with presenter mode not yet set, and the slower of the two would win
        tab = Change(selected=settings.tab) if select_tab or settings.tab != defaults.tab else UNCHANGED
        opened = sampling_in_link(settings)
        panel = Change(open=True) if opened else UNCHANGED
        return (settings.text, settings.model, *fitted, settings.presenter, tab, settings.tab, settings.quiz,
                *tab_settings_values(registry, settings), panel,
                # the sections open by default stay open
                [SAMPLING_PANEL_ID, *ctx.open_sections.value] if opened else UNCHANGED)

    def on_load(request: gr.Request):
        params = dict(request.query_params) if request is not None else {}
        # a lesson's link (lesson=...&step=...) opens its step's settings, read below as any link's
        params, lesson = player.from_link(params) if player is not None else (params, ())
        settings, notes = parse_query(params, registry, defaults, tuple(ids))
        return apply_view(settings, notes) + lesson

    load_outputs = [ctx.text, ctx.model, *controls, ctx.presenter, ctx.tabs, current_tab, ctx.quiz,
                    *tab_controls.values(), by_elem_id(ctx, SAMPLING_PANEL_ID), ctx.open_sections]
    load_event = ctx.on([ctx.demo.load], on_load, inputs=None,
                        outputs=load_outputs + (player.outputs if player is not None else []),
                        api_name="load_settings")
    ctx.run_after(load_event, "load")
    lesson_events = player.wire(ctx, apply_view, load_outputs) if player is not None else []

    def view_link(text, name, layer, head, kind, presenter, tab, quiz=False, log_temperature=0.0, step=6, beam=4,
                  snapshot=0, seed=0, sample_temperature=1.0, sample_top_k=0, sample_top_p=1.0, sample_seed=0,
                  sample_tokens=DEFAULT_TOKENS, lesson=None, lesson_step=None, request: gr.Request = None):
        page = request.headers.get("referer") if request is not None else None
        if lesson:  # a lesson is open: the link opens it at its step
            return lesson_link(page, lesson, lesson_step, presenter, quiz)
        try:  # the link names the last view drawn: an empty or refused text leaves it as it was
            clean_text(text)
        except InputError:
            return UNCHANGED
        snapshots = len(registry.get(name).snapshot_files) if name in registry.available else 0
        try:  # the values as the browser sent them (no preprocessing, below): numbers, or anything from a script
            settings = ViewSettings(str(text or "")[:MAX_CHARS], str(name), int(layer or 1), int(head or 1),
                                    str(kind or "self"), bool(presenter), str(tab or "attention"),
                                    temperature=shown_temperature(log_temperature or 0), step=int(step or 6),
                                    beam=int(beam or 4), snapshot=int(snapshot or 0) if int(snapshot or 0) < snapshots
                                    else 0, seed=int(seed or 0), quiz=bool(quiz),
                                    **sampling_settings(sample_temperature, sample_top_k, sample_top_p, sample_seed,
                                                        sample_tokens))
        except (TypeError, ValueError):
            return UNCHANGED
        if name not in registry.available or len(registry.kinds(name)) == 1:  # only one kind: leave it out
            settings.kind = ""
        return make_link(settings, page)

    link_inputs = [ctx.text, ctx.model, *controls, ctx.presenter, current_tab, ctx.quiz,
                   *link_inputs_order(tab_controls)] + ([player.lesson, player.step] if player is not None else [])
    for suffix, event in (("load", load_event), ("model", model_event), ("example", example_event),
                          *((f"lesson_{n}", event) for n, event in enumerate(lesson_events))):
        ctx.on(event, view_link, inputs=link_inputs, outputs=[link], preprocess=False, api_name=f"link_{suffix}",
               show_progress="hidden")
    # preprocess=False: a slider's range can change on the server a moment before the browser sends its old value
    # (a link to minilm opened on lm's 10th snapshot); Gradio would refuse it, view_link clamps it
    ctx.after_tab_opened(view_link, inputs=link_inputs, outputs=[link], api_name="link_tab", preprocess=False,
                         show_progress="hidden", queue=False)
    ctx.on([ctx.text.change, ctx.layer.change, ctx.head.change, ctx.kind.change, ctx.presenter.change, ctx.quiz.change]
           + [c.change for c in link_inputs_order(tab_controls) if hasattr(c, "change")],
           view_link, inputs=link_inputs, outputs=[link], api_name="link", show_progress="hidden",
           trigger_mode="always_last", queue=False, preprocess=False)
    ctx.on([ctx.presenter.change], None, inputs=[ctx.presenter], js=PRESENTER_JS, api_name="presenter_css")
    # the address bar follows the view: a refresh or a copied address keeps it (replaced, so Back still leaves)
    ctx.on([link.change], None, inputs=[link],
           js="(l) => { try { history.replaceState(null, '', new URL(l).search); } catch (e) {} }")
    ctx.finish()
