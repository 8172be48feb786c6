"""A figure's text alternative for screen readers, made from the numbers the figure draws.

Every figure the app sends carries one sentence or a few in `layout.meta.alt` (viz/figure.py adds it
when the figure has none of its own); the page reads it out as the figure's accessible name
(ui/page/accessibility.py). A view that knows better says it itself (the every-head grid names each
head's pattern); the rest are described here from their traces: an attention map by where each
row puts most of its weight, other heatmaps by their range and largest cell, bars by the largest
ones, lines by where they start, end and bottom out.
"""
from __future__ import annotations

import functools
import html
import re

import numpy as np

from analysis.overview import RowSummary, row_summary

MAX_CHARS = 600  # a screen reader reads it whole: a few sentences, never a table
MAX_TRACES = 4

# where a row's largest weight lies, as the sentence names it
PLACES = {"previous": "the previous token", "self": "itself", "next": "the next token", "first": "the first token",
          "last": "the last token"}


def plain(text) -> str:
    """Figure text (Plotly's subset of HTML, escaped tokens) as the words a screen reader should say."""
    text = str(text or "")
    return _short_plain(text) if len(text) <= SHORT else _plain(text)


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]*>", " ", text))).strip()


SHORT = 100  # a token label or a head's name: what the grid's text alternative reads again on every request
_short_plain = functools.lru_cache(maxsize=4096)(_plain)


def _values(value) -> np.ndarray | None:
    if value is None:
        return None
    if isinstance(value, dict):  # a typed-array spec (bdata) is never written by the views themselves
        return None
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def attention_pattern(probs, queries=None, keys=None) -> str:
    """Where the rows of a (t, s) attention map put most of their weight, e.g. "each token puts most of
    its attention (0.99 on average) on the previous token"; NaN cells (masked) count as no weight."""
    return attention_patterns(np.asarray(probs)[None], queries, keys)[0]


def attention_patterns(probs, queries=None, keys=None) -> list[str]:
    """attention_pattern of each (t, s) map of an (n, t, s) stack, computed for all of them at once (the
    every-head grid describes every head on each request)."""
    return describe_rows(row_summary(probs), queries, keys)


def describe_rows(rows: RowSummary, queries=None, keys=None) -> list[str]:
    """attention_pattern of each of n maps from its rows' numbers (analysis.overview.row_summary, or its twin
    computed where the trace is: experiments/view_numbers.py), without the maps themselves."""
    top, weight, live = rows.top, rows.weight, rows.live
    n, t = top.shape
    s = rows.width
    # a row chooses a place only where its largest weight stands out: at least 1.5 times an even share of
    # the keys it sees (an even row has no place, whatever argmax says)
    chosen_top = np.where(weight >= 1.5 / np.maximum(rows.positive, 1), top, -2)
    # which places each row may have (the first token has no previous one), and whether it chose it
    places, targets, allowed = _places(t, s)
    may = live[None] & allowed  # (places, n, t)
    hits = (chosen_top[None] == targets) & may
    eligible = may.sum(axis=2)  # (places, n)
    counts = hits.sum(axis=2)
    shares = np.where(eligible >= 2, counts / np.maximum(eligible, 1), 0.0)
    means = (hits * weight[None]).sum(axis=2) / np.maximum(counts, 1)  # the chosen places' weight
    firsts = np.argmax(shares >= shares.max(axis=0) - 1e-9, axis=0)  # the largest share (ties: the order above)
    # each map's numbers read once as Python values: indexing numpy arrays one scalar at a time was most of the
    # every-head grid's text alternative (described on every request)
    maps = np.arange(n)
    any_live = live.any(axis=1).tolist()
    best_share, best_mean = shares[firsts, maps].tolist(), means[firsts, maps].tolist()
    best_count, best_eligible = counts[firsts, maps].tolist(), eligible[firsts, maps].tolist()
    # a spread map: its rows' mean largest weight (over every row where all are live: the same float32 mean per row)
    all_live, row_means = live.all(axis=1).tolist(), weight.mean(axis=1).tolist()
    strongest, weight_of, top_of = weight.argmax(axis=1).tolist(), weight.tolist(), top.tolist()
    said = []
    for i, best in enumerate(firsts.tolist()):
        if not any_live[i]:
            said.append("no weights drawn")
            continue
        if best_share[i] >= 0.5:
            share, mean = best_share[i], best_mean[i]
            how = "most of its attention" if mean >= 0.5 else "the largest share of its attention"
            who = "each token puts" if share == 1 else f"{best_count[i]} of {best_eligible[i]} tokens put"
            if share < 1:
                how = how.replace("its", "their")
            said.append(f"{who} {how} ({mean:.2f} on average) on {PLACES[places[best]]}")
            continue
        q = strongest[i]  # the map's largest weight: the first row holding it, at that row's top
        average = row_means[i] if all_live[i] else float(weight[i][live[i]].mean())
        said.append(f"the attention is spread (largest weight per token {average:.2f} on average); the strongest, "
                    f"{weight_of[i][q]:.2f}, goes from {_name(queries, q)} to {_name(keys, top_of[i][q])}")
    return said


