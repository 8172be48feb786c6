"""ui.runtime.wire: the views hand Gradio their outputs already postprocessed (events with postprocess=False).
The oracle is Gradio itself: the same values through an ordinary event must give the same answer."""
from __future__ import annotations

import asyncio
import threading

import gradio as gr
import numpy as np
import pandas as pd
import pytest
from gradio.state_holder import SessionState

from analysis.head_stats import head_columns, head_stats
from ui.page import components
from ui.runtime import wire
from ui.runtime.wire import received, sent, sent_all
from viz import heatmap

FIGURE = heatmap.attention_heatmap(np.eye(3), ["<s>", "a", "b"], ["<s>", "a", "b"], title="one head")


def answers(outputs_of, values):
    """What the browser gets for `values`: through Gradio's own postprocessing, and through ui.runtime.wire."""
    with gr.Blocks() as demo:
        outputs = outputs_of()
        button = gr.Button()
        button.click(lambda: values(), None, outputs)
        button.click(lambda: sent_all(outputs, values()), None, outputs, postprocess=False)
    plain, wired = (asyncio.run(demo.process_api(fn, [], SessionState(demo)))["data"] for fn in demo.fns.values())
    return plain, wired


def test_each_kind_of_output_is_sent_as_gradio_sends_it():
    frame = pd.DataFrame({"head": ["L1 H1", "L1 H2"], "previous": [0.5, float("nan")]})
    plain, wired = answers(
        lambda: [gr.Markdown(), gr.HighlightedText(), gr.Plot(), gr.Dataframe(), gr.Dropdown(choices=["x"]),
                 gr.Plot(), gr.Markdown()],
        lambda: ("**bold** &lt;b&gt;", [("<s>", "0"), ("cat", "17")], FIGURE, components.table(frame),
                 gr.Dropdown(choices=["L1 H1", "L1 H2"], value="L1 H2"),  # an update with a plain value
                 gr.Plot(value=FIGURE, visible=True),  # an update carrying a figure
                 gr.skip()))
    assert wired == plain
    assert plain[2]["type"] == "plotly" and '"heatmap"' in plain[2]["plot"]
    assert plain[5]["__type__"] == "update" and '"heatmap"' in plain[5]["value"]["plot"]
    assert plain[3]["data"][1] == ["L1 H2", None]


def test_a_dict_of_outputs_and_a_single_output():
    with gr.Blocks():
        note, plot = gr.Markdown(), gr.Plot()
    as_dict = sent_all([note, plot], {plot: FIGURE, note: "hi"})
    assert as_dict[note] == "hi" and as_dict[plot]["type"] == "plotly"
    assert sent_all([plot], FIGURE) == sent(plot, FIGURE)
    assert sent_all([note, plot], gr.skip()) == gr.skip()  # one skip for every output stays one skip
    label = gr.Label(render=False)  # a single output whose value is itself a dict is not a dict of outputs
    assert sent_all([label], {"noun.animal": 0.9, "noun.food": 0.1})["label"] == "noun.animal"


def test_head_statistics_as_plain_columns_are_the_frame_gradio_would_send():
    """/analyze builds its table from plain columns (no DataFrame per request): same cells, NaN as None."""
    previous = np.eye(6, k=-1)
    previous[0, 0] = 1
    probs = np.stack([np.stack([previous, np.tril(np.ones((6, 6))) / np.arange(1, 7)[:, None]])]).astype(np.float32)
    mask = np.tril(np.ones((6, 6), dtype=bool))
    columns = head_columns(probs, mask, ids=np.arange(6))
    assert all(isinstance(v, (str, int, float)) for values in columns.values() for v in values)
    plain, wired = answers(lambda: [gr.Dataframe()], lambda: components.table(columns))
    framed = answers(lambda: [gr.Dataframe()], lambda: components.table(head_stats(probs, mask, ids=np.arange(6))))
    assert wired == plain == framed[0]
    cells = dict(zip(wired[0]["headers"], wired[0]["data"][0]))
    assert cells["label"] == "previous-token" and cells["induction"] is None  # NaN: no token repeats


def handed(raw: list):
    """What a handler is given for the raw API values `raw`: by Gradio's own preprocessing (an event that also
    takes a file, which wire.Blocks leaves to Gradio), by wire.Blocks reading plain values where the request
    arrived (wire.read_here), and by ui.runtime.wire.received (the error message where any refuses)."""
    with wire.Blocks() as demo:
        inputs = [gr.Textbox(), gr.Dropdown(choices=["lm", "mlm"], value="lm"), gr.Radio(choices=["self", "cross"]),
                  gr.Checkbox(), components.Slider(1, 4, step=1, label="Layer"), gr.State("kept")]
        out = gr.Textbox()
        button = gr.Button()
        button.click(lambda *values: repr(list(values[:-1])), inputs + [gr.File()], out)
        button.click(lambda *values: repr(list(values)), inputs, out)
        button.click(lambda *values: repr(received(inputs, values)), inputs, out, preprocess=False)
    assert [wire.read_here(fn) for fn in demo.fns.values()] == [False, True, False]

    def run(fn, values):
        try:
            return asyncio.run(demo.process_api(fn, values, SessionState(demo)))["data"][0]
        except gr.Error as e:
            return f"error: {e.message}"
    return tuple(run(fn, list(raw) + [None] * (i == 0)) for i, fn in enumerate(demo.fns.values()))


