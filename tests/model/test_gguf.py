"""GGUF files read into this project's modules (model/gguf.py), on tiny files the tests write with gguf's own
writer (tests/gguf_files.py): one per architecture, checked against transformers' model of the same weights;
one per tensor type gguf can write, whose weights must equal gguf's own dequantisation; and damaged,
truncated, empty, wrong-kind and unsupported files, each refused with a message that names the fix."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer

from model import api, gguf
from model.checkpoint import CheckpointError
from tests import gguf_files
from tests.llama_checkpoints import SENTENCES, assert_matches_oracle, oracle, save_tiny
from model.registry import ModelRegistry

transformers = pytest.importorskip("transformers", reason="transformers is the test oracle (requirements-dev.txt)")

# per architecture: the Hugging Face family it is saved as, and config fields (every one grouped-query)
ARCHITECTURES = {"llama": dict(num_key_value_heads=2, tie_word_embeddings=True),
                 "qwen2": dict(num_key_value_heads=2, tie_word_embeddings=False, rope_theta=1000000.0),
                 "mistral": dict(num_key_value_heads=1, tie_word_embeddings=False, sliding_window=6)}
WRITABLE = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One tiny Hugging Face checkpoint per architecture (hidden 32, feed-forward 64: every row a whole number
    of 32-number quantisation blocks)."""
    return {arch: save_tiny(arch, tmp_path_factory.mktemp(arch), intermediate_size=64, **fields)
            for arch, fields in ARCHITECTURES.items()}


def _ours(loaded: api.LoadedModel) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in loaded.model.state_dict().items()}


@pytest.mark.parametrize("arch", sorted(ARCHITECTURES))
def test_each_architecture_loads_and_matches_transformers(folders, tmp_path, arch):
    folder = folders[arch]
    loaded = api.load_pretrained(gguf_files.write(tmp_path / f"{arch}.gguf", folder, arch), device="cpu")
    reference = api.load_from(folder, device="cpu")  # the same weights read from the Hugging Face folder
    ours, theirs = _ours(loaded), _ours(reference)
    assert ours.keys() == theirs.keys()
    assert all(np.array_equal(ours[k], theirs[k]) for k in ours), "a weight differs from its source"
    # the same config, but for the epsilon, which a GGUF stores as float32, and a head size written or derived
    assert loaded.config.layer_norm_eps == pytest.approx(reference.config.layer_norm_eps, rel=1e-6)
    assert loaded.config.d_head == reference.config.d_head
    assert loaded.config == replace(reference.config, layer_norm_eps=loaded.config.layer_norm_eps,
                                    head_dim=loaded.config.head_dim,
                                    tie_embeddings=ARCHITECTURES[arch]["tie_word_embeddings"])
    hf_model = oracle(folder, arch)
    hf_tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in SENTENCES:
        assert loaded.encode(text).ids == hf_tokenizer.encode(text).ids
        assert_matches_oracle(loaded, hf_model, text)
    assert loaded.name == arch and loaded.pretrained and "GGUF" in loaded.about


def test_mistral_keeps_its_sliding_window_and_qwen2_its_biases(folders, tmp_path):
    mistral = api.load_pretrained(gguf_files.write(tmp_path / "m.gguf", folders["mistral"], "mistral"), device="cpu")
    qwen2 = api.load_pretrained(gguf_files.write(tmp_path / "q.gguf", folders["qwen2"], "qwen2"), device="cpu")
    assert mistral.config.sliding_window == 6 and not mistral.config.qkv_bias
    assert qwen2.config.qkv_bias and not qwen2.config.out_bias and qwen2.config.rope_theta == 1e6


