"""Causal tracing's figures (viz/patching.py, viz/routes.py) and their text alternatives."""
from __future__ import annotations

import numpy as np
import pytest

from analysis.routes import route_graph
from viz import describe
from tests import tolerances
from viz.patching import column_labels, comparison_figure
from viz.routes import routes_figure


def test_changed_positions_are_marked_and_escaped():
    assert column_labels(["<s>", "▁cat", "▁sat"], ["<s>", "▁dog", "▁sat"]) == ["&lt;s&gt;", "▁cat*", "▁sat"]


def test_the_comparison_draws_both_grids_on_one_scale():
    preview = np.array([[0.1, 0.9], [0.0, 1.2]])
    exact = np.array([[0.2, 0.8], [-0.1, 1.0]])
    fig = comparison_figure(preview, exact, ["a", "b"], "Patching x", "position", alt="said")
    left, right = fig.data[0], fig.data[2]
    assert left["zmin"] == right["zmin"] == -1.2 and left["zmax"] == right["zmax"] == 1.2
    # the figure carries float32: each number within half a float32 spacing of the float64 one
    tolerances.assert_within(np.asarray(right["z"], dtype=float), exact, tolerances.spacing32(exact) / 2)
    assert fig.layout.annotations[1].text == "exact" and fig.layout.meta["alt"] == "said"
    assert "0.00" in fig.data[3]["text"] or "-0.10" in fig.data[3]["text"]


def test_a_grid_still_streaming_says_how_far_it_is():
    preview = np.ones((3, 2))
    partial = np.full((3, 2), np.nan)
    partial[0] = [0.5, 0.25]
    fig = comparison_figure(preview, partial, ["a", "b"], "T", "position")
    assert fig.layout.annotations[1].text == "exact: 1 of 3 layers…"
    assert comparison_figure(preview, None, ["a", "b"], "T", "position").layout.annotations[1].text == \
        "exact: not computed yet"
    with pytest.raises(ValueError, match="must agree"):
        comparison_figure(preview, None, ["a"], "T", "position")


def test_the_text_alternative_names_the_most_restored_cell():
    preview = np.array([[0.1, 0.9], [0.0, 0.3]])
    partial = np.array([[0.2, 0.7], [np.nan, np.nan]])
    alt = describe.patching_alt("Patching x", preview, partial, ["“a”", "“b”"])
    assert alt.startswith("Patching x. Preview (an estimate): from 0.00 to 0.90, the most restored at layer 1, ")
    assert "Exact grid (1 of 2 layers so far): from 0.20 to 0.70" in alt and "marked wrong" not in alt
    assert "Exact grid: not computed yet" in describe.patching_alt("T", preview, None, ["a", "b"])
    wrong = np.array([[False, True], [False, False]])
    assert describe.patching_alt("T", preview, partial, ["a", "b"], wrong).endswith(
        ". 1 preview cell marked wrong by the exact grid.")


def test_the_routes_graph_draws_the_route_and_says_it():
    h = np.zeros((2, 1, 2, 2))
    h[1, 0, 1, 0] = 0.6
    residual = np.array([[0.0, 0.0], [0.0, 0.4]])
    mlp = np.array([[0.2, 0.3], [0.1, 0.0]])
    graph = route_graph(h, residual, 1, 0.1)
    fig = routes_figure(graph, ["<s>", "cat"], 2, mlp, 1)
    alt = fig.layout.meta["alt"]
    assert alt.startswith("Routes into “cat” (position 2), edges ≥ 0.10. 3 nodes, 2 edges, 1 of them through "
                          "attention; the strongest: layer 2 from “<s>” into “cat” 0.60.")
    nodes = fig.data[-1]
    assert sorted(zip(nodes["x"], nodes["y"])) == [(0, 1), (1, 1), (1, 2)]
    with pytest.raises(ValueError, match="mlp must be"):
        routes_figure(graph, ["<s>", "cat"], 2, mlp[:1], 1)


def test_the_preview_is_labelled_an_estimate_and_its_wrong_cells_are_marked():
    preview = np.array([[0.1, 0.9], [-0.8, 1.2]])
    exact = np.array([[0.2, 0.8], [0.9, 1.0]])
    waiting = comparison_figure(preview, None, ["a", "b"], "T", "position")
    assert waiting.layout.annotations[0].text == "preview: an estimate"
    wrong = np.array([[False, False], [True, False]])
    fig = comparison_figure(preview, exact, ["a", "b"], "T", "position", wrong=wrong)
    assert fig.layout.annotations[0].text == "preview: an estimate, × wrong"
    marks = [t for t in fig.data if t["type"] == "scatter" and t["mode"] == "markers"]
    assert len(marks) == 1 and marks[0]["xaxis"] == "x"  # on the preview's panel only
    assert list(marks[0]["x"]) == [0] and list(marks[0]["y"]) == [1]
    assert "×" not in comparison_figure(preview, exact, ["a", "b"], "T", "position").layout.annotations[0].text
