"""The head-statistics labels real pretrained models need, each measured: next token, and a sink on the
special tokens the model adds ([CLS] and [SEP] for BERT), on hand-made attention maps."""
import numpy as np
import pytest

from analysis.head_stats import head_stats

T = 6  # [CLS] w1 w2 w3 w4 [SEP]
SPECIAL = [0, T - 1]


def one_head(matrix: np.ndarray) -> np.ndarray:
    return matrix[None, None].astype(np.float32)


def test_a_next_token_head_is_labelled_next_token():
    m = np.zeros((T, T))
    m[np.arange(T - 1), np.arange(1, T)] = 1
    m[T - 1, T - 1] = 1  # the last token has no next one
    row = head_stats(one_head(m), special_keys=SPECIAL, special_name="[CLS]/[SEP]").iloc[0]
    assert row["next"] == pytest.approx(1.0) and row["previous"] == pytest.approx(0.0)
    assert row["label"] == "next-token"


def test_a_head_on_cls_and_sep_is_a_cls_sep_sink_and_the_first_token_alone_is_not_enough():
    m = np.zeros((T, T))
    m[:, 0], m[:, T - 1] = 0.3, 0.5  # 0.8 on the specials, 0.3 of it on [CLS] (the first token)
    m[np.arange(T), np.arange(T)] += 0.2
    m /= m.sum(-1, keepdims=True)
    row = head_stats(one_head(m), special_keys=SPECIAL, special_name="[CLS]/[SEP]").iloc[0]
    assert row["special"] >= 0.5 > row["first"]
    assert row["label"] == "[CLS]/[SEP] sink"
    plain = head_stats(one_head(m)).iloc[0]  # without the specials' positions: no sink is claimed
    assert np.isnan(plain["special"]) and plain["label"] != "[CLS]/[SEP] sink"


def test_under_half_on_any_pattern_is_broad_or_mixed_never_a_guess():
    m = np.full((T, T), 1 / T)
    frame = head_stats(one_head(m), special_keys=SPECIAL, special_name="[CLS]/[SEP]")
    assert frame.loc[0, "label"] == "broad"
    m = np.zeros((T, T))
    m[:, 0], m[:, 1], m[:, 2] = 0.45, 0.45, 0.10  # concentrated, yet nothing takes half
    assert head_stats(one_head(m)).loc[0, "label"] == "mixed"


def test_cross_attention_has_no_next_column():
    row = head_stats(np.full((1, 1, 3, 5), 0.2, dtype=np.float32), aligned=False).iloc[0]
    assert np.isnan(row["next"]) and np.isnan(row["special"])
