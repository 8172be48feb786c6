"""The pure attention functions: probabilities, masks, scaling, temperature, and
agreement with PyTorch's fused kernel."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from analysis.steps import simple_attention
from model.attention import _head_by_head, causal_mask, scaled_dot_product_attention
from tests import tolerances


def qkv(*shape, seed=0, s=None):
    """Random q (…, t, d), k and v (…, s, d) in float32."""
    gen = torch.Generator().manual_seed(seed)
    *lead, t, d = shape
    s = t if s is None else s
    q = torch.randn(*lead, t, d, generator=gen)
    k = torch.randn(*lead, s, d, generator=gen)
    v = torch.randn(*lead, s, d, generator=gen)
    return q, k, v


def assert_same_attention(ours, theirs, q, k, v, mask=None, scale=None, what="output"):
    """Two float32 attention outputs (what="probs": weights) of the same q, k, v: within what their kernels' orders
    of summing and their exps may differ by (tests/tolerances.py), whatever the processor."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    mask = None if mask is None else mask.numpy()
    _, probs, output = tolerances.attention(q.numpy(), k.numpy(), v.numpy(), scale, mask)
    tolerances.assert_within(ours.numpy(), theirs.numpy(), probs if what == "probs" else output)


def test_causal_mask_is_lower_triangular():
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(3), expected)


def test_causal_mask_with_more_keys_than_queries_aligns_the_last_query_with_the_last_key():
    # 2 new queries after 2 earlier keys: query 0 is position 2, so it sees keys 0..2.
    expected = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(2, 4), expected)


@pytest.mark.parametrize("mask", [None, "causal"])
@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
def test_every_probability_row_sums_to_one(mask, temperature):
    q, k, v = qkv(2, 3, 6, 4, seed=1)
    m = causal_mask(6) if mask == "causal" else None
    att = scaled_dot_product_attention(q, k, v, m, temperature=temperature)
    assert att.probs.shape == (2, 3, 6, 6)
    torch.testing.assert_close(att.probs.sum(-1), torch.ones(2, 3, 6))
    assert (att.probs >= 0).all()


def test_causal_mask_gives_exact_zeros_above_the_diagonal_and_first_query_sees_only_itself():
    q, k, v = qkv(2, 3, 7, 4, seed=2)
    att = scaled_dot_product_attention(q, k, v, causal_mask(7))
    above = torch.ones(7, 7, dtype=torch.bool).triu(1)
    assert (att.probs[..., above] == 0).all(), "masked keys must get exactly zero weight"
    first_row = torch.zeros(7)
    first_row[0] = 1.0
    assert torch.equal(att.probs[..., 0, :], first_row.expand(2, 3, 7))
    # the first output is exactly the first value vector
    torch.testing.assert_close(att.output[..., 0, :], v[..., 0, :])


def test_scores_are_the_raw_dot_products_before_scaling_and_masking():
    q, k, v = qkv(2, 5, 4, seed=3)
    att = scaled_dot_product_attention(q, k, v, causal_mask(5))
    torch.testing.assert_close(att.scores, q @ k.transpose(-2, -1))
    assert torch.isfinite(att.scores).all(), "the mask must not leak into the raw scores"


def random_mask(t, s, seed):
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(t, s, generator=gen) < 0.6
    mask[:, 0] = True  # every query must see at least one key
    return mask


@pytest.mark.parametrize("mask_kind", ["none", "causal", "random", "rectangular"])
def test_matches_torch_scaled_dot_product_attention(mask_kind):
    t, s = 5, (7 if mask_kind == "rectangular" else 5)
    q, k, v = qkv(2, 4, t, 8, seed=4, s=s)
    mask = {"none": None, "causal": causal_mask(t), "random": random_mask(t, s, 5),
            "rectangular": random_mask(t, s, 6)}[mask_kind]
    ours = scaled_dot_product_attention(q, k, v, mask)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert_same_attention(ours.output, reference, q, k, v, mask)


