"""What flows through a head (analysis/flow.py), one head's queries and keys (analysis/qk.py) and sampling
(analysis/sampling.py), against oracles: the model's own attention output, the Trace's scores, greedy decoding."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import flow, qk, sampling
from analysis.attribution import rollout
from model import api
from tests import tolerances

SENTENCE = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def models():
    return {name: api.load(name, device="cpu") for name in ("lm", "minilm", "dates")}


@pytest.mark.parametrize("name, text, kind", [("lm", "The cat sat on the mat", "self"), ("minilm", SENTENCE, "self"),
                                              ("dates", "3 March 1999", "cross"), ("dates", "3 March 1999", "decoder")])
def test_the_weighted_vectors_add_up_to_what_the_layer_wrote(models, name, text, kind):
    att = models[name].trace(text, detail=True).attention[kind]
    for layer in range(att.n_layers):
        heads = sum(flow.weighted_vectors(att, layer, h).sum(1) for h in range(att.n_heads))  # Σ_h Σ_j α_ij W_O v_j
        v = np.repeat(att.v[layer], att.n_heads // att.v[layer].shape[0], axis=0)  # one set per query head
        # torch's float32 layer against this float64 sum of the same float32 weights, values, W_O and bias
        allowed = tolerances.layer_output(att.probs[layer], v, att.out_weight[layer], att.out_bias[layer])
        tolerances.assert_within(heads + att.out_bias[layer], att.output[layer], allowed, f"layer {layer}")


def test_norm_shares_are_rows_of_weight_times_the_written_value_size(models):
    att = models["lm"].trace("The cat sat on the mat", detail=True).attention["self"]
    shares = flow.norm_shares(att)
    s = shares.shape[-1]
    # s float64 quotients, each cast to float32 (2^-24 relative: 2^-24 of the row's 1 in all), summed here in float32
    # ((s - 1) x 2^-24 of 1)
    np.testing.assert_allclose(shares.sum(-1), 1.0, atol=s * tolerances.EPS32 / 2, rtol=0)
    size = np.linalg.norm(flow.written_values(att, 1)[2], axis=-1)  # layer 2, head 3: ‖W_O v_j‖
    expected = att.probs[1, 2] * size
    expected = expected / expected.sum(-1, keepdims=True)
    # the same float64 products and quotients, the row's s-term sum perhaps in another order ((s - 1) x 2^-52
    # relative between two), then the cast to float32 (half a spacing)
    allowed = tolerances.spacing32(expected) / 2 + (s - 1) * tolerances.EPS64 * expected
    tolerances.assert_within(shares[1, 2], expected, allowed)
    assert np.all(shares[:, :, ~att.mask] == 0)  # nothing flows from a key the mask hides


@pytest.mark.parametrize("name, text", [("minilm", SENTENCE), ("lm", "The cat sat on the mat")])
def test_the_summary_made_a_layer_at_a_time_equals_the_one_from_every_heads_shares(models, name, text):
    """What the view keeps per text (summarise) and reads per head (head_shares) without the (L, H, t, s) stack."""
    att = models[name].trace(text, detail=True).attention["self"]
    special = [0, len(att.keys) - 1] if name == "minilm" else [0]
    shares = flow.norm_shares(att)
    summary = flow.summarise(att, special)
    weight, moved = flow.special_shares(att, special, shares)
    # each is a float32 mean over r rows of float32 sums of len(special) shares (a row's at most 1), of the same
    # float32 numbers in either: two orders of one (len(special) x r)-term sum of total <= r, over r, each division
    # rounded once (2^-24 of a mean <= 1)
    r = len(att.queries) - (name == "lm")  # a causal model's first row is left out
    means = tolerances.summed(len(special) * r, r) / r + tolerances.EPS32
    np.testing.assert_allclose(summary.weight, weight, atol=means, rtol=0)
    np.testing.assert_allclose(summary.norm, moved, atol=means, rtol=0)
    # the same float64 arithmetic on the same float32 shares either way, cast to float32: a float64 difference far
    # below float32's spacing can still round to neighbouring float32s, one spacing apart
    rolled = flow.norm_rollout(shares)
    tolerances.assert_within(summary.rollout, rolled, tolerances.spacing32(rolled))
    tolerances.assert_within(flow.head_shares(att, 1, 2), shares[1, 2], tolerances.spacing32(shares[1, 2]))
    ours, theirs = flow.sinks_of(summary.weight, summary.norm), flow.sink_shares(att, special, shares=shares)
    # a float64 mean of the sink heads' numbers, each within `means` (its own rounding: 2^-52 per head)
    assert ours.heads == theirs.heads and ours.norm == pytest.approx(
        theirs.norm, abs=means + len(ours.heads) * tolerances.EPS64, rel=0, nan_ok=True)


def test_norm_rollout_is_attention_rollout_of_the_shares(models):
    att = models["minilm"].trace(SENTENCE, detail=True).attention["self"]
    shares = flow.norm_shares(att)
    rolled = rollout(shares)  # the same float64 arithmetic as norm_rollout's, cast to float32: one spacing apart at most
    tolerances.assert_within(flow.norm_rollout(shares), rolled, tolerances.spacing32(rolled))
    assert not np.allclose(flow.norm_rollout(shares), rollout(att.probs), atol=1e-2)


def test_minilm_sink_heads_hold_weight_not_norm(models):
    loaded = models["minilm"]
    trace = loaded.trace(SENTENCE, detail=True)
    special = [i for i, t in enumerate(trace.ids) if int(t) in loaded.added_ids]
    sinks = flow.sink_shares(trace.attention["self"], special)
    assert len(sinks.heads) >= 20
    assert sinks.weight >= 0.5 and sinks.norm < sinks.weight / 2


def test_a_trace_without_detail_is_refused(models):
    att = models["lm"].trace("The cat sat").attention["self"]
    with pytest.raises(ValueError, match="detail"):
        flow.norms(att, 0)


@pytest.mark.parametrize("name, kind", [("minilm", "self"), ("lm", "self"), ("dates", "cross")])
def test_scores_recomputed_from_exported_q_and_k_equal_the_traces(models, name, kind):
    text = {"minilm": SENTENCE, "lm": "The cat sat on the mat", "dates": "3 March 1999"}[name]
    att = models[name].trace(text).attention[kind]
    for layer, head in [(0, 0), (att.n_layers - 1, att.n_heads - 1)]:
        projection = qk.project(att.q[layer, head], att.k[layer, head], att.probs[layer, head])
        q, k = att.q[layer, head], att.k[layer, head]  # float64 scores against torch's float32 product
        tolerances.assert_within(projection.scores, att.scores[layer, head], tolerances.product(q, k.T))
        assert projection.queries.shape == (len(att.queries), 2) and projection.keys.shape == (len(att.keys), 2)
        assert 0 < projection.explained[1] <= projection.explained[0] and projection.explained.sum() <= 1 + 1e-9
        np.testing.assert_array_equal(projection.strongest, att.probs[layer, head].argmax(-1))


def test_pca_of_a_flat_set_explains_everything():
    rng = np.random.default_rng(0)
    plane = rng.normal(size=(2, 6))
    q, k = rng.normal(size=(4, 2)) @ plane, rng.normal(size=(5, 2)) @ plane
    projection = qk.project(q, k, np.ones((4, 5)) / 5)
    assert projection.explained.sum() == pytest.approx(1.0)
    joint = np.concatenate([projection.queries, projection.keys])
    original = np.concatenate([q, k]) - np.concatenate([q, k]).mean(0)
    d = lambda x: np.linalg.norm(x[:, None] - x[None], axis=-1)  # distances kept exactly
    np.testing.assert_allclose(d(joint), d(original), atol=1e-9)


def test_filters():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    steps = sampling.distribution(logits, temperature=1.0, top_k=3, top_p=0.7)
    np.testing.assert_allclose(steps.before, [0.5, 0.3, 0.15, 0.05])
    np.testing.assert_allclose(steps.top_k, np.array([0.5, 0.3, 0.15, 0]) / 0.95)
    np.testing.assert_allclose(steps.after, [0.625, 0.375, 0, 0])  # 0.5/0.95 < 0.7: the second crosses it
    hot = sampling.distribution(logits, temperature=2.0).after
    assert hot[0] < 0.5 and hot[3] > 0.05  # flatter
    np.testing.assert_allclose(sampling.distribution(logits, temperature=0).after, [1, 0, 0, 0])


@pytest.mark.parametrize("bad", [dict(temperature=-1), dict(temperature=float("nan")), dict(top_k=1.5),
                                 dict(top_k=-2), dict(top_p=0), dict(top_p=1.5), dict(temperature="hot")])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        sampling.distribution(np.zeros(4), **bad)


@pytest.mark.parametrize("prompt", ["The cat sat on the", "water:", "He told me that"])
@pytest.mark.parametrize("settings", [dict(temperature=0), dict(temperature=1e-4), dict(top_k=1),
                                      dict(top_k=1, temperature=2.0, top_p=0.5, seed=7)])
def test_temperature_zero_and_top_k_one_are_greedy_decoding(models, prompt, settings):
    lm = models["lm"]
    sample = sampling.generate(lm.next_logits, lm.encode(prompt).ids, 10, end=lm.end_id, **settings)
    assert lm.tokenizer.decode(sample.ids) == lm.generate(prompt, 10, no_repeat_ngram=0)


def test_a_seed_fixes_the_sample_and_another_seed_changes_it(models):
    lm = models["lm"]
    ids = lm.encode("The cat sat on the").ids
    run = lambda seed: sampling.generate(lm.next_logits, ids, 8, temperature=1.5, seed=seed, end=lm.end_id).ids
    assert run(3) == run(3)
    assert len({tuple(run(seed)) for seed in range(5)}) > 1


@pytest.mark.parametrize("name, text", [("minilm", SENTENCE), ("lm", "The cat sat on the mat")])
def test_value_sizes_through_the_gram_matrix_are_the_written_values_norms(models, name, text):
    """‖W_O v_j‖ from v · (W_Oᵀ W_O) v, as norms and head_shares read it, against the norm of the written vectors
    themselves: float64 both, so within a few of float64's roundings of the squared size."""
    att = models[name].trace(text, detail=True).attention["self"]
    for layer in range(att.n_layers):
        written = flow.written_values(att, layer)
        np.testing.assert_allclose(flow.value_sizes(att, layer), np.linalg.norm(written, axis=-1), rtol=1e-12)
