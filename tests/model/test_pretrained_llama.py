"""Llama-family checkpoints (Llama, Mistral, Qwen2) run by this project's modules, checked against
`transformers` (the test-only oracle, eager attention) on tiny random models saved in Hugging Face format:
rotary positions with and without rope scaling, grouped-query attention, RMSNorm, SwiGLU, tied and untied
embeddings, Qwen2's q/k/v biases, Mistral's sliding window."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from model import api
from model.checkpoint import CheckpointError
from model.positions import rotary_frequencies
from model.switches import Switches
from tests import tolerances
from tests.llama_checkpoints import GQA, SENTENCES, assert_matches_oracle, gqa_checkpoint, oracle, save_tiny

transformers = pytest.importorskip("transformers", reason="transformers is the test oracle (requirements-dev.txt)")

LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 16}
# name: (family, config fields); every one has fewer key/value heads than query heads but "mha"
CASES = {
    "llama-gqa-untied": ("llama", dict(num_key_value_heads=2, tie_word_embeddings=False)),
    "llama-mha-tied": ("llama", dict(num_key_value_heads=4, tie_word_embeddings=True)),
    "llama-mqa-llama3": ("llama", dict(num_key_value_heads=1, rope_theta=500000.0, rope_scaling=LLAMA3)),
    "llama-linear-biases": ("llama", dict(num_key_value_heads=2, attention_bias=True, mlp_bias=True,
                                          rope_scaling={"rope_type": "linear", "factor": 4.0})),
    "llama-dynamic-head-dim": ("llama", dict(num_key_value_heads=2, head_dim=12,
                                             rope_scaling={"rope_type": "dynamic", "factor": 2.0})),
    "qwen2-gqa-tied": ("qwen2", dict(num_key_value_heads=2, tie_word_embeddings=True, rope_theta=1000000.0)),
    "mistral-window": ("mistral", dict(num_key_value_heads=2, sliding_window=6)),
}
@pytest.fixture(scope="module", params=sorted(CASES))
def tiny(request, tmp_path_factory):
    family, fields = CASES[request.param]
    folder = save_tiny(family, tmp_path_factory.mktemp(request.param), **fields)
    return request.param, family, fields, folder


def test_tiny_checkpoints_match_transformers(tiny):
    name, family, fields, folder = tiny
    loaded = api.load_from(folder, device="cpu")
    c = loaded.config
    assert (c.arch, c.positions, c.normalization, c.feed_forward, c.norm) == ("decoder", "rotary", "rmsnorm",
                                                                                "swiglu", "pre")
    assert c.kv_heads == fields["num_key_value_heads"] and c.tie_embeddings == fields.get("tie_word_embeddings", False)
    assert c.qkv_bias == (family == "qwen2" or fields.get("attention_bias", False))
    hf_model = oracle(folder, family)
    for text in SENTENCES:
        assert_matches_oracle(loaded, hf_model, text)
    trace = loaded.trace(SENTENCES[0])
    att = trace.attention["self"]
    assert att.causal and att.probs.shape[1] == 4 and att.k.shape[1] == 4  # every query head, keys shared
    assert not trace.position_embeddings.any()  # nothing added: the positions turn q and k


def test_the_transformers_4_config_format_reads_the_same(tiny, tmp_path):
    """Checkpoints on the Hub write rope_theta and rope_scaling ({"type": ...}); transformers 5 writes one
    rope_parameters dictionary. Both give the same model."""
    name, family, fields, folder = tiny
    config = json.loads((folder / "config.json").read_text())
    rope = dict(config.pop("rope_parameters"))
    old = {**config, "rope_theta": rope.pop("rope_theta")}
    kind = rope.pop("rope_type")
    old["rope_scaling"] = None if kind == "default" else {"type": kind, **rope}
    for f in ("tokenizer.json", "model.safetensors"):
        (tmp_path / f).write_bytes((folder / f).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps(old))
    assert api.load_from(tmp_path, device="cpu").config == api.load_from(folder, device="cpu").config


def test_grouped_query_heads_share_keys_and_values(tmp_path):
    loaded = api.load_from(save_tiny("llama", tmp_path / "gqa", num_key_value_heads=2), device="cpu")
    att = loaded.trace(SENTENCES[0]).attention["self"]
    assert np.array_equal(att.k[:, 0], att.k[:, 1]) and np.array_equal(att.v[:, 2], att.v[:, 3])
    assert not np.allclose(att.k[:, 1], att.k[:, 2])  # two groups: heads 1-2 and heads 3-4
    assert not np.allclose(att.q[:, 0], att.q[:, 1])  # each query head its own queries
    scores = att.q @ np.swapaxes(att.k, -1, -2)
    # the recorded q and k (turned) give the scores: numpy's product against torch's, each in its own order
    tolerances.assert_within(scores, att.scores, tolerances.product(att.q, np.swapaxes(att.k, -1, -2)))


def test_knocking_out_a_query_head_of_a_shared_group(tmp_path):
    loaded = api.load_from(save_tiny("qwen2", tmp_path / "q", num_key_value_heads=2), device="cpu")
    plain = loaded.trace(SENTENCES[0])
    off = loaded.trace(SENTENCES[0], switches=Switches(ablate=frozenset({("self", 0, 1)})))
    p, o = plain.attention["self"].probs, off.attention["self"].probs
    assert np.array_equal(p[0], o[0]) and np.abs(p[1] - o[1]).max() > 1e-3  # only what comes after changes
    uniform = loaded.trace(SENTENCES[0], switches=Switches(ablate=frozenset({("self", 1, 0)}), method="uniform"))
    row = uniform.attention["self"].probs[1, 0, 3]
    assert (row[:4] == 0.25).all() and not row[4:].any()  # causal: 4 keys allowed at position 4 (1 / 4, exact)


def test_positions_off_makes_the_first_layer_blind_to_order(tmp_path):
    """Without the rotation the first layer's scores depend on the tokens alone (the shuffle experiment)."""
    loaded = api.load_from(save_tiny("llama", tmp_path / "l", num_key_value_heads=2), device="cpu")
    ids = loaded.encode("the cat sat on the mat").ids
    order = list(np.random.default_rng(0).permutation(len(ids)))
    blind = Switches(positions=False, causal=False)
    first = loaded.trace_ids(ids, blind).attention["self"]
    a = first.probs[0]
    b = loaded.trace_ids([ids[i] for i in order], blind).attention["self"].probs[0]
    inverse = np.argsort(order)
    weights = [w.weight.detach() for w in (loaded.model.stack.blocks[0].self_attention.toqueries,
                                           loaded.model.stack.blocks[0].self_attention.tokeys)]
    allowed = tolerances.reordered(first.inputs[0], *weights, first.q[0], first.k[0], a, first.q.shape[-1] ** -0.5)
    tolerances.assert_within(b[:, inverse][:, :, inverse], a, allowed)  # the same rows in another order
    seeing = Switches(causal=False)
    a = loaded.trace_ids(ids, seeing).attention["self"].probs[0]
    b = loaded.trace_ids([ids[i] for i in order], seeing).attention["self"].probs[0]
    assert np.abs(a - b[:, inverse][:, :, inverse]).max() > 1e-2



