"""The Causal tracing tab's lecture examples on smollm2 (docs/tabs.md, "Causal tracing"): the fact (where " Paris" is
restored) and the name (which heads restore " Mary"), measured here with the app's own functions and read back
from the summary the tab writes."""
from __future__ import annotations

import re

import numpy as np
import pytest

from analysis import patching as numbers
from experiments import patching
from ui.page.messages import InputError
from ui.tabs import patching as tab
from ui.tabs import patching_jobs as jobs
from ui.tabs import patching_summary as words

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


# ---- issue 56: the preview against the exact grid, the target checked, one head (the tab's own functions) ----
@pytest.fixture(scope="module")
def registry(smollm2, model_assets):
    from model.registry import ModelRegistry
    registry = ModelRegistry.load(model_assets, names=("lm",), extra={}, device="cpu")
    registry.models["smollm2"] = smollm2  # the session's one copy, as ModelRegistry.load would share it
    return registry


def said_places(part: str) -> list[tuple[list[int], str]]:
    """"layers 1, 4 and 6 at “▁Tower” and layer 1 at “▁E”" -> [([0, 3, 5], "▁Tower"), ([0], "▁E")] (0-based)."""
    found = []
    for runs, token in re.findall(r"layers? ([0-9–, and]+?) at “(.+?)”", part):
        layers = []
        for run in re.split(r", | and ", runs):
            first, _, last = run.partition("–")
            layers += list(range(int(first) - 1, int(last or first)))
        found.append((layers, token))
    return found


def test_the_summary_says_where_the_preview_got_the_fact_wrong(eiffel):
    """Issue 56: on the Eiffel Tower pair the residual-stream and feed-forward previews contradict the exact grids at
    the subject's tokens; the summary names every place it lists, each place is wrong in the exact grid's terms
    (backwards: the exact cell at least 0.1 from 0 and of the other sign; off: more than 0.3 away), and counts them."""
    found, exact = eiffel
    summary = tab.exact_summary(found, exact)
    assert "**Where the preview was wrong.** The preview of the residual stream got " in summary
    tokens = found.pair.clean_tokens
    for site in ("residual", "mlp"):
        said = words.preview_wrong(found, exact, site, why=site == "residual")  # the first says why
        assert said and said in summary
        backwards, off = numbers.wrong_cells(found.preview[site], exact[site])
        got, _, rest = said.partition(" backwards")
        for part, mask in ((got, backwards), (rest.split("(")[0], off)):
            for layers, token in said_places(part):
                assert mask[layers, tokens.index(token)].all(), (site, layers, token)
        assert f"({int(backwards.sum() + off.sum())} of {backwards.size} cells" in said
    # the feed-forward at layer 1 reverses the subject's tokens, as the issue saw
    backwards, _ = numbers.wrong_cells(found.preview["mlp"], exact["mlp"])
    assert backwards[0, [1, 2, 3]].all() and "layer 1 at “▁E”" in words.preview_wrong(found, exact, "mlp")
    assert words.WHY_WRONG in summary and summary.count(words.WHY_WRONG) == 1


def test_the_head_the_exact_grid_finds_replaces_the_previews_with_a_sentence(registry):
    """Issue 56: with the tab's default pair on smollm2 the preview's favourite head is L24 H4 and the exact grid's
    L13 H9; the picker, the heads map's outline and the head's figure name the preview's first, and all three move
    to the exact grid's together, said in the summary."""
    args = (jobs.CLEAN, jobs.CORRUPTED, "smollm2", "", "")
    out = tab.view(registry, *args, False)
    assert out[5]["value"] == "L24 H4" and out[6].layout.title.text.startswith("L24 H4 on the clean prompt")
    shape = out[4].layout.shapes[0]
    assert (round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)) == (23, 3)
    steps = list(tab.exact_stream(registry, out[-1], False))
    for step in steps[:-1]:  # while the grids stream in, the outline stays on the head shown
        shape = step[4].layout.shapes[0]
        assert (round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)) == (23, 3)
    final = steps[-1]
    exact = jobs.cached_grids(registry, jobs.job_of(registry, *args))
    assert numbers.strongest(exact["heads"], 1)[0][:2] == (12, 8)
    assert final[5]["value"] == "L13 H9" and final[6].layout.title.text.startswith("L13 H9 on the clean prompt")
    shape = final[4].layout.shapes[0]
    assert (round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)) == (12, 8)
    assert (f"The exact grid's strongest head is L13 H9 ({exact['heads'][12, 8]:.2f}), not the preview's L24 H4 "
            f"(exact {exact['heads'][23, 3]:.2f}). The head picker, its outlined cell and the attention below show "
            "L13 H9.") in final[0]


def test_a_target_the_model_does_not_prefer_is_said_first(registry):
    """Issue 56: " Lyon" against " Rome" on the Eiffel Tower pair: the clean run prefers " Rome", so the summary
    starts by saying so and what a value above 1 or below 0 means; /patch's warnings say the same."""
    args = (*EIFFEL, "smollm2", " Lyon", " Rome")
    found = jobs.tracing(registry, jobs.job_of(registry, *args))
    assert found.clean_diff <= 0 and found.clean_probs[0] < words.LOW_P
    said = words.target_warnings(found)
    assert said[0] == (f"The clean run does not prefer “▁Lyon” to “▁Rome”: its logit difference “▁Lyon” − “▁Rome” is "
                       f"{found.clean_diff:.2f}, not above 0.")
    assert "a cell above 1 makes the patched run prefer “▁Lyon” to “▁Rome” more than the clean run does" in said[1]
    top = found.likelier["clean"][0]
    assert top.label == "▁Paris" and (f"The clean run gives the target “▁Lyon” almost no probability "
                                      f"(p = {found.clean_probs[0]:.3f}); the clean run's own top token is “▁Paris” "
                                      f"(p = {top.p:.3f}).") in said
    summary = tab.view(registry, *args, False)[0]
    assert summary.startswith("⚠️ **" + " ".join(said) + "**")


def test_paris_without_its_space_is_taken_with_a_warning_and_lowercase_is_refused(registry):
    found = jobs.tracing(registry, jobs.job_of(registry, *EIFFEL, "smollm2", "Paris", ""))
    assert found.pair.target_label == "Paris" and found.clean_probs[0] < 0.001
    spelt = found.likelier["target"][0]
    assert (spelt.label, spelt.typed) == ("▁Paris", "' Paris'") and spelt.p > 0.5
    assert (f"the same word spelt ' Paris' is likelier (p = {spelt.p:.3f}): type that as the target."
            in " ".join(words.target_warnings(found)))
    with pytest.raises(InputError, match=r"'paris' is not one token of smollm2: it reads as 2 \(par \| is\).*"
                                         r"spell the same word: ' Paris', 'Paris'"):
        jobs.tracing(registry, jobs.job_of(registry, *EIFFEL, "smollm2", "paris", ""))
