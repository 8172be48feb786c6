"""Generation with a key/value cache is the same computation as a full forward pass over the text written so
far: every step's token and attention rows (every layer and head) equal the last row of the full pass, for the
shipped lm, a GPT-2 folder, a Llama folder with grouped-query attention and a Mistral folder with a sliding
window; and the cache holds exactly 2 × layers × key/value heads × head size × bytes per number per token."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from analysis import sampling
from model import api
from experiments import generation
from model import tokenizer as tok
from model.kv_cache import bytes_per_token
from tests import tolerances
from tests.llama_checkpoints import save_tiny

PROMPT = "The animal didn't cross the street because"


@pytest.fixture(scope="module")
def lm():
    return api.load("lm", device="cpu")


def _gpt2(folder):
    from tests.model.test_pretrained import _save  # the GPT-2 folder those tests build with transformers
    return _save("gpt2", folder)


BUILDERS = {
    "lm": None,
    "gpt2": _gpt2,
    "llama-gqa": lambda folder: save_tiny("llama", folder, num_key_value_heads=2, tie_word_embeddings=False),
    "mistral-window": lambda folder: save_tiny("mistral", folder, num_key_value_heads=2, sliding_window=4),
}


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def model(request, tmp_path_factory, lm):
    if request.param == "lm":
        return lm
    pytest.importorskip("transformers", reason="transformers builds the checkpoints (requirements-dev.txt)")
    return api.load_from(BUILDERS[request.param](tmp_path_factory.mktemp(request.param)), device="cpu")


def full_pass(loaded, ids, model=None):
    """The last row of every layer's attention (layers, heads, t) and the next token's scores, recomputed
    from scratch over the whole text (by `model`, loaded's own unless given: its float64 copy)."""
    with torch.no_grad():
        logits, rec = (model or loaded.model)(torch.tensor([ids]), record=True)
    rows = np.stack([layer.probs[0, :, -1].double().numpy() for layer in rec.layers["self"]])
    scores = logits[0, -1].double().clone()
    scores[loaded.special_ids((tok.EOS,))] = float("-inf")  # as loaded._no_specials, without its float32
    return rows, scores.numpy()


def softmax_at(scores, i):
    probs = np.exp(scores - scores.max())
    return probs[i] / probs.sum()


def test_cached_steps_equal_full_recomputation(model):
    ids = model.encode(PROMPT).ids
    written = generation.generate_steps(model, ids, 12)
    assert written.prompt_ids == ids and len(written.steps) >= 1
    for t, step in enumerate(written.steps):
        text = written.ids[:len(ids) + t]
        rows, scores = full_pass(model, text)
        exact_rows, exact_scores = full_pass(model, text, tolerances.in_float64(model.model))
        assert step.attention.shape == rows.shape == (model.config.n_layers, model.config.n_heads, len(text))
        # the cache's pass sums the same terms as the full one (its own order, its own kernels): within 3x the full
        # pass's own float32 rounding, measured against its float64 run
        tolerances.assert_within(step.attention, rows, tolerances.beside_oracle(step.attention, rows, exact_rows),
                                 f"step {t}")
        assert step.id == int(np.argmax(scores)), f"step {t} chose another token than the full pass"
        # its probability is a float64 softmax of float32 scores, each within `moved` of the full pass's: log p then
        # moves by at most 2 x moved (its own score and the normaliser's)
        seen = np.isfinite(scores)
        moved = tolerances.beside_oracle(scores[seen], scores[seen], exact_scores[seen]).max()
        chance = softmax_at(scores, step.id)
        assert step.probability == pytest.approx(chance, rel=np.expm1(2 * moved)), f"step {t}"
        assert step.token == model.label(step.id)
    if not written.finished:
        assert len(written.steps) == 12


def test_the_window_drops_what_falls_out(tmp_path):
    pytest.importorskip("transformers")
    loaded = api.load_from(BUILDERS["mistral-window"](tmp_path / "m"), device="cpu")
    ids = loaded.encode(PROMPT).ids
    assert len(ids) > 4
    written = generation.generate_steps(loaded, ids, 5, choose=lambda s: (int(np.argmax(s[1:])) + 1, 1.0))
    per_token = written.bytes_per_token
    for t, step in enumerate(written.steps):
        seen = len(ids) + t  # positions read after the step: the prompt and the t tokens fed back
        assert step.kept_from == seen - 4
        assert step.cache_bytes == 4 * per_token  # full window: the cache stops growing
        # a row of 4 float32 weights e_j / S (S their float32 sum, the division rounded), summed here once more
        assert not step.attention[:, :, :seen - 4].any() and step.attention[:, :, seen - 4:].sum(-1) == \
            pytest.approx(1.0, abs=tolerances.summed(4, 1.0) + tolerances.EPS32)


def test_cache_bytes_per_token_is_the_formula_and_the_tensors(model):
    config, attention = model.config, model.model.stack.blocks[0].self_attention
    cache = model.model.new_cache()
    ids = model.encode(PROMPT).ids[:4]
    with torch.no_grad():
        model.model.step(torch.tensor([ids]), cache)
        model.model.step(torch.tensor([[ids[-1]]]), cache)
    kept = min(5, config.sliding_window or 5)
    held = 0
    for layer in cache.layers:
        assert layer.keys.shape == layer.values.shape == (1, config.kv_heads, kept, config.d_head)
        held += layer.keys.untyped_storage().nbytes() + layer.values.untyped_storage().nbytes()
    formula = bytes_per_token(config.n_layers, config.kv_heads, config.d_head, 4)
    assert 2 * config.n_layers * attention.kv_heads * attention.d * 4 == formula
    assert cache.nbytes == held == kept * formula
    written = generation.generate_steps(model, ids, 3, choose=lambda s: (int(np.argmax(s)), 1.0))
    assert written.bytes_per_token == formula
    assert [s.cache_bytes for s in written.steps] == [min(len(ids) + t, config.sliding_window or 99) * formula
                                                      for t in range(len(written.steps))]


def test_grouped_query_cache_keeps_only_the_shared_heads(tmp_path):
    pytest.importorskip("transformers")
    loaded = api.load_from(BUILDERS["llama-gqa"](tmp_path / "l"), device="cpu")
    written = generation.generate_steps(loaded, loaded.encode(PROMPT).ids, 2)
    assert (written.n_heads, written.kv_heads) == (4, 2)
    assert written.bytes_per_token == 2 * 2 * 2 * 8 * 4  # layers 2, kv heads 2, head size 32 / 4 = 8, float32


def test_sampled_steps_draw_what_generate_draws(lm):
    ids = lm.encode("The cat sat on the").ids
    settings = dict(temperature=0.9, top_k=40, top_p=0.95, seed=7)
    written = generation.generate_steps(lm, ids, 10, sampling.chooser(**settings))
    sample = sampling.generate(lm.next_logits, ids, 10, end=lm.end_id, **settings)
    tokens = [s.id for s in written.steps if s.id != lm.end_id]
    assert tokens == sample.ids and written.finished == sample.finished
    assert len(sample.probs) == len(tokens)
    for t, (step, drawn) in enumerate(zip(written.steps, sample.probs)):
        # both draw from float64 softmaxes (at temperature T, renormalised over what top-k and top-p keep) of float32
        # scores each within `moved` of the full pass's, so 2 moved of each other: log p moves by at most 2 x that / T
        text = ids + tokens[:t]
        scores, exact = full_pass(lm, text), full_pass(lm, text, tolerances.in_float64(lm.model))
        seen = np.isfinite(scores[1])
        moved = tolerances.beside_oracle(scores[1][seen], scores[1][seen], exact[1][seen]).max()
        assert step.drawn == pytest.approx(drawn, rel=np.expm1(2 * 2 * moved / settings["temperature"])), f"step {t}"


def test_greedy_matches_plain_greedy_decoding(lm):
    ids = lm.encode("The cat sat on the").ids
    written = generation.generate_steps(lm, ids, 16)
    plain = lm.generate("The cat sat on the", 16, no_repeat_ngram=0)
    assert lm.tokenizer.decode([s.id for s in written.steps if s.id != lm.end_id]) == plain


def test_a_model_that_writes_no_text_is_refused():
    mlm = api.load("mlm", device="cpu")
    with pytest.raises(ValueError, match="does not write text"):
        generation.generate_steps(mlm, mlm.encode("a <mask>").ids, 3)


def test_the_context_bounds_the_steps(lm):
    ids = lm.encode("the cat " * 200).ids[: lm.config.max_len - 2]
    written = generation.generate_steps(lm, ids, 10, choose=lambda s: (int(np.argmax(s[5:])) + 5, 1.0))
    assert len(written.steps) == 2
