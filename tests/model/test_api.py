"""The notebook API on the tiny models trained once per session."""
import shutil

import numpy as np
import pytest

from model import api
from model import tokenizer as tok
from model.checkpoint import CheckpointError
from tests import tolerances


@pytest.fixture(scope="module")
def tiny_loaded(tiny_trained_models):
    return {name: api.load_from(folder, name, device="cpu") for name, folder in tiny_trained_models.items()}


def test_encode_starts_text_models_with_bos(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    enc = lm.encode("the cat")
    assert enc.ids == [lm.special(tok.BOS)] + lm.tokenizer.encode("the cat").ids
    assert enc.tokens[0] == "<s>" and len(enc.tokens) == len(enc.ids)
    assert not enc.truncated


@pytest.mark.parametrize("marker", ["<mask>", "[MASK]"])
def test_mlm_encode_turns_the_mask_marker_into_the_mask_id(tiny_loaded, marker):
    mlm = tiny_loaded["tiny-mlm"]
    mask = mlm.special(tok.MASK)
    enc = mlm.encode(f"the {marker} sat on the mat")
    expected = ([mlm.special(tok.BOS)] + mlm.tokenizer.encode("the").ids + [mask]
                + mlm.tokenizer.encode(" sat on the mat").ids)
    assert enc.ids == expected
    assert enc.tokens.count("<mask>") == 1


def test_lm_does_not_turn_typed_mask_into_the_special_token(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    assert lm.special(tok.MASK) not in lm.encode("the <mask> sat").ids
    assert lm.encode("<s>").ids.count(lm.special(tok.BOS)) == 1  # only the one the model adds


def test_long_input_is_truncated_to_the_context(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    enc = lm.encode(" ".join(["garden"] * 100))
    assert enc.truncated and len(enc.ids) == lm.config.max_len
    assert lm.trace(" ".join(["garden"] * 100)).truncated


def test_encode_rejects_non_text(tiny_loaded):
    with pytest.raises(TypeError, match="string"):
        tiny_loaded["tiny-lm"].encode(["the", "cat"])


def test_a_remembered_encoding_is_a_fresh_copy_and_the_memory_stays_small(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    first = lm.encode("the cat sat")
    first.ids.append(999)  # generate() extends the ids it was given
    first.tokens.append("x")
    again = lm.encode("the cat sat")
    assert again.ids == first.ids[:-1] and again.tokens == first.tokens[:-1]
    for i in range(3 * api.ENCODED_KEPT):
        assert lm.encode(f"text {i}").ids == lm._encode(f"text {i}").ids
    assert len(lm._encoded) <= api.ENCODED_KEPT


def test_lm_trace_is_causal_in_every_layer_and_head(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    trace = lm.trace("the quiet cat holds the lamp")
    att = trace.attention["self"]
    t = len(trace.tokens)
    assert att.probs.shape == (lm.config.n_layers, lm.config.n_heads, t, t)
    assert att.causal
    upper = np.triu_indices(t, 1)
    assert (att.probs[:, :, upper[0], upper[1]] == 0).all()
    np.testing.assert_array_equal(att.probs[:, :, 0, 0], 1.0)
    np.testing.assert_allclose(att.probs.sum(-1), 1.0, atol=tolerances.weights_sum(t), rtol=0)  # float32 rows
    assert len(trace.predictions) == t
    assert trace.model == "tiny-lm" and trace.arch == "decoder"


@pytest.mark.parametrize("name", ["tiny-lm", "tiny-mlm"])
def test_a_trace_without_predictions_has_the_same_attention(tiny_loaded, name):
    model = tiny_loaded[name]
    full, lean = model.trace("the quiet cat holds the lamp"), model.trace("the quiet cat holds the lamp", predictions=False)
    assert full.predictions and lean.predictions == [] and lean.tokens == full.tokens
    for step in ("inputs", "q", "k", "v", "scores", "probs"):  # the last block stops after its attention
        np.testing.assert_array_equal(getattr(lean.attention["self"], step), getattr(full.attention["self"], step))


def test_generate_returns_text(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    out = lm.generate("the cat", 5)
    assert isinstance(out, str)
    assert lm.generate("the cat", 0) == ""


def test_next_tokens_are_sorted_probabilities(tiny_loaded):
    guesses = tiny_loaded["tiny-lm"].next_tokens("the cat", k=5)
    assert len(guesses) == 5
    probs = [p for _, p in guesses]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert all(isinstance(label, str) for label, _ in guesses)


def test_fill_gives_candidates_for_each_mask(tiny_loaded):
    answers = tiny_loaded["tiny-mlm"].fill("the <mask> holds a <mask> lamp", k=3)
    assert len(answers) == 2 and all(len(a) == 3 for a in answers)
    assert tiny_loaded["tiny-mlm"].fill("no mask here") == []


def test_mlm_trace_mask_is_all_true(tiny_loaded):
    att = tiny_loaded["tiny-mlm"].trace("the <mask> sat").attention["self"]
    assert att.mask.all() and not att.causal


def test_translate_returns_a_string_and_beams_are_sorted(tiny_loaded):
    dates = tiny_loaded["tiny-dates"]
    assert isinstance(dates.translate("21 November 2026"), str)
    hyps = dates.translations("21 November 2026", beam=3)
    assert 1 <= len(hyps) <= 3
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    greedy = dates.translations("21 November 2026", beam=1)[0]
    assert dates.translate("21 November 2026") == greedy.text


def test_dates_trace_with_teacher_forcing_has_cross_attention_target_by_source(tiny_loaded):
    dates = tiny_loaded["tiny-dates"]
    trace = dates.trace("Nov. 21, 2026", output="2026-11-21")
    assert trace.target_tokens == ["<s>"] + list("2026-11-21")
    assert trace.tokens == [tok.readable(dates.tokenizer, ch) for ch in "Nov. 21, 2026"]
    cross = trace.attention["cross"]
    assert cross.probs.shape == (dates.config.n_decoder_layers, dates.config.n_heads, 11, 13)
    np.testing.assert_allclose(cross.probs.sum(-1), 1.0, atol=tolerances.weights_sum(13), rtol=0)  # float32 rows
    assert len(trace.predictions) == 11


def test_dates_trace_without_output_uses_the_models_own_translation(tiny_loaded):
    dates = tiny_loaded["tiny-dates"]
    written = dates.translate("21 November 2026")
    trace = dates.trace("21 November 2026")
    assert "".join(trace.target_tokens[1:]).replace("▁", " ") == written


@pytest.mark.parametrize("name,call", [
    ("tiny-lm", lambda m: m.translate("1 May 2020")),
    ("tiny-lm", lambda m: m.fill("the <mask>")),
    ("tiny-mlm", lambda m: m.generate("the cat")),
    ("tiny-mlm", lambda m: m.next_tokens("the cat")),
    ("tiny-dates", lambda m: m.generate("1 May")),
    ("tiny-dates", lambda m: m.fill("1 <mask> 2020")),
])
def test_the_wrong_model_kind_is_a_value_error(tiny_loaded, name, call):
    with pytest.raises(ValueError, match="needs the"):
        call(tiny_loaded[name])


def test_empty_text_cannot_be_translated(tiny_loaded):
    with pytest.raises(ValueError, match="empty"):
        tiny_loaded["tiny-dates"].translate("")


def test_snapshots_load_by_step(tiny_loaded):
    lm = tiny_loaded["tiny-lm"]
    assert sorted(lm.snapshot_files) == [6]
    early = lm.at_snapshot(6)
    assert early.weights == "snapshots/step_000006.safetensors"
    assert early.trace("the cat").attention["self"].probs.dtype == np.float32
    with pytest.raises(ValueError, match="no snapshot at step 5"):
        lm.at_snapshot(5)


def test_unknown_shipped_name(tmp_path):
    with pytest.raises(ValueError, match="unknown model 'gpt'"):
        api.load("gpt", assets=tmp_path)


def test_missing_tokenizer_is_a_checkpoint_error(tiny_trained_models, tmp_path):
    folder = tmp_path / "lonely"
    shutil.copytree(tiny_trained_models["tiny-lm"], folder)
    with pytest.raises(CheckpointError, match="tokenizer.json is missing"):
        api.load_from(folder, device="cpu")


@pytest.mark.parametrize("prompt", ["When Mary and John went to the store, John gave a drink to",
                                    "The Eiffel Tower is in the city of"])
def test_greedy_with_the_key_value_cache_writes_what_whole_passes_write(smollm2, prompt):
    """generate() reads each new token through the cache and reads out only the last position; decoding the whole
    text again at every step (as under switches) writes the same tokens with the same scores."""
    import copy

    import torch
    from model import decoding

    def kept(step, rows):  # the step, its (v,) log-probabilities kept with the prefix they were read after
        def kept_step(prefix):
            logp = step(prefix)
            rows.append((prefix, logp[0].double().numpy()))
            return logp
        return kept_step

    ids, whole_rows, cached_rows = smollm2.encode(prompt).ids, [], []
    with torch.no_grad():
        whole = decoding.greedy(kept(lambda prefix: torch.log_softmax(smollm2._next_logits(prefix), -1), whole_rows),
                                ids, smollm2.end_id, 12, "cpu", 3)
        cached = decoding.greedy(kept(smollm2._cached_step(), cached_rows), ids, smollm2.end_id, 12, "cpu", 3)
        assert cached.ids == whole.ids and len(cached_rows) == len(whole_rows)
        # each step's log-probabilities: the cache's pass sums the same terms as the whole one in its own order, so
        # within 3x the whole pass's own float32 rounding, measured against its float64 run (its own copy, freed on
        # return; one pass over the longest prefix: a causal model's row at each position reads only the tokens up
        # to it); the scores are float64 sums of the chosen ones, in the same order
        every = copy.deepcopy(smollm2.model).double()(whole_rows[-1][0])[0][0]  # (t, v)
        chosen, allowed_score, banned = whole.ids + [smollm2.end_id], 0.0, smollm2.special_ids((tok.EOS,))
        for t, ((prefix, row), (_, cached_row)) in enumerate(zip(whole_rows, cached_rows)):
            logits = every[prefix.shape[-1] - 1].clone()
            logits[banned] = float("-inf")  # as _no_specials, without its float32
            exact = torch.log_softmax(logits, -1).numpy()
            seen = np.isfinite(row)
            allowed = tolerances.beside_oracle(cached_row[seen], row[seen], exact[seen])
            tolerances.assert_within(cached_row[seen], row[seen], allowed, f"step {t}")
            allowed_score += allowed[np.flatnonzero(seen).searchsorted(chosen[t])]  # the chosen token's
        del every
    # plus the float64 running sums' own rounding (2^-53 of the total at each step)
    allowed_score += len(whole_rows) * tolerances.EPS64 / 2 * abs(whole.score)
    assert cached.score == pytest.approx(whole.score, abs=float(allowed_score), rel=0)
    assert smollm2.generate(prompt, 12) == smollm2.tokenizer.decode(whole.ids)
