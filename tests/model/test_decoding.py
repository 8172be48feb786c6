"""Greedy and beam search on hand-made step functions whose answers are known."""
import math

import pytest
import torch

from model.decoding import Hypothesis, beam_search, greedy
from tests import tolerances

START, END, A, B, X = 0, 1, 2, 3, 4
VOCAB = 5
EPS = 1e-4


def table_step(table: dict[tuple, dict[int, float]]):
    """A step function from a table: prefix -> {token: probability}; the rest share EPS."""
    def step(prefixes: torch.Tensor) -> torch.Tensor:
        rows = []
        for prefix in prefixes.tolist():
            probs = torch.full((VOCAB,), EPS)
            for token, p in table.get(tuple(prefix), {END: 1 - EPS * (VOCAB - 1)}).items():
                probs[token] = p
            rows.append((probs / probs.sum()).log())
        return torch.stack(rows)  # (b, v)
    return step


# A looks best first (0.6 > 0.4), but everything after A is uncertain, while B is
# almost surely followed by END: greedy ends with 0.6 · 0.4 = 0.24, beam finds 0.4 · 0.9 = 0.36.
TRAP = table_step({
    (START,): {A: 0.6, B: 0.4},
    (START, A): {END: 0.4, A: 0.3, X: 0.3},
    (START, B): {END: 0.9, X: 0.1},
})


def logp(step, prefix, token):
    return float(step(torch.tensor([prefix]))[0, token])


def score_of(step, start, hyp):
    """Sum of log-probabilities of the hypothesis' tokens (and END when finished), recomputed."""
    total, prefix = 0.0, list(start)
    for token in hyp.ids + ([END] if hyp.finished else []):
        total += logp(step, prefix, token)
        prefix.append(token)
    return total


def test_greedy_takes_the_locally_best_token_and_is_trapped():
    hyp = greedy(TRAP, [START], END, max_new=5)
    assert hyp.ids == [A]
    assert hyp.finished
    assert hyp.score == pytest.approx(math.log(0.6) + math.log(0.4), abs=1e-3)


def test_beam_search_finds_the_better_whole_output():
    hyps = beam_search(TRAP, [START], END, max_new=5, width=2)
    assert hyps[0].ids == [B] and hyps[0].finished
    assert hyps[0].score == pytest.approx(math.log(0.4) + math.log(0.9), abs=1e-3)
    assert hyps[0].score > greedy(TRAP, [START], END, max_new=5).score
    assert [h.ids for h in hyps] == [[B], [A]]


def test_beam_scores_are_sorted_and_are_the_sum_of_log_probabilities():
    hyps = beam_search(TRAP, [START], END, max_new=5, width=3)
    assert len(hyps) == 3
    scores = [h.score for h in hyps]
    assert scores == sorted(scores, reverse=True)
    for hyp in hyps:
        # the beam's float32 running sum against this float64 one of the same float32 log-probabilities: each of its
        # steps (the tokens and the end) rounds by half a spacing of the total at most; doubled for a binade's edge
        expected, steps = score_of(TRAP, [START], hyp), len(hyp.ids) + hyp.finished
        assert hyp.score == pytest.approx(expected, abs=steps * float(tolerances.spacing32(expected)), rel=0)


def random_step(seed: int, vocab: int = 6, end_bias: float = 0.0):
    """A fixed random distribution for every prefix (seeded by the prefix itself)."""
    def step(prefixes: torch.Tensor) -> torch.Tensor:
        rows = []
        for prefix in prefixes.tolist():
            gen = torch.Generator().manual_seed(hash((seed, *prefix)) % (2**31))
            logits = torch.randn(vocab, generator=gen) * 2
            logits[END] += end_bias
            rows.append(torch.log_softmax(logits, -1))
        return torch.stack(rows)
    return step


@pytest.mark.parametrize("seed", range(8))
def test_width_one_beam_equals_greedy(seed):
    step = random_step(seed, end_bias=-1.0)
    g = greedy(step, [START], END, max_new=6)
    [b] = beam_search(step, [START], END, max_new=6, width=1)
    assert b.ids == g.ids
    assert b.finished == g.finished
    # greedy sums its float32 log-probabilities in float64, the beam in a float32 tensor: each of its steps (6 tokens
    # and the end) rounds the running sum by half a spacing of the total at most; doubled for a binade's edge
    assert b.score == pytest.approx(g.score, abs=7 * float(tolerances.spacing32(g.score)), rel=0)


