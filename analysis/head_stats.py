"""Per-head statistics: what each head mostly does, in numbers and in a plain-language label."""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from analysis.heads import head_names
from analysis.induction import induction_scores

CLEAR = 0.5  # a head "clearly does one thing" when that thing gets at least half its attention
BROAD = 0.8  # ... or spreads out: entropy at least 80% of the most it could be

MIN_CHOICES = 4  # spread is judged on rows that could look at least at this many keys
WHOLE_ARRAY_CELLS = 1 << 18  # head_numbers' entropy of at most this many weights (1 MB of float32) in one pass

COLUMNS = ["head", "layer", "head_in_layer", "entropy_bits", "spread", "mean_distance", "previous", "next", "first",
           "special", "self", "induction", "label"]


def head_stats(probs, mask=None, aligned: bool | None = None, special_keys=None, special_name: str = "special",
               ids=None) -> pd.DataFrame:
    """One row per head with averages over query rows: head_columns() as a DataFrame (its docstring says
    what each column means)."""
    return pd.DataFrame(head_columns(probs, mask, aligned, special_keys, special_name, ids), columns=COLUMNS)


def head_columns(probs, mask=None, aligned: bool | None = None, special_keys=None, special_name: str = "special",
                 ids=None) -> dict[str, list]:
    """The per-head statistics as plain columns, COLUMNS -> one value per head (floats rounded to 3
    places, NaN where a statistic does not apply). The app's table is built from these directly: a
    DataFrame per request cost more than all the arithmetic.

    probs    (L, H, t, s) attention weights, rows summing to 1
    mask     optional (t, s) bool, True where a query may attend; sets how many keys each
             row could spread over (for `spread`). Defaults to all keys.
    aligned  True when query i and key i are the same token (self-attention); then the
             previous/self/distance columns are filled. Defaults to t == s. For cross-attention
             pass False: those columns are NaN.

    special_keys  key positions of the special tokens the model adds around the text ([CLS] and
             [SEP] for BERT, <s> for ours; none for GPT-2); special_name names them in the label.
    ids      the (t,) token ids of a self-attention input; when a token repeats, `induction` is the mass
             from it on the token after its previous occurrence (analysis.induction), else NaN.

    Columns: head ('L1 H2'), layer and head_in_layer (1-based), entropy_bits (mean row entropy),
    spread (entropy / its maximum, 0 = one key, 1 = uniform; over rows with >= 4 keys to choose from), mean_distance (|query - key| in
    tokens, attention-weighted), previous (mass on key i-1), next (mass on key i+1, over rows that
    have one), first (mass on key 0), special (mass on special_keys), self (mass on key i),
    label: "previous-token", "next-token", "first-token sink" (or "[CLS]/[SEP] sink" when special
    keys are given), "self", "induction" (with repeated ids), "broad" or "mixed": each measured, never
    guessed (see `label`).
    The first query row is left out of the averages where the mask gives it one key only (a causal
    model: it can only look at itself); an unmasked model's first row counts like any other.
    """
    numeric = head_numbers(probs, mask, aligned, special_keys, ids)
    return columns(numeric, np.shape(probs)[0], np.shape(probs)[1], special_name)