@pytest.mark.parametrize("qtype", WRITABLE)
def test_each_tensor_type_equals_ggufs_own_dequantisation(folders, tmp_path, qtype):
    from gguf import GGMLQuantizationType as Q, dequantize, quantize

    folder = folders["llama"]
    loaded = api.load_pretrained(gguf_files.write(tmp_path / f"{qtype}.gguf", folder, "llama", qtype), device="cpu")
    config = loaded.config
    source = gguf_files.source_tensors(folder, "llama")
    ours = _ours(loaded)
    for name, values in source.items():
        expected = values if values.ndim == 1 or qtype == "F32" else dequantize(quantize(values, Q[qtype]), Q[qtype])
        if ".attn_q." in name or ".attn_k." in name:  # stored permuted; ours are in Hugging Face's order
            expected = gguf.unpermute(expected, config.n_heads if ".attn_q." in name else config.kv_heads)
        assert np.array_equal(ours[_our_name(name)], expected), f"{qtype}: {name} differs"
    if qtype == "F32":
        assert all(np.array_equal(ours[k], v) for k, v in _ours(api.load_from(folder, device="cpu")).items())
    else:  # quantised: close to the source, not equal to it
        embedding = source["token_embd.weight"]
        assert 0 < np.abs(ours["embed.token_embedding.weight"] - embedding).max() < 0.25 * np.abs(embedding).max()


def _our_name(gguf_name: str) -> str:
    ours = {"token_embd": "embed.token_embedding", "output_norm": "stack.final_norm", "output": "to_vocab",
            "attn_norm": "norm1", "attn_q": "self_attention.toqueries", "attn_k": "self_attention.tokeys",
            "attn_v": "self_attention.tovalues", "attn_output": "self_attention.unifyheads", "ffn_norm": "norm2",
            "ffn_gate": "feed_forward.gate", "ffn_up": "feed_forward.up", "ffn_down": "feed_forward.down"}
    parts = gguf_name.split(".")
    if parts[0] == "blk":
        return f"stack.blocks.{parts[1]}.{ours[parts[2]]}.{parts[3]}"
    return f"{ours[parts[0]]}.{parts[1]}"


def test_unpermute_undoes_llama_cpps_permutation():
    rows = np.arange(3 * 8 * 2, dtype=np.float32).reshape(3 * 8, 2)  # 3 heads of 8 rows
    assert np.array_equal(gguf.unpermute(gguf_files.permute(rows, 3), 3), rows)
    # within a head, llama.cpp stores row 0, then row d/2, then 1, d/2 + 1, …
    assert gguf_files.permute(rows, 3)[:4, 0].tolist() == [0, 8, 2, 10]


# ---- files that cannot be read ------------------------------------------------------------------------
def _error(path) -> str:
    with pytest.raises(CheckpointError) as error:
        api.load_pretrained(path, device="cpu")
    return str(error.value)