@functools.lru_cache(maxsize=256)
def _places(t: int, s: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The places a row of a (t, s) map may choose, in the order describe_rows prefers them: the previous token,
    itself and the next (self-attention only: positions line up), the first and the last. For each, as (places,
    1, t) arrays: the key each row would look at, and whether the row has it (the first token has no previous one;
    a map of one key has no first or last to tell apart). Kept per size: every request reads the same."""
    positions = np.arange(t)
    target = {"first": np.zeros(t, dtype=positions.dtype), "last": np.full(t, s - 1)}
    allowed = {"first": np.full(t, s > 1), "last": np.full(t, s > 1)}
    if t == s:
        target.update(previous=positions - 1, self=positions, next=positions + 1)
        allowed.update(previous=positions > 0, self=np.ones(t, dtype=bool), next=positions < t - 1)
    places = [place for place in ("previous", "self", "next", "first", "last") if place in target]
    targets, may = (np.stack([table[place] for place in places])[:, None, :] for table in (target, allowed))
    targets.flags.writeable = may.flags.writeable = False
    return places, targets, may


def _name(labels, i: int) -> str:
    if labels is not None and 0 <= i < len(labels):
        return f"“{plain(labels[i])}”"
    return f"position {i + 1}"


def _axis_labels(trace: dict, layout: dict, letter: str, count: int) -> list | None:
    """The label each position of a trace's axis shows (its category names, else the axis's tick texts)."""
    names = trace.get(letter)
    if isinstance(names, (list, tuple)) and names and isinstance(names[0], str) and len(names) == count:
        return list(names)
    axis = layout.get(f"{letter}axis{str(trace.get(f'{letter}axis', letter))[1:]}") or {}
    vals, text = axis.get("tickvals"), axis.get("ticktext")
    if vals is None or text is None:
        return None
    labels = [None] * count
    for v, label in zip(vals, text):
        if isinstance(v, (int, np.integer)) and 0 <= v < count:
            labels[v] = label
    return labels if any(label is not None for label in labels) else None


def _is_attention(trace: dict, z: np.ndarray) -> bool:
    if trace.get("zmin") != 0 or trace.get("zmax") != 1 or z.ndim != 2:
        return False
    finite = np.nan_to_num(z, nan=0.0)
    sums = finite.sum(axis=1)
    return bool(((finite >= -1e-6) & (finite <= 1 + 1e-6)).all() and np.all((np.abs(sums - 1) < 0.02) | (sums == 0)))


def _heatmap(trace: dict, layout: dict) -> str | None:
    z = _values(trace.get("z"))
    if z is None or z.ndim != 2 or not np.isfinite(z).any():
        return None
    rows, cols = _axis_labels(trace, layout, "y", z.shape[0]), _axis_labels(trace, layout, "x", z.shape[1])
    if _is_attention(trace, z):
        return attention_pattern(z, rows, cols)
    r, c = np.unravel_index(np.nanargmax(z), z.shape)
    return (f"values from {np.nanmin(z):.3g} to {np.nanmax(z):.3g}; the largest at row {_name(rows, r)}, "
            f"column {_name(cols, c)}")


def _bars(trace: dict) -> str | None:
    horizontal = trace.get("orientation") == "h"
    values = _values(trace.get("x" if horizontal else "y"))
    labels = trace.get("y" if horizontal else "x")
    if values is None or values.ndim != 1 or not np.isfinite(values).any():
        return None
    labels = list(labels) if labels is not None and not isinstance(labels, dict) else None
    order = np.argsort(-np.nan_to_num(values, nan=-np.inf))[:3]
    listed = ", ".join(f"{_name(labels, int(i)) if labels and isinstance(labels[0], str) else _bar_at(labels, i)} "
                       f"{values[i]:.3g}" for i in order)
    return f"{len(values)} bars; the largest: {listed}"


def _bar_at(labels, i) -> str:
    return f"at {labels[i]}" if labels is not None and i < len(labels) else f"bar {int(i) + 1}"


def _line(trace: dict) -> str | None:
    y = _values(trace.get("y"))
    if y is None or y.ndim != 1 or not np.isfinite(y).any():
        return None
    x = trace.get("x")
    x = list(x) if x is not None and not isinstance(x, dict) else list(range(1, len(y) + 1))
    finite = np.flatnonzero(np.isfinite(y))
    first, last, low = finite[0], finite[-1], int(np.nanargmin(y))
    at = (lambda i: f"at {plain(x[i])}" if i < len(x) else "")
    return (f"from {y[first]:.3g} ({at(first)}) to {y[last]:.3g} ({at(last)}), lowest {y[low]:.3g} ({at(low)})")


def describe(data: list, layout: dict) -> str:
    """Title, then what each trace (up to MAX_TRACES) shows, cut to MAX_CHARS."""
    title = plain((layout.get("title") or {}).get("text") if isinstance(layout.get("title"), dict)
                  else layout.get("title"))
    parts = []
    for trace in data[:MAX_TRACES]:
        kind = trace.get("type", "scatter")
        said = _heatmap(trace, layout) if kind == "heatmap" else _bars(trace) if kind == "bar" else \
            _line(trace) if kind == "scatter" else None
        if said:
            name = plain(trace.get("name")) if trace.get("name") and len(data) > 1 else ""
            parts.append(f"{name}: {said}" if name else said)
    text = ". ".join(p for p in [title] + [p[0].upper() + p[1:] for p in parts] if p)
    text = text + "." if text and not text.endswith(".") else text
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1].rstrip() + "…"


def with_alt(layout: dict, data: list) -> dict:
    """`layout` with its text alternative in meta.alt (kept if the view wrote its own), not changed in place."""
    meta = layout.get("meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if meta.get("alt"):
        return layout
    meta["alt"] = describe(data, layout)
    return {**layout, "meta": meta}


def grid_alt(title: str, tiles, names, limit: int = 8) -> str:
    """The every-head grid: each head with one clear pattern named (up to `limit`), the others counted.
    tiles: the (R, C, t, s) maps, or their RowSummary (analysis.overview: R·C maps, row-major)."""
    if isinstance(tiles, RowSummary):
        patterns, cols = _described(tiles), len(names[0])
    else:
        tiles = np.asarray(tiles)
        rows, cols = tiles.shape[:2]
        patterns = attention_patterns(tiles.reshape(rows * cols, *tiles.shape[2:]))
    said, more, spread = [], 0, 0
    for r, row in enumerate(names):
        for c, name in enumerate(row):
            pattern = patterns[r * cols + c]
            if pattern.startswith("the attention is spread") or pattern == "no weights drawn":
                spread += 1
            elif len(said) < limit:
                said.append(f"{plain(name)}: {pattern}")
            else:
                more += 1
    count = sum(len(row) for row in names)
    tail = ([f"{more} more with one clear pattern"] if more else []) + \
        ([f"{spread} {'maps spread' if spread > 1 else 'map spreads'} their attention"] if spread else [])
    return f"{plain(title)}. {count} maps. " + "; ".join(said + tail) + "."


def _described(rows: RowSummary) -> list[str]:
    """describe_rows(rows), kept with them: a strip of tiles is described for the page and again for a phone's
    figure of the same maps (viz/narrow.py), on every request."""
    said = rows.__dict__.get("_described")
    if said is None:
        said = rows.__dict__["_described"] = describe_rows(rows)
    return said


def carry_described(rows: RowSummary, picked: RowSummary, picks: list[int]) -> RowSummary:
    """picked (the maps numbered `picks` of rows) given rows' descriptions where they are written: each map's
    description is read from its own rows alone (describe_rows), so a phone's figure of one layer's heads says
    what the every-head grid said of them."""
    said = rows.__dict__.get("_described")
    if said is not None:
        picked.__dict__["_described"] = [said[i] for i in picks]
    return picked


def patching_alt(title: str, preview, exact, columns, wrong=None) -> str:
    """A causal-tracing figure: where the preview (an estimate) and (when computed) the exact grid restore the most,
    and how many preview cells the exact grid shows wrong. preview, exact (L, n); columns: the n column labels;
    wrong: boolean (L, n) or None."""
    parts = [plain(title)]
    for name, grid in (("Preview (an estimate)", preview), ("Exact grid", exact)):
        if grid is None:
            parts.append(f"{name}: not computed yet")
            continue
        z = np.asarray(grid, dtype=np.float64)
        if not np.isfinite(z).any():
            parts.append(f"{name}: not computed yet")
            continue
        layer, column = np.unravel_index(np.nanargmax(z), z.shape)
        done = int(np.isfinite(z).all(axis=1).sum())
        parts.append(f"{name}{'' if done == z.shape[0] else f' ({done} of {z.shape[0]} layers so far)'}: "
                     f"from {np.nanmin(z):.2f} to {np.nanmax(z):.2f}, the most restored at layer {layer + 1}, "
                     f"{_name(columns, int(column))} ({z[layer, column]:.2f})")
    if wrong is not None and np.any(wrong):
        count = int(np.sum(wrong))
        parts.append(f"{count} preview cell{'' if count == 1 else 's'} marked wrong by the exact grid")
    return ". ".join(parts) + "."


def routes_alt(graph, tokens, position: int, title: str) -> str:
    """An information-flow routes graph (its title first): how many nodes and edges, the strongest attention edges.
    tokens: the escaped labels the figure draws (viz.labels.token_labels)."""
    attention = sorted((e for e in graph.edges if e.kind == "attention"), key=lambda e: -e.weight)
    said = "; ".join(f"layer {e.layer} from {_name(tokens, e.source)} into {_name(tokens, e.target)} "
                     f"{e.weight:.2f}" for e in attention[:3])
    text = (f"{plain(title)}. {len(graph.nodes)} nodes, {len(graph.edges)} edges, {len(attention)} of them through "
            "attention" + (f"; the strongest: {said}." if said else "."))
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1].rstrip() + "…"
