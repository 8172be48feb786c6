"""The classifier: an encoder pooled into one vector (mean, max or [CLS]) and a linear layer."""
import pytest
import torch

from model import checkpoint
from model.config import TransformerConfig
from model.switches import Switches
from model.transformer import Classifier, build
from tests import tolerances



def close_to(model, ours, reference_input, **kwargs) -> None:
    """ours (the same sums as model(reference_input) in another order: keys, tokens or padding) within 3x the float32
    rounding model's own pass makes on reference_input, measured against its float64 run (tests/tolerances.py)."""
    with torch.no_grad():
        reference = model(reference_input, **kwargs)[0]
        exact = tolerances.in_float64(model)(reference_input, **kwargs)[0]
    tolerances.assert_within(ours, reference, tolerances.beside_oracle(ours, reference, exact))


LABELS = ("noun.animal", "noun.food", "verb.motion")
POOLINGS = ("mean", "max", "cls")


def tiny(pooling, **changes):
    torch.manual_seed(0)
    config = TransformerConfig(arch="classifier", vocab_size=30, max_len=12, d_model=16, n_heads=2, n_layers=2,
                               d_ff=32, pooling=pooling, labels=LABELS, **changes)
    return build(config).eval()


def ids(b=2, t=7, seed=1):
    return torch.randint(0, 30, (b, t), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("pooling", POOLINGS)
def test_each_pooling_gives_one_score_per_category_and_records_self_attention(pooling):
    model = tiny(pooling)
    assert isinstance(model, Classifier)
    logits, rec = model(ids(), record=True)
    assert logits.shape == (2, len(LABELS))
    assert model.pool(model.features(ids())[0]).shape == (2, 16)
    assert list(rec.layers) == ["self"] and len(rec.layers["self"]) == 2
    assert rec.layers["self"][0].probs.shape == (2, 2, 7, 7)


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_mean_and_max_pooling_without_positions_ignore_the_order_of_the_tokens(pooling):
    model = tiny(pooling)
    x = ids(b=1, t=9)
    shuffled = x[:, torch.randperm(9, generator=torch.Generator().manual_seed(5))]
    assert not torch.equal(x, shuffled)
    off = Switches(positions=False)
    with torch.no_grad():
        # without positions only the order of each sum differs (keys, pooled tokens)
        close_to(model, model(shuffled, switches=off)[0], x, switches=off)
        # with positions the order matters: the test above could fail
        assert not torch.allclose(model(x)[0], model(shuffled)[0], atol=1e-5)


def test_cls_pooling_depends_on_the_order_even_without_positions_only_through_which_token_is_first():
    model = tiny("cls")
    x = ids(b=1, t=9)
    rest = x[:, 1:][:, torch.randperm(8, generator=torch.Generator().manual_seed(2))]
    off = Switches(positions=False)
    with torch.no_grad():  # the first token stays first: the [CLS] vector sees the others as a set
        close_to(model, model(torch.cat([x[:, :1], rest], 1), switches=off)[0], x, switches=off)  # keys reordered


@pytest.mark.parametrize("pooling", POOLINGS)
def test_padding_is_never_read(pooling):
    model = tiny(pooling)
    x = ids(b=1, t=5)
    padded = torch.cat([x, torch.zeros(1, 3, dtype=torch.long)], 1)
    keep = torch.tensor([[True] * 5 + [False] * 3])
    with torch.no_grad():
        close_to(model, model(padded, keep=keep)[0], x)  # a padded key weighs exactly 0: only sums' order differs


@pytest.mark.parametrize("pooling", POOLINGS)
def test_save_then_load_gives_the_same_output(tmp_path, pooling):
    model = tiny(pooling)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.add_(0.01 * (i + 1))
    checkpoint.save(model, tmp_path)
    loaded = checkpoint.load(tmp_path)
    assert loaded.config == model.config and loaded.config.labels == LABELS
    with torch.no_grad():
        assert torch.equal(loaded(ids())[0], model(ids())[0])


def test_knocking_out_a_head_changes_the_scores():
    model = tiny("cls")
    with torch.no_grad():
        plain = model(ids())[0]
        ablated = model(ids(), switches=Switches(ablate={("self", 1, 0)}))[0]
    assert not torch.allclose(plain, ablated)


def test_config_checks_pooling_and_labels():
    with pytest.raises(ValueError, match="pooling"):
        TransformerConfig(arch="classifier", vocab_size=10, pooling="sum", labels=LABELS)
    with pytest.raises(ValueError, match="labels"):
        TransformerConfig(arch="classifier", vocab_size=10)
    assert TransformerConfig.from_dict({"arch": "classifier", "vocab_size": 10, "labels": list(LABELS)}).labels == LABELS
    # today's models keep their configs: the new fields have defaults
    assert TransformerConfig(arch="decoder", vocab_size=10).to_dict()["pooling"] == "mean"
