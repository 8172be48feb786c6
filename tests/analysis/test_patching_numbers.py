"""The numbers the Causal tracing tab states (analysis/patching.py) and the route it draws (analysis/routes.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from analysis import patching as numbers
from analysis.routes import route_graph, strongest_edges


def test_agreement_is_pearsons_r():
    a = np.array([[0.0, 0.5], [1.0, 0.2]])
    assert numbers.agreement(a, 2 * a + 1) == pytest.approx(1.0)
    assert numbers.agreement(a, -a) == pytest.approx(-1.0)
    assert math.isnan(numbers.agreement(a, np.zeros_like(a)))
    with pytest.raises(ValueError, match="differ in shape"):
        numbers.agreement(a, a[0])


def test_strongest_cells_and_restoring_layers():
    grid = np.array([[0.1, 0.9, 0.0], [0.6, 0.7, 0.0], [0.0, 0.2, 1.0]])
    assert numbers.strongest(grid, 2) == [(2, 2, 1.0), (0, 1, 0.9)]
    assert numbers.restoring_layers(grid, 1) == [0, 1]
    assert numbers.layer_runs([0, 1, 2, 5]) == "1–3 and 6"
    assert numbers.layer_runs([3]) == "4" and numbers.layer_runs([0, 2, 3, 6]) == "1, 3–4 and 7"


def test_the_route_walks_down_from_the_prediction():
    layers, heads, t = 2, 2, 3
    h = np.zeros((layers, heads, t, t))
    residual = np.zeros((layers, t))
    residual[1, 2] = 0.5  # layer 2 keeps position 3's stream
    h[1, 1, 2, 0] = 0.3  # layer 2, head 2: position 1 into position 3
    h[0, 0, 0, 0] = 0.02  # below the threshold
    residual[0, 0] = 0.9  # layer 1 keeps position 1's stream
    h[0, 0, 1, 0] = 0.8  # into position 2: not on the route (nothing at layer 2 reads position 2)
    graph = route_graph(h, residual, 2, 0.1)
    assert graph.nodes == {(2, 2), (1, 2), (1, 0), (0, 0)}
    assert {(e.layer, e.source, e.target, e.kind) for e in graph.edges} == {
        (2, 2, 2, "residual"), (2, 0, 2, "attention"), (1, 0, 0, "residual")}
    (edge,) = strongest_edges(graph)
    assert (edge.head, edge.weight) == (1, 0.3)


def test_a_preview_cell_is_wrong_when_backwards_or_far_off():
    """Backwards: the exact cell is at least 0.1 from 0 and the preview's sign differs; off: more than 0.3 away.
    A cell not computed yet (NaN) is neither."""
    exact = np.array([[1.0, 0.05, 0.5, np.nan], [-0.2, 0.9, 0.0, 0.4]])
    preview = np.array([[-0.9, -0.05, 0.1, 5.0], [0.1, 0.85, 0.2, 0.35]])
    backwards, off = numbers.wrong_cells(preview, exact)
    assert backwards.tolist() == [[True, False, False, False], [True, False, False, False]]
    assert off.tolist() == [[False, False, True, False], [False, False, False, False]]
    assert numbers.wrong_places(np.array([[True, False, True], [True, False, False], [False, False, True]])) == \
        [(0, [0, 1]), (2, [0, 2])]
    with pytest.raises(ValueError, match="differ in shape"):
        numbers.wrong_cells(preview, exact[0])