def test_matches_torch_is_causal_flag():
    q, k, v = qkv(3, 2, 6, 4, seed=7)
    ours = scaled_dot_product_attention(q, k, v, causal_mask(6))
    reference = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert_same_attention(ours.output, reference, q, k, v, causal_mask(6))


def test_scale_false_and_temperature_match_torch_with_an_explicit_scale():
    q, k, v = qkv(2, 2, 5, 16, seed=8)
    mask = causal_mask(5)
    unscaled = scaled_dot_product_attention(q, k, v, mask, scale=False)
    assert_same_attention(unscaled.output, F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0),
                          q, k, v, mask, scale=1.0)
    hot = scaled_dot_product_attention(q, k, v, mask, temperature=2.5)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1 / (math.sqrt(16) * 2.5))
    assert_same_attention(hot.output, expected, q, k, v, mask, scale=1 / (math.sqrt(16) * 2.5))


def test_scale_false_means_no_division_by_sqrt_d():
    q, k, v = qkv(4, 9, seed=9)
    by_hand = torch.softmax(q @ k.T, dim=-1)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, scale=False).probs, by_hand)
    scaled = torch.softmax(q @ k.T / 3.0, dim=-1)  # sqrt(9) = 3
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v).probs, scaled)
    assert not torch.allclose(by_hand, scaled)


def test_temperature_towards_zero_approaches_hard_argmax_attention():
    q, k, v = qkv(2, 6, 4, seed=10)
    mask = causal_mask(6)
    att = scaled_dot_product_attention(q, k, v, mask, temperature=1e-6)
    winners = att.scores.masked_fill(~mask, float("-inf")).argmax(-1)  # (2, 6)
    one_hot = F.one_hot(winners, 6).float()
    torch.testing.assert_close(att.probs, one_hot, atol=1e-5, rtol=0)
    # … and the output is the winning value vector
    torch.testing.assert_close(att.output, torch.stack([v[b, winners[b]] for b in range(2)]), atol=1e-5, rtol=0)


def test_temperature_towards_infinity_is_uniform_over_allowed_keys():
    q, k, v = qkv(2, 6, 4, seed=11)
    mask = causal_mask(6)
    att = scaled_dot_product_attention(q, k, v, mask, temperature=1e7)
    uniform = mask.float() / mask.sum(-1, keepdim=True)
    torch.testing.assert_close(att.probs, uniform.expand(2, 6, 6), atol=1e-5, rtol=0)
    # the output of query i is the mean of values 0..i
    means = torch.cumsum(v, dim=-2) / torch.arange(1, 7)[:, None]
    torch.testing.assert_close(att.output, means, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("temperature", [0.0, -1.0])
def test_temperature_must_be_positive(temperature):
    q, k, v = qkv(3, 4)
    with pytest.raises(ValueError, match="temperature"):
        scaled_dot_product_attention(q, k, v, temperature=temperature)


def test_dropout_acts_only_in_training_and_never_on_the_returned_probabilities():
    q, k, v = qkv(2, 8, 4, seed=12)
    plain = scaled_dot_product_attention(q, k, v)
    off = scaled_dot_product_attention(q, k, v, dropout=0.5, training=False)
    assert torch.equal(off.output, plain.output)
    torch.manual_seed(0)
    on = scaled_dot_product_attention(q, k, v, dropout=0.5, training=True)
    assert not torch.allclose(on.output, plain.output)
    assert torch.equal(on.probs, plain.probs), "probs shown to students are the undropped weights"


def test_parameter_free_attention_is_the_torch_path_with_x_as_query_key_and_value():
    """The app's numpy softmax(x xᵀ) (analysis.steps.simple_attention) is scaled_dot_product_attention
    with q = k = v = x and no scaling: one implementation, checked against the other."""
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(13))
    att = scaled_dot_product_attention(x, x, x, scale=False)
    steps = simple_attention(x.numpy())
    assert_same_attention(torch.from_numpy(steps.probs), att.probs, x, x, x, scale=1.0, what="probs")  # numpy vs torch
    assert_same_attention(torch.from_numpy(steps.output), att.output, x, x, x, scale=1.0)
    assert_same_attention(torch.from_numpy(steps.probs), torch.softmax(x @ x.T, -1), x, x, x, scale=1.0,
                          what="probs")


