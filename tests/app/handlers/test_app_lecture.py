"""The lecture tabs' handlers, called directly on tiny trained models, and their wiring in the app."""
from __future__ import annotations

import shutil

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from model import checkpoint
from model.config import TransformerConfig
from model.switches import Switches
from model.transformer import build
from tests import tolerances
from ui.tabs import encoder_decoder, learning, masking, multihead, positions, steps
from ui.page.context import friendly
from model.registry import ModelRegistry
from ui.page.labels import head_choices
from ui.page.messages import InputError

SENTENCE = "the small cat holds a green lamp"
DATE = "Saturday, 21st of November 2026"
KINDS = {"lm": None, "mlm": None, "dates": "cross"}  # the app passes None for single-kind models


@pytest.fixture(scope="module")
def registry(tiny_trained_models, tmp_path_factory) -> ModelRegistry:
    """assets/{lm,mlm,dates} from the tiny models; lm gets an extra, untrained snapshot at step 0 (so this module
    has its own registry, not the session's)."""
    assets = tmp_path_factory.mktemp("lecture_assets")
    for name in ("lm", "mlm", "dates"):
        shutil.copytree(tiny_trained_models[f"tiny-{name}"], assets / name)
    shutil.copy(tiny_trained_models["tiny-lm"].parent / "tokenizer.json", assets / "tokenizer.json")
    torch.manual_seed(0)
    untrained = build(TransformerConfig.load(assets / "lm" / "config.json"))
    checkpoint.save(untrained, assets / "lm" / "snapshots", "step_000000.safetensors", half=True)
    return ModelRegistry.load(assets)


def _text(name):
    return DATE if name == "dates" else SENTENCE


def _figures(result):
    return [x for x in result if isinstance(x, go.Figure)]


@pytest.mark.parametrize("name", ["lm", "mlm", "dates"])
def test_steps_view_returns_figures_and_recomputes_the_trace(registry, name):
    caption, *figures = steps.view(registry, _text(name), name, 1, 2, KINDS[name], False, 0.0, True)
    assert len(_figures(figures)) == 4 and all(f.layout.height for f in figures)
    assert "Temperature 1" in caption
    att = registry.attention(name, _text(name), KINDS[name] or "self")
    scores_fig = figures[2]  # raw, scaled, masked (a causal head only), softmax: the last panel is the weights
    assert len(scores_fig.data) == (4 if name == "lm" or KINDS[name] == "decoder" else 3)
    # the panel's softmax of the head's scores against the trace's torch softmax: two float32 attentions of the same
    # q and k (tolerances.attention)
    q, k = att.q[0, 1], att.k[0, 1]
    _, allowed, _ = tolerances.attention(q, k, k, q.shape[-1] ** -0.5, att.mask)
    tolerances.assert_within(np.nan_to_num(np.asarray(scores_fig.data[-1].z, dtype=float)), att.probs[0, 1], allowed)
    hard = steps.live_view(registry, _text(name), name, 1, 2, KINDS[name], False, -2.0, True)
    assert "Temperature 0.01" in hard[0]


def test_steps_parameter_free_view_is_a_note_for_cross_attention(registry):
    _, simple, *_ = steps.live_view(registry, DATE, "dates", 1, 1, "cross", False, 0.0, True)
    assert "self-attention" in simple.layout.annotations[0].text
    _, simple, *_ = steps.live_view(registry, DATE, "dates", 1, 1, "encoder", False, 0.0, True)
    assert np.asarray(simple.data[0].z).shape == (len(DATE), len(DATE))


def test_masking_view_lm_mask_is_lower_triangular_and_mlm_all_ones(registry):
    masks, effect, types, matched = masking.view(registry, SENTENCE, 1, 1, True)
    lm_mask, mlm_mask = np.asarray(masks.data[0].z), np.asarray(masks.data[1].z)
    t = lm_mask.shape[0]
    np.testing.assert_array_equal(lm_mask, np.tril(np.ones((t, t))))
    np.testing.assert_array_equal(mlm_mask, np.ones((t, t)))
    masked_probs = np.asarray(effect.data[3].z)
    assert (masked_probs[np.triu_indices(t, 1)] == 0).all()  # exp(-inf): exactly 0
    # float32 softmax rows summed again in float32 (tolerances.weights_sum)
    np.testing.assert_allclose(masked_probs.sum(-1), 1, rtol=0, atol=tolerances.weights_sum(t))
    assert np.isnan(np.asarray(effect.data[2].z)[np.triu_indices(t, 1)]).all()
    assert list(types.columns) == ["head type (measured)", "lm", "mlm"]
    assert effect.layout.font.size == 20 and matched.layout.font.size == 20  # presenter mode


@pytest.mark.parametrize("name", ["lm", "mlm", "dates"])
def test_positions_and_shuffle_views(registry, name):
    figures = positions.view(registry, _text(name), name, "0, 1, 5", False)
    assert len(_figures(figures)) == 4
    tables = figures[0]
    assert len(tables.data) == 2  # sinusoidal beside learned (dates borrows the lm's)
    summary, plain, positioned, seed = positions.shuffle_view(registry, _text(name), name, 1, 3, False)
    assert "Shuffled order" in summary and seed == 3
    original, put_back = np.asarray(plain.data[0].z), np.asarray(plain.data[1].z)
    # the same input rows in another order: layer 1's q, k, scores and softmax summed otherwise (tolerances.reordered,
    # positions off and no causal mask, as the demo runs it; head 1 is index 0)
    loaded = registry.get(name)
    encoder = loaded.arch == "encoder-decoder"
    att = loaded.trace_ids(loaded.encode(_text(name)).ids, Switches(positions=False, causal=False)).attention[
        "encoder" if encoder else "self"]
    layer = (loaded.model.encoder if encoder else loaded.model.stack).blocks[0].self_attention
    allowed = tolerances.reordered(att.inputs[0], layer.toqueries.weight.detach(), layer.tokeys.weight.detach(),
                                   att.q[0], att.k[0], att.probs[0], layer.d ** -0.5)[0]
    tolerances.assert_within(put_back, original, allowed)


