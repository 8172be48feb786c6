"""The Causal tracing tab's lecture examples on smollm2 (docs/tabs.md, "Causal tracing"): the fact (where " Paris" is
restored) and the name (which heads restore " Mary"), measured here with the app's own functions and read back
from the summary the tab writes."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import patching as numbers
from experiments import patching
from ui.tabs import patching as tab

EIFFEL = ("The Eiffel Tower is in the city of", "The Colosseum is in the city of")
MARY = ("When Mary and John went to the store, John gave a drink to",
        "When Mary and John went to the store, Mary gave a drink to")
TOM = ("When Tom and Anna went to the park, Anna gave a ball to",
       "When Tom and Anna went to the park, Tom gave a ball to")


def traced(model, clean, corrupted, sites) -> tuple[patching.Tracing, dict]:
    """The tab's numbers for one pair: its Tracing (as ui.tabs.patching.tracing builds it) and the exact grids."""
    found = patching.trace(model, clean, corrupted, sites=sites)
    return found, found.exact


@pytest.fixture(scope="module")
def eiffel(smollm2):
    return traced(smollm2, *EIFFEL, patching.SITES)


def test_the_fact_pair_has_one_token_count_and_its_own_answers(smollm2, eiffel):
    found, _ = eiffel
    pair = found.pair
    assert len(pair.clean_ids) == len(pair.corrupted_ids) == 9
    assert pair.clean_tokens[:4] == ["The", "▁E", "iffel", "▁Tower"]
    assert pair.corrupted_tokens[:4] == ["The", "▁Col", "osse", "um"]
    assert (pair.target_label, pair.contrast_label) == ("▁Paris", "▁Rome")
    assert pair.changed == [1, 2, 3]


def test_paris_is_restored_at_iffel_then_at_the_last_position(eiffel):
    """docs/tabs.md: patching the residual stream at "iffel" restores at least half of " Paris" at layers 1–23, at the
    last token ("▁of") at layers 24–30; "▁Tower", the subject's last token, at most 0.48."""
    found, exact = eiffel
    grid = exact["residual"]
    assert numbers.layer_runs(numbers.restoring_layers(grid, 2)) == "1–23"
    assert numbers.layer_runs(numbers.restoring_layers(grid, 8)) == "24–30"
    assert numbers.restoring_layers(grid, 3) == [] and grid[:, 3].max() == pytest.approx(0.48, abs=0.01)
    assert grid[:23, 2].min() == pytest.approx(0.78, abs=0.01)
    summary = tab.exact_summary(found, exact)  # the sentence the tab shows says the same
    assert "“iffel” (position 3) at layers 1–23" in summary


@pytest.mark.parametrize("prompts, answer, heads, name_layers", [
    (MARY, "▁Mary", [(23, 3, 0.55), (29, 1, 0.27), (20, 0, 0.20)], "1–23"),
    (TOM, "▁Tom", [(23, 3, 0.42), (29, 1, 0.25), (20, 0, 0.22)], "1–20"),
])
def test_the_name_is_carried_by_the_same_heads_in_both_pairs(smollm2, prompts, answer, heads, name_layers):
    """docs/tabs.md: the heads whose output at the last position restores the indirect object most are L24 H4, then
    L30 H2 and L21 H1, in both pairs; the residual stream at the second name restores it up to layer 23 (Mary)
    or 20 (Tom), and at the last token from layer 24 on."""
    found, exact = traced(smollm2, *prompts, ("heads", "residual"))
    assert found.pair.target_label == answer and len(found.pair.clean_ids) == 14
    strongest = numbers.strongest(exact["heads"], 3)
    assert [(layer, head) for layer, head, _ in strongest] == [(layer, head) for layer, head, _ in heads]
    np.testing.assert_allclose([v for *_, v in strongest], [v for *_, v in heads], atol=0.01)
    assert numbers.layer_runs(numbers.restoring_layers(exact["residual"], 9)) == name_layers
    assert numbers.layer_runs(numbers.restoring_layers(exact["residual"], 13)) == "24–30"
    assert tab.strongest_head(found, exact) == "L24 H4"  # the head the tab opens first
