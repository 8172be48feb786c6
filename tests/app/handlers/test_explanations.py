"""What the tabs tell students is derived from the model shown: parameter counts from its modules, the
formulas it computes (biases, the embedding norm), and no step the model does not take (a mask)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from model.sizes import count_parameters
from tests import tolerances
from model.multi_head import MultiHeadAttention
from ui.tabs import attention, multihead, positions, steps

ANIMAL = "The animal didn't cross the street because it was too tired."


def panel_titles(figure) -> list[str]:
    return [a.text for a in figure.layout.annotations]


@pytest.mark.parametrize("name", ["lm", "minilm"])
def test_multi_head_counts_the_parameters_of_the_models_own_attention_layer(registry, name):
    model = registry.get(name).model
    own = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    _, text, table = multihead.view(registry, ANIMAL, name, 1, "self", False)
    assert f"{count_parameters(own[0]):,} parameters per attention layer" in text
    assert f"each of the model's {len(own)} attention layers" in text
    if name == "minilm":  # BERT's queries, keys and values have biases: 4·384² + 4·384
        assert "591,360 parameters" in text and "queries, keys, values and output" in text


def test_minilms_layer_1_reads_the_layer_norm_of_token_plus_position(registry):
    *_, added = positions.view(registry, ANIMAL, "minilm", "0, 1", False)
    titles = panel_titles(added)
    assert titles[-1] == "LayerNorm(sum) = input to layer 1" and titles[2] == "= sum"
    first_layer = registry.trace("minilm", ANIMAL).attention["self"].inputs[0]
    # the panel draws the very tensor layer 1 reads (the embedding norm's output, float32): exactly
    np.testing.assert_array_equal(np.asarray(added.data[-1].z), first_layer)
    *_, lm_added = positions.view(registry, ANIMAL, "lm", "0, 1", False)
    assert panel_titles(lm_added)[-1] == "= input to layer 1"


def test_step_by_step_writes_the_bias_and_shows_a_mask_only_where_there_is_one(registry):
    _, _, qkv, scores, _ = steps.view(registry, ANIMAL, "minilm", 4, 2, "self", False)
    assert "Q = X·W<sub>q</sub> + b<sub>q</sub> (queries)" in panel_titles(qkv)
    assert not any("masked" in t for t in panel_titles(scores)) and len(scores.data) == 3
    _, _, qkv, scores, _ = steps.view(registry, ANIMAL, "lm", 1, 2, "self", False)
    assert "Q = X·W<sub>q</sub> (queries)" in panel_titles(qkv)
    assert any(t.startswith("3. masked") for t in panel_titles(scores)) and len(scores.data) == 4


@pytest.mark.parametrize("name,first_left_out", [("lm", True), ("mlm", False), ("minilm", False)])
def test_the_first_token_is_left_out_of_the_averages_only_in_a_causal_model(registry, name, first_left_out):
    caption = steps.view(registry, ANIMAL, name, 1, 2, "self", False)[0]
    assert ("every token but the first" in caption) == first_left_out
    shown = float(re.search(r"Mean entropy ([0-9.]+) bits", caption).group(1))
    table = pd.DataFrame(attention.stats_table(registry, name, ANIMAL, "self")).set_index("head")
    # shown to 2 places, the table to 3 (half of 0.01 and of 0.001), and the two computations' own bound
    computed = tolerances.mean_entropy_bits(registry.attention(name, ANIMAL, "self"), 0, 1)
    assert abs(shown - table.loc["L1 H2", "entropy_bits"]) <= 0.005 + 0.0005 + computed + 2 * tolerances.EPS64 * shown


def test_a_temperature_too_high_is_not_said_to_divide_by_zero():
    assert "divide by zero" not in steps.temperature_warning(1000, 100)
    assert "showing T = 100" in steps.temperature_warning(1000, 100)
    assert "divide by zero" in steps.temperature_warning(0, 0.01)
