"""The Trace built from an untrained tiny model: shapes, dtypes, masks, and the q/k
recompute the app's step-by-step view relies on."""
import numpy as np
import pytest
import torch

from model import trace as trace_mod
from model.config import TransformerConfig
from model.transformer import build
from tests import tolerances

L, DL, H, K = 2, 3, 2, 12  # encoder layers, decoder layers, heads, d_model


def tiny(arch, wide=False):
    torch.manual_seed(0)
    extra = {"n_decoder_layers": DL} if arch == "encoder-decoder" else {}
    config = TransformerConfig(arch=arch, vocab_size=25, max_len=20, d_model=K, n_heads=H, n_layers=L, d_ff=24,
                               dropout=0.0, wide=wide, **extra)
    return build(config).eval()


def trace_of(arch, t=6, s=8, wide=False):
    model = tiny(arch, wide)
    gen = torch.Generator().manual_seed(1)
    if arch == "encoder-decoder":
        src, tgt = torch.randint(0, 25, (1, s), generator=gen), torch.randint(0, 25, (1, t), generator=gen)
        with torch.no_grad():
            _, rec = model(src, tgt, record=True)
        return trace_mod.from_recording(
            rec, model="tiny", arch=arch, d_head=model.config.d_head, tokens=[f"s{i}" for i in range(s)],
            ids=src[0].tolist(), target_tokens=[f"t{i}" for i in range(t)], target_ids=tgt[0].tolist())
    ids = torch.randint(0, 25, (1, t), generator=gen)
    with torch.no_grad():
        _, rec = model(ids, record=True)
    return trace_mod.from_recording(rec, model="tiny", arch=arch, d_head=model.config.d_head,
                                    tokens=[f"w{i}" for i in range(t)], ids=ids[0].tolist())


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def recompute(att, d_head):
    """softmax(q kᵀ / sqrt(d), masked) by hand, in float64."""
    logits = att.q.astype(np.float64) @ np.swapaxes(att.k.astype(np.float64), -1, -2) / np.sqrt(d_head)
    logits = np.where(att.mask, logits, -np.inf)
    return softmax(logits)


def float_arrays(att):
    return {name: getattr(att, name) for name in ("inputs", "q", "k", "v", "scores", "probs")}


@pytest.mark.parametrize("arch,kind", [("decoder", "self"), ("encoder", "self")])
@pytest.mark.parametrize("wide", [False, True])
def test_single_stack_trace_shapes_and_dtypes(arch, kind, wide):
    trace = trace_of(arch, t=6, wide=wide)
    d = K if wide else K // H
    assert trace.d_head == d
    assert list(trace.attention) == [kind]
    att = trace.attention[kind]
    shapes = {"inputs": (L, 6, K), "q": (L, H, 6, d), "k": (L, H, 6, d), "v": (L, H, 6, d),
              "scores": (L, H, 6, 6), "probs": (L, H, 6, 6)}
    for name, array in float_arrays(att).items():
        assert isinstance(array, np.ndarray), name
        assert array.dtype == np.float32, name
        assert array.shape == shapes[name], name
    assert att.mask.shape == (6, 6) and att.mask.dtype == bool
    assert (att.n_layers, att.n_heads) == (L, H)
    assert att.queries == att.keys == [f"w{i}" for i in range(6)]
    assert trace.token_embeddings.shape == trace.position_embeddings.shape == (6, K)
    assert trace.token_embeddings.dtype == trace.position_embeddings.dtype == np.float32
    assert trace.ids.dtype == np.int64 and trace.ids.shape == (6,)


def test_lm_mask_is_causal_and_mlm_mask_is_all_true():
    lm = trace_of("decoder").attention["self"]
    np.testing.assert_array_equal(lm.mask, np.tril(np.ones((6, 6), dtype=bool)))
    assert lm.causal
    mlm = trace_of("encoder").attention["self"]
    assert mlm.mask.all()
    assert not mlm.causal


def test_encoder_decoder_trace_has_three_kinds_with_their_shapes():
    trace = trace_of("encoder-decoder", t=5, s=8)
    assert set(trace.attention) == {"encoder", "decoder", "cross"}
    d = K // H
    expected = {"encoder": (L, 8, 8), "decoder": (DL, 5, 5), "cross": (DL, 5, 8)}
    for kind, (layers, t, s) in expected.items():
        att = trace.attention[kind]
        assert att.probs.shape == att.scores.shape == (layers, H, t, s), kind
        assert att.q.shape == (layers, H, t, d) and att.k.shape == att.v.shape == (layers, H, s, d), kind
        assert att.inputs.shape == (layers, t, K), kind
        assert att.mask.shape == (t, s), kind
        for name, array in float_arrays(att).items():
            assert array.dtype == np.float32, (kind, name)
        np.testing.assert_allclose(att.probs.sum(-1), 1.0, atol=tolerances.weights_sum(s), rtol=0)  # float32 rows
    cross = trace.attention["cross"]
    assert cross.queries == trace.target_tokens == [f"t{i}" for i in range(5)]
    assert cross.keys == trace.tokens == [f"s{i}" for i in range(8)]
    assert trace.attention["decoder"].causal and not trace.attention["encoder"].causal
    assert cross.mask.all()
    assert trace.target_ids.dtype == np.int64
    # the encoder's side is what the trace's embeddings describe
    assert trace.token_embeddings.shape == (8, K)


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
@pytest.mark.parametrize("wide", [False, True])
def test_probs_recompute_from_q_and_k_for_every_layer_and_head(arch, wide):
    trace = trace_of(arch, wide=wide)
    for kind, att in trace.attention.items():
        # within what a float32 attention may be off from the float64 one (tests/tolerances.py), whatever the CPU
        _, probs, _ = tolerances.attention(att.q, att.k, att.v, 1 / np.sqrt(trace.d_head), att.mask)
        tolerances.assert_within(att.probs, recompute(att, trace.d_head), probs, err_msg=kind)
        # scores are the raw q·kᵀ: torch's product against numpy's, each summing d_head terms in its own order
        k = np.swapaxes(att.k, -1, -2)
        tolerances.assert_within(att.scores, att.q @ k, tolerances.product(att.q, k), err_msg=kind)


def test_lm_trace_rows_sum_to_one_and_first_query_sees_itself():
    att = trace_of("decoder").attention["self"]
    np.testing.assert_allclose(att.probs.sum(-1), 1.0, atol=tolerances.weights_sum(att.probs.shape[-1]), rtol=0)
    assert (att.probs[..., np.triu_indices(6, 1)[0], np.triu_indices(6, 1)[1]] == 0).all()
    np.testing.assert_array_equal(att.probs[:, :, 0, 0], np.ones((L, H), dtype=np.float32))


def test_a_trace_holds_one_input_not_a_batch():
    model = tiny("decoder")
    with torch.no_grad():
        _, rec = model(torch.randint(0, 25, (2, 5)), record=True)
    with pytest.raises(ValueError, match="batch of 2"):
        trace_mod.from_recording(rec, model="tiny", arch="decoder", d_head=model.config.d_head,
                                 tokens=[f"w{i}" for i in range(5)], ids=list(range(5)))
