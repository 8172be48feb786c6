"""In the browser one click is one event: a dispatcher runs only the open tab's views.

API callers keep one endpoint per view (tested through the server in test_app_server.py)."""
from __future__ import annotations

import inspect

import gradio as gr
import pytest
from gradio.utils import diff

import app
from harness.page_events import component_id, endpoint, is_skip, listeners_of, run
from ui.runtime.events import quick


def sent_so_far(outputs_per_view: list[list]) -> list[list]:
    """What each update names: every output of the views computed so far, in order."""
    return [list(dict.fromkeys(c for outputs in outputs_per_view[:k + 1] for c in outputs))
            for k in range(len(outputs_per_view))]


@pytest.mark.parametrize("elem_id,event", [("analyze", "click"), ("sentence", "submit"), ("presenter", "input"),
                                           ("layer", "input"), ("head", "input")])
def test_each_shared_control_fires_one_event(demo, elem_id, event):
    fired = listeners_of(demo, elem_id, event)
    assert len(fired) == 1, [fn.name for fn in fired]
    assert fired[0].api_visibility == "private" and fired[0].types_generator


def test_a_new_attention_kind_refits_the_sliders_then_redraws_once(demo):
    (fit,) = listeners_of(demo, "kind", "input")
    assert fit.api_name == "fit_kind"
    fit_id = next(dep["id"] for dep in demo.get_config_file()["dependencies"] if dep["api_name"] == "fit_kind")
    after = [dep for dep in demo.get_config_file()["dependencies"] if dep["trigger_after"] == fit_id]
    assert len(after) == 1 and demo.fns[after[0]["id"]].types_generator


@pytest.mark.parametrize("open_tab,sections,views", [
    ("attention", None, ["head", "quiz", "analyze", "predict", "head_corpus"]),
    # a section the viewer opened draws right after the tab's main figure, before the views above it
    ("attention", ["sampling", "flow", "qk"], ["head", "generate", "quiz", "analyze", "predict", "head_corpus"]),
    ("interventions", None, ["interventions", "value_weighted", "explanations"]),  # What flows: open as the page opens
    ("interventions", [], ["interventions", "explanations"]),  # ... and folded: not computed
    ("steps", None, ["steps", "qk_space"]), ("steps", [], ["steps"]), ("masking", None, ["masking"]),
    ("positions", None, ["positions", "shuffle", "rotary"]), ("multihead", None, ["multihead"])])
def test_the_dispatcher_computes_only_the_open_tabs_views_in_order(demo, open_tab, sections, views):
    (dispatcher,) = listeners_of(demo, "analyze", "click")
    updates, error = run(dispatcher, open_tab, open_sections=sections)
    assert error is None
    expected = sent_so_far([endpoint(demo, name).outputs for name in views])
    assert [list(update) for update in updates] == expected  # one update per view, in order, each repeating the last


@pytest.mark.parametrize("open_tab", ["attention", "positions"])  # the tabs with several views
def test_a_later_update_repeats_what_an_earlier_view_set(demo, open_tab):
    """Gradio streams each update as a diff from the one before, and its page script applies the diff in
    place, to the object it already queued for the page: an output one view set and a later update left out
    (a skip) had its figure emptied before a busy page drew it (the all-heads grid, the layer average and the
    statistics stayed blank on about one page load in four once the sentence was cached). Each later update
    repeats it unchanged: an empty diff, nothing to apply."""
    (dispatcher,) = listeners_of(demo, "analyze", "click")
    updates, error = run(dispatcher, open_tab)
    assert error is None and updates
    for before, after in zip(updates, updates[1:]):
        for output, value in before.items():
            if is_skip(value):
                continue
            assert output in after and not is_skip(after[output]), f"{output.elem_id or output}: set, then skipped"
            assert diff(value, after[output]) == [], f"{output.elem_id or output}: set again, changed"


def test_bad_input_is_one_message_not_one_per_view(demo):
    """One warning, no error: an error would mark every output, and the views keep their last figures."""
    (dispatcher,) = listeners_of(demo, "analyze", "click")
    with pytest.warns(UserWarning) as warned:  # gr.Warning outside a request is a Python warning
        updates, error = run(dispatcher, "attention", sentence="   ")
    assert error is None and len(updates) == 1, "one update, leaving every output as it was"
    assert updates[0] and all(isinstance(value, type(gr.skip())) for value in updates[0].values())
    messages = [str(w.message) for w in warned if "empty" in str(w.message).lower()]
    assert len(messages) == 1, [str(w.message) for w in warned]