def test_mistral_sliding_window_hides_older_keys(tmp_path):
    loaded = api.load_from(save_tiny("mistral", tmp_path / "m", num_key_value_heads=2, sliding_window=3),
                           device="cpu")
    att = loaded.trace(SENTENCES[0]).attention["self"]
    assert att.mask[5].tolist()[:7] == [False, False, False, True, True, True, False]
    assert not att.probs[:, :, 5, :3].any()


def test_a_bos_token_where_the_tokenizer_says(tmp_path):
    """Llama-2's tokenizer.json starts every text with <s>; where only tokenizer_config.json says
    add_bos_token, the loader adds it; SmolLM2's and Qwen2's add none."""
    with_bos = api.load_from(save_tiny("llama", tmp_path / "bos", bos=True), device="cpu")
    assert with_bos.encode("the cat").tokens[0] == "<s>" and with_bos.encode("the cat").ids[0] == 0
    hf_model = oracle(tmp_path / "bos", "llama")
    assert_matches_oracle(with_bos, hf_model, "the cat sat")
    plain = save_tiny("llama", tmp_path / "plain")
    assert api.load_from(plain, device="cpu").encode("the cat").tokens[0] != "<|endoftext|>"
    (plain / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True}))
    told = api.load_from(plain, device="cpu")
    assert told.encode("the cat").tokens[0] == "<|endoftext|>" and told.added_ids == {0}
    assert "".join(told.encode("walking cats").tokens[1:]) == "walking▁cats"  # byte-level pieces, readable


