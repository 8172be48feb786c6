"""Information-flow routes (experiments/routes.py): the parts add up to the residual stream, and the importances
to 1 at every node."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from model import api
from experiments import routes
from experiments.patching import PatchingError
from tests import tolerances
from tests.llama_checkpoints import save_tiny
from tests.experiments.test_patching import save_gpt2

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module", params=["lm", "mlm", "gpt2", "llama"])
def loaded(request, tmp_path_factory):
    if request.param in ("lm", "mlm"):
        return api.load(request.param, device="cpu")
    folder = tmp_path_factory.mktemp(request.param) / "m"
    if request.param == "gpt2":
        return api.load_from(save_gpt2(folder), device="cpu")
    return api.load_from(save_tiny("llama", folder, num_key_value_heads=2), device="cpu")


def test_the_parts_sum_to_the_residual_stream(loaded):
    ids = loaded.encode(TEXT).ids
    recorded = routes.record(loaded, ids)
    with torch.inference_mode():
        features, _ = loaded.model.features(torch.tensor([ids]))
    for layer in range(loaded.config.n_layers):
        parts = routes.layer_parts(recorded, layer, torch.arange(len(ids)))
        scale = parts.whole.abs().max()
        assert (parts.total() - parts.whole).abs().max() < 1e-5 * max(1.0, float(scale)), layer
        assert parts.heads.shape == (len(ids), loaded.config.n_heads, len(ids), loaded.config.d_model)
    # the stream after the last layer is what the final norm reads: the model's own output
    with torch.inference_mode():
        final = loaded.model.stack.final_norm(recorded.residual[-1][None])
        exact, _ = tolerances.in_float64(loaded.model).features(torch.tensor([ids]))
    # the recorded pass against the fused one: within 3x the fused pass's own float32 rounding (its float64 run)
    tolerances.assert_within(final, features, tolerances.beside_oracle(final, features, exact))


def test_importances_add_up_to_1_at_every_node(loaded):
    found = routes.flow_routes(loaded, TEXT)
    total = found.attention.sum(-1) + found.residual + found.mlp + found.bias
    # shares x / T of the h·t + 3 parts' float32 total T (its sum and each division rounded), summed here again in
    # float32 in another order: as a softmax row's weights (tolerances.weights_sum)
    heads, t = found.heads.shape[1], found.heads.shape[-1]
    np.testing.assert_allclose(total, 1, atol=tolerances.weights_sum(heads * t + 3), rtol=0)
    np.testing.assert_array_equal(found.heads.sum(1), found.attention)  # Routes' attention is this very sum
    assert found.heads.min() >= 0 and found.mlp.min() >= 0


def test_a_causal_model_reads_no_later_position(loaded):
    found = routes.flow_routes(loaded, TEXT)
    later = np.triu(np.ones(found.attention.shape[1:], bool), k=1)
    if loaded.arch == "decoder":
        assert np.all(found.attention[:, later] == 0)
    else:  # the masked model reads both ways
        assert found.attention[:, later].sum() > 0


def test_the_position_defaults_to_the_prediction():
    lm, mlm = api.load("lm", device="cpu"), api.load("mlm", device="cpu")
    assert routes.flow_routes(lm, TEXT).position == len(lm.encode(TEXT).ids) - 1
    masked = routes.flow_routes(mlm, "the cat sat on the <mask> today")
    assert masked.tokens[masked.position] == "<mask>"


def test_refusals():
    lm = api.load("lm", device="cpu")
    with pytest.raises(PatchingError, match="empty"):
        routes.flow_routes(lm, " ")
    with pytest.raises(PatchingError, match="between 1 and 7"):
        routes.flow_routes(lm, TEXT, position=7)
    with pytest.raises(PatchingError, match="names a category"):
        routes.flow_routes(api.load("classifier", device="cpu"), TEXT)
