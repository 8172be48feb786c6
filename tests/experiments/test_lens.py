"""The logit lens (experiments/lens.py): every layer's residual stream read through the model's own final norm and
unembedding. Oracles: the last layer's reading is the model's own output bit for bit; on GPT-2 and BERT
checkpoints each layer's reading equals transformers' hidden state put through the same head."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from model import api
from experiments import lens
from tests import tolerances
from tests.model.test_pretrained import _save

TEXTS = {"lm": "The cat sat on the mat", "mlm": "the United <mask> of America", "dates": "3 March 1999"}


@pytest.fixture(scope="module")
def shipped():
    return {name: api.load(name, device="cpu") for name in ("lm", "mlm", "dates", "classifier", "minilm")}


def own_logits(loaded, text, record: bool, model=None):
    """The model's own logits: with record=True on the explicit attention path a trace runs, else on the fused
    kernel (the same arithmetic in another order, so equal within float32's rounding, not bit for bit); by `model`
    (its float64 copy) where given."""
    enc = loaded.encode(text)
    ids = torch.tensor([enc.ids])
    model = model or loaded.model
    with torch.inference_mode():
        if loaded.arch == "encoder-decoder":
            trace = loaded.trace(text)
            return model(ids, torch.tensor([list(trace.target_ids)]), record=record)[0][0]
        return model(ids, record=record)[0][0]


@pytest.mark.parametrize("name", ["lm", "mlm", "dates"])
def test_the_last_layer_reads_exactly_the_models_own_prediction(shipped, name):
    loaded = shipped[name]
    reading = lens.logit_lens(loaded, TEXTS[name])
    trace = reading.trace
    stack = reading.stack
    assert trace.residual[stack].shape[0] == reading.n_layers == (
        loaded.config.n_decoder_layers if stack == "decoder" else loaded.config.n_layers)
    last = lens.readout(loaded, trace.residual[stack])[-1]
    assert torch.equal(last, own_logits(loaded, TEXTS[name], record=True).float())  # bit for bit
    fused = own_logits(loaded, TEXTS[name], record=False).float()
    exact = own_logits(loaded, TEXTS[name], record=False, model=tolerances.in_float64(loaded.model))
    # the explicit path against the fused kernel: within 3x the fused pass's own float32 rounding (its float64 run)
    tolerances.assert_within(last, fused, tolerances.beside_oracle(last, fused, exact))
    assert torch.equal(last.argmax(-1), fused.argmax(-1))
    assert reading.top_tokens[-1] == trace.predictions  # the model's own top token at every position
    np.testing.assert_array_equal(reading.final_probs[-1], reading.top_probs[-1])
    assert reading.top_probs.shape == (reading.n_layers, len(reading.tokens))


@pytest.mark.parametrize("name", ["lm", "mlm", "dates"])
def test_the_lens_reads_one_layer_at_a_time_and_keeps_every_number_of_the_whole_readout(shipped, name, monkeypatch):
    """The reading keeps each layer's top tokens and the final answer's probability, never every layer's
    distribution at once (smollm2 at 512 tokens: 3 GB): the numbers are those of the softmax over every logit."""
    loaded = shipped[name]
    reading = lens.logit_lens(loaded, TEXTS[name])
    probs = torch.softmax(lens.readout(loaded, reading.trace.residual[reading.stack]), -1)  # (L, t, v)
    top = probs.topk(lens.TOP, dim=-1)
    final = top.indices[-1, :, 0]
    np.testing.assert_array_equal(reading.top_ids, top.indices[..., 0].numpy())
    np.testing.assert_array_equal(reading.alt_probs, top.values.numpy())
    np.testing.assert_array_equal(reading.final_probs,
                                  probs.gather(-1, final[None, :, None].expand(probs.size(0), -1, 1))[..., 0].numpy())
    shapes = []
    softmax = torch.softmax
    monkeypatch.setattr(torch, "softmax", lambda x, dim, **out: shapes.append(tuple(x.shape)) or softmax(x, dim, **out))
    lens.logit_lens(loaded, TEXTS[name], reading.trace)
    t, v = probs.shape[1:]
    assert shapes == [(t, v)] * reading.n_layers  # one layer's distribution at a time


def test_earlier_layers_are_read_differently(shipped):
    reading = lens.logit_lens(shipped["lm"], TEXTS["lm"])
    assert reading.top_tokens[0] != reading.top_tokens[-1]  # the lens shows a change, not one answer copied up


@pytest.mark.parametrize("name", ["minilm", "classifier"])
def test_a_model_without_a_word_head_is_refused_with_the_reason(shipped, name):
    with pytest.raises(lens.NoLensError, match="no word-prediction head"):
        lens.logit_lens(shipped[name], "a dog")


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_each_layer_matches_transformers_hidden_states_through_the_same_head(family, tmp_path):
    transformers = pytest.importorskip("transformers")
    folder = _save(family, tmp_path)
    loaded = api.load_pretrained(folder, device="cpu")
    text = "the cat sat on the mat"
    reading = lens.logit_lens(loaded, text)
    ids = torch.tensor([loaded.encode(text).ids])
    oracle = transformers.AutoModelForCausalLM if family == "gpt2" else transformers.AutoModelForMaskedLM
    model = oracle.from_pretrained(str(folder), attn_implementation="eager").eval()

    def heads(model) -> np.ndarray:
        with torch.no_grad():
            hidden = model(ids, output_hidden_states=True).hidden_states[1:]  # after each layer
            if family == "gpt2":  # the last one already has ln_f applied
                return torch.cat([model.lm_head(model.transformer.ln_f(h)) for h in hidden[:-1]]
                                 + [model.lm_head(hidden[-1])]).numpy()
            return torch.cat([model.cls(h) for h in hidden]).numpy()  # BERT is post-norm: already normalised

    ours = lens.readout(loaded, reading.trace.residual["self"]).numpy()
    theirs, exact = heads(model), heads(tolerances.in_float64(model))
    tolerances.assert_within(ours, theirs, tolerances.beside_oracle(ours, theirs, exact))  # float32's rounding


def test_a_llama_with_shared_key_value_heads_reads_through_its_rmsnorm(tmp_path):
    """Grouped-query attention, RMSNorm and no output bias: the lens and the value-weighted sum stay exact."""
    transformers = pytest.importorskip("transformers")
    from analysis import flow
    from tests.model.test_pretrained_llama import oracle, save_tiny

    folder = save_tiny("llama", tmp_path / "llama", num_key_value_heads=2, tie_word_embeddings=False)
    loaded = api.load_pretrained(folder, device="cpu")
    text = "the cat sat on the mat"
    reading = lens.logit_lens(loaded, text)
    model = oracle(folder, "llama")

    def heads(model) -> np.ndarray:
        with torch.no_grad():
            hidden = model(torch.tensor([loaded.encode(text).ids]), output_hidden_states=True).hidden_states[1:]
            return torch.cat([model.lm_head(model.model.norm(h)) for h in hidden[:-1]]
                             + [model.lm_head(hidden[-1])]).numpy()

    ours = lens.readout(loaded, reading.trace.residual["self"]).numpy()
    theirs, exact = heads(model), heads(tolerances.in_float64(model))
    tolerances.assert_within(ours, theirs, tolerances.beside_oracle(ours, theirs, exact))  # float32's rounding
    att = reading.trace.attention["self"]
    for layer in range(att.n_layers):
        written = sum(flow.weighted_vectors(att, layer, h).sum(1) for h in range(att.n_heads))
        v = np.repeat(att.v[layer], att.n_heads // att.v[layer].shape[0], axis=0)  # one set per query head
        # torch's float32 layer against this float64 sum of the same float32 weights, values, W_O and bias
        allowed = tolerances.layer_output(att.probs[layer], v, att.out_weight[layer], att.out_bias[layer])
        tolerances.assert_within(written + att.out_bias[layer], att.output[layer], allowed, f"layer {layer}")


def test_a_long_input_is_read_on_its_last_window_with_the_numbers_of_a_full_read(shipped):
    """A 200-token input: the lens reads positions 73-200 only (1-based), each with the numbers a read of every
    position gives it there."""
    loaded = shipped["lm"]
    text = " ".join(("the cat sat on the mat and " * 30).split()[:199])  # 200 tokens with the first one
    trace = loaded.trace(text, detail=True)
    t = len(trace.tokens)
    assert t == 200, t
    reading = lens.logit_lens(loaded, text, trace)
    full = lens.logit_lens(loaded, text, trace, window=None)
    assert lens.LENS_WINDOW == 128 and reading.start == 72 and reading.n_positions == 200
    assert reading.tokens == list(trace.tokens)[72:] and full.start == 0 and len(full.tokens) == 200
    np.testing.assert_array_equal(reading.top_ids, full.top_ids[:, 72:])
    np.testing.assert_array_equal(reading.alt_probs, full.alt_probs[:, 72:])
    np.testing.assert_array_equal(reading.final_probs, full.final_probs[:, 72:])
    assert reading.alternatives == [layer[72:] for layer in full.alternatives]
    short = lens.logit_lens(loaded, TEXTS["lm"])
    assert short.start == 0 and short.n_positions == len(short.trace.tokens)  # a short input: every position