def test_changing_the_head_redraws_only_views_that_follow_it(demo):
    (dispatcher,) = listeners_of(demo, "head", "input")
    updates, error = run(dispatcher, "attention")
    # the detail, the quiz's question (another head is another question), and the grid that outlines the
    # head shown in detail
    assert error is None and [list(u) for u in updates] == sent_so_far([endpoint(demo, "head").outputs,
                                                                        endpoint(demo, "quiz").outputs,
                                                                        endpoint(demo, "grid").outputs])


def test_a_streaming_handler_repeats_what_it_has_set():
    from ui.runtime.events import repeat_outputs

    with gr.Blocks():
        status, curve = gr.Markdown(), gr.Plot()

    @repeat_outputs
    def train(request: gr.Request = None):
        yield {status: "starting"}
        yield {curve: "figure 1", status: "step 1"}
        yield {status: gr.skip()}  # a skip leaves the last status as sent, not an empty update

    assert list(train()) == [{status: "starting"}, {status: "step 1", curve: "figure 1"},
                             {status: "step 1", curve: "figure 1"}]
    assert "request" in inspect.signature(train).parameters  # Gradio still hands it the request


# ---- small work runs where the request arrived ---------------------------------------------------------
def test_small_work_is_quick_large_or_decoding_work_is_not(demo):
    registry = demo.registry
    assert quick(registry, "lm", "The cat sat on the mat.")  # about 10 tokens of a 4-layer, 128-wide model
    assert not quick(registry, "lm", "word " * 200)  # ~200 tokens: more arithmetic than QUICK_FLOPS
    assert not quick(registry, "dates", "3 March 1999")  # translating decodes token by token first
    assert quick(registry, "gpt-4", "anything") and quick(registry, "lm", "")  # bad input only costs a message
    medium = "word " * 45  # ~46 tokens: over nothing once cached, under the arithmetic budget anyway
    assert quick(registry, "lm", medium)
    long = "word " * 200
    registry.trace("lm", long)
    assert not quick(registry, "lm", long)  # cached, but its every-head figure is 16 x 200 x 200 weights
    registry.trace("lm", "The cat sat on the mat.")
    assert quick(registry, "lm", "The cat sat on the mat.")  # cached: nothing left to compute
    registry.trace("dates", "3 March 1999")
    assert quick(registry, "dates", "3 March 1999")  # cached: translated already, and small
    if "minilm" in registry.models:  # 6 layers, 384 wide: even a short sentence is over the budget
        assert not quick(registry, "minilm", "The cat sat on the mat.")


def test_a_quick_view_runs_on_the_event_loop_and_a_slow_one_in_a_worker_thread(demo):
    """ui.page.context.Context.listen: quick(...) decides, per call, where the view computes."""
    import asyncio
    import threading

    from gradio.state_holder import SessionState

    from ui.page.context import Context

    where = []

    def view(text):
        where.append(threading.get_ident())
        return f"read {text}"

    with gr.Blocks() as blocks:
        text = gr.Textbox()
        ctx = Context(demo=blocks, registry=demo.registry, text=text, model=gr.Dropdown(), analyze=gr.Button(),
                      layer=gr.Slider(), head=gr.Slider(), kind=gr.Radio(), presenter=gr.Checkbox())
        out = gr.Markdown()
        ctx.listen(view, inputs=[text], outputs=[out], api_name="view", quick=lambda text: text == "short")
    fn = next(f for f in blocks.fns.values() if f.api_name == "view")
    assert inspect.iscoroutinefunction(fn.fn) and not fn.preprocess and not fn.postprocess

    async def call(value):
        answer = await blocks.process_api(fn, [value], SessionState(blocks))
        return answer["data"][0], threading.get_ident()

    for value, on_loop in (("short", True), ("long", False)):
        answer, loop_thread = asyncio.run(call(value))
        assert answer == f"read {value}"
        assert (where[-1] == loop_thread) is on_loop, value


