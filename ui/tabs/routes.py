"""Causal tracing's section "Information-flow routes" (Ferrando and Voita 2024): the parts of the clean prompt's
residual stream (experiments/routes.py), the route drawn above a threshold (analysis/routes.py, viz/routes.py), and
/flow_routes's numbers."""
from __future__ import annotations

from analysis.heads import head_name
from analysis.routes import route_graph, strongest_edges
from experiments import routes
from experiments.patching import PatchingError
from ui.page.context import figure_font
from model.registry import ModelRegistry
from ui.page.messages import InputError, clean_text
from viz.labels import markdown_label
from viz.routes import routes_figure

THRESHOLD = 0.04  # Ferrando and Voita's default edge threshold

ROUTES_EXPLANATION = """
**Information-flow routes** (Ferrando and Voita 2024) for the clean prompt. In a pre-norm model the residual
stream after layer *l* at position *i* is exactly a sum: the stream before the layer, plus each head's
α<sub>ij</sub> · W<sub>O</sub> v<sub>j</sub> for every position *j* it reads, plus the attention's output bias,
plus the feed-forward's output (checked to add up by the tests). A part's **importance** is its *proximity*,
max(0, ‖x‖₁ − ‖x − part‖₁) (how much nearer in L1 distance to the whole x it is than zero), divided by the sum
of all the parts' proximities, so the parts of every node add up to 1. The graph keeps, from the prediction
downwards, every edge at least as important as the threshold.
"""


def quoted(token) -> str:
    return f"“{markdown_label(token)}”"


def _text(text, limit: int) -> str:
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError("The clean prompt is empty: type the sentence whose routes to draw.")
    return clean_text(text, limit)


def flow(registry: ModelRegistry, name, text) -> routes.Routes:
    loaded = registry.get(name)
    text = _text(text, registry.max_chars(name))
    try:
        return registry.cached(("routes", name, text), lambda: routes.flow_routes(loaded, text))
    except PatchingError as e:
        raise InputError(str(e)) from None


def check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise InputError(f"The threshold must be a number above 0 and at most 1, not {threshold!r}.")
    return float(threshold)


def check_position(position, found: routes.Routes) -> int:
    """A 1-based position (None or 0: the prediction's own) as 0-based."""
    t = len(found.tokens)
    if position is None or position == 0:
        return found.position
    if isinstance(position, bool) or not isinstance(position, (int, float)) or position != int(position) \
            or not 1 <= position <= t:
        raise InputError(f"Choose a position between 1 and {t} (the text is {t} tokens), or 0 for the last.")
    return int(position) - 1


def routes_summary(found: routes.Routes, position: int, graph) -> str:
    """The prediction's node in numbers, and the strongest edges drawn."""
    top = found.n_layers - 1
    token = quoted(found.tokens[position])
    text = (f"At {token} (position {position + 1}), the stream after the last layer is made of: the stream "
            f"before it {found.residual[top, position]:.2f}, attention {found.attention[top, position].sum():.2f}, "
            f"the feed-forward {found.mlp[top, position]:.2f}"
            + (f", the output bias {found.bias[top, position]:.2f}" if found.bias[top, position] >= 0.005 else "")
            + f". With the threshold {graph.threshold:.2f}: {len(graph.nodes)} nodes and {len(graph.edges)} edges.")
    edges = strongest_edges(graph, 3)
    if edges:
        text += " The strongest attention edges: " + "; ".join(
            f"layer {e.layer}, {quoted(found.tokens[e.source])} (position {e.source + 1}) into "
            f"{quoted(found.tokens[e.target])} (position {e.target + 1}) {e.weight:.2f}, most through head "
            f"{head_name(e.layer - 1, e.head)}" for e in edges) + "."
    return text


def routes_view(registry: ModelRegistry, name, text, position, threshold, presenter):
    found = flow(registry, name, text)
    at = check_position(position, found)
    graph = route_graph(found.heads, found.residual, at, check_threshold(threshold))
    figure = routes_figure(graph, found.tokens, found.n_layers, found.mlp, at, font_size=figure_font(presenter))
    return routes_summary(found, at, graph), figure


def routes_numbers(registry: ModelRegistry, text, model, position, threshold) -> dict:
    """/flow_routes: the route's nodes and edges, and every node's parts."""
    found = flow(registry, model, text)
    at = check_position(position, found)
    graph = route_graph(found.heads, found.residual, at, check_threshold(threshold))
    return {"tokens": found.tokens, "position": at + 1, "threshold": graph.threshold,
            "nodes": [[layer, i + 1] for layer, i in sorted(graph.nodes)],
            "edges": [{"layer": e.layer, "from": e.source + 1, "to": e.target + 1, "kind": e.kind,
                       "importance": round(e.weight, 4),
                       **({"head": e.head + 1, "head_importance": round(e.head_weight, 4)}
                          if e.kind == "attention" else {})} for e in graph.edges],
            "feed_forward": found.mlp.astype(float).round(4).tolist(),
            "residual": found.residual.astype(float).round(4).tolist(),
            "decomposition": "x after layer l at i = x before it + sum over heads h and positions j of "
                             "alpha_ij^h W_O^h v_j^h + b_O + the feed-forward's output; importance = "
                             "max(0, |x|_1 - |x - part|_1), normalised over the parts of x (Ferrando and Voita 2024)"}
