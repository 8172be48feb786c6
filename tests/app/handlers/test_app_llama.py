"""Llama-family checkpoints in the app: a tiny Llama (grouped-query attention, a BOS token from its
tokenizer_config.json) and a tiny Qwen2 (one key/value head, q/k/v biases, linear rope scaling), listed in
$ATTENTION_MODELS as a server would, open in every view: the attention tab with its head statistics, step by
step (q and k turned by position), multi-head (who shares keys and values), positions (the rotary
demonstration, whose numbers are the model's own), interventions, copying from context."""
from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from tokenizers import Tokenizer

from experiments.rotary import rotary_demo
from tests import tolerances
from tests.llama_checkpoints import save_tiny
from tests.shuffle_bound import reordered_bound
from ui.tabs import attention, induction, predictions, interventions, learning, multihead, positions, steps
from model.registry import ModelRegistry
from ui.page.messages import InputError
from viz import rotary as viz_rotary
from viz.labels import token_labels

TEXT = "The animal didn't cross the street because it was too tired."
MODELS = ("tiny-llama", "tiny-qwen2")


@pytest.fixture(scope="module")
def folders(tmp_path_factory, model_assets):
    """The two folders, with the project's byte-level BPE tokenizer.json (a word vocabulary for copying)."""
    root = tmp_path_factory.mktemp("llama-family")
    vocabulary = lambda: Tokenizer.from_file(str(model_assets / "tokenizer.json"))  # noqa: E731
    llama = save_tiny("llama", root / "tiny-llama", tokenizer=vocabulary(), num_key_value_heads=2,
                      bos_token_id=1, eos_token_id=2, max_position_embeddings=256)
    (llama / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True}))  # starts texts with <s>
    qwen = save_tiny("qwen2", root / "tiny-qwen2", tokenizer=vocabulary(), num_key_value_heads=1,
                     tie_word_embeddings=True, eos_token_id=2, max_position_embeddings=256,
                     rope_scaling={"rope_type": "linear", "factor": 2.0})
    return {"tiny-llama": llama, "tiny-qwen2": qwen}


@pytest.fixture(scope="module")
def registry(folders, model_assets) -> ModelRegistry:
    """Its own registry: the tiny folders are listed in $ATTENTION_MODELS, as a server lists them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ATTENTION_MODELS", ", ".join(f"{name}={folder}" for name, folder in folders.items()))
        loaded = ModelRegistry.load(model_assets, names=("lm", "mlm"), device="cpu")
    assert not loaded.errors, loaded.errors
    return loaded


def _figures(result):
    return [x for x in result if isinstance(x, go.Figure)]


def test_both_are_listed_and_read_as_their_tokenizers_say(registry):
    assert registry.names == ("lm", "mlm", *MODELS)
    assert registry.shape("tiny-llama") == (2, 4) and registry.kinds("tiny-qwen2") == ("self",)
    llama, qwen = (attention.analyze(registry, TEXT, name)[1] for name in MODELS)
    assert llama[0][0] == "<s>" and qwen[0][0] == "The"  # Llama's tokenizer_config adds BOS; Qwen2's none
    assert [t for t, _ in llama[1:]] == [t for t, _ in qwen]


@pytest.mark.parametrize("name", MODELS)
def test_the_attention_tab_and_head_statistics(registry, name):
    note, tokens, grid, average, columns, _ = attention.analyze(registry, TEXT, name)
    assert note == "" and isinstance(grid, go.Figure) and isinstance(average, go.Figure)
    assert columns["head"] == [f"L{layer} H{head}" for layer in (1, 2) for head in (1, 2, 3, 4)]
    assert "next token" in predictions.predictions(registry, name, TEXT).lower()
    detail = attention.show_head(registry, TEXT, name, 2, 3)
    assert list(detail.layout.xaxis.ticktext) == token_labels([t for t, _ in tokens])
    shared = "keys and values shared by " + ("H3–H4" if name == "tiny-llama" else "H1–H4")
    assert detail.layout.title.text.endswith(shared)
    assert attention.grid_view(registry, TEXT, name, 2, 3) is not None
    with pytest.raises(InputError, match="between 1 and 4"):
        attention.show_head(registry, TEXT, name, 1, 5)


def test_step_by_step_says_q_and_k_are_turned_and_who_shares_them(registry):
    caption, simple, qkv, scores, output = steps.view(registry, TEXT, "tiny-llama", 2, 3, None, False, 0.0, True)
    assert "turn by position" in caption and "H3–H4 share one set of keys and values" in caption
    titles = [a.text for a in qkv.layout.annotations]
    assert any("turned by position" in t and "W<sub>q</sub>" in t for t in titles)
    assert any("of H3–H4" in t for t in titles)
    att = registry.attention("tiny-llama", TEXT)
    assert np.array_equal(att.k[1, 2], att.k[1, 3]) and not np.array_equal(att.q[1, 2], att.q[1, 3])
    from ui.tabs import qk
    told = qk.view(registry, TEXT, "tiny-llama", 2, 3)[0]  # Queries & keys names the group as Step by step does
    assert "H3–H4 share one set of keys and values" in told and "the keys drawn here are theirs too" in told
    assert "share one set" not in qk.view(registry, TEXT, "lm", 1, 1)[0]
    plain = steps.view(registry, TEXT, "lm", 1, 1, None, False, 0.0, True)[0]
    assert "turn by position" not in plain and "keys and values" not in plain


def test_multihead_counts_the_shared_keys_and_values(registry):
    for name, kv in (("tiny-llama", 2), ("tiny-qwen2", 1)):
        heads, sizes, table = multihead.view(registry, TEXT, name, 1, None, False)
        own = sum(p.numel() for p in registry.get(name).model.stack.blocks[0].self_attention.parameters())
        assert f"share {kv} key/value head" in sizes and f"{own:,} parameters" in sizes
    assert "(multi-query attention)" in multihead.view(registry, TEXT, "tiny-qwen2", 1, None, False)[1]


def test_multihead_sizes_of_a_model_without_biases_agree_with_its_own_layer(registry):
    """Llama has no biases, not even the output's: the textbook narrow layer is 4k², and the table's ticked row
    is the model's own layer (shared keys and values), the number the paragraph below gives."""
    heads, sizes, table = multihead.view(registry, TEXT, "tiny-llama", 1, None, False)
    own = sum(p.numel() for p in registry.get("tiny-llama").model.stack.blocks[0].self_attention.parameters())
    k = registry.get("tiny-llama").config.d_model
    assert "biases of the output" not in sizes and "neither has biases" in sizes
    assert f"cost {4 * k * k:,} parameters per attention layer" in sizes
    rows = table["data"]
    ticked = [row for row in rows if row[-1] == "✓"]
    assert len(ticked) == 1 and ticked[0][2] == own and "shared key/value" in ticked[0][0]