def test_positions_bad_input_gives_clear_messages(registry):
    with pytest.raises(InputError, match="out of range"):
        positions.view(registry, SENTENCE, "lm", "0, 999", False)
    with pytest.raises(InputError, match="whole numbers"):
        positions.view(registry, SENTENCE, "lm", "one", False)
    with pytest.raises(InputError, match="seed"):
        positions.shuffle_view(registry, SENTENCE, "lm", 1, "abc", False)
    with pytest.raises(gr.Error):
        friendly(positions.shuffle_view)(registry, "   ", "lm", 1, 0, False)


def test_encoder_decoder_view_cross_attention_is_target_by_source(registry):
    head = encoder_decoder.opening_head(registry)
    assert head in head_choices(registry, "dates", "cross")
    summary, heat, bars, enc_fig, dec_fig, slider = encoder_decoder.view(registry, DATE, head, 3, False)
    trace = registry.trace("dates", DATE)
    t, s = len(trace.target_tokens), len(trace.tokens)
    assert np.asarray(heat.data[0].z).shape == (t, s)
    assert len(bars.data[0].y) == s
    assert np.asarray(enc_fig.data[0].z).shape == (s, s) and np.asarray(dec_fig.data[0].z).shape == (t, t)
    assert slider["maximum"] == t and "→" in summary and "does not look like a date" not in summary
    assert "does not look like a date" in encoder_decoder.view(registry, "hello there", head, 1, False)[0]
    greedy, beams = encoder_decoder.beams_view(registry, DATE, 3)
    assert len(greedy["data"]) == 1 and len(beams["data"]) == 3  # tables as gr.Dataframe values
    scores = [row[beams["headers"].index("log-prob")] for row in beams["data"]]
    assert scores == sorted(scores, reverse=True)
    with pytest.raises(InputError, match="beam width"):
        encoder_decoder.beams_view(registry, DATE, 9)
    with pytest.raises(InputError):
        encoder_decoder.view(registry, DATE, "L9 H9", 1, False)


def test_learning_view_loads_each_snapshot(registry):
    snapshots = learning.SnapshotTraces(registry)
    steps_saved = snapshots.steps("lm")
    assert len(steps_saved) >= 2 and steps_saved[0] == 0
    first = learning.view(registry, snapshots, SENTENCE, "lm", 1, 1, "self", 1, False)
    last = learning.view(registry, snapshots, SENTENCE, "lm", 1, 1, "self", len(steps_saved), False)
    summary, heat, curve, strip, slider = last
    assert strip.layout.meta["tiles"] == [f"step {s}" for s in steps_saved]
    assert f"step {steps_saved[-1]}" in summary and slider["value"] == len(steps_saved)
    assert curve.layout.shapes[0].x0 == steps_saved[-1]
    early, trained = np.asarray(first[1].data[0].z), np.asarray(heat.data[0].z)
    assert np.nanmax(np.abs(early - trained)) > 0  # a different snapshot's weights, not the same map twice
    for name in ("mlm", "dates"):
        result = learning.view(registry, snapshots, _text(name), name, 1, 1, KINDS[name], 99, False)
        assert len(_figures(result)) == 3


@pytest.mark.parametrize("name", ["lm", "mlm", "dates"])
def test_multihead_view(registry, name):
    fig, text, table = multihead.view(registry, _text(name), name, 1, KINDS[name], False)
    config = registry.get(name).config
    assert len(fig.layout.meta["tiles"]) == config.n_heads
    assert f"k = {config.d_model}" in text and len(table) == 2


def test_app_wires_every_lecture_tab_with_ids_and_api_names(demo):
    names = {fn.api_name for fn in demo.fns.values()}
    assert {"steps", "steps_live", "masking", "positions", "shuffle", "rotary", "encoder_decoder", "decoding_step", "beams",
            "learning", "multihead"} <= names
    ids = {c["props"].get("id") for c in demo.get_config_file()["components"] if c["type"] == "tabitem"}
    assert {"steps", "masking", "positions", "encoder_decoder", "learning", "multihead"} <= ids


def test_masking_writes_each_mask_marker_as_one_plain_word_both_models_read(shipped_registry):
    shipped = shipped_registry  # the shipped tokenizer: the stand-in must be one token
    masks, *_ = masking.view(shipped, "Mary gave <mask> to Susan", 1, 1, False)
    labels = list(masks.layout.yaxis.ticktext)
    assert labels.count("▁" + masking.MASK_STAND_IN) == 1 and "&lt;mask&gt;" not in labels
    assert labels == list(masking.view(shipped, "Mary gave something to Susan", 1, 1, False)[0].layout.yaxis.ticktext)


def test_temperature_slider_is_log_scaled_and_clamped():
    from analysis.steps import MAX_TEMPERATURE

    assert steps.temperature_from_slider(-2) == pytest.approx(0.01)
    assert steps.temperature_from_slider(0) == pytest.approx(1.0)
    assert steps.temperature_from_slider(2) == pytest.approx(100.0)
    assert steps.temperature_from_slider(9) == MAX_TEMPERATURE