def test_damaged_truncated_empty_and_wrong_kind_files_name_the_fix(folders, tmp_path):
    good = gguf_files.write(tmp_path / "good.gguf", folders["llama"], "llama").read_bytes()
    (tmp_path / "empty.gguf").write_bytes(b"")
    assert "empty" in _error(tmp_path / "empty.gguf") and "Download the file again" in _error(tmp_path / "empty.gguf")
    (tmp_path / "half.gguf").write_bytes(good[: len(good) // 2])
    assert "truncated" in _error(tmp_path / "half.gguf")
    (tmp_path / "head.gguf").write_bytes(good[:200])  # cut inside the metadata
    assert "damaged or truncated" in _error(tmp_path / "head.gguf")
    (tmp_path / "text.gguf").write_text("not a model at all")
    message = _error(tmp_path / "text.gguf")
    assert "not a GGUF file" in message and "llama.cpp" in message
    safetensors = folders["llama"] / "model.safetensors"
    (tmp_path / "renamed.gguf").write_bytes(safetensors.read_bytes())
    assert "not a GGUF file" in _error(tmp_path / "renamed.gguf")
    scrambled = bytearray(good)
    scrambled[24:40] = b"\xff" * 16  # the first metadata key's length: billions of bytes
    (tmp_path / "scrambled.gguf").write_bytes(bytes(scrambled))
    assert "damaged" in _error(tmp_path / "scrambled.gguf")
    assert "does not exist" in _error(tmp_path / "missing.gguf")


@pytest.mark.parametrize("case, needle", [
    ("gpt2 architecture", "is a gpt2 model"),
    ("q8_1 tensor", "Q8_1"),
    ("sentencepiece", "'llama' (SentencePiece)"),
    ("unknown split", "pre-tokenizer 'falcon'"),
    ("rope table", "rope_freqs"),
    ("yarn", "'yarn'"),
    ("missing tensor", "missing"),
    ("unknown tensor", "blk.0.attn_qkv.weight"),
    ("partial rotary", "part of each head"),
])
def test_unsupported_files_are_refused_by_name(folders, tmp_path, case, needle):
    folder, path = folders["llama"], tmp_path / "x.gguf"
    block = np.zeros((1, 40), dtype=np.uint8)  # Q8_1: 40 bytes per 32 numbers
    writes = {
        "gpt2 architecture": lambda: _gpt2(path),
        "q8_1 tensor": lambda: gguf_files.write(path, folder, "llama", raw={"blk.0.attn_q.bias": (block, "Q8_1")}),
        "sentencepiece": lambda: gguf_files.write(path, folder, "llama", metadata={"tokenizer.ggml.model": "llama"}),
        "unknown split": lambda: gguf_files.write(path, folder, "llama", metadata={"tokenizer.ggml.pre": "falcon"}),
        "rope table": lambda: gguf_files.write(path, folder, "llama", raw={
            "rope_freqs.weight": (np.ones(4, dtype=np.float32).view(np.uint8), "F32")}),
        "yarn": lambda: gguf_files.write(path, folder, "llama", metadata={"llama.rope.scaling.type": "yarn"}),
        "missing tensor": lambda: gguf_files.write(path, folder, "llama", drop=("blk.1.ffn_up.weight",)),
        "unknown tensor": lambda: gguf_files.write(path, folder, "llama", raw={
            "blk.0.attn_qkv.weight": (np.zeros((4, 8), dtype=np.float32).view(np.uint8), "F32")}),
        "partial rotary": lambda: gguf_files.write(path, folder, "llama", metadata={"llama.rope.dimension_count": 4}),
    }
    writes[case]()
    message = _error(path)
    assert needle in message, message
    assert "Choose" in message or "download" in message.lower() or "convert" in message.lower()


def _gpt2(path):
    import gguf as gguf_package
    writer = gguf_package.GGUFWriter(str(path), "gpt2")
    writer.add_uint32("gpt2.block_count", 1)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_broken_gguf_in_the_setting_is_named_without_its_path_and_the_rest_still_work(
        model_assets, folders, tmp_path):
    good = gguf_files.write(tmp_path / "tiny-llama.gguf", folders["llama"], "llama")
    (tmp_path / "broken.gguf").write_bytes(good.read_bytes()[:1000])
    registry = ModelRegistry.load(model_assets, names=("lm",), device="cpu",
                                  extra={"tiny": str(good), "broken": str(tmp_path / "broken.gguf")})
    assert registry.available == ["lm", "tiny"]
    message = registry.errors["broken"]
    assert "broken.gguf" in message and str(tmp_path) not in message and "Download the file again" in message
    assert registry.trace("tiny", "the cat sat").tokens and registry.trace("lm", "the cat sat").tokens


def test_a_gguf_named_in_the_setting_is_named_after_its_file():
    from model.pretrained import configured
    assert configured("/models/qwen2.5-0.5b-q8_0.gguf, x=/a/b.gguf") == {
        "qwen2.5-0.5b-q8_0": "/models/qwen2.5-0.5b-q8_0.gguf", "x": "/a/b.gguf"}


def test_the_tokenizer_is_read_from_the_file_alone(folders, tmp_path):
    """Byte-level BPE from tokenizer.ggml.*: the same ids as the checkpoint's tokenizer.json, control tokens
    kept whole when asked (the app reads typed specials as text), BOS added only where the file says so."""
    folder = folders["qwen2"]
    path = gguf_files.write(tmp_path / "q.gguf", folder, "qwen2", metadata={"tokenizer.ggml.add_bos_token": True})
    loaded = api.load_pretrained(path, device="cpu")
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    bos = json.loads((folder / "config.json").read_text())["bos_token_id"]
    for text in SENTENCES:
        assert loaded.tokenizer.encode(text).ids == [bos] + reference.encode(text).ids
        assert loaded.tokenizer.decode(loaded.tokenizer.encode(text).ids) == text
    assert loaded.start_id == bos
