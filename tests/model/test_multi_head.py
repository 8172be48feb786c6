"""Multi-head attention: wide and narrow variants, cross-attention, the recorded
path against the fused kernel, permutation equivariance, dropout."""
import pytest
import torch

from model.attention import causal_mask
from model.multi_head import MultiHeadAttention
from tests import tolerances


def make(k=8, heads=2, wide=False, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(k, heads, wide=wide, dropout=dropout).eval()


def inputs(b, t, k, seed=1):
    return torch.randn(b, t, k, generator=torch.Generator().manual_seed(seed))


def layer_bound(mha, rec, mask):
    """How far two float32 paths through `mha` may differ on the recorded q, k, v (tests/tolerances.py)."""
    as_np = lambda x: x.detach().numpy()
    return tolerances.attention_layer(as_np(rec.q), as_np(rec.k), as_np(rec.v), mha.d ** -0.5,
                                      None if mask is None else as_np(mask), as_np(mha.unifyheads.weight))


def n_params(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("k,h", [(8, 2), (12, 4), (16, 1)])
def test_narrow_splits_the_embedding_across_heads(k, h):
    mha = make(k, h, wide=False)
    assert mha.d == k // h
    # toqueries, tokeys, tovalues: k -> k each (no bias); unifyheads: k -> k with bias
    assert n_params(mha) == 3 * k * k + k * k + k
    _, rec = mha(inputs(2, 5, k), record=True)
    assert rec.q.shape == rec.k.shape == rec.v.shape == (2, h, 5, k // h)
    assert rec.probs.shape == rec.scores.shape == (2, h, 5, 5)


@pytest.mark.parametrize("k,h", [(8, 2), (6, 4), (16, 1)])
def test_wide_gives_every_head_the_whole_embedding(k, h):
    mha = make(k, h, wide=True)
    assert mha.d == k
    # every head projects k -> k: three projections k -> h·k, unify h·k -> k with bias
    assert n_params(mha) == 3 * k * (h * k) + (h * k) * k + k
    _, rec = mha(inputs(2, 5, k), record=True)
    assert rec.q.shape == rec.k.shape == rec.v.shape == (2, h, 5, k)
    assert rec.probs.shape == (2, h, 5, 5)


def test_wide_costs_h_times_the_attention_parameters_of_narrow():
    narrow, wide = make(16, 4, wide=False), make(16, 4, wide=True)
    assert n_params(wide) - 16 == 4 * (n_params(narrow) - 16)  # minus the shared unify bias


def test_narrow_needs_heads_to_divide_the_embedding():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    MultiHeadAttention(10, 3, wide=True)  # wide heads do not split, so any count works


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_output_shape_and_recorded_path_equals_fused_path(wide, masked):
    mha = make(8, 2, wide=wide)
    x = inputs(3, 6, 8)
    mask = causal_mask(6) if masked else None
    fused, none = mha(x, mask=mask)
    recorded, rec = mha(x, mask=mask, record=True)
    assert none is None
    assert fused.shape == recorded.shape == (3, 6, 8)
    # the same q, k, v; an explicit softmax against torch's fused kernel (tests/tolerances.py attention_layer)
    tolerances.assert_within(recorded.detach(), fused.detach(), layer_bound(mha, rec, mask))
    torch.testing.assert_close(rec.probs.sum(-1), torch.ones(3, 2, 6))
    assert torch.equal(rec.inputs, x)


def test_causal_mask_through_the_module():
    _, rec = make(8, 2)(inputs(2, 5, 8), mask=causal_mask(5), record=True)
    assert (rec.probs[..., torch.ones(5, 5, dtype=torch.bool).triu(1)] == 0).all()
    assert torch.equal(rec.probs[..., 0, 0], torch.ones(2, 2))


@pytest.mark.parametrize("wide", [False, True])
def test_without_positions_self_attention_is_permutation_equivariant(wide):
    mha = make(8, 2, wide=wide)
    x = inputs(2, 7, 8)
    perm = torch.tensor([4, 2, 6, 0, 1, 5, 3])
    out, rec = mha(x, record=True)
    out_p, rec_p = mha(x[:, perm], record=True)
    # the same sums with their terms in another order (tests/tolerances.py attention_layer and attention)
    tolerances.assert_within(out_p.detach(), out[:, perm].detach(), layer_bound(mha, rec_p, None))
    # the attention map is permuted on both axes
    _, probs_bound, _ = tolerances.attention(*(x.detach().numpy() for x in (rec_p.q, rec_p.k, rec_p.v)), mha.d ** -0.5)
    tolerances.assert_within(rec_p.probs.detach(), rec.probs[:, :, perm][:, :, :, perm].detach(), probs_bound)


def test_a_causal_mask_breaks_permutation_equivariance():
    mha = make(8, 2)
    x = inputs(1, 5, 8)
    perm = torch.tensor([4, 3, 2, 1, 0])
    out, _ = mha(x, mask=causal_mask(5))
    out_p, _ = mha(x[:, perm], mask=causal_mask(5))
    assert not torch.allclose(out_p, out[:, perm], atol=1e-4)


@pytest.mark.parametrize("wide", [False, True])
def test_cross_attention_probabilities_are_target_by_source(wide):
    mha = make(8, 2, wide=wide)
    target, source = inputs(2, 3, 8, seed=2), inputs(2, 7, 8, seed=3)
    out, rec = mha(target, context=source, record=True)
    assert out.shape == (2, 3, 8)
    assert rec.probs.shape == (2, 2, 3, 7)  # (b, h, target length, source length)
    assert rec.q.shape[2] == 3 and rec.k.shape[2] == rec.v.shape[2] == 7
    torch.testing.assert_close(rec.probs.sum(-1), torch.ones(2, 2, 3))
    fused, _ = mha(target, context=source)
    tolerances.assert_within(out.detach(), fused.detach(), layer_bound(mha, rec, None))


def test_cross_attention_key_padding_mask_zeroes_padded_source_positions():
    mha = make(8, 2)
    target, source = inputs(2, 3, 8, seed=2), inputs(2, 5, 8, seed=3)
    keep = torch.tensor([[True, True, True, False, False], [True] * 5])
    out, rec = mha(target, context=source, mask=keep[:, None, None, :], record=True)
    assert (rec.probs[0, :, :, 3:] == 0).all()
    assert (rec.probs[1] > 0).all()
    # padding is invisible: the first example equals attending to its 3 real tokens only
    alone, _ = mha(target[:1], context=source[:1, :3])
    exact, _ = tolerances.in_float64(mha)(target[:1].double(), context=source[:1, :3].double())
    # the padded keys add exact zeros: the same sums in another grouping, within 3x the lone pass's own float32
    # rounding (its float64 run)
    ours, theirs, exact = (x.detach().numpy() for x in (out[:1], alone, exact))
    tolerances.assert_within(ours, theirs, tolerances.beside_oracle(ours, theirs, exact))


@pytest.mark.parametrize("record", [False, True])
def test_dropout_only_in_training_mode(record):
    mha = make(8, 2, dropout=0.5)
    x = inputs(2, 6, 8)
    mha.eval()
    a, _ = mha(x, record=record)
    b, _ = mha(x, record=record)
    assert torch.equal(a, b)
    no_dropout = make(8, 2, dropout=0.0)  # same seed, same weights
    torch.testing.assert_close(a, no_dropout(x, record=record)[0])
    mha.train()
    torch.manual_seed(1)
    c, _ = mha(x, record=record)
    torch.manual_seed(2)
    d, _ = mha(x, record=record)
    assert not torch.allclose(c, a)
    assert not torch.allclose(c, d)