@pytest.mark.parametrize("name", MODELS)
def test_positions_show_the_rotation_with_the_models_own_numbers(registry, name):
    tables, waves, similar, added = positions.view(registry, TEXT, name, "0, 1, 6", False)
    assert "none: rotary" in added.layout.annotations[1].text
    assert not registry.trace(name, TEXT).position_embeddings.any()
    summary, turned, slid, table = positions.rotary_view(registry, TEXT, name, 2, False)
    rows = [dict(zip(table["headers"], row)) for row in table["data"]]
    assert len({r["rotary score"] for r in rows[:3]}) == 1  # the same offset, the same score, wherever they stand
    assert len({r["offset m − n"] for r in rows[:3]}) == 1 and rows[3]["rotary score"] != rows[0]["rotary score"]
    assert len({r["added sinusoids"] for r in rows[:3]}) == 3  # added vectors: where they stand matters
    for r in rows:  # the explanation quotes the table
        assert f"**{r['rotary score']:.4f}**" in summary
    assert f"uses rotary positions** (θ = {registry.get(name).config.rope_theta:g}" in summary
    # the first row is the model's own layer-1 score of those two tokens, rotation and all
    att = registry.get(name).trace(TEXT).attention["self"]  # the model's own trace, raw scores kept
    m, n = rows[0]["query m"], rows[0]["key n"]
    # "query position m = 13" stood beside "position 14": m counts from 0, the positions a student reads from 1
    assert all(r["query at position"] == r["query m"] + 1 and r["key at position"] == r["key n"] + 1 for r in rows)
    assert f"at positions {rows[0]['query at position']} and {rows[0]['key at position']}" in summary
    # the table: numpy's float64 turn of the same float32 q and k (a rotary model's input has no position added) at
    # angles m·ω exactly, rounded to 4 places; the model: float32 angles (half a spacing each), cos and sin within 2
    # spacings (EPS32 below 1) and the angle's error, each turned element two products and a sum (2^-24 each of
    # |x_i| + |x_i'|), then a float32 d-term dot product (one side of product's bound)
    demo = rotary_demo(registry.get(name), TEXT, head=1)
    half = demo.d // 2
    exact = [demo.rotated(demo.q, m), demo.rotated(demo.k, n)]
    errors = []
    for x, at in ((demo.q, m), (demo.k, n)):
        angle = np.tile(at * demo.speeds, 2)  # dimensions i and i + d/2 turn by the same angle
        errors.append((np.abs(x) + np.abs(np.roll(x, half))) * (tolerances.spacing32(angle) / 2 + 2 * tolerances.EPS32))
    (rq, rk), (eq, ek) = np.abs(exact), errors
    model_error = eq @ rk + rq @ ek + eq @ ek + float(tolerances.product(rq, rk)) / 2
    shown_error = 5e-5 + tolerances.EPS64 * (demo.d * float(rq @ rk) + abs(rows[0]["rotary score"]))
    assert abs(rows[0]["rotary score"] - float(att.scores[0, 1, m, n])) <= shown_error + model_error
    assert turned.layout.title.text.startswith("One pair of dimensions of layer 1, head 2")
    # the rotary panel: one offset's score in float64 wherever the pair stands, so only float64's rounding moves it:
    # each turned element (angles up to KEY_POSITIONS + the largest offset times the fastest speed) by its cos and
    # sin's spacings and two roundings, then a d-term float64 dot product; the ptp of a line is twice that at most
    rotary_lines = [trace for trace in slid.data if trace.xaxis == "x"]
    largest = (viz_rotary.KEY_POSITIONS + max(int(t.name.split()[-1]) for t in rotary_lines)) * demo.speeds.max()
    aq, ak = (np.abs(x) + np.abs(np.roll(x, half)) for x in (demo.q, demo.k))
    drift = 2 * (2 * (float(np.spacing(largest)) + 2 * tolerances.EPS64) + demo.d * tolerances.EPS64) * float(aq @ ak)
    assert len(rotary_lines) >= 2 and all(np.ptp(trace.y) <= drift for trace in rotary_lines), drift
    if name == "tiny-qwen2":
        assert "linear scaling × 2" in summary
    demo, *_ = positions.shuffle_view(registry, TEXT, name, 2, 0, False)
    difference = float(re.search(r"differ from the original by at most \*\*([0-9.e+-]+)\*\*", demo).group(1))
    # no rotation: the same weights, permuted, up to rounding as derived (shown to 2 digits: 5% of it more)
    assert difference <= 1.05 * reordered_bound(registry.get(name), TEXT, head=1).max()


