"""The "Train live" tab: its handlers called directly and its wiring (/train_toy through a real server:
tests/app/server/test_train_toy.py)."""
from __future__ import annotations

import pytest
import torch

from training import toy
from training.toy_tasks import SettingsError
from ui.tabs import live

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def trained_copy() -> dict:
    # bounded by steps (copy is learned in 40), not by seconds: the same model on any machine
    *_, (last,) = toy.train([toy.Trainer(toy.ToySettings(task="copy", seconds=60))], max_steps=100)
    return {"settings": last.settings, "weights": last.weights, "snapshot": last}


# ---- handlers, called directly -------------------------------------------------------------------------
def test_preview_shows_the_untrained_model_on_the_tasks_example():
    status, curve, heads, box = live.preview("reverse", True, "narrow", 2, 2, 32, False)
    assert status.startswith("**Not trained yet**") and "26,816 parameters" in status
    assert curve.layout.title.text == "Before training"
    assert [t.name for t in curve.data][-1] == "best without positions (11%)"
    assert heads.layout.meta["tiles"] == ["L1 H1", "L1 H2", "L2 H1", "L2 H2"]
    assert "10 letters from a to t" in box["placeholder"]
    big = live.preview("brackets", False, "wide", 3, 4, 64, True)
    assert len(big[2].layout.meta["tiles"]) == 12 and "best without" not in str([t.name for t in big[1].data])


def test_preview_redraws_the_visitors_trained_model_and_previews_any_other(trained_copy):
    status, curve, _, _ = live.preview("copy", True, "narrow", 2, 2, 32, True, trained_copy)
    assert status.startswith("**Done**") and curve.layout.title.text.startswith("copy: step")
    assert curve.layout.font.size == 20, "presenter mode redraws it larger"
    status, curve, _, _ = live.preview("copy", True, "wide", 2, 2, 32, False, trained_copy)
    assert status.startswith("**Not trained yet**")


@pytest.mark.parametrize("args,message", [
    (("reverse", True, "sideways", 2, 2, 32, 30), "'narrow' or 'wide'"),
    (("reverse", True, "narrow", 9, 2, 32, 30), "layers must be from 1 to 4"),
    (("reverse", True, "narrow", 2, 2, 32, 600), "seconds must be from 1 to 60"),
    (("translate", True, "narrow", 2, 2, 32, 30), "task must be one of"),
])
def test_settings_beyond_the_caps_are_refused(args, message):
    with pytest.raises(SettingsError, match=message):
        live.make_settings(*args)


def test_predict_needs_a_trained_model_and_a_fitting_input(trained_copy):
    with pytest.raises(SettingsError, match="Train a model first"):
        live.predict("abcdefghij", None, False)
    summary, grid, detail = live.predict("hebjadgcif", trained_copy, False)
    assert "writes **`hebjadgcif`**: 10 of 10 right." in summary
    assert grid["visible"] and detail["visible"] and "in detail" in detail["value"].layout.title.text
    with pytest.raises(SettingsError, match="exactly 10"):
        live.predict("abc", trained_copy, False)


def test_the_status_says_why_reverse_without_positions_failed():
    *_, (last,) = toy.train([toy.Trainer(toy.ToySettings(task="reverse", positions=False, seconds=2))])
    text = live.status_text(last)
    assert text.startswith("**Done**") and "the time is up" in text and "at best 11%" in text
    assert live.api_result(last)["accuracy"] < 0.3


def test_the_tab_is_wired_with_its_endpoints(demo):
    fns = {fn.api_name: fn for fn in demo.fns.values()}
    assert {"toy_preview", "toy_train", "toy_compare", "toy_stop", "toy_predict", "train_toy"} <= set(fns)
    for name in ("toy_train", "toy_compare", "train_toy"):  # the trainings manager queues them, not Gradio
        assert fns[name].concurrency_limit is None
    assert not fns["toy_stop"].queue, "Stop must not wait behind the training it stops"
    ids = {c["props"].get("id") for c in demo.get_config_file()["components"] if c["type"] == "tabitem"}
    assert "live" in ids
    assert demo.toy_trainings.limit >= 1


def test_the_trained_model_below_follows_the_settings_above(trained_copy):
    """Settings changed after training: the answer goes, the figures hide and Predict refuses, until the
    settings are back at the trained model's (it used to answer with the old model under the new settings)."""
    other = ("copy", True, "narrow", 2, 2, 64)
    marked, note, grid, detail = live.follow_settings(other, trained_copy)
    assert marked["current"] is False and "not the one set above" in note and "copy, positions on" in note
    assert grid["visible"] is False and detail["visible"] is False
    with pytest.raises(SettingsError, match="press Train to train this one"):
        live.predict("hebjadgcif", marked, False)
    back, cleared, *_ = live.follow_settings(("copy", True, "narrow", 2, 2, 32), marked)
    assert back["current"] is True and cleared == ""
    assert live.predict("hebjadgcif", back, False)[0].startswith("The model")
