import numpy as np
import pytest

from analysis.head_stats import head_stats

T = 6
CAUSAL = np.tril(np.ones((T, T), dtype=bool))


def one_head(matrix: np.ndarray) -> np.ndarray:
    return matrix[None, None].astype(np.float32)


def previous_token() -> np.ndarray:
    m = np.zeros((T, T))
    m[0, 0] = 1
    m[np.arange(1, T), np.arange(T - 1)] = 1
    return m


def test_perfect_previous_token_head():
    row = head_stats(one_head(previous_token()), CAUSAL).iloc[0]
    assert row["previous"] == 1.0
    assert row["self"] == 0.0
    assert row["mean_distance"] == 1.0
    assert row["entropy_bits"] == 0.0
    assert row["label"] == "previous-token"
    assert row["head"] == "L1 H1"


def test_first_token_sink_and_self_heads():
    sink = np.zeros((T, T)); sink[:, 0] = 1
    itself = np.eye(T)
    frame = head_stats(np.stack([np.stack([sink, itself])]).astype(np.float32), CAUSAL)
    assert list(frame["label"]) == ["first-token sink", "self"]
    assert frame.loc[0, "first"] == 1.0 and frame.loc[1, "self"] == 1.0
    assert frame.loc[0, "mean_distance"] == pytest.approx(np.mean(np.arange(1, T)))
    assert frame.loc[1, "mean_distance"] == 0.0


def test_uniform_causal_head_is_broad():
    uniform = CAUSAL / CAUSAL.sum(-1, keepdims=True)
    row = head_stats(one_head(uniform), CAUSAL).iloc[0]
    assert row["spread"] == 1.0
    assert row["label"] == "broad"
    expected = np.mean([np.log2(i + 1) for i in range(1, T)])
    assert row["entropy_bits"] == pytest.approx(expected, abs=1e-3)


def test_half_and_half_is_mixed():
    m = 0.5 * previous_token() + 0.5 * np.eye(T)
    m[0] = 0; m[0, 0] = 1
    m[1] = 0; m[1, 0] = 0.5; m[1, 1] = 0.5
    frame = head_stats(one_head(m), CAUSAL)
    assert frame.loc[0, "previous"] == 0.5 and frame.loc[0, "self"] == 0.5
    assert frame.loc[0, "label"] in ("previous-token", "self")  # exactly at the threshold counts as clear
    m2 = 0.4 * previous_token() + 0.3 * np.eye(T) + 0.3 * (CAUSAL / CAUSAL.sum(-1, keepdims=True))
    assert head_stats(one_head(m2), CAUSAL).loc[0, "label"] == "mixed"


def test_cross_attention_leaves_position_columns_empty():
    probs = np.full((1, 1, 3, 5), 0.2, dtype=np.float32)
    row = head_stats(probs, aligned=False).iloc[0]
    assert np.isnan(row["previous"]) and np.isnan(row["self"]) and np.isnan(row["mean_distance"])
    assert row["first"] == pytest.approx(0.2)
    assert row["label"] == "broad"


def test_rows_per_head_and_bad_shapes():
    frame = head_stats(np.full((2, 3, 4, 4), 0.25, dtype=np.float32))
    assert list(frame["head"]) == ["L1 H1", "L1 H2", "L1 H3", "L2 H1", "L2 H2", "L2 H3"]
    with pytest.raises(ValueError, match=r"\(L, H, t, s\)"):
        head_stats(np.ones((4, 4)))
    with pytest.raises(ValueError, match="mask shape"):
        head_stats(np.ones((1, 1, 4, 4)) / 4, mask=np.ones((3, 3), bool))


def rule_for_one_head(row: dict, special_name: str) -> str:
    """The labelling rule, written out for one head: the oracle for analysis.head_stats.labels."""
    special = row.get("special", np.nan)
    sink = {f"{special_name} sink": special} if np.isfinite(special) else {"first-token sink": row["first"]}
    candidates = {"previous-token": row["previous"], "next-token": row["next"], **sink, "self": row["self"],
                  "induction": row["induction"]}
    candidates = {k: v for k, v in candidates.items() if np.isfinite(v)}
    if candidates:
        name, mass = max(candidates.items(), key=lambda kv: kv[1])  # the first of equals
        if mass >= 0.5:
            return name
    return "broad" if np.isfinite(row["spread"]) and row["spread"] >= 0.8 else "mixed"


def test_labels_of_every_head_at_once_follow_the_rule_for_one_head():
    """head_columns labels all heads in one go (analysis.head_stats.labels), as the rule says for each head.
    Random heads with strong patterns mixed in, so that every label and every tie-break comes up."""
    from analysis.head_stats import head_columns, label

    rng = np.random.default_rng(0)
    seen = set()
    for trial in range(30):
        t = int(rng.integers(2, 9))
        logits = rng.normal(size=(3, 4, t, t)) * rng.choice([0.1, 1.0, 8.0], size=(3, 4, 1, 1))
        logits[0, 0] += 20 * np.eye(t, k=-1)  # previous-token
        logits[1, 1] += 20 * np.eye(t)  # self
        logits[2, 2, :, 0] += 20  # sink
        causal = trial % 2 == 0
        mask = np.tril(np.ones((t, t), dtype=bool)) if causal else None
        if causal:
            logits = np.where(mask, logits, -np.inf)
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        special = [0] if trial % 3 == 0 else None
        ids = rng.integers(0, 3, size=t) if trial % 4 == 0 else None
        columns = head_columns(probs, mask, special_keys=special, special_name="<s>", ids=ids)
        # the rule for one head, on unrounded values: recompute them without rounding
        unrounded = {name: np.asarray(values, dtype=float) for name, values in columns.items()
                     if name not in ("head", "layer", "head_in_layer", "label")}
        for i, shown in enumerate(columns["label"]):
            row = {name: values[i] for name, values in unrounded.items()}
            if not any(abs(v - 0.5) < 2e-3 or abs(v - 0.8) < 2e-3 for v in row.values() if np.isfinite(v)):
                assert shown == rule_for_one_head(row, "<s>") == label(row, "<s>"), (trial, i, row)
            seen.add(shown)
    assert {"previous-token", "self", "<s> sink", "first-token sink", "mixed"} <= seen, seen
