"""Tiny random Llama, Mistral and Qwen2 checkpoints in Hugging Face format, built locally with `transformers`
(a dev requirement: the test oracle) and a byte-level BPE tokenizer.json trained on a few sentences: no test
downloads a model."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from model.registry import assets_dir
from tests import tolerances

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "Walking and talking, she kept smiling!",
    "ÜBER café 🍕 x",
    "the cat sat on the mat " * 4,
]
CLASSES = {"llama": ("LlamaConfig", "LlamaForCausalLM"), "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
           "mistral": ("MistralConfig", "MistralForCausalLM")}


def byte_bpe(specials: list[str], sentences: list[str] = SENTENCES) -> Tokenizer:
    """A byte-level BPE tokenizer.json as GPT-2's, SmolLM2's and Qwen2's are, trained here on a few sentences."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(sentences * 20, trainer=trainer)
    return tokenizer


def save_tiny(family: str, folder, layers: int = 2, bos: bool = False, tokenizer: Tokenizer | None = None,
              heads: int = 4, hidden: int = 32, **fields):
    """A random `family` model of hidden size `hidden` (32) with `heads` query heads, in Hugging Face format, with a
    tokenizer.json: `tokenizer`, or one trained on SENTENCES (bos=True: one that starts every text with <s>,
    as Llama-2's and TinyLlama's do). fields: more of the config (num_key_value_heads, rope_scaling, …)."""
    folder.mkdir(parents=True, exist_ok=True)
    if tokenizer is None:
        tokenizer = byte_bpe(["<s>", "</s>"] if bos else ["<|endoftext|>"])
        fields = {"bos_token_id": 0, "eos_token_id": 1 if bos else 0, **fields}
    if bos:
        tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tokenizer.save(str(folder / "tokenizer.json"))
    transformers = pytest.importorskip("transformers", reason="transformers builds the checkpoints (requirements-dev.txt)")
    config_class, model_class = (getattr(transformers, name) for name in CLASSES[family])
    config = config_class(vocab_size=tokenizer.get_vocab_size(), hidden_size=hidden, num_hidden_layers=layers,
                          num_attention_heads=heads, **{"max_position_embeddings": 64, "intermediate_size": 48, **fields})
    torch.manual_seed(0)
    model = model_class(config)
    with torch.no_grad():  # far from the tiny init, so every attention map is sharp and every weight matters
        for p in model.parameters():
            p.normal_(0.0, 0.4)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


GQA = "gqa-7x6x2"  # a grouped-query checkpoint of a shape no shipped model has: 7 layers, 6 query heads, 2 kv heads


def gqa_checkpoint(folder):
    """7 layers × 6 query heads × 2 key/value heads (hidden size 48), with the project's own tokenizer (lm's): the
    odd-shaped checkpoint the readability walk lists beside the shipped models."""
    vocabulary = Tokenizer.from_file(str(assets_dir() / "tokenizer.json"))
    save_tiny("llama", folder, layers=7, heads=6, hidden=48, tokenizer=vocabulary, num_key_value_heads=2,
              eos_token_id=2, max_position_embeddings=256)
    (folder / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": False}))
    return folder


def oracle(folder, family: str):
    """transformers' own model of the folder, with the explicit (eager) attention that returns its weights."""
    transformers = pytest.importorskip("transformers")
    model_class = getattr(transformers, CLASSES[family][1])
    return model_class.from_pretrained(str(folder), attn_implementation="eager").eval()


def assert_matches_oracle(loaded, hf_model, text: str) -> int:
    """Ours against transformers' model on `text`: every layer's attention and the logits, each within what float32
    rounding allows (tests/tolerances.py beside_oracle: the oracle's own rounding on this input, measured against its
    float64 run); the number of tokens."""
    ids = loaded.encode(text).ids
    trace = loaded.trace(text)
    with torch.no_grad():
        out = hf_model(torch.tensor([ids]), output_attentions=True)
        exact = tolerances.in_float64(hf_model)(torch.tensor([ids]), output_attentions=True)
        logits, _ = loaded.model(torch.tensor([ids]))
    stack = lambda o: np.stack([a[0].numpy() for a in o.attentions])  # (L, H, t, t)
    parts = {"probs": (trace.attention["self"].probs, stack(out), stack(exact)),
             "logits": (logits[0].numpy(), out.logits[0].numpy(), exact.logits[0].numpy())}
    for name, (ours, oracle32, oracle64) in parts.items():
        assert ours.shape == oracle32.shape, (name, ours.shape, oracle32.shape)
        tolerances.assert_within(ours, oracle32, tolerances.beside_oracle(ours, oracle32, oracle64),
                                 f"{text[:40]!r}: {name}")
    return len(ids)
