"""Whole models built from a config: masks through every layer and head, cross-attention,
pre- and post-norm, dropout, and the recorded path against the fused one."""
import numpy as np
import pytest
import torch

from model.block import TransformerBlock
from model.config import TransformerConfig
from model.transformer import CausalLM, EncoderDecoder, MaskedLM, build
from tests import tolerances

SMALL = dict(vocab_size=30, max_len=16, d_model=16, n_heads=4, n_layers=3, d_ff=32, dropout=0.0)


def config(arch, **changes):
    extra = {"n_decoder_layers": 2} if arch == "encoder-decoder" else {}
    return TransformerConfig(arch=arch, **{**SMALL, **extra, **changes})


def ids(t, seed=0, b=2):
    return torch.randint(5, 30, (b, t), generator=torch.Generator().manual_seed(seed))


def model_of(arch, seed=0, **changes):
    torch.manual_seed(seed)
    return build(config(arch, **changes)).eval()


def run(model, seed=0, record=False):
    if isinstance(model, EncoderDecoder):
        return model(ids(7, seed), ids(5, seed + 1), record=record)
    return model(ids(6, seed), record=record)


def test_build_picks_the_class_for_each_architecture():
    assert type(model_of("decoder")) is CausalLM
    assert type(model_of("encoder")) is MaskedLM
    assert type(model_of("encoder-decoder")) is EncoderDecoder


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("wide", [False, True])
def test_causal_lm_masks_the_future_in_every_layer_and_head(norm, wide):
    model = model_of("decoder", norm=norm, wide=wide)
    _, recording = model(ids(6), record=True)
    layers = recording.layers["self"]
    assert len(layers) == 3
    above = torch.ones(6, 6, dtype=torch.bool).triu(1)
    for layer in layers:
        assert layer.probs.shape == (2, 4, 6, 6)
        torch.testing.assert_close(layer.probs.sum(-1), torch.ones(2, 4, 6))
        assert (layer.probs[..., above] == 0).all()
        assert torch.equal(layer.probs[..., 0, 0], torch.ones(2, 4)), "the first token attends only to itself"


def test_causal_lm_earlier_logits_ignore_later_tokens():
    model = model_of("decoder")
    a = ids(6)
    b = a.clone()
    b[:, 4:] = (b[:, 4:] + 1 - 5) % 25 + 5  # change the last two tokens
    with torch.no_grad():
        la, _ = model(a)
        lb, _ = model(b)
    torch.testing.assert_close(la[:, :4], lb[:, :4])
    assert not torch.allclose(la[:, 4:], lb[:, 4:])


def test_masked_lm_sees_the_whole_sentence():
    model = model_of("encoder")
    a = ids(6)
    b = a.clone()
    b[:, 5] = (b[:, 5] + 1 - 5) % 25 + 5
    with torch.no_grad():
        la, rec = model(a, record=True)
        lb, _ = model(b)
    assert not torch.allclose(la[:, 0], lb[:, 0]), "the first position must see the last token"
    for layer in rec.layers["self"]:
        assert layer.mask is None
        assert (layer.probs > 0).all()
        torch.testing.assert_close(layer.probs.sum(-1), torch.ones(2, 4, 6))


def test_encoder_decoder_records_encoder_decoder_and_cross_attention():
    model = model_of("encoder-decoder")
    src, tgt = ids(7), ids(5, seed=1)
    logits, rec = model(src, tgt, record=True)
    assert logits.shape == (2, 5, 30)
    assert len(rec.layers["encoder"]) == 3
    assert len(rec.layers["decoder"]) == len(rec.layers["cross"]) == 2
    for layer in rec.layers["encoder"]:
        assert layer.probs.shape == (2, 4, 7, 7)
    above = torch.ones(5, 5, dtype=torch.bool).triu(1)
    for layer in rec.layers["decoder"]:
        assert (layer.probs[..., above] == 0).all()
    for layer in rec.layers["cross"]:
        assert layer.probs.shape == (2, 4, 5, 7)  # (b, h, target length, source length)
        torch.testing.assert_close(layer.probs.sum(-1), torch.ones(2, 4, 5))
    assert set(rec.embeddings) == {"source", "target"}


def test_encoder_decoder_source_padding_is_ignored():
    model = model_of("encoder-decoder")
    src, tgt = ids(7), ids(5, seed=1)
    keep = torch.ones(2, 7, dtype=torch.bool)
    keep[0, 4:] = False
    padded = src.clone()
    padded[0, 4:] = 0
    with torch.no_grad():
        logits, rec = model(padded, tgt, keep, record=True)
        alone, _ = model(src[:1, :4], tgt[:1])
        exact, _ = tolerances.in_float64(model)(src[:1, :4], tgt[:1])  # the fused path: float64 throughout
    for kind in ("encoder", "cross"):
        for layer in rec.layers[kind]:
            assert (layer.probs[0, ..., 4:] == 0).all(), kind
    # a padded key's weight is exactly 0, so only the order of float32 sums differs: within 3x alone's own rounding
    tolerances.assert_within(logits[:1], alone, tolerances.beside_oracle(logits[:1], alone, exact))


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
@pytest.mark.parametrize("positions", ["learned", "sinusoidal", "none"])
def test_recorded_path_equals_fused_path(arch, positions):
    model = model_of(arch, positions=positions)
    with torch.no_grad():
        fused, none = run(model)
        recorded, rec = run(model, record=True)
        exact, _ = run(tolerances.in_float64(model))  # the fused path in float64 (its softmax too)
    assert none is None and rec is not None
    # the explicit softmax and the fused kernel sum the same terms in their own orders: within 3x fused's own rounding
    tolerances.assert_within(recorded, fused, tolerances.beside_oracle(recorded, fused, exact))


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
def test_pre_norm_and_post_norm_both_run_and_differ(arch):
    post = model_of(arch, norm="post")
    pre = model_of(arch, norm="pre")
    # the same weights everywhere except pre-norm's extra final norms
    missing, unexpected = pre.load_state_dict(post.state_dict(), strict=False)
    assert unexpected == [] and all("final_norm" in m for m in missing)
    with torch.no_grad():
        a, _ = run(post)
        b, _ = run(pre)
    assert a.shape == b.shape
    assert torch.isfinite(a).all() and torch.isfinite(b).all()
    assert not torch.allclose(a, b, atol=1e-4)