def test_width_one_beam_equals_greedy_on_the_trap():
    [b] = beam_search(TRAP, [START], END, max_new=5, width=1)
    g = greedy(TRAP, [START], END, max_new=5)
    assert (b.ids, b.finished) == (g.ids, g.finished)
    assert b.score == pytest.approx(g.score, abs=6 * float(tolerances.spacing32(g.score)), rel=0)  # as above, 6 steps


@pytest.mark.parametrize("seed", range(6))
def test_beam_hypotheses_are_sorted_distinct_and_scored_right(seed):
    step = random_step(seed, end_bias=0.5)
    hyps = beam_search(step, [START], END, max_new=5, width=4)
    assert 1 <= len(hyps) <= 4
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    assert len({(tuple(h.ids), h.finished) for h in hyps}) == len(hyps)
    for hyp in hyps:
        assert END not in hyp.ids
        expected, steps = score_of(step, [START], hyp), len(hyp.ids) + hyp.finished  # as in the test above
        assert hyp.score == pytest.approx(expected, abs=steps * float(tolerances.spacing32(expected)), rel=0)


def test_stops_after_max_new_tokens_unfinished():
    never_end = table_step({})  # default row ends; make one that never does instead
    def step(prefixes):
        out = never_end(prefixes).clone()
        out[:, END] = -50.0
        return out
    hyp = greedy(step, [START], END, max_new=3)
    assert len(hyp.ids) == 3 and not hyp.finished
    hyps = beam_search(step, [START], END, max_new=3, width=2)
    assert all(len(h.ids) == 3 and not h.finished for h in hyps)


def test_greedy_without_an_end_token_runs_to_max_new():
    hyp = greedy(TRAP, [START], None, max_new=4)
    assert len(hyp.ids) == 4 and not hyp.finished


def test_start_tokens_are_not_part_of_the_output():
    hyp = greedy(TRAP, [START], END, max_new=5)
    assert isinstance(hyp, Hypothesis) and START not in hyp.ids


@pytest.mark.parametrize("width", [0, -2])
def test_beam_width_must_be_positive(width):
    with pytest.raises(ValueError, match="beam width"):
        beam_search(TRAP, [START], END, max_new=3, width=width)


def test_exhaustive_search_agrees_with_a_wide_beam_on_a_small_space():
    """With a beam as wide as the vocabulary allows, beam search finds the true best output."""
    step = random_step(3, vocab=4, end_bias=0.5)
    best, best_score = None, -math.inf

    def walk(prefix, score, depth):
        nonlocal best, best_score
        row = step(torch.tensor([prefix]))[0]
        end_score = score + float(row[END])
        if end_score > best_score:
            best, best_score = prefix[1:], end_score
        if depth < 3:
            for token in range(4):
                if token != END:
                    walk(prefix + [token], score + float(row[token]), depth + 1)

    walk([START], 0.0, 0)
    top = [h for h in beam_search(step, [START], END, max_new=4, width=64) if h.finished][0]
    assert top.ids == best
    # the walk sums in float64, the beam in float32: half a spacing of the total for each of its 5 steps, doubled
    assert top.score == pytest.approx(best_score, abs=5 * float(tolerances.spacing32(best_score)), rel=0)


def test_no_repeat_ngram_stops_a_greedy_loop():
    """A step function that always prefers token (last + 1) mod 3 loops 0 1 2 0 1 2 ...;
    forbidding repeated bigrams must break every repeat, and the helper must name the culprits."""
    from model.decoding import repeated_ngram_tokens

    def step(prefix):
        logp = torch.full((prefix.size(0), 5), -5.0)
        logp[:, (int(prefix[0, -1]) + 1) % 3] = -0.1
        return torch.log_softmax(logp, -1)

    looping = greedy(step, [0], None, 8)
    assert looping.ids == [1, 2, 0, 1, 2, 0, 1, 2]
    fixed = greedy(step, [0], None, 8, no_repeat_ngram=2)
    seq = [0] + fixed.ids
    bigrams = list(zip(seq, seq[1:]))
    assert len(bigrams) == len(set(bigrams)), seq
    assert repeated_ngram_tokens([1, 2, 3, 1, 2], 3) == [3]
    assert repeated_ngram_tokens([1, 2], 3) == []
