"""ui.page.components: what each component hands a handler for a raw API value, and what it says for a bad one."""
from __future__ import annotations

import json
import math

import gradio as gr
import pytest

from ui.page import components


def built(make):
    with gr.Blocks():
        return make()


def gradio_block_name(cls) -> str:
    """The name the page draws Gradio's own component by: our subclasses must be drawn as it."""
    return built(cls).get_block_name()


def test_a_layer_slider_leaves_the_range_to_the_model_named():
    """Drawn for lm (4 layers), asked for minilm's layer 6 by an API call: the handler checks it against minilm."""
    layer = built(lambda: components.ModelSlider(1, 4, value=1, step=1, label="Layer"))
    assert layer.preprocess(6) == 6 and layer.preprocess(None) is None
    for bad in ("6", math.inf, True, [6]):
        with pytest.raises(gr.Error, match="Layer must be a whole number from 1"):
            layer.preprocess(bad)
    assert layer.get_block_name() == gradio_block_name(gr.Slider)  # the page draws it as Gradio's slider


def test_a_number_box_refuses_what_is_not_a_number_in_its_range():
    seed = built(lambda: components.Number(0, precision=0, minimum=0, maximum=9, label="seed"))
    assert seed.preprocess(3) == 3 and seed.preprocess(None) is None
    for bad, says in (("abc", "seed must be a number between 0 and 9, not 'abc'"), (math.nan, "not 'nan'"),
                      ([1], r"not '\[1\]'"), (False, "not 'False'")):
        with pytest.raises(gr.Error, match=says):
            seed.preprocess(bad)
    with pytest.raises(gr.Error, match="greater than maximum"):
        seed.preprocess(10)
    assert seed.get_block_name() == gradio_block_name(gr.Number)


def test_a_textbox_takes_text_only():
    text = built(lambda: components.Textbox(label="Sentence"))
    assert text.preprocess("a cat") == "a cat" and text.preprocess(None) is None
    for bad, kind in ((12345, "int"), (["a", "b"], "list"), ({"a": 1}, "dict")):
        with pytest.raises(gr.Error, match=f"Sentence must be a string, not {kind}"):
            text.preprocess(bad)
    assert text.get_block_name() == gradio_block_name(gr.Textbox)


def test_model_choices_check_the_form_and_leave_membership_to_the_handler():
    heads = built(lambda: components.ModelChoices(choices=["L1 H1"], value=[], multiselect=True, label="Heads"))
    assert heads.preprocess(["L6 H12", "cross L2 H3"]) == ["L6 H12", "cross L2 H3"]  # another model's heads
    for bad in ([1.5], ["x" * 101], ["L1 H1"] * (components.MAX_PICKED + 1), [True], {"a": 1}):
        with pytest.raises(gr.Error, match="Heads takes a list of at most"):
            heads.preprocess(bad)
    row = built(lambda: components.ModelChoices(choices=[], label="row"))
    assert row.preprocess(3) == 3 and row.preprocess("L1 H2") == "L1 H2"
    with pytest.raises(gr.Error, match="row takes one choice"):
        row.preprocess([3])
    assert heads.api_info()["items"] == row.api_info() and "anyOf" in row.api_info()


def test_numbered_choices_are_integers_in_the_api_schema():
    """Gradio lists every choice as a string, so a script sending the "0" it read was refused."""
    numbered = built(lambda: components.Dropdown(choices=[("first", 0), ("second", 1)], value=None))
    named = built(lambda: components.Dropdown(choices=["lm", "mlm"], value="lm"))
    several = built(lambda: components.Dropdown(choices=[1, 2], value=[1], multiselect=True))
    radio = built(lambda: components.Radio([1, 2, 4], value=1))
    assert numbered.api_info() == {"type": "integer", "enum": [0, 1]}
    assert named.api_info()["type"] == "string" and several.api_info()["items"]["type"] == "integer"
    assert radio.api_info()["type"] == "integer" and radio.get_block_name() == gradio_block_name(gr.Radio)


def test_a_plot_gives_each_figure_its_own_slide_config_named_after_the_view():
    from viz.figure import figure

    drawn = figure([{"type": "heatmap", "z": [[1, 2]]}], {"title": {"text": "Layer 2, <b>head 3</b> · lm"}})
    named = built(lambda: components.Plot(elem_id="head-detail"))
    untitled = built(lambda: components.Plot())
    for plot, name in ((named, "head-detail"), (untitled, "layer-2-head-3-lm")):
        sent = json.loads(plot.postprocess(drawn).plot)
        assert sent["config"] == {"displaylogo": False,
                                  "toImageButtonOptions": {"format": "png", "scale": 2, "filename": f"attention-{name}"}}
        assert sent["data"][0]["type"] == "heatmap"
    assert named.postprocess(None) is None
    assert named.get_block_name() == gradio_block_name(gr.Plot)
