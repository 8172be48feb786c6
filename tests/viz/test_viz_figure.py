"""viz.figure: unchecked figures written straight to JSON must say what Plotly itself would write."""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from viz.figure import figure


def test_json_is_what_plotly_writes_with_arrays_nan_scalars_and_markup():
    z = np.array([[0.5, np.nan], [np.float32(0.25), 1.0]])
    data = [{"type": "heatmap", "z": z, "x": ("</script>", "b\u2028"), "y": [np.int64(0), 1],
             "zmin": np.float64(0.0), "text": np.array([["a", "b"], ["c", "d"]], dtype=object)}]
    layout = {"title": {"text": "<b>a/b</b>"}, "height": np.int32(300)}
    ours = figure(data, layout).to_json()
    plotlys = pio.to_json(go.Figure(data=data, layout=layout), validate=False, engine="orjson")
    written = json.loads(ours)
    # plus the text alternative screen readers get (viz.describe), from the title and the numbers drawn
    assert written["layout"].pop("meta") == {"alt": "a/b. Values from 0.25 to 1; the largest at row position 2, "
                                                     "column “b”."}  # a line separator read as a space
    assert written == {key: value for key, value in json.loads(plotlys).items() if key != "layout"} | {
        "layout": {k: v for k, v in json.loads(plotlys)["layout"].items() if k != "template"}}
    assert "</" not in ours and "\u2028" not in ours  # a token cannot close a script it is embedded in
    assert json.loads(ours)["data"][0]["z"]["dtype"] == "f8"  # numbers as a typed array, not a list
    assert json.loads(ours)["data"][0]["x"] == ["</script>", "b\u2028"]


def test_what_a_figure_cannot_hold_is_refused_by_name():
    with pytest.raises(TypeError, match="set"):
        figure([{"type": "heatmap", "z": {1, 2}}], {}).to_json()


@pytest.mark.parametrize("array", [
    np.arange(12, dtype=np.uint8).reshape(3, 4), np.linspace(0, 1, 5, dtype=np.float32), np.eye(3),
    np.arange(-3, 3, dtype=np.int64), np.array([0, 40_000], dtype=np.int64), np.array([-5, 2**40], dtype=np.int64),
    np.array([1, 300], dtype=np.uint64), np.arange(6, dtype=np.int16).reshape(1, 2, 3),
    np.eye(3)[:, ::2],  # not contiguous
])
def test_typed_arrays_are_what_plotly_writes(array):
    from _plotly_utils.utils import to_typed_array_spec

    from viz.figure import typed_array

    plotlys = to_typed_array_spec(array)
    expected = plotlys.tolist() if isinstance(plotlys, np.ndarray) else plotlys
    assert typed_array(array) == expected


@pytest.mark.parametrize("array", [np.array([], dtype=np.float32), np.array([True, False]), np.array(["a", "b"])])
def test_arrays_plotly_has_no_typed_form_for_are_written_as_lists(array):
    from viz.figure import typed_array

    assert typed_array(array) == array.tolist()
    assert json.loads(figure([{"type": "scatter", "x": array}], {}).to_json())["data"][0]["x"] == array.tolist()


def test_a_grid_travels_as_whole_hundredths_and_reads_back_as_the_same_float32_numbers():
    from viz import tiles

    rng = np.random.default_rng(3)
    mask = np.tril(np.ones((9, 9), dtype=bool))
    probs = rng.random((2, 3, 9, 9)).astype(np.float32) * mask
    probs /= probs.sum(-1, keepdims=True)
    fig = tiles.all_heads_grid(probs, mask=mask)
    drawn = np.asarray(fig.data[0].z)  # what Python reads: float32 on the 0..1 scale, rounded to 0.01
    sent = json.loads(fig.to_json())["data"][0]
    assert sent["z"]["dtype"] == "u1" and sent["meta"]["z_divisor"] == 100 and (sent["zmin"], sent["zmax"]) == (0, 1)
    hundredths = np.frombuffer(__import__("base64").b64decode(sent["z"]["bdata"]), np.uint8).reshape(drawn.shape)
    # what the page script computes: k / 100 as float32, and NaN where the byte is meta.z_gap (a gap between tiles)
    assert sent["meta"]["z_gap"] == 255 and (hundredths == 255).any() and hundredths[hundredths != 255].max() <= 100
    page = np.where(hundredths == sent["meta"]["z_gap"], np.nan, hundredths / 100).astype(np.float32)
    np.testing.assert_array_equal(page, drawn)
    assert "%{z:.2f}" in sent["hovertemplate"]

