"""Causal tracing (experiments/patching.py): the measure's two ends, the exact grid against a direct patched run,
attribution patching against the exact grid where the answer is linear, and the refusals."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from model import api
from experiments import patch_suffixes, patching
from experiments.patching import PatchingError
from tests import tolerances
from tests.llama_checkpoints import byte_bpe, save_tiny

LM_PAIR = ("Monday, Tuesday,", "Friday, Saturday,")  # lm: " T" against " S" (tests/app/test_patching_app.py)
TINY_PAIR = ("the cat sat on the mat", "the mat sat on the cat")


def in_float64(loaded, pair):
    """loaded with its model's float64 copy (tests/tolerances.py), and that copy's recorded runs of pair: what float32
    rounding moves is measured against these."""
    double = dataclasses.replace(loaded, model=tolerances.in_float64(loaded.model))
    return double, patching.record(double, pair)


def direct_grid(loaded, pair, runs, site, shape):
    return np.array([[patching.patched(loaded, pair, runs, [(site, layer, cell)]) for cell in range(shape[1])]
                     for layer in range(shape[0])])


def save_gpt2(folder):
    """A random tiny GPT-2 (biases everywhere, LayerNorm, GELU, tied head) with a byte-level tokenizer."""
    transformers = pytest.importorskip("transformers")
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = byte_bpe(["<|endoftext|>"])
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=tokenizer.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
        bos_token_id=0, eos_token_id=0))
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.3)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def lm():
    return api.load("lm", device="cpu")


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "gpt2":
        return api.load_from(save_gpt2(folder / "m"), device="cpu")
    return api.load_from(save_tiny("llama", folder / "m", num_key_value_heads=2), device="cpu")


def test_patching_nothing_is_0_and_the_whole_last_layer_is_1(lm):
    pair = patching.prepare(lm, *LM_PAIR)
    runs = patching.record(lm, pair)
    last = runs.n_layers - 1
    assert abs(patching.patched(lm, pair, runs, [])) < 1e-5
    whole = [("residual", last, p) for p in range(len(pair.clean_ids))]
    assert abs(patching.patched(lm, pair, runs, whole) - 1) < 1e-5
    grid = patching.exact(lm, pair, "residual", runs)
    assert abs(grid[last, pair.position] - 1) < 1e-5  # a causal model reads the answer off its last position only
    assert np.all(np.abs(grid[last, :pair.position]) < 1e-5)


def test_default_tokens_are_each_prompts_top_next_token(lm):
    pair = patching.prepare(lm, *LM_PAIR)
    assert (pair.target_label, pair.contrast_label) == ("▁T", "▁S")
    assert lm.next_tokens(LM_PAIR[0], 1)[0][0] == "▁T" and lm.next_tokens(LM_PAIR[1], 1)[0][0] == "▁S"
    assert pair.changed == [1, 2, 5, 6]


@pytest.mark.parametrize("site", patching.SITES)
def test_every_cell_of_the_exact_grid_is_a_direct_patched_run(tiny, site):
    target, contrast = (tiny.label(i) for i in tiny.encode(" the cat").ids[:2])
    pair = patching.prepare(tiny, *TINY_PAIR, target, contrast)
    runs = patching.record(tiny, pair)
    grid = patching.exact(tiny, pair, site, runs)
    t = len(pair.clean_ids)
    assert patch_suffixes.applies(tiny, t)  # the grid ran each cell's suffix only (experiments/patch_suffixes.py)
    assert grid.shape == (runs.n_layers, runs.n_heads if site == "heads" else t)
    direct = direct_grid(tiny, pair, runs, site, grid.shape)
    double, runs64 = in_float64(tiny, pair)
    exact = direct_grid(double, pair, runs64, site, grid.shape)
    # the suffix-only grid runs the same layers on the same inputs, batched: within 3x the direct runs' own rounding
    tolerances.assert_within(grid, direct, tolerances.beside_oracle(grid, direct, exact), site)
    assert np.abs(grid).max() > 0.01  # something restores the answer: the test compares real numbers


def test_a_masked_model_is_patched_at_its_mask():
    mlm = api.load("mlm", device="cpu")
    pair = patching.prepare(mlm, "The cat sat on the <mask>.", "The dog sat on the <mask>.", " mat", " floor")
    assert pair.clean_tokens[pair.position] == "<mask>"
    runs = patching.record(mlm, pair)
    double, runs64 = in_float64(mlm, pair)
    grid = patching.exact(mlm, pair, "attention", runs)
    cells = [(0, 2), (3, pair.position), (2, 1)]
    whole = [("residual", runs.n_layers - 1, p) for p in range(len(pair.clean_ids))]
    direct = np.array([patching.patched(mlm, pair, runs, [("attention", *cell)]) for cell in cells]
                      + [patching.patched(mlm, pair, runs, whole)])
    exact = np.array([patching.patched(double, pair, runs64, [("attention", *cell)]) for cell in cells]
                     + [patching.patched(double, pair, runs64, whole)])
    # the grid and the whole last layer's 1 (its exact value), within 3x the direct runs' own float32 rounding
    ours = np.array([grid[cell] for cell in cells] + [1.0])
    tolerances.assert_within(ours, direct, tolerances.beside_oracle(ours, direct, exact))


def linearised(loaded):
    """`loaded` with a forward pass that is affine in every activation: attention weights fixed (queries and keys
    zeroed: uniform over the keys a position may see), no norms, and no activation inside the feed-forward. The
    logit difference is then an affine function of every site, so the first-order estimate is exact."""
    model = loaded.model
    with torch.no_grad():
        for block in model.stack.blocks:
            attention = block.self_attention
            for projection in (attention.toqueries, attention.tokeys):
                projection.weight.zero_()
                if projection.bias is not None:
                    projection.bias.zero_()
            block.norm1, block.norm2 = nn.Identity(), nn.Identity()
            block.feed_forward.net[1] = nn.Identity()
        model.stack.final_norm = nn.Identity()
    return loaded


def test_the_preview_matches_the_exact_grid_where_the_answer_is_linear(tmp_path):
    loaded = linearised(api.load_from(save_gpt2(tmp_path / "g"), device="cpu"))
    target, contrast = (loaded.label(i) for i in loaded.encode(" the cat").ids[:2])
    pair = patching.prepare(loaded, *TINY_PAIR, target, contrast)
    runs = patching.record(loaded, pair)
    preview = patching.preview(loaded, pair, runs)
    double, runs64 = in_float64(loaded, pair)
    preview64 = patching.preview(double, pair, runs64)
    for site in patching.SITES:
        exact = patching.exact(loaded, pair, site, runs)
        exact64 = patching.exact(double, pair, site, runs64)
        # equal in exact arithmetic (affine): each within its own float32 rounding (measured against its float64
        # run) of that, so within (3 + 1)x the larger of the two (tests/tolerances.py)
        allowed = np.maximum(tolerances.beside_oracle(preview[site], exact, exact64),
                             tolerances.beside_oracle(preview[site], preview[site], preview64[site]))
        tolerances.assert_within(preview[site], exact, allowed, site)
        assert np.abs(exact).max() > 0.05, site


def test_the_preview_is_close_on_lm(lm):
    """On a real model the estimate is first-order only; on this pair it still ranks the cells as the grid does."""
    pair = patching.prepare(lm, *LM_PAIR)
    runs = patching.record(lm, pair)
    preview = patching.preview(lm, pair, runs)
    for site in patching.SITES:
        exact = patching.exact(lm, pair, site, runs)
        assert np.corrcoef(exact.ravel(), preview[site].ravel())[0, 1] > 0.9, site


def test_the_grid_streams_one_layer_at_a_time(lm):
    pair = patching.prepare(lm, *LM_PAIR)
    runs = patching.record(lm, pair)
    rows = list(patching.exact_rows(lm, pair, "mlp", runs))
    assert [layer for layer, _ in rows] == list(range(runs.n_layers))
    assert all(row.shape == (len(pair.clean_ids),) for _, row in rows)


def test_refusals_say_what_to_change(lm):
    with pytest.raises(PatchingError, match="clean prompt is empty"):
        patching.prepare(lm, "  ", "Friday")
    with pytest.raises(PatchingError, match="corrupted prompt is empty"):
        patching.prepare(lm, "Friday", "")
    with pytest.raises(PatchingError, match=r"same number of tokens.*The \| ▁king.*▁qu \| e \| en"):
        patching.prepare(lm, "The king said to the", "The queen said to the")
    with pytest.raises(PatchingError, match="not one token of lm: it reads as 2"):
        patching.prepare(lm, *LM_PAIR, " happy")
    with pytest.raises(PatchingError, match="same token"):
        patching.prepare(lm, "She went to the", "He went to the")  # both predict " house"
    with pytest.raises(PatchingError, match="at most 48"):
        patching.prepare(lm, "a " * 60, "b " * 60, "▁a", "▁b")
    pair = patching.prepare(lm, *LM_PAIR)
    with pytest.raises(PatchingError, match="site must be one of"):
        next(patching.exact_rows(lm, pair, "keys", patching.record(lm, pair)))


def test_models_without_a_next_token_say_why():
    mlm = api.load("mlm", device="cpu")
    with pytest.raises(PatchingError, match="put <mask>"):
        patching.prepare(mlm, "The cat sat", "The dog sat")
    with pytest.raises(PatchingError, match="names a category"):
        patching.check_model(api.load("classifier", device="cpu"))
    with pytest.raises(PatchingError, match="ISO date"):
        patching.check_model(api.load("dates", device="cpu"))
    with pytest.raises(PatchingError, match="no word-prediction head"):
        patching.check_model(api.load("minilm", device="cpu"))


@pytest.mark.parametrize("site", ["residual", "mlp"])
def test_passes_of_a_few_tokens_give_the_same_grid_in_layer_order(tiny, site, monkeypatch):
    """The suffix-only grid splits its cells into passes of at most PASS_TOKENS packed tokens (at least one whole
    suffix): split as finely as it goes, each row still comes out once, in layer order, and equal to one pass."""
    target, contrast = (tiny.label(i) for i in tiny.encode(" the cat").ids[:2])
    pair = patching.prepare(tiny, *TINY_PAIR, target, contrast)
    runs = patching.record(tiny, pair)
    whole = patching.exact(tiny, pair, site, runs)
    double, runs64 = in_float64(tiny, pair)
    exact = patching.exact(double, pair, site, runs64)
    monkeypatch.setattr(patch_suffixes, "PASS_TOKENS", 1)
    rows = list(patching.exact_rows(tiny, pair, site, runs))
    assert [layer for layer, _ in rows] == list(range(runs.n_layers))
    # the same suffixes batched otherwise: within 3x one pass's own float32 rounding (its float64 run)
    split = np.stack([row for _, row in rows])
    tolerances.assert_within(split, whole, tolerances.beside_oracle(split, whole, exact))