def test_block_post_norm_and_pre_norm_follow_their_formulas():
    torch.manual_seed(0)
    post = TransformerBlock(config("decoder", norm="post")).eval()
    pre = TransformerBlock(config("decoder", norm="pre")).eval()
    pre.load_state_dict(post.state_dict())
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        # post-norm: x = norm(x + sublayer(x))
        h = post.norm1(x + post.self_attention(x)[0])
        inner = h + post.feed_forward(h)  # what post-norm's last norm normalises
        expected_post = post.norm2(inner)
        # pre-norm: x = x + sublayer(norm(x))
        g = x + pre.self_attention(pre.norm1(x))[0]
        expected_pre = g + pre.feed_forward(pre.norm2(g))
        got_post, _ = post(x)
        got_pre, _ = pre(x)
    # the block calls these very modules on the same inputs in the same order: the same numbers, bit for bit
    torch.testing.assert_close(got_post, expected_post, atol=0, rtol=0)
    torch.testing.assert_close(got_pre, expected_pre, atol=0, rtol=0)
    # post-norm ends in a layer norm: every position has mean 0 (its weight 1 and bias 0 untrained). Float32 moves it by
    # the norm's own mean of n terms (over the std: every output shifts by that), 4 roundings of each output
    # (subtract, scale, weight, bias) and the test's mean of n outputs (tests/tolerances.py)
    n, y = inner.shape[-1], got_post.abs().double().numpy()
    std = inner.std(-1, unbiased=False).numpy()
    mean_off = tolerances.summed(n, inner.abs().sum(-1).double().numpy()) / 2 / n / std
    allowed = mean_off + 2 * tolerances.EPS32 * y.mean(-1) + tolerances.summed(n, y.sum(-1)) / 2 / n
    tolerances.assert_within(got_post.mean(-1), np.zeros((2, 5)), allowed)


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
def test_dropout_only_in_training_mode(arch):
    model = model_of(arch, dropout=0.3)
    with torch.no_grad():
        model.eval()
        a, _ = run(model)
        b, _ = run(model)
        assert torch.equal(a, b)
        model.train()
        torch.manual_seed(1)
        c, _ = run(model)
        torch.manual_seed(2)
        d, _ = run(model)
    assert not torch.allclose(c, a)
    assert not torch.allclose(c, d)


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
def test_tied_embeddings_share_one_matrix(arch):
    tied = model_of(arch)
    assert tied.to_vocab.weight is tied.embed.token_embedding.weight
    untied = model_of(arch, tie_embeddings=False)
    assert untied.to_vocab.weight is not untied.embed.token_embedding.weight


def test_longer_than_the_context_is_a_clear_error():
    model = model_of("decoder")
    with pytest.raises(ValueError, match="longer than the model's context of 16"):
        model(ids(17))


def test_sinusoidal_models_scale_token_embeddings_by_sqrt_k():
    model = model_of("decoder", positions="sinusoidal")
    x = ids(4)
    _, rec = model(x, record=True)
    torch.testing.assert_close(rec.embeddings["input"], model.embed.token_embedding(x) * 4.0)  # sqrt(16)


@pytest.mark.parametrize("arch", ["decoder", "encoder"])
def test_a_pass_that_keeps_only_the_attention_records_every_layers_weights_and_stops_there(arch):
    """features(attention_only=True), as a trace for the views runs it: every layer's weights as the full recorded
    pass gives them (written into one stack), and the last layer's weighted sum, W_O and feed-forward not run."""
    from model.transformer import Recording

    model = model_of(arch, seed=3)
    x = ids(6, seed=3)
    with torch.no_grad():
        _, full = model.features(x, record=True)
        _, kept = model.features(x, record=Recording(scores=False, stack=True), attention_only=True)
    assert len(kept.layers["self"]) == len(full.layers["self"]) == SMALL["n_layers"]
    for ours, theirs in zip(kept.layers["self"], full.layers["self"]):
        torch.testing.assert_close(ours.probs, theirs.probs)
        torch.testing.assert_close(ours.q, theirs.q)
    assert kept.layers["self"][-1].probs.data_ptr() == kept.stacks["self"][-2:].data_ptr()  # its slice of the stack
    assert kept.layers["self"][-1].output is None and full.layers["self"][-1].output is not None