def test_on_a_zerogpu_space_every_view_keeps_gradios_worker_thread(demo, monkeypatch):
    """spaces.GPU hands the call to a GPU process and waits: never on the event loop."""
    import ui.page.context

    monkeypatch.setattr(ui.page.context, "LENT_GPU", True)
    on_space = app.build_demo(registry=demo.registry)  # its own build: LENT_GPU is read while the app is built
    assert not inspect.iscoroutinefunction(endpoint(on_space, "analyze").fn)
    assert inspect.iscoroutinefunction(endpoint(demo, "analyze").fn)


def test_only_api_only_endpoints_read_their_inputs_themselves(demo):
    """/analyze is reached only through the API: it reads its inputs in its handler. /head also runs when the
    visitor ticks quiz mode, and the page's layer slider is the visitor's own copy (its maximum follows the
    model they chose): Gradio, which holds that copy, checks it."""
    assert not endpoint(demo, "analyze").preprocess
    assert endpoint(demo, "head").preprocess


def test_the_model_pickers_handler_fits_raw_values_and_names_a_bad_model(demo):
    """It reads the controls unchecked (the picker's second event carries a layer beyond the new range)."""
    (fit,) = listeners_of(demo, "model", "input")
    assert fit.preprocess is False
    n_layers, n_heads = demo.registry.shape("lm", "self")
    for layer, head in [(6, 12), ("6", None), (float("nan"), "x"), (-3, 10**9), ([], {})]:
        layer_out, head_out, _ = fit.fn("lm", layer, head, "self")
        assert 1 <= layer_out["value"] <= n_layers and 1 <= head_out["value"] <= n_heads, (layer, head)
    assert fit.fn("lm", 6, 12, "self")[0]["value"] == n_layers, "a layer past the end becomes the last"
    with pytest.raises(gr.Error, match="Unknown model"):
        fit.fn("gpt-4", 1, 1, "self")


def test_closing_the_examples_picker_without_a_pick_changes_nothing(demo):
    (pick,) = listeners_of(demo, "examples", "input")
    assert is_skip(pick.fn(None, gr.Request(session_hash="closed")))
    *_, picker = pick.fn(0, gr.Request(session_hash="picked"))
    assert picker is None, "the picker goes back to its label after a pick"


def test_bad_input_on_a_page_event_is_one_warning_and_the_figures_stay(demo):
    """On the page a bad entry is a warning and "unchanged", as in the dispatchers; the API endpoint still
    answers it with an error."""
    (typed,) = listeners_of(demo, "position-dims", "submit")
    assert typed.api_visibility == "private"
    values = [c.value for c in typed.inputs]
    dims = [i for i, c in enumerate(typed.inputs) if c.elem_id == "position-dims"][0]
    values[dims] = "abc"
    with pytest.warns(UserWarning, match="whole numbers"):  # gr.Warning outside a request is a Python warning
        assert is_skip(typed.fn(gr.Request(session_hash="typist"), *values))
    with pytest.raises(gr.Error, match="whole numbers"):
        endpoint(demo, "positions_dims").fn(*values)


def test_the_classifiers_knock_out_follows_a_new_definition(demo):
    """The knock-out shown stayed, describing the last definition, under a new one's categories."""
    (dispatcher,) = listeners_of(demo, "analyze", "click")
    text = "a large grey animal with a long trunk"
    updates, error = run(dispatcher, "classifier", sentence=text, **{"classifier-heads": ["L1 H1"]})
    assert error is None
    ablation = next(c for c in dispatcher.outputs if c.elem_id == "classifier-ablation")
    said = updates[-1][ablation]
    assert "L1 H1" in str(said) and not is_skip(said)
    updates, _ = run(dispatcher, "classifier", sentence=text, **{"classifier-heads": []})
    assert updates[-1][ablation] in ("", {"__type__": "update", "value": ""}), "no head chosen: the last one goes"


def test_the_tabs_hold_only_tabs(demo):
    """Anything else beside the tabs (a gr.State built after a tab's `with` block) shifts the tabs' names in
    the browser: after opening Masking, the Positions tab read "Masking" and could not be opened."""
    (tabs,) = [block for block in demo.blocks.values() if isinstance(block, gr.Tabs)]
    assert tabs.children and all(isinstance(child, gr.Tab) for child in tabs.children), \
        [type(child).__name__ for child in tabs.children]