def test_generation_stops_at_the_end_token(tmp_path):
    loaded = api.load_from(save_tiny("qwen2", tmp_path / "g", num_key_value_heads=2), device="cpu")
    assert isinstance(loaded.generate("the cat", 3), str) and len(loaded.next_tokens("the cat", k=3)) == 3


def test_a_continuation_ending_inside_a_character_writes_its_byte_not_a_replacement_character(tmp_path):
    """The readability walk's odd grouped-query checkpoint (7 layers × 6 query heads × 2 key/value heads) ends its
    greedy continuation with byte 0x93 alone, a piece of no character: Every head showed "… clothing�"."""
    loaded = api.load_from(gqa_checkpoint(tmp_path / GQA), device="cpu")
    continuation = loaded.generate("When Mary and John went to the store, John gave a drink to", 12)
    assert continuation.endswith(" of clothing<0x93>") and "\ufffd" not in continuation, continuation


def test_a_shorter_context_is_just_fewer_positions(tmp_path):
    folder = save_tiny("llama", tmp_path / "c", num_key_value_heads=2)
    short = api.load_pretrained(folder, device="cpu", context=8)
    assert short.config.max_len == 8
    long = short.encode(SENTENCES[0])
    assert long.truncated and len(long.ids) == 8
    assert_matches_oracle(short, oracle(folder, "llama"), "the cat sat")


@pytest.mark.parametrize("change, message", [
    ({"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0}}, "rope_type 'yarn'.*linear"),
    ({"hidden_act": "gelu"}, "SiLU"),
    ({"use_sliding_window": True}, "sliding-window"),
    ({"model_type": "gemma", "architectures": ["GemmaForCausalLM"]}, "gemma model.*Llama.*Mistral.*Qwen2"),
])
def test_unsupported_settings_are_named(tmp_path, change, message):
    folder = save_tiny("qwen2", tmp_path / "q")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(CheckpointError, match=message):
        api.load_pretrained(folder, device="cpu")


def test_rope_scalings_change_the_speeds_as_their_papers_say():
    plain = rotary_frequencies(8, 10000.0)
    exact = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    # a float32 pow within 2 spacings of its true value (LIBM_ULPS / 2), then 1 / x rounded once (half a spacing)
    tolerances.assert_within(plain.numpy(), exact, (tolerances.LIBM_ULPS / 2 + 0.5) * tolerances.EPS32 * exact)
    assert torch.equal(rotary_frequencies(8, 10000.0, "linear", 4.0), plain / 4)  # a division by 4: exact
    assert torch.equal(rotary_frequencies(8, 10000.0, "dynamic", 2.0, original_max_len=64, t=10), plain)
    assert (rotary_frequencies(8, 10000.0, "dynamic", 2.0, original_max_len=64, t=128)[1:] < plain[1:]).all()
    slow = rotary_frequencies(128, 500000.0, "llama3", 8.0, 1.0, 4.0, 8192)  # Llama-3.1's settings
    fast = rotary_frequencies(128, 500000.0)
    assert slow[0] == fast[0] and slow[-1] == fast[-1] / 8  # high kept, low slowed by the factor (8: exact)
