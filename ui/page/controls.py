"""The controls above the tabs (sentence, model, layer, head, kind, presenter mode, examples)
and the page-level wiring: fitting the controls to the chosen model (components.fit_controls), the examples
(ui/page/lecture_examples.py), the page's link (ui/page/page_link.py) and presenter mode."""
from __future__ import annotations

import gradio as gr

from ui.page import components
from ui.page.components import fit_controls, slider_max
from ui.page.context import PRESENTER_FIRST, Context  # noqa: F401 - PRESENTER_FIRST: the tabs import it from here too
from ui.page.lecture_examples import (EXAMPLES, default_settings, example_claim, linked_head, next_token_claim,
                                      previous_token_head)
from model.registry import KINDS_BY_ARCH, ModelRegistry
from ui.page.labels import KIND_LABELS
from ui.page.messages import InputError, inform
from ui.page.outputs import UNCHANGED
from ui.page.page_link import wire_link

# Presenter mode: bigger type everywhere, by overriding the theme's size variables under one class.
CSS = """
body.presenter { --text-xxs: 14px; --text-xs: 16px; --text-sm: 18px; --text-md: 22px; --text-lg: 26px;
                 --text-xl: 30px; --text-xxl: 36px; --block-label-text-size: 18px; --block-info-text-size: 18px;
                 --block-title-text-size: 20px; --section-header-text-size: 22px; }
body.presenter .prose, body.presenter textarea, body.presenter input { font-size: 22px !important; }
/* On a projector the class has the lecturer: the page's intro paragraph gives its room to the figures. */
body.presenter #intro p, body.presenter .tab-intro { display: none; }  /* each tab's intro too (ui tab modules) */
/* Fifteen tabs share one row: narrow padding (on the measuring copy Gradio keeps too, or it folds tabs
   into its "..." menu), and in presenter mode a size at which every name still fits a 1280-px screen. */
.tab-wrapper .tab-container button { padding-left: 4px !important; padding-right: 4px !important; }
body.presenter .tab-wrapper .tab-container button { font-size: 12px !important; }
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
/* the model picker as wide as the name it shows, the name ending before the picker's arrow: at Gradio's 140 px the
   arrow covered "gqa-7x6x2"'s last characters, on a phone and in presenter mode. field-sizing: Chromium 123+, Safari
   26; a browser without it sizes the box for 20 characters (on a phone "Show attention" then takes a row of its
   own). Gradio's CSS drops an @supports rule, so the rules stand alone. */
#input-row #model { min-width: max-content !important; max-width: 100%; }
#input-row #model input { field-sizing: content; padding-right: 28px; }
/* with a lesson's player in the row, as small as the lesson picker's (ui/lessons/player.py): "smollm2" at 22 px
   wrapped the projector's first row, pushing the Lens past the first screen */
body.presenter:has(#lesson-panel) #input-row #model input { font-size: 16px !important; }
/* messages at the bottom right: at the top they covered the Head slider and the mode check boxes */
body.presenter .presenter-first { order: -2; }
body.presenter .presenter-second { order: -1; }  /* right under the main figure */
.toast-wrap { top: auto !important; bottom: var(--size-4, 16px) !important; }
"""
# the header of the accordion holding the settings, shown on a phone only (ui/page/phone.py)
SETTINGS_LABEL = "Examples, layer, head and modes"
PRESENTER_JS = "(on) => { document.body.classList.toggle('presenter', !!on); return []; }"


def kind_choices() -> list[tuple[str, str]]:
    """Every attention kind a model with several kinds offers. The choices never change (a
    stale value could otherwise fail Gradio's check); a model with only "self" hides the radio
    and passes None, which the registry reads as the model's only kind."""
    kinds = dict.fromkeys(k for arch_kinds in KINDS_BY_ARCH.values() if len(arch_kinds) > 1 for k in arch_kinds)
    return [(KIND_SHORT.get(k, KIND_LABELS[k]), k) for k in kinds]


# Under the radio's label "Attention": short enough to sit side by side, so a model with several kinds (dates)
# keeps the header as low as the others (its three long names stacked made it 240 px in presenter mode).
KIND_SHORT = {"encoder": "encoder self", "decoder": "decoder self (masked)", "cross": "cross"}


def build_controls(demo: gr.Blocks, registry: ModelRegistry, player=None, classroom=None) -> tuple[Context, gr.Dropdown]:
    """The shared controls and the examples; returns the Context every tab builds against. player: the lesson
    player (ui/lessons/player.py), whose picker and buttons end the first row; classroom: the class panels
    (ui/classroom/page.py), whose "Start a class" sits under presenter mode."""
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
    # one accordion, open: a wide screen shows it as the row it always was (its header hidden, ui/page/phone.py's
    # CSS); a phone closes it once the page has loaded, so the first screen reaches the tab's figure
    with gr.Accordion(SETTINGS_LABEL, open=True, elem_id="settings"), \
            gr.Row(equal_height=True, elem_id="settings-row"):
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
            if classroom is not None:
                classroom.build_start()
    # The tab the viewer has open (set on page load and tab change). None for API callers,
    # whose calls are therefore never skipped as "not on screen".
    current_tab = gr.State(None)
    ctx = Context(demo=demo, registry=registry, text=text, model=model, analyze=analyze, layer=layer, head=head,
                  kind=kind, presenter=presenter, current_tab=current_tab, quiz=quiz, open_sections=gr.State([]))
    return ctx, examples


def wire_page(ctx: Context, examples: gr.Dropdown, player=None, classroom=None) -> None:
    """Call after every tab is built: the model picker and the examples (which set the shared controls, so the
    views that follow them redraw, ui/page/redraw.py), the page's link (ui/page/page_link.py), then the redraws.
    player: the lesson player (ui/lessons/player.py), whose steps open as the page load opens a link; classroom:
    the class panels (ui/classroom/page.py), whose followers open the lecturer's step the same way."""
    registry = ctx.registry
    controls = [ctx.layer, ctx.head, ctx.kind]

    def on_model(name, layer, head, kind):
        return fit_controls(registry, name, layer, head, kind)

    # unchecked: the picker's second event (ui/runtime/repeats.py) carries the old layer, past the range the first has
    # just shrunk ("Value 6 is greater than maximum value 2"); fit_controls fits any value, refuses a bad model
    model_event = ctx.on([ctx.model.input], on_model, inputs=[ctx.model] + controls, outputs=controls,
                         api_name="fit_controls", preprocess=False)
    kind_event = ctx.on([ctx.kind.input], on_model, inputs=[ctx.model] + controls, outputs=controls,
                        api_name="fit_kind", preprocess=False)

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
        answer = next_token_claim(registry, text, name) if say else None
        message = " ".join(part for part in (message, answer) if part)
        if say and message:
            inform(message, escaped=True)
        # the picker goes back to its label: closing it later sends None, not this example again (which put
        # the example back over what the student had typed since), and picking this example again is a change
        return (text, name) + fit_controls(registry, name, layer, head, None) + (None,)

    example_event = ctx.on([examples.input], on_example, inputs=[examples],
                           outputs=[ctx.text, ctx.model] + controls + [examples], api_name="example")

    # the page load, a lesson's steps and the link box follow what these set (ui/page/page_link.py)
    wire_link(ctx, player, {"model": model_event, "example": example_event}, classroom)
    ctx.on([ctx.presenter.change], None, inputs=[ctx.presenter], js=PRESENTER_JS, api_name="presenter_css")
    ctx.finish()
