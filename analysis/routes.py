"""Which parts of an information-flow route a view draws (numpy; the importances come from experiments/routes.py).

Start at the prediction's node (after the last layer, at its position) and walk down the stack: an edge into a
node already on the route is kept when its importance is at least the threshold, and its source node joins the
route (Ferrando and Voita 2024). Nodes are (layer, position), layer 0 being the embeddings; the edges into
layer l come from layer l's attention (position j into i) and its residual connection (i into i)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Edge:
    """layer: the block (1-based) the edge goes through, from node (layer − 1, source) to (layer, target).
    kind "attention" (weight: the heads summed; head: the largest one, 0-based) or "residual"."""

    layer: int
    source: int
    target: int
    kind: str
    weight: float
    head: int = -1
    head_weight: float = 0.0


@dataclass
class RouteGraph:
    nodes: set  # (layer, position)
    edges: list  # Edge
    threshold: float


def route_graph(heads, residual, position: int, threshold: float) -> RouteGraph:
    """heads (L, h, t, t) and residual (L, t) importances (Routes.heads, Routes.residual); the route into
    (L, position) with every edge of importance ≥ threshold."""
    heads = np.asarray(heads, dtype=np.float64)
    residual = np.asarray(residual, dtype=np.float64)
    layers = heads.shape[0]
    attention = heads.sum(axis=1)  # (L, t, t)
    nodes = {(layers, position)}
    frontier = {position}
    edges = []
    for layer in range(layers, 0, -1):  # block `layer` (1-based) writes the nodes at `layer`
        below = set()
        for i in sorted(frontier):
            if residual[layer - 1, i] >= threshold:
                edges.append(Edge(layer, i, i, "residual", float(residual[layer - 1, i])))
                below.add(i)
            for j in np.flatnonzero(attention[layer - 1, i] >= threshold):
                best = int(heads[layer - 1, :, i, j].argmax())
                edges.append(Edge(layer, int(j), i, "attention", float(attention[layer - 1, i, j]), best,
                                  float(heads[layer - 1, best, i, j])))
                below.add(int(j))
        nodes |= {(layer - 1, j) for j in below}
        frontier = below
        if not frontier:
            break
    return RouteGraph(nodes, edges, float(threshold))


def strongest_edges(graph: RouteGraph, count: int = 3, kind: str = "attention") -> list[Edge]:
    return sorted((e for e in graph.edges if e.kind == kind), key=lambda e: -e.weight)[:count]