def test_inputs_read_in_the_handler_are_what_gradio_would_hand_it():
    plain, here, inline = handed(["a cat", "mlm", "cross", True, 3, None])
    assert inline == here == plain == repr(["a cat", "mlm", "cross", True, 3, "kept"])


def test_plain_inputs_are_read_on_the_event_loop_from_the_visitors_own_controls():
    """wire.Blocks reads plain values where the request arrived, as Gradio reads them in its worker threads: each
    from the session's own copy of the control (a dropdown whose choices the page changed), its value kept there."""
    threads = {}

    class Box(gr.Textbox):
        def preprocess(self, payload):
            threads["preprocess"] = threading.current_thread()
            return super().preprocess(payload)

    results = []
    for blocks_class in (gr.Blocks, wire.Blocks):
        with blocks_class() as demo:
            box, kind, out = Box(), gr.Dropdown(choices=["self"], value="self"), gr.Textbox()
            gr.Button().click(lambda text, chosen: f"{text}/{chosen}", [box, kind], out)
        state = SessionState(demo)
        state[kind._id] = gr.Dropdown(choices=["self", "cross"], value="self", render=False)  # as the page set it

        async def call():
            threads["loop"] = threading.current_thread()
            return await demo.process_api(next(iter(demo.fns.values())), ["hi", "cross"], state)
        results.append((asyncio.run(call())["data"], threads["preprocess"] is threads["loop"]))
        assert state[kind._id].choices == [("self", "self"), ("cross", "cross")]
    (plain, plain_here), (ours, ours_here) = results
    assert ours == plain == ["hi/cross"]
    assert not plain_here and ours_here


def test_inputs_gradio_refuses_are_refused_with_its_message():
    for raw in (["x", "gpt-4", "self", False, 1, None], ["x", "lm", "sideways", False, 1, None],
                ["x", "lm", "self", False, 9, None], ["x", "lm", "self", False, "two", None]):
        plain, here, inline = handed(raw)
        assert inline.startswith("error: ") and inline == here == plain, raw
    assert handed(["x", "gpt-4", "self", False, 1, None])[0] == "error: gpt-4 is not one of the choices (['lm', 'mlm'])."
    assert handed(["x", "lm", "self", False, 9, None])[0] == "error: Value 9 is greater than maximum value 4."


def test_gradio_refusals_come_back_short_and_escaped_both_ways():
    """Gradio's own refusal echoes the value whole and as HTML (a toast renders it) and logs a traceback."""
    for name in ("<img src=x onerror=alert(1)>" + "y" * 100_000, ["<b>", 3]):
        plain, here, inline = handed(["x", name, "self", False, 1, None])
        assert plain == here == inline and len(plain) < 400, plain[:100]
        assert "<img" not in plain and "<b>" not in plain and "&lt;" in plain and "type:" not in plain


def test_too_few_values_over_plain_http_get_a_message():
    with wire.Blocks() as demo:
        inputs = [gr.Textbox(), gr.Number()]
        gr.Button().click(lambda *values: "ok", inputs, gr.Textbox())
    with pytest.raises(gr.Error, match="takes 2 values and got 1"):
        asyncio.run(demo.process_api(next(iter(demo.fns.values())), ["x"], SessionState(demo)))


def test_a_value_a_component_cannot_read_gets_a_plain_message():
    plain, here, inline = handed(["x", "lm", "self", False, [1, 2], None])
    assert inline == here == "error: Layer must be a number between 1 and 4, not '[1, 2]'."
    with gr.Blocks():
        beam = gr.Slider(1, 8, label="Beam")  # Gradio's own slider: a list fails inside its range check
    try:
        received([beam], [[1, 2]])
    except gr.Error as e:
        assert e.message == "Beam cannot take the value '[1, 2]'." and "Traceback" not in e.message
    else:
        raise AssertionError("a list was read as a number")


def postprocessed(blocks_class, handler, outputs_of, postprocess: bool):
    """What one call of `handler` sends, and each output's component in the visitor's session afterwards."""
    with blocks_class() as demo:
        outputs = outputs_of()
        gr.Button().click(handler, None, outputs, postprocess=postprocess)
    state = SessionState(demo)
    for block in outputs:  # as after a page load: the session holds its own copy of each output
        state[block._id] = block
    data = asyncio.run(demo.process_api(next(iter(demo.fns.values())), [], state))["data"]
    return data, [state[block._id] for block in outputs], outputs


