import numpy as np
import pytest

from analysis import induction
from experiments import copying  # the inputs: random words repeated


def _pattern(ids, key_of) -> np.ndarray:
    """(1, 1, t, t) attention putting all of row i's weight on key_of(i) (or on itself if None)."""
    t = len(ids)
    probs = np.zeros((1, 1, t, t))
    for i in range(t):
        k = key_of(i)
        probs[0, 0, i, i if k is None else k] = 1.0
    return probs


def test_induction_pairs_point_after_the_earlier_occurrence():
    ids = [1, 10, 11, 12, 10, 11, 12]  # <s> a b c a b c
    queries, keys = induction.induction_pairs(ids)
    assert queries.tolist() == [4, 5, 6]
    assert keys.tolist() == [2, 3, 4]  # a -> b (pos 2), b -> c (pos 3), c -> the second a (pos 4)


def test_adjacent_repeats_are_not_counted():
    # the key would be the query itself or the token just before it
    assert induction.induction_pairs([5, 7, 7, 7])[0].size == 0
    assert induction.induction_pairs([5, 7, 8, 7])[0].size == 0
    assert induction.induction_pairs([5, 7, 8, 9, 7])[0].tolist() == [4]


def test_perfect_induction_pattern_scores_one_and_previous_token_pattern_scores_zero():
    ids = copying.repeated_sequences(np.arange(100, 200), n=1, length=12, seed=3, bos=1)[0]
    queries, keys = induction.induction_pairs(ids)
    target = dict(zip(queries.tolist(), keys.tolist()))
    perfect = _pattern(ids, lambda i: target.get(i, max(i - 1, 0)))
    previous = _pattern(ids, lambda i: max(i - 1, 0))
    assert induction.induction_scores(perfect, ids)[0, 0] == pytest.approx(1.0)
    assert induction.induction_scores(previous, ids)[0, 0] == pytest.approx(0.0)
    assert induction.previous_token_scores(previous)[0, 0] == pytest.approx(1.0)
    assert induction.previous_token_scores(perfect)[0, 0] < 0.6  # only the first copy looks back one


def test_no_repeats_gives_nan_and_wrong_lengths_are_refused():
    probs = np.full((2, 3, 4, 4), 0.25)
    assert np.isnan(induction.induction_scores(probs, [1, 2, 3, 4])).all()
    with pytest.raises(ValueError, match="ids for attention"):
        induction.induction_scores(probs, [1, 2, 1])


def test_random_repeated_sequences_are_deterministic_and_repeat_distinct_words():
    words = np.arange(50, 90)
    a = copying.repeated_sequences(words, n=3, length=8, seed=7, bos=1)
    b = copying.repeated_sequences(words, n=3, length=8, seed=7, bos=1)
    c = copying.repeated_sequences(words, n=3, length=8, seed=8, bos=1)
    assert a.shape == (3, 17) and (a == b).all() and not (a == c).all()
    assert (a[:, 0] == 1).all() and (a[:, 1:9] == a[:, 9:]).all()
    assert all(len(set(row[1:9].tolist())) == 8 and set(row[1:].tolist()) <= set(words.tolist()) for row in a)


def test_whole_words_skip_fragments_specials_and_subwords():
    vocab = {"<s>": 1, "Ġcat": 5, "Ġdog": 6, "cat": 7, "Ġa": 8, "ĠThe": 9, "Ġhouse": 10}
    assert copying.whole_word_ids(vocab).tolist() == [5, 6, 10]
    assert induction.common_words(["the cat sat", "a cat, a house", "cats"], vocab, min_count=1) == ["cat", "house"]


def test_copy_losses_compare_words_two_onwards_of_each_copy():
    # <s> w1 w2 w3 w1 w2 w3: losses[i] predicts token i + 1
    losses = np.array([9.0, 5.0, 5.0, 9.0, 1.0, 1.0])
    assert induction.copy_losses(losses, length=3) == (5.0, 1.0)
    with pytest.raises(ValueError):
        induction.copy_losses(losses[:4], length=3)


def test_best_head_ignores_nan():
    layer, head, score = induction.best_head(np.array([[0.1, np.nan], [0.7, 0.2]]))
    assert (layer, head, score) == (1, 0, 0.7)


def test_head_stats_label_a_head_induction_only_when_the_sentence_repeats():
    from analysis.head_stats import head_stats

    ids = copying.repeated_sequences(np.arange(100, 200), n=1, length=10, seed=0, bos=1)[0]
    queries, keys = induction.induction_pairs(ids)
    target = dict(zip(queries.tolist(), keys.tolist()))
    probs = _pattern(ids, lambda i: target.get(i, 0))  # the first copy rests on <s>
    assert head_stats(probs, ids=ids).loc[0, "label"] == "induction"
    assert head_stats(probs, ids=ids).loc[0, "induction"] == 1.0
    unrepeated = head_stats(probs, ids=np.arange(len(ids)))
    assert np.isnan(unrepeated.loc[0, "induction"]) and unrepeated.loc[0, "label"] != "induction"
    assert np.isnan(head_stats(probs).loc[0, "induction"])