def test_positions_on_an_added_position_model_show_what_rope_would_do(registry):
    summary, turned, slid, table = positions.rotary_view(registry, TEXT, "lm", 1, False)
    assert "lm adds position vectors and does not rotate" in summary
    with pytest.raises(InputError, match="at least two tokens"):
        positions.rotary_view(registry, "a", "tiny-qwen2", 1, False)


@pytest.mark.parametrize("name", MODELS)
def test_interventions_knock_out_one_query_head_of_a_shared_group(registry, name):
    result = interventions.ablate(registry, TEXT, name, ["L1 H2"], "zero")
    assert result["heads"] == ["L1 H2"] and result["change"] > 0
    summary, guesses, importance, *_ = interventions.view(registry, TEXT, name, ["L1 H2"], "uniform", False)
    assert "Knocked out (weights made uniform): **L1 H2**" in summary and isinstance(importance, go.Figure)
    assert np.shape(importance.data[0].z) == (2, 4)
    assert isinstance(interventions.head_view(registry, TEXT, name, "L2 H4", False), go.Figure)
    about, figure = interventions.explanations(registry, TEXT, name, None, False)
    assert about.startswith("Explaining") and isinstance(figure, go.Figure)


@pytest.mark.parametrize("name", MODELS)
def test_copying_from_context_measures_the_induction_scores(registry, name):
    summary, *rest = induction.view(registry, name, 0, 12, induction.STRONGEST, "zero", False)
    assert "12 random words" in summary and "*" + name not in summary  # its own model, not a stand-in
    m = induction.measure(registry, name, 0, 12)
    assert m["induction"].shape == (2, 4) and len(m["ids"]) == 25
    start = registry.get(name).start_id
    assert m["ids"][0] == (start if start is not None else registry.get(name).end_id)


def test_learning_says_it_does_not_apply(registry):
    summary, *figures, slider = learning.view(registry, learning.SnapshotTraces(registry), TEXT, "tiny-llama", 1, 1,
                                              None, 1, False)
    assert re.search("does not apply to tiny-llama.*pretrained", summary)


def test_the_default_dimensions_fit_a_small_model(registry):
    """The box's default (0, 1, 6, 20, 60) keeps what a 32-dimensional model has; typed ones are checked."""
    tables, waves, *_ = positions.view(registry, TEXT, "tiny-llama", positions.DEFAULT_DIMS, False)
    assert [t.name for t in waves.data if str(t.name).startswith("dim ")] == ["dim 0", "dim 1", "dim 6", "dim 20"]
    with pytest.raises(InputError, match="out of range"):
        positions.view(registry, TEXT, "tiny-llama", "0, 60", False)


@pytest.mark.parametrize("name", MODELS)
def test_the_logit_lens_reads_every_layer_through_the_rmsnorm(registry, name):
    """The lens reads each layer through the model's final RMSNorm and head; after the last layer it is the
    model's own prediction."""
    from experiments import lens

    loaded = registry.get(name)
    reading = lens.logit_lens(loaded, TEXT)
    assert reading.top_ids.shape == (2, len(reading.tokens))
    assert reading.top_tokens[-1] == loaded.trace(TEXT).predictions
    np.testing.assert_array_equal(reading.final_probs[-1], reading.top_probs[-1])  # one element of one softmax, read twice


def test_the_every_head_overview_at_the_models_length(registry):
    """A text as long as the tiny Llama reads (256 tokens, its max_position_embeddings): the overview and the
    statistics cover every head, and a longer text is cut to that length and says so."""
    long = " ".join(["the cat sat on the mat because it was tired"] * 40)
    trace = registry.trace("tiny-llama", long)
    assert trace.truncated and len(trace.tokens) == registry.get("tiny-llama").config.max_len == 256
    note, tokens, grid, average, columns, _ = attention.analyze(registry, long, "tiny-llama")
    assert len(tokens) == 256 and len(columns["head"]) == 8 and isinstance(grid, go.Figure)
    assert note  # the cut is said
