"""The head finder's numbers (experiments/head_finder.py): each score against a hand computation on lm's own
weights, the scores that do not apply left out, and the shipped files recomputed from their first texts."""
from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest

from experiments import copying, head_finder
from model import api
from headfinder.store import precomputed_path
from tests import tolerances
from training.head_finder import texts_for

TEXTS = ["the cat sat on the mat and looked at the door", "a small boat: a vessel for travel on water"]


@pytest.fixture(scope="module")
def lm():
    return api.load("lm", device="cpu")


def by_name(result: dict) -> dict[str, dict]:
    return {h["head"]: h for h in result["heads"]}


def hand_scores(probs: np.ndarray) -> dict[str, float]:
    """One head's (t, t) causal weights measured by hand, row by row (the first row, which can only look at
    itself, left out): the share on the token before, on the first token, on itself, the entropy in bits and
    the attention-weighted distance."""
    rows = range(1, probs.shape[0])
    previous = np.mean([probs[i, i - 1] for i in rows])
    first = np.mean([probs[i, 0] for i in rows])
    itself = np.mean([probs[i, i] for i in rows])
    entropy = np.mean([-sum(p * np.log2(p) for p in probs[i, : i + 1] if p > 0) for i in rows])
    distance = np.mean([sum(probs[i, j] * (i - j) for j in range(i + 1)) for i in rows])
    return {"previous": previous, "first": first, "self": itself, "entropy_bits": entropy, "mean_distance": distance}


def test_each_score_is_the_mean_over_texts_of_a_hand_computation_and_its_spread_their_deviation(lm):
    result = head_finder.measure(lm, TEXTS, "two texts", repeated=2)
    heads = by_name(result)
    # the weights as the finder reads them (head_finder.per_text's trace): the same path on the same ids, bit for bit
    traces = [lm.trace(text, predictions=False, scores=False).attention["self"].probs for text in TEXTS]
    t = max(probs.shape[-1] for probs in traces)
    for layer, head in ((0, 3), (2, 0), (3, 2)):  # L1 H4, L3 H1, L4 H3
        per_text = [hand_scores(probs[layer, head].astype(np.float64)) for probs in traces]
        measured = heads[f"L{layer + 1} H{head + 1}"]
        for score in per_text[0]:
            values = [p[score] for p in per_text]
            # the finder's per-text number is a float32 mean or sum of at most t x t non-negative float32 terms (one
            # libm log2 in each of the entropy's, within LIBM_ULPS x 2^-24 of it): within (t·t + LIBM_ULPS + 1) x
            # 2^-24 of itself (the hand's float64: 2^-53 each), the mean and spread over texts no more; the JSON
            # rounds them to 4 decimals (half of 1e-4)
            allowed = 0.5e-4 + (t * t + tolerances.LIBM_ULPS + 1) * (tolerances.EPS32 + tolerances.EPS64) / 2 * \
                max(abs(v) for v in values)
            assert measured[score] == pytest.approx(np.mean(values), abs=allowed, rel=0), score
            assert measured["spread"][score] == pytest.approx(np.std(values), abs=allowed, rel=0), score
    assert result["corpus"] == {"name": "two texts", "texts": 2, "tokens": sum(len(lm.encode(t).ids) for t in TEXTS),
                                "sha256": result["corpus"]["sha256"]}


def test_induction_is_the_weight_on_the_word_after_the_first_occurrence_on_random_words_said_twice(lm):
    scores, text = head_finder.repeated_induction(lm, n=2)
    ids = copying.repeated_ids(lm, 2, head_finder.REPEATED_WORDS, 0)  # <s>, 20 words, the same 20 words
    words = head_finder.REPEATED_WORDS
    assert text.split()[:words] == text.split()[words:]  # the example text: the words said twice
    for n, row in enumerate(ids):
        # the weights as repeated_induction reads them: the same path on the same ids, bit for bit
        probs = lm.trace_ids(row.tolist(), predictions=False, scores=False).attention["self"].probs
        # the k-th word of the second copy (position 1 + words + k) looks at the word after its first occurrence
        picked = [probs[2, 0, 1 + words + k, 2 + k] for k in range(words)]
        hand = np.mean(picked, axis=0)
        # two float32 means of the same `words` weights, each sum in its own order, each division rounded once
        allowed = tolerances.summed(words, np.sum(picked, dtype=np.float64)) / words + tolerances.EPS32 * hand
        assert scores[n, 2, 0] == pytest.approx(hand, abs=allowed, rel=0)


def test_scores_without_meaning_are_left_out_and_say_why():
    mlm = api.load("mlm", device="cpu")
    result = head_finder.measure(mlm, TEXTS[:1], "one text")
    assert all(h["induction"] is None and "induction" not in h["spread"] for h in result["heads"])
    assert all(h["previous"] is not None for h in result["heads"])
    assert "bidirectional" in result["not_applicable"]["self"]["induction"]
    assert result["repeated"] is None
    dates = api.load("dates", device="cpu")
    result = head_finder.measure(dates, ["the 3rd of May, 1999"], "one date")
    cross = [h for h in result["heads"] if h["kind"] == "cross"]
    assert cross and all(h["previous"] is None and h["self"] is None and h["mean_distance"] is None
                         and h["first"] is not None for h in cross)
    assert {h["kind"] for h in result["heads"]} == {"encoder", "decoder", "cross"}
    assert all(h["induction"] is None for h in result["heads"])


@pytest.mark.parametrize("name", api.SHIPPED + api.PRETRAINED)
def test_the_shipped_scores_are_recomputed_from_their_first_texts(name, request):
    path = precomputed_path(name)
    data = json.loads(path.read_text())
    loaded = request.getfixturevalue("smollm2") if name == "smollm2" else api.load(name, device="cpu")
    texts, corpus_name = texts_for(name)
    assert data["corpus"]["name"] == corpus_name and data["corpus"]["texts"] == len(texts)
    # the file was written on another machine, perhaps another processor whose kernels round otherwise: within 3x this
    # one's float32 rounding of each number, measured against the same numbers from loaded's float64 copy (its own,
    # freed on return: tolerances.in_float64 would keep smollm2's 1 GB for the session), plus the file's rounding to
    # 5 decimals (half of 1e-5)
    double = dataclasses.replace(loaded, model=copy.deepcopy(loaded.model).double())
    for i, text in enumerate(texts[: head_finder.SAMPLE_TEXTS]):
        (numbers, _), (exact, _) = head_finder.per_text(loaded, text), head_finder.per_text(double, text)
        for kind, scores in numbers.items():
            for score, values in scores.items():
                seen = np.isfinite(values)  # NaN where a score does not apply (a row with too few keys)
                stored = np.asarray(data["sample"][kind][score][i], dtype=float)
                np.testing.assert_array_equal(np.isfinite(stored), seen, err_msg=f"{name} {kind} {score} text {i}")
                allowed = tolerances.beside_oracle(values[seen], values[seen], exact[kind][score][seen]) + 0.5e-5
                tolerances.assert_within(values[seen], stored[seen], allowed, f"{name} {kind} {score} text {i}")
    if name == "smollm2":
        assert data["corpus"]["texts"] >= 100


def test_the_corpus_is_shipped_small_and_stated():
    texts = head_finder.read_corpus()
    assert len(texts) == 300 and head_finder.CORPUS.stat().st_size <= 100_000
    assert all(6 <= len(t.split()) <= 30 for t in texts)