def test_every_handler_that_asks_for_the_visitor_gets_one(demo):
    """Gradio hands a gr.Request only to a positional parameter: a keyword-only one after *values stays at its
    default, so the handler cannot tell visitors apart (Train live's Stop found no training of the visitor's)."""
    handlers = [block_fn for block_fn in demo.fns.values() if block_fn.fn is not None]
    asking = 0
    for block_fn in handlers:
        for param in inspect.signature(block_fn.fn).parameters.values():
            if "Request" in str(param.annotation):
                asking += 1
                assert param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD), \
                    f"{block_fn.name}: its {param.name} is {param.kind.description}, so Gradio never fills it"
    assert asking >= 3, "Train, Compare and Stop (at least) ask for the visitor"


# ---- one redraw path: a change made by code reaches the views as the visitor's would -----------------------
SHARED_IDS = ("sentence", "model", "layer", "head", "kind", "presenter")


def test_every_event_that_sets_a_shared_control_is_followed_by_one_redraw(demo):
    """The model's refit, an example, the page load, a lesson step, a tile picked, the lens's example: each is
    followed by one redraw (one request), with nothing to remember in the tab that wires it (ui/page/redraw.py)."""
    config = demo.get_config_file()
    shared = {component_id(demo, elem_id) for elem_id in SHARED_IDS}
    setters = [dep for dep in config["dependencies"] if shared & set(dep["outputs"]) and dep["backend_fn"]]
    assert {dep["api_name"] for dep in setters} >= {"fit_controls", "fit_kind", "example", "load_settings",
                                                    "lesson_pick", "lesson_next", "lesson_back", "pick_head",
                                                    "click_head", "lens_example"}
    for dep in setters:
        after = [d for d in config["dependencies"] if d["trigger_after"] == dep["id"]
                 and d["api_name"].startswith("redraw_")]
        assert len(after) == 1 and demo.fns[after[0]["id"]].types_generator, dep["api_name"]


def test_a_tile_picked_redraws_the_views_that_follow_the_layer_and_head_as_their_sliders_do(demo):
    picked = endpoint(demo, "redraw_after_pick_head")
    (layer,), (head,) = listeners_of(demo, "layer", "input"), listeners_of(demo, "head", "input")
    assert set(picked.outputs) == set(layer.outputs) | set(head.outputs), "the same views, whoever set them"
    updates, error = run(picked, "attention", gr.Request(session_hash="tile"))
    assert error is None and [list(u) for u in updates] == sent_so_far([endpoint(demo, "head").outputs,
                                                                        endpoint(demo, "quiz").outputs,
                                                                        endpoint(demo, "grid").outputs])


@pytest.mark.parametrize("open_now,redrawn", [(None, False), ("positions", False), ("attention", True)])
def test_a_tab_select_redraws_only_when_the_visitor_moved_to_it(demo, open_now, redrawn):
    """Gradio selects the first tab as the page mounts (before the page load has set the view, open tab None),
    and a link or lesson step that opens a tab has drawn it already: only a move from another tab redraws it,
    and only then does the link box follow (ui/runtime/tab_select.py)."""
    opened = endpoint(demo, "open_positions")
    now, moved = opened.fn(open_now)
    assert moved is redrawn and (now == "positions" if redrawn else is_skip(now))
    redraw, link = endpoint(demo, "redraw_positions"), endpoint(demo, "link_tab_positions")
    assert redraw.inputs[0] is link.inputs[0] is opened.outputs[1]  # the gate both read is the one the select set
    values = [c.value for c in redraw.inputs[3:]]
    updates = list(redraw.fn(None, moved, "positions", list(redraw.inputs[2].value), *values))
    skipped = [all(is_skip(value) for value in update.values()) for update in updates]
    assert skipped == ([False] * len(updates) if redrawn else [True]), skipped
    assert len(updates) == (3 if redrawn else 1)  # the tab's three views (positions, shuffle, rotary), or nothing
    written = link.fn(None, moved, *[c.value for c in link.inputs[1:]])
    assert ("text=" in str(written)) is redrawn
