"""Saving and loading: exact round trips, clear errors for damaged files, safetensors only."""
import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from model import checkpoint
from model.checkpoint import CheckpointError
from model.config import TransformerConfig
from model.transformer import build
from tests import tolerances

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"


def tiny(arch, **changes):
    torch.manual_seed(0)
    extra = {"n_decoder_layers": 1} if arch == "encoder-decoder" else {}
    config = TransformerConfig(arch=arch, vocab_size=20, max_len=10, d_model=8, n_heads=2, n_layers=1, d_ff=16,
                               **{**extra, **changes})
    return build(config).eval()


def outputs(model):
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        if model.config.arch == "encoder-decoder":
            return model(torch.randint(0, 20, (2, 7), generator=gen), torch.randint(0, 20, (2, 5), generator=gen))[0]
        return model(torch.randint(0, 20, (2, 7), generator=gen))[0]


def perturb(model):
    """Move every weight away from its initial value so a silent re-init would show."""
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.add_(0.01 * (i + 1))
    return model


@pytest.mark.parametrize("arch", ["decoder", "encoder", "encoder-decoder"])
@pytest.mark.parametrize("changes", [{}, {"tie_embeddings": False}, {"positions": "sinusoidal", "norm": "pre"}])
def test_save_then_load_reproduces_outputs_exactly(tmp_path, arch, changes):
    model = perturb(tiny(arch, **changes))
    checkpoint.save(model, tmp_path)
    loaded = checkpoint.load(tmp_path)
    assert loaded.config == model.config
    assert not loaded.training
    assert torch.equal(outputs(loaded), outputs(model))
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name
    if model.config.tie_embeddings:
        assert loaded.to_vocab.weight is loaded.embed.token_embedding.weight


def test_half_precision_snapshot_loads_into_a_float32_model(tmp_path):
    model = perturb(tiny("decoder"))
    checkpoint.save(model, tmp_path, "half.safetensors", half=True)
    loaded = checkpoint.load(tmp_path, "half.safetensors")
    for name, tensor in loaded.state_dict().items():
        assert tensor.dtype == torch.float32, name
        original = model.state_dict()[name].detach().numpy()
        # float16 rounds each number to its nearest: half of float16's spacing there, at most
        tolerances.assert_within(tensor, original, np.spacing(np.abs(original).astype(np.float16)).astype(float) / 2,
                                 name)


def test_an_int8_snapshot_keeps_each_weight_within_half_a_step_and_the_attention_with_it(tmp_path):
    model = tiny("decoder")
    path = checkpoint.save(model, tmp_path, "snap.safetensors", int8=True)
    stored = load_file(str(path))
    assert stored["embed.token_embedding.weight"].dtype == torch.int8  # matrices as int8, one scale per row
    assert stored["embed.token_embedding.weight.int8_scale"].shape == (20,)
    assert all(t.dtype == torch.float16 for k, t in stored.items() if t.ndim == 1)
    stored_bytes = sum(t.numel() * t.element_size() for t in stored.values())
    assert stored_bytes < 0.35 * sum(t.numel() * 4 for t in load_file(str(checkpoint.save(model, tmp_path / "f32"))).values())
    loaded = checkpoint.load(tmp_path, "snap.safetensors")
    for name, tensor in model.state_dict().items():
        again = loaded.state_dict()[name]
        assert again.dtype == torch.float32
        step = tensor.abs().amax(dim=-1, keepdim=True) / 127 if tensor.ndim == 2 else tensor.abs().max() / 1000
        assert ((again - tensor).abs() <= step / 2 + 1e-3 * step + 1e-6).all(), name
    ids = torch.tensor([[1, 5, 7, 3, 9]])
    with torch.no_grad():
        probs = [r.probs for r in model(ids, record=True)[1].layers["self"]]
        again = [r.probs for r in loaded(ids, record=True)[1].layers["self"]]
    assert max(float((a - b).abs().max()) for a, b in zip(probs, again)) < 0.02


def test_weights_are_safetensors_not_pickle(tmp_path):
    path = checkpoint.save(tiny("decoder"), tmp_path)
    raw = path.read_bytes()
    assert not raw.startswith(b"PK"), "torch.save writes a zip of pickles"
    assert not raw.startswith(b"\x80"), "a bare pickle starts with the PROTO opcode"
    (header_length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_length])
    assert "embed.token_embedding.weight" in header
    assert header["embed.token_embedding.weight"]["dtype"] == "F32"
    assert "to_vocab.weight" not in header, "tied weights are stored once"


def test_model_code_never_unpickles():
    sources = sorted(MODEL_DIR.glob("*.py")) + sorted((MODEL_DIR.parent / "experiments").glob("*.py"))
    assert sources, f"no sources found in {MODEL_DIR}"
    for path in sources:
        text = path.read_text()
        assert not re.search(r"\btorch\.load\s*\(", text), f"{path.name} calls torch.load"
        assert not re.search(r"\btorch\.save\s*\(", text), f"{path.name} calls torch.save"
        assert not re.search(r"^\s*(import pickle|from pickle)", text, re.M), f"{path.name} imports pickle"


def saved(tmp_path, arch="decoder"):
    checkpoint.save(tiny(arch), tmp_path)
    return tmp_path / checkpoint.WEIGHTS


def assert_names_file_and_fix(error, path):
    message = str(error.value)
    assert str(path) in message
    assert "python -m training.train" in message and "git checkout" in message


def test_missing_weights_file(tmp_path):
    path = saved(tmp_path)
    path.unlink()
    with pytest.raises(CheckpointError, match="missing") as error:
        checkpoint.load(tmp_path)
    assert_names_file_and_fix(error, path)


@pytest.mark.parametrize("damage", ["truncated half", "truncated end", "header only", "garbage", "empty"])
def test_corrupt_weights_file(tmp_path, damage):
    path = saved(tmp_path)
    raw = path.read_bytes()
    path.write_bytes({
        "truncated half": raw[: len(raw) // 2],
        "truncated end": raw[:-4],
        "header only": raw[:100],
        "garbage": b"this is not a safetensors file\x00\xff" * 20,
        "empty": b"",
    }[damage])
    with pytest.raises(CheckpointError, match="damaged") as error:
        checkpoint.load(tmp_path)
    assert_names_file_and_fix(error, path)


def test_weights_from_a_different_depth_are_rejected(tmp_path):
    path = saved(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["n_layers"] = 2
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match="does not match its config") as error:
        checkpoint.load(tmp_path)
    assert_names_file_and_fix(error, path)


def test_weights_with_other_sizes_than_the_config_are_rejected_clearly(tmp_path):
    path = saved(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["d_model"] = 16
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError) as error:
        checkpoint.load(tmp_path)
    assert_names_file_and_fix(error, path)


def test_config_with_an_unknown_key_is_a_clear_error(tmp_path):
    saved(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["n_experts"] = 8
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError, match=r"unknown config keys \['n_experts'\]"):
        checkpoint.load(tmp_path)


def test_missing_config(tmp_path):
    saved(tmp_path)
    (tmp_path / "config.json").unlink()
    with pytest.raises(CheckpointError, match="config.json is missing"):
        checkpoint.load(tmp_path)


def test_config_that_is_not_json(tmp_path):
    saved(tmp_path)
    (tmp_path / "config.json").write_text("{arch: decoder")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        checkpoint.load(tmp_path)