def test_parameter_free_attention_by_hand():
    # x = identity rows: x xᵀ = I, so each token keeps e/(e+1) of itself.
    steps = simple_attention(np.eye(2, dtype=np.float32))
    own, other = math.e / (math.e + 1), 1 / (math.e + 1)
    # a float32 softmax of [1, 0]: two libm exps (LIBM_ULPS x 2^-24 each), their sum and the division (2^-24 each);
    # times the identity, exact
    rtol = (2 * tolerances.LIBM_ULPS + 2) * tolerances.EPS32 / 2
    np.testing.assert_allclose(steps.probs, [[own, other], [other, own]], rtol=rtol)
    np.testing.assert_allclose(steps.output, [[own, other], [other, own]], rtol=rtol)


def test_parameter_free_attention_is_permutation_equivariant():
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(14)).numpy()
    perm = np.array([3, 0, 5, 1, 4, 2])
    # the same rows in another order: the same sums, perhaps in their kernels' other orders
    mixed = torch.from_numpy(x[perm])
    assert_same_attention(torch.from_numpy(simple_attention(x[perm]).output),
                          torch.from_numpy(simple_attention(x).output[perm]), mixed, mixed, mixed, scale=1.0)

@pytest.mark.parametrize("mask_kind", ["none", "causal", "keys"])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
@pytest.mark.parametrize("head_by_head", [True, False], ids=["head-by-head", "small-maps-batched"])
def test_written_into_a_stack_head_by_head_the_weights_and_output_are_the_batched_paths(mask_kind, temperature,
                                                                                        head_by_head, monkeypatch):
    """keep_scores=False with probs_out (a trace: model.transformer.Recording(stack=True)) goes one head at a time
    where the maps have at least HEAD_BY_HEAD_CELLS cells (here lowered to every size); the same weights and output
    as the batched path, a power-of-two divisor (sqrt(16)) or not (temperature 0.7)."""
    import model.attention

    monkeypatch.setattr(model.attention, "HEAD_BY_HEAD_CELLS", 0 if head_by_head else model.attention.HEAD_BY_HEAD_CELLS)
    calls = []
    monkeypatch.setattr(model.attention, "_head_by_head", lambda *a: calls.append(1) or _head_by_head(*a))
    q, k, v = qkv(2, 3, 5, 16, s=7)
    mask = {"none": None, "causal": causal_mask(5, 7),
            "keys": torch.tensor([[1, 1, 1, 0, 1, 1, 0], [1] * 7], dtype=torch.bool)[:, None, None, :]}[mask_kind]
    batched = scaled_dot_product_attention(q, k, v, mask, temperature=temperature)
    stack = torch.full((2, 2, 3, 5, 7), float("nan"))  # two layers' worth: this is the second
    written = scaled_dot_product_attention(q, k, v, mask, temperature=temperature, keep_scores=False,
                                           probs_out=stack[1])
    assert written.scores is None and written.probs.data_ptr() == stack[1].data_ptr()
    scale, mask = 1 / (4 * temperature), None if mask is None else mask.expand(2, 3, 5, 7)
    # one head at a time against the batched kernel
    assert_same_attention(stack[1], batched.probs, q, k, v, mask, scale, "probs")
    assert_same_attention(written.output, batched.output, q, k, v, mask, scale)
    assert torch.isnan(stack[0]).all()  # nothing written outside its slice
    assert calls == ([1] if head_by_head else [])  # the path the size picks