def test_blocks_sends_what_gradio_sends_and_leaves_skipped_outputs_alone():
    """ui.runtime.wire.Blocks against gr.Blocks on the same returns: a skip among values, a dict that names some
    outputs, a single skip for all, an update of a property, and the postprocessing both ways."""
    outputs_of = lambda: [gr.Markdown(), gr.Plot(), gr.Dropdown(choices=["a", "b"]), gr.Plot(), gr.Checkbox()]
    cases = [
        (lambda: ("hi", FIGURE, gr.skip(), gr.skip(), True), True),
        (lambda: ("hi", sent(gr.Plot(render=False), FIGURE), gr.skip(), gr.skip(), False), False),
        (lambda: gr.skip(), True),
        (lambda: (gr.skip(), gr.skip(), gr.Dropdown(choices=["a", "b", "c"], value="c"), gr.skip(), gr.skip()), True),
    ]
    for handler, postprocess in cases:
        plain, plain_session, _ = postprocessed(gr.Blocks, handler, outputs_of, postprocess)
        ours, our_session, outputs = postprocessed(wire.Blocks, handler, outputs_of, postprocess)
        assert ours == plain
        for i, (value, kept) in enumerate(zip(ours, our_session)):
            if value == gr.skip():
                assert kept is outputs[i]  # not rebuilt: the session keeps the component it had
        assert [type(c) for c in our_session] == [type(c) for c in plain_session]
    dropdown = postprocessed(wire.Blocks, cases[3][0], outputs_of, True)[1][2]
    assert dropdown.choices == [("a", "a"), ("b", "b"), ("c", "c")]  # a real update still reaches the session


def test_outputs_already_sent_go_out_as_gradio_sends_them():
    """An event with postprocess=False (its outputs made by wire.sent_all): the same answer from wire.Blocks as from
    Gradio's own Blocks, an update and a JSON output too."""
    outputs_of = lambda: [gr.Markdown(), gr.HighlightedText(), gr.Plot(), gr.Dataframe(), gr.Dropdown(choices=["a"]),
                          gr.Checkbox()]
    values = lambda: ("**hi** &lt;", [("<s>", "0"), ("cat", "17")], FIGURE,
                      components.table({"head": ["L1 H1"], "previous": [float("nan")]}), "a", True)
    answers_both = []
    for blocks_class in (gr.Blocks, wire.Blocks):
        with blocks_class() as demo:
            outputs = outputs_of()
            gr.Button().click(lambda: sent_all(outputs, values()), None, outputs, postprocess=False)
            gr.Button().click(lambda: sent_all(outputs[:1], gr.Markdown(visible=False)), None, outputs[:1],
                              postprocess=False)
            gr.Button().click(lambda: {"path": "x"}, None, gr.JSON(), postprocess=False)
        fns = list(demo.fns.values())
        answers_both.append([asyncio.run(demo.process_api(fn, [], SessionState(demo)))["data"] for fn in fns])
    assert answers_both[0] == answers_both[1]
    assert answers_both[1][0][1] == [{"token": "<s>", "class_or_confidence": "0"},
                                     {"token": "cat", "class_or_confidence": "17"}]


def test_blocks_fills_a_dict_of_some_outputs_with_skips():
    """A handler that returns {component: value} for some outputs (as the dispatchers yield): the rest skip."""
    results = []
    for blocks_class in (gr.Blocks, wire.Blocks):
        with blocks_class() as demo:
            outputs = [gr.Markdown(), gr.Plot(), gr.Plot(), gr.Dataframe()]
            gr.Button().click(lambda: {outputs[1]: FIGURE, outputs[0]: "only these two"}, None, outputs)
        results.append(asyncio.run(demo.process_api(next(iter(demo.fns.values())), [], SessionState(demo)))["data"])
    assert results[0] == results[1]
    assert results[1][0] == "only these two" and results[1][2] == gr.skip() == results[1][3]


def test_a_clamped_slider_takes_a_number_past_its_ends_as_the_end_and_refuses_the_rest():
    from ui.page import components

    with gr.Blocks():
        words = components.ClampedSlider(4, 60, value=15, step=1, label="words")
        plain = gr.Slider()
    assert [words.preprocess(v) for v in (3, 4, 30, 61, -1e9)] == [4, 4, 30, 60, 4]
    for bad in ("30", float("nan"), True, [3]):
        with pytest.raises(gr.Error, match="words must be a number between 4 and 60"):
            words.preprocess(bad)
    assert words.get_block_name() == plain.get_block_name()  # drawn as Gradio's own slider
