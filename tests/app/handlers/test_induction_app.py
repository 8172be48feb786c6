"""The "Copying from context" tab's handler on the shipped lm: an induction head, measured."""
from __future__ import annotations

import numpy as np
import pytest

from experiments import copying
from model import api
from ui.tabs import induction as ui_induction
from ui.page.messages import InputError

pytestmark = pytest.mark.skipif(not (api.ASSETS / "lm" / "model.safetensors").is_file(),
                                reason="needs the shipped lm (python -m training.train lm)")


def test_the_shipped_lm_has_an_induction_head_and_learns_in_context(registry):
    measured = copying.measure(registry.get("lm"), n=16, length=20, seed=0)
    assert measured.induction.max() >= 0.5
    assert measured.first_loss - measured.second_loss > 2.0  # nats a word gained from the first copy


def test_view_shows_the_circuit_and_knocking_out_the_induction_head_hurts_the_second_copy(registry):
    summary, stripe, scores, losses, table, head, formed = ui_induction.view(
        registry, "lm", 0, 15, ui_induction.STRONGEST, "zero", False)
    rows = {r[0]: r for r in table["data"]}
    intact = rows["intact"]
    knocked = next(r for name, r in rows.items() if name.startswith("without the induction head"))
    assert knocked[2] > intact[2] + 1.0  # second-copy loss goes back up
    assert intact[1] - intact[2] > 2.0
    m = ui_induction.measure(registry, "lm", 0, 15)
    layer, h = m["induction_head"]
    assert m["induction"][layer, h] >= 0.5 and m["previous_head"] is not None and m["previous_head"][0] < layer
    assert f"L{layer + 1} H{h + 1}" in summary and f"L{layer + 1} H{h + 1}" in stripe.layout.title.text
    assert np.asarray(stripe.data[0].z).shape == (31, 31)
    assert len(scores.data) == 2 and len(losses.data) == 2
    assert head["value"] == ui_induction.STRONGEST and len(head["choices"]) == 17
    steps, curve = registry.history("lm").induction  # the probe's record, drawn in `formed`
    assert formed["visible"] and curve.max() >= 0.5
    assert sum(steps.min() <= s <= steps.max() for s in registry.history("lm").snapshots) >= 4  # around the jump


def test_same_number_same_sentence_and_another_model_falls_back_to_lm(registry):
    first = ui_induction.measure(registry, "lm", 4, 8)
    again = ui_induction.measure(registry, "lm", 4, 8)
    assert (first["ids"] == again["ids"]).all() and len(first["ids"]) == 17
    assert (first["ids"][1:9] == first["ids"][9:]).all()
    summary, *_ = ui_induction.view(registry, "mlm", 4, 8, "L1 H1", "uniform", False)
    assert "not a causal language model" in summary and "showing lm" in summary


def test_bad_settings_are_friendly(registry):
    with pytest.raises(InputError, match="2 to 127 words"):
        ui_induction.measure(registry, "lm", 0, 500)
    with pytest.raises(InputError, match="knock a head out"):
        ui_induction.measure(registry, "lm", 0, 10, method="everything")


def test_the_stripe_lies_n_minus_1_left_and_only_a_striped_head_is_said_to_draw_it(registry):
    words = 15
    m = ui_induction.measure(registry, "lm", 0, words)
    layer, h = m["induction_head"]
    probs = m["probs"][layer, h]
    # word k of the second copy (position 1 + words + k) looks hardest at word k + 1 of the first
    second = np.arange(1 + words, 2 * words)
    assert np.median(second - probs[second].argmax(axis=1)) == words - 1
    _, stripe, *_ = ui_induction.view(registry, "lm", 0, words, ui_induction.STRONGEST, "zero", False)
    assert f"the stripe, {words - 1} cells left of the diagonal" in stripe.layout.title.text
    weakest = np.unravel_index(m["induction"].argmin(), m["induction"].shape)
    name = f"L{weakest[0] + 1} H{weakest[1] + 1}"
    _, other, *_ = ui_induction.view(registry, "lm", 0, words, name, "zero", False)
    assert "no stripe" in other.layout.title.text and "the stripe," not in other.layout.title.text


@pytest.mark.parametrize("method,words", [("zero", "output zeroed"), ("uniform", "weights made uniform")])
def test_the_knock_out_method_is_named_in_the_table_and_the_summary(registry, method, words):
    summary, _, _, _, table, _, _ = ui_induction.view(registry, "lm", 0, 15, ui_induction.STRONGEST, method, False)
    knocked = [r[0] for r in table["data"] if r[0] != "intact"]
    assert knocked and all(f"({words})" in name for name in knocked)
    assert f"({words}) and the second copy costs" in summary and "outlined in red" in summary
