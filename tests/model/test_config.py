"""The model config and the named presets."""
import pytest

from model.api import SHIPPED
from model.config import TransformerConfig
from model.transformer import build
from training.presets import PRESETS


def test_round_trip_through_json(tmp_path):
    config = TransformerConfig(arch="encoder-decoder", vocab_size=50, n_decoder_layers=2, wide=True, norm="pre")
    config.save(tmp_path / "config.json")
    assert TransformerConfig.load(tmp_path / "config.json") == config


def test_unknown_keys_are_an_error_that_lists_them():
    data = TransformerConfig(arch="decoder", vocab_size=10).to_dict() | {"n_expert": 2, "flash": True}
    with pytest.raises(ValueError, match=r"unknown config keys \['flash', 'n_expert'\]"):
        TransformerConfig.from_dict(data)


@pytest.mark.parametrize("bad,match", [
    (dict(arch="gpt"), "arch must be one of"),
    (dict(arch="decoder", norm="middle"), "norm must be"),
    (dict(arch="decoder", positions="alibi"), "positions must be"),
    (dict(arch="encoder-decoder", n_decoder_layers=1, positions="rotary"), "rotary positions.*decoder or encoder"),
    (dict(arch="decoder", n_heads=4, n_kv_heads=3), "multiple of n_kv_heads"),
    (dict(arch="decoder", rope_scaling="yarn"), "rope_scaling must be"),
    (dict(arch="decoder", normalization="batchnorm"), "normalization must be"),
    (dict(arch="encoder-decoder"), "n_decoder_layers >= 1"),
])
def test_invalid_choices_are_rejected(bad, match):
    with pytest.raises(ValueError, match=match):
        TransformerConfig(vocab_size=10, **bad)


def test_d_head():
    assert TransformerConfig(arch="decoder", vocab_size=10, d_model=128, n_heads=4).d_head == 32
    assert TransformerConfig(arch="decoder", vocab_size=10, d_model=128, n_heads=4, wide=True).d_head == 128


def test_missing_config_file_says_how_to_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m training.train"):
        TransformerConfig.load(tmp_path / "config.json")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_config(name):
    config = TransformerConfig(vocab_size=64, **PRESETS[name].model)
    if name.startswith("tiny"):
        model = build(config)
        assert sum(p.numel() for p in model.parameters()) < 50_000, "tiny presets must train in seconds"


def test_shipped_models_are_presets():
    assert set(SHIPPED) <= set(PRESETS)