def head_numbers(probs, mask=None, aligned: bool | None = None, special_keys=None, ids=None,
                 entropy=None) -> dict[str, np.ndarray]:
    """head_columns' numbers, unrounded: NUMBERS -> (L, H) float64 (NaN where one does not apply). Its
    twin computed where the trace is (model/view_numbers.head_numbers) gives the same within float32's
    rounding; `columns` turns either into the table. entropy: each head's row_entropy over averaged_rows,
    (L, H, r), where a pass over every head has computed it already (analysis.overview.HostViews)."""
    # float32, as the trace holds them: a float64 copy of a 12 x 12-head, 512-token trace is 300 MB and took
    # longer than every statistic below; each sum is over at most a few thousand weights
    probs = np.asarray(probs, dtype=np.float32)
    if probs.ndim != 4:
        raise ValueError(f"probs must be (L, H, t, s), got shape {probs.shape}; pass trace.attention[kind].probs")
    n_layers, n_heads, t, s = probs.shape
    aligned = (t == s) if aligned is None else aligned
    if aligned and t != s:
        raise ValueError(f"aligned=True needs square attention, got t={t}, s={s}; pass aligned=False for cross-attention")
    mask = np.ones((t, s), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != (t, s):
        raise ValueError(f"mask shape {mask.shape} does not match attention (t, s) = {(t, s)}")

    rows = averaged_rows(mask)
    p = probs[:, :, rows]  # (L, H, r, s)
    query_pos = np.arange(t)[rows]
    if entropy is None:
        # A small trace (at most WHOLE_ARRAY_CELLS weights) takes row_entropy's passes over every head at once:
        # each numpy call costs microseconds whatever its size, and 4 calls per head were a third of the table's
        # time at 32 tokens. A large one goes one head at a time (row_entropy says why).
        entropy = np.empty(p.shape[:-1], dtype=np.float64)  # (L, H, r)
        if p.size <= WHOLE_ARRAY_CELLS:
            every = np.ascontiguousarray(p).reshape(-1, p.shape[-1])
            row_entropy(every, entropy.reshape(-1), np.empty(every.shape, dtype=np.float32))
        else:
            terms = np.empty(p.shape[-2:], dtype=np.float32)
            for layer in range(n_layers):
                for head in range(n_heads):
                    row_entropy(p[layer, head], entropy[layer, head], terms)
            del terms
    with np.errstate(divide="ignore", invalid="ignore"):
        choices = mask[rows].sum(-1)  # (r,)
        max_entropy = np.log2(np.maximum(choices, 1))
        spread = np.where(max_entropy > 0, entropy / np.where(max_entropy > 0, max_entropy, 1), np.nan)
        if (choices >= MIN_CHOICES).any():  # a row with 2 or 3 keys is "broad" too easily
            spread = np.where(choices >= MIN_CHOICES, spread, np.nan)
    first = p[..., 0].mean(-1)
    nan = np.full((n_layers, n_heads), np.nan)
    if aligned:
        distance, on_self, on_previous, on_next = _aligned_positions(t, s, len(query_pos))
        # one matrix-vector product (BLAS) over every head's rows at once, on the whole (contiguous) array
        whole = np.ascontiguousarray(probs)
        mean_distance = (whole.reshape(n_layers * n_heads, -1) @ distance.reshape(-1)).reshape(n_layers, n_heads) \
            / len(query_pos)
        self_mass = p[(...,) + on_self].mean(-1)
        previous = p[(...,) + on_previous].mean(-1) if len(on_previous[0]) else nan  # the rows that have one
        next_mass = p[(...,) + on_next].mean(-1) if len(on_next[0]) else nan
    else:
        mean_distance, self_mass, previous, next_mass = nan, nan, nan, nan
    special_keys = sorted(set(int(k) for k in special_keys)) if special_keys is not None else []
    special = p[..., special_keys].sum(-1).mean(-1) if special_keys else nan
    induction = induction_scores(probs, ids) if aligned and ids is not None and len(ids) == t else nan

    def whole(values) -> np.ndarray:
        values = np.asarray(values, dtype=np.float64)
        return values.copy() if values.shape == (n_layers, n_heads) else \
            np.array(np.broadcast_to(values, (n_layers, n_heads)))

    # np.nanmean's own arithmetic (NaN as 0 in the sum, divided by the count), without the warning it gives a head
    # whose rows all lack a spread (NaN, as meant): catching that warning on every call cost more than the mean
    counted = ~np.isnan(spread)
    with np.errstate(invalid="ignore", divide="ignore"):
        spread_mean = np.where(counted, spread, 0).sum(-1) / counted.sum(-1, dtype=np.intp)
    return {"entropy_bits": whole(entropy.mean(-1)), "spread": whole(spread_mean),
            "mean_distance": whole(mean_distance), "previous": whole(previous), "next": whole(next_mass),
            "first": whole(first), "special": whole(special), "self": whole(self_mass), "induction": whole(induction)}


def averaged_rows(mask) -> slice:
    """The query rows head_numbers averages over: all but the first where the (t, s) mask gives it one key
    only (a causal model: it can only look at itself)."""
    return slice(1, None) if mask.shape[0] > 1 and mask[0].sum() == 1 else slice(None)


TINY = np.float32(np.finfo(np.float32).tiny)


def row_entropy(weights: np.ndarray, out: np.ndarray, terms: np.ndarray) -> None:
    """Each row's entropy in bits of one head's (r, s) float32 weights, into out (r,) float64; terms: an (r, s)
    float32 buffer. 0·log 0 counts as 0 (a weight of 0 gives 0 · log2 of the tiniest float). One head at a time
    in one float32 buffer, summed in float64: the head's weights are still in the processor's cache for the
    product (half the time of whole-array passes), and einsum(dtype=float64) made a float64 copy of both
    operands, 600 MB at 512 tokens on a 12 x 12-head model, most of the table's time (rebuilt per request)."""
    np.maximum(weights, TINY, out=terms)
    np.log2(terms, out=terms)
    terms *= weights
    np.negative(terms.sum(-1, dtype=np.float64), out=out)


@functools.lru_cache(maxsize=64)
def _aligned_positions(t: int, s: int, rows: int) -> tuple:
    """For self-attention over t queries and s keys whose last `rows` query rows are averaged (the first is left out
    where it has one key only): the (t, s) distance |query - key| (0 on a row left out), and (row, key) index pairs
    into those rows for the key itself, the previous and the next token (rows that have one). Kept per size: every
    request of that length reads the same, read-only."""
    query_pos = np.arange(t)[t - rows:]
    row = np.arange(rows)
    distance = np.abs(np.arange(t)[:, None] - np.arange(s)[None, :]).astype(np.float32)  # (t, s)
    distance[:t - rows] = 0
    has_previous, has_next = query_pos >= 1, query_pos + 1 < s
    pairs = ((row, query_pos), (row[has_previous], query_pos[has_previous] - 1), (row[has_next], query_pos[has_next] + 1))
    for array in (distance,) + tuple(a for pair in pairs for a in pair):
        array.flags.writeable = False
    return (distance,) + pairs


NUMBERS = ["entropy_bits", "spread", "mean_distance", "previous", "next", "first", "special", "self", "induction"]


def columns(numbers: dict[str, np.ndarray], n_layers: int, n_heads: int, special_name: str = "special") -> dict[str, list]:
    """head_columns from head_numbers' (L, H) arrays: every number rounded to 3 places, and the labels."""
    numeric = {name: np.asarray(numbers[name], dtype=np.float64).reshape(-1) for name in NUMBERS}
    return {"head": head_names(n_layers, n_heads),
            "layer": [layer + 1 for layer in range(n_layers) for _ in range(n_heads)],
            "head_in_layer": [head + 1 for _ in range(n_layers) for head in range(n_heads)],
            **dict(zip(numeric, np.round(np.stack(list(numeric.values())), 3).tolist())),  # one rounding for all
            "label": labels(numeric, special_name)}


def labels(numeric: dict[str, np.ndarray], special_name: str = "special") -> list[str]:
    """A plain-language name for each head, from head_columns' unrounded columns (name -> one value per
    head): the pattern that gets at least CLEAR of its attention (the first of equals in the order
    previous, next, sink, self, induction; the special tokens replace the first token as the sink when
    they are known, as the first token is one of them), else "broad" when its spread is at least BROAD,
    else "mixed". Patterns that do not apply (NaN) never win."""
    sink = "special" if np.isfinite(numeric["special"]).all() else "first"
    names = ["previous-token", "next-token", f"{special_name} sink" if sink == "special" else "first-token sink",
             "self", "induction"]
    masses = np.stack([numeric[c] for c in ("previous", "next", sink, "self", "induction")], axis=-1)
    masses = np.where(np.isfinite(masses), masses, -np.inf)
    best = masses.argmax(-1)  # the first of equals
    clear = masses[np.arange(len(best)), best] >= CLEAR
    broad = numeric["spread"] >= BROAD  # NaN: not broad
    return [names[b] if c else ("broad" if w else "mixed")
            for b, c, w in zip(best.tolist(), clear.tolist(), broad.tolist())]


def label(row: dict, special_name: str = "special") -> str:
    """`labels` for one head given as a dict of its statistics (a missing or None one does not apply)."""
    names = ("previous", "next", "first", "special", "self", "induction", "spread")
    return labels({name: np.array([np.nan if row.get(name) is None else row[name]], dtype=float) for name in names},
                  special_name)[0]
