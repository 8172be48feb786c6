"""Switches on the one forward pass: positions off, mask off, heads knocked out."""
import pytest
import torch

from model.config import TransformerConfig
from model.switches import Switches
from model.transformer import build
from tests import tolerances

def _model(arch="decoder", **kw):
    torch.manual_seed(0)  # the same weights whichever tests ran before in this process (xdist varies the order)
    config = TransformerConfig(arch=arch, vocab_size=50, max_len=16, d_model=16, n_heads=4, n_layers=2,
                               n_decoder_layers=2 if arch == "encoder-decoder" else 0, d_ff=32, dropout=0.0, **kw)
    return build(config).eval()


IDS = torch.tensor([[3, 7, 9, 11, 5, 8]])


def test_plain_switches_change_nothing():
    model = _model()
    plain, _ = model(IDS)
    switched, rec = model(IDS, record=True, switches=Switches())
    exact, _ = tolerances.in_float64(model)(IDS)  # the fused path: float64 throughout
    plain, switched, exact = plain.detach(), switched.detach(), exact.detach()
    # the recorded path (explicit softmax) against the fused kernel: within 3x the fused one's own float32 rounding
    tolerances.assert_within(switched, plain, tolerances.beside_oracle(switched, plain, exact))


def test_ablating_no_head_equals_the_plain_pass_with_recording():
    model = _model()
    _, rec = model(IDS, record=True)
    _, rec_empty = model(IDS, record=True, switches=Switches(ablate=frozenset()))
    for a, b in zip(rec.layers["self"], rec_empty.layers["self"]):
        torch.testing.assert_close(a.probs, b.probs, atol=0, rtol=0)  # the same path on the same inputs: bit for bit


def test_zeroing_a_head_equals_zeroing_its_slice_of_unifyheads():
    """Knocking out head 2 of layer 1 must be exactly "that head adds nothing": the same as
    zeroing the columns of unifyheads that read its output."""
    model = _model()
    ablated, _ = model(IDS, switches=Switches(ablate={("self", 0, 2)}))
    attention = model.stack.blocks[0].self_attention
    d = attention.d
    with torch.no_grad():
        attention.unifyheads.weight[:, 2 * d:3 * d] = 0.0
    surgery, _ = model(IDS)
    exact, _ = tolerances.in_float64(model)(IDS)  # the surgery's fused path in float64
    ablated, surgery, exact = ablated.detach(), surgery.detach(), exact.detach()
    # the knocked-out path (explicit softmax, a head's output zeroed) against the fused kernel with W_O's columns
    # zeroed: the same sums in their own orders, within 3x the fused one's own float32 rounding
    tolerances.assert_within(ablated, surgery, tolerances.beside_oracle(ablated, surgery, exact))
    assert not torch.allclose(ablated, _model()(IDS)[0])


def test_uniform_ablation_records_uniform_weights_over_allowed_keys():
    model = _model()
    _, rec = model(IDS, record=True, switches=Switches(ablate={("self", 1, 0)}, method="uniform"))
    probs = rec.layers["self"][1].probs[0, 0]  # (t, t), causal
    t = probs.shape[0]
    expected = torch.tril(torch.ones(t, t)) / torch.arange(1, t + 1)[:, None]
    torch.testing.assert_close(probs, expected, atol=0, rtol=0)  # the same float32 division 1 / n (IEEE: exact)
    other = rec.layers["self"][1].probs[0, 1]
    assert not torch.allclose(other, expected)


def test_positions_off_makes_unmasked_attention_permutation_equivariant():
    model = _model("encoder")
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    _, rec = model(IDS, record=True, switches=Switches(positions=False))
    _, rec_shuffled = model(IDS[:, perm], record=True, switches=Switches(positions=False))
    first, attention = rec.layers["self"][0], model.stack.blocks[0].self_attention
    p = first.probs[0]  # (h, t, t)
    q = rec_shuffled.layers["self"][0].probs[0]
    allowed = tolerances.reordered(first.inputs[0].detach(), attention.toqueries.weight.detach(),
                                   attention.tokeys.weight.detach(), first.q[0].detach(), first.k[0].detach(),
                                   p.detach(), attention.d ** -0.5)  # the same rows in another order
    tolerances.assert_within(q.detach(), p.detach()[:, perm][:, :, perm], allowed[:, perm][:, :, perm])


def test_causal_off_lets_the_first_token_see_the_last():
    model = _model()
    _, rec = model(IDS, record=True, switches=Switches(causal=False))
    assert rec.layers["self"][0].probs[0, :, 0, -1].min() > 0
    _, masked = model(IDS, record=True)
    assert masked.layers["self"][0].probs[0, :, 0, -1].max() == 0


def test_cross_ablation_reaches_only_cross_attention():
    model = _model("encoder-decoder", positions="sinusoidal")
    tgt = torch.tensor([[1, 4, 6]])
    plain, _ = model(IDS, tgt)
    ablated, rec = model(IDS, tgt, record=True, switches=Switches(ablate={("cross", 1, 3)}, method="uniform"))
    assert not torch.allclose(plain, ablated)
    s = IDS.shape[1]
    # 1 / s, one correctly rounded division either way (IEEE: the same on every processor)
    torch.testing.assert_close(rec.layers["cross"][1].probs[0, 3], torch.full((3, s), 1.0 / s), atol=0, rtol=0)
    _, plain_rec = model(IDS, tgt, record=True)
    # the encoder runs the same path on the same inputs with or without the cross knock-out: bit for bit
    torch.testing.assert_close(rec.layers["encoder"][1].probs, plain_rec.layers["encoder"][1].probs, atol=0, rtol=0)


@pytest.mark.parametrize("bad", [dict(method="mean"), dict(ablate={("self", -1, 0)}), dict(ablate={("nope", 0, 0)})])
def test_bad_switches_are_refused(bad):
    with pytest.raises(ValueError):
        Switches(**bad)


def test_a_head_that_does_not_exist_is_refused():
    with pytest.raises(ValueError, match="does not exist"):
        _model()(IDS, switches=Switches(ablate={("self", 0, 9)}))
