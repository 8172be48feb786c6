"""Each model at its own length: minilm (and any BERT) reads 512 tokens, the models trained here 256; the
characters the app takes follow; the every-head overview of a long input is max-pooled while the head in
detail stays exact; and the traces the app keeps are bounded by bytes."""
from __future__ import annotations

import numpy as np
import pytest

from bench.sentences import sentence
from ui.tabs import attention
from model.registry import ModelRegistry
from ui.page.messages import InputError, char_limit
from viz import heatmap
from viz.labels import token_labels


@pytest.fixture(scope="module")
def long_text(registry) -> str:
    return sentence(registry.get("minilm"), 512, seed=5)


def test_each_model_reads_its_own_context_and_characters_follow(registry):
    assert registry.get("minilm").config.max_len == 512 and registry.get("lm").config.max_len == 256
    assert registry.max_chars("lm") == 2000 and registry.max_chars("minilm") == 4000 == char_limit(512)
    text = "remarkable " * 220  # 2,420 characters, 220 tokens for minilm: past lm's limit, within minilm's
    with pytest.raises(InputError, match="at most 2000"):
        registry.trace("lm", text)
    trace = registry.trace("minilm", text)
    assert len(trace.tokens) == 2 + 220 and not trace.truncated
    with pytest.raises(InputError, match="at most 4000"):
        registry.trace("minilm", "x " * 2001)


def test_the_one_head_view_at_512_tokens_equals_the_trace_exactly(registry, long_text):
    trace = registry.trace("minilm", long_text)
    att = trace.attention["self"]
    assert len(trace.tokens) == 512 and not trace.truncated
    figure = attention.show_head(registry, long_text, "minilm", 4, 2)
    z = np.asarray(figure.data[0].z)
    assert z.shape == (512, 512) and z.dtype == np.float32
    np.testing.assert_array_equal(z, att.probs[3, 1])  # every weight, unrounded
    # the hover names both tokens of any cell, by position
    assert figure.data[0].x[300] == f"{token_labels([trace.tokens[300]])[0]} (#301)"  # positions from 1
    assert "%{y} → %{x}" in figure.data[0].hovertemplate


def test_the_overview_at_512_tokens_is_max_pooled_and_says_so(registry, long_text):
    att = registry.attention("minilm", long_text)
    grid = attention.heads_grid(att, 12, None)
    assert "max pooling" in grid.layout.title.text and "8 × 8" in grid.layout.title.text
    pooled = heatmap.max_pool(att.probs, 8)
    assert pooled.shape == (6, 12, 64, 64)
    # every pooled cell is the largest weight of its 8 x 8 block
    blocks = att.probs.reshape(6, 12, 64, 8, 64, 8).max(axis=(3, 5))
    np.testing.assert_array_equal(pooled, blocks)
    big = np.asarray(grid.data[0].z)
    assert np.nanmax(big) == np.round(att.probs.max(), 2)  # the largest weight of all survives the pooling


def test_kept_traces_are_bounded_by_bytes_and_keep_only_what_views_need(model_assets):
    small = ModelRegistry.load(model_assets, names=("minilm",), device="cpu", extra={})
    minilm = small.get("minilm")
    first = small.trace("minilm", sentence(minilm, 512, seed=100))
    att = first.attention["self"]
    assert att.scores is None  # recomputed from q and k by the views that show scores
    one = small.cache.bytes
    assert att.probs.nbytes < one < 1.3 * sum(a.nbytes for a in (att.probs, att.q, att.k, att.v, att.inputs))
    small.cache = type(small.cache)(max_bytes=int(2.5 * one))  # room for two 512-token minilm traces
    for seed in range(4):
        small.trace("minilm", sentence(minilm, 512, seed=101 + seed))
    assert one < small.cache.bytes <= 2.5 * one and len(small.cache) == 2
