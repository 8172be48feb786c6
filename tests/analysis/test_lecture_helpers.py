"""Small model/ helpers behind the lecture views: sizes, month alignment, history, position tables."""
from __future__ import annotations

import json

import numpy as np
import pytest

from analysis.alignment import month_attention, most_month_attentive_head
from analysis.positions import cosine_similarity, sinusoidal_table
from model.sizes import head_sizes
from model import api
from model.config import TransformerConfig
from model.history import read_history
from model.positions import position_table, sinusoidal_encoding
from tests import tolerances


def test_narrow_heads_cost_one_full_head_and_wide_heads_h_times_more():
    sizes = head_sizes(TransformerConfig(arch="decoder", vocab_size=10, d_model=128, n_heads=4))
    assert (sizes.d_narrow, sizes.d_wide) == (32, 128)
    assert sizes.params_narrow == 4 * 128 * 128 + 128 == sizes.params_single
    assert sizes.params_wide == 3 * 128 * 512 + 512 * 128 + 128
    dates = head_sizes(TransformerConfig(arch="encoder-decoder", vocab_size=10, n_layers=2, n_decoder_layers=2))
    assert dates.attention_layers == 2 + 2 * 2


def test_month_attention_picks_the_head_looking_at_the_month():
    source = "21 Nov 2026"  # month at characters 3..6
    probs = np.full((2, 3, 11, len(source)), 1 / len(source), dtype=np.float32)
    probs[1, 2, 5:7] = 0
    probs[1, 2, 5:7, 3:6] = 1 / 3
    scores = month_attention(probs, source)
    assert scores.shape == (2, 3) and scores[1, 2] == pytest.approx(1.0)
    assert most_month_attentive_head(probs, source)[:2] == (1, 2)
    assert most_month_attentive_head(probs, "no month here") is None


def test_history_reads_loss_snapshots_and_evaluation(tmp_path, tiny_trained_models):
    history = read_history(tiny_trained_models["tiny-lm"])
    assert len(history.steps) == len(history.train_loss) > 0
    assert history.snapshots and history.loss_at(history.steps[-1]) is not None
    assert history.loss_at(-5) is None
    assert history.window_at(history.steps[-1]) == 32, "tiny-lm trains on 32-token windows"
    assert history.window_at(-5) is None
    (tmp_path / "metrics.json").write_text(json.dumps({"evaluation": {"best_cross_head": {"layer": 1, "head": 0}}}))
    empty = read_history(tmp_path)
    assert empty.evaluation["best_cross_head"]["layer"] == 1 and len(empty.steps) == 0 and empty.snapshots == []


def test_position_tables(tiny_trained_models):
    table = sinusoidal_table(50, 16)
    assert table.shape == (50, 16) and table.dtype == np.float32
    # exact integer angles, so only float32 sin's own error and the rounding of the float64 reference to float32
    np.testing.assert_allclose(table[:, 0], np.sin(np.arange(50)), atol=(tolerances.LIBM_ULPS / 2 + 1) * tolerances.EPS32)
    np.testing.assert_allclose(table[0, 1::2], 1.0)
    similarity = cosine_similarity(table)
    # |u|^2 over 16 float32 terms of size <= 1 (each of the 16 squares rounded, the norms and quotients rounded too)
    np.testing.assert_allclose(np.diag(similarity), 1.0, atol=tolerances.summed(16, 16) / 16 + 4 * tolerances.EPS32)
    assert similarity[10, 11] > similarity[10, 40]  # nearby positions look alike
    kind, learned = position_table(api.load_from(tiny_trained_models["tiny-lm"]), 10)
    assert kind == "learned" and learned.shape == (10, 16)
    kind, fixed = position_table(api.load_from(tiny_trained_models["tiny-dates"]), 10)
    assert kind == "sinusoidal"
    np.testing.assert_allclose(fixed, sinusoidal_table(10, 16), atol=tolerances.sinusoid(9))  # torch vs numpy, angles <= 9
    # analysis/ writes the model's sinusoids in numpy (it imports no torch): the same numbers at any size, each within
    # what two libms' exp, sin and cos may differ by at its own angle (up to 511 rad, float32 spacing 3.05e-5)
    position = np.arange(512, dtype=np.float32)[:, None]
    angle = np.repeat(position * np.exp(np.arange(0, 64, 2, dtype=np.float32) * np.float32(-np.log(1e4) / 64)), 2, 1)
    tolerances.assert_within(sinusoidal_table(512, 64), sinusoidal_encoding(512, 64).numpy(), tolerances.sinusoid(angle))
