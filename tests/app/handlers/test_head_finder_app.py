"""The Head finder tab's handlers called directly, and Every head's table against the corpus."""
from __future__ import annotations

import numpy as np
import pytest

from headfinder.compare import corpus_note, disagreements
from headfinder.store import finder_for
from model.inputs import InputError
from ui.page.outputs import Change
from ui.tabs import attention
from ui.tabs.head_finder import RANKED, finder_view, head_finder_api, open_head, ranking


def test_the_view_draws_every_head_coloured_by_layer_and_ranks_ten(registry):
    about, fig, table, picker, timer = finder_view(registry, "smollm2", "previous", "induction", "induction", False)
    points = fig.data[0]
    assert len(points.x) == 270 and list(points.customdata[:2]) == ["L1 H1", "L1 H2"]
    assert np.asarray(points.marker.color).max() == 30  # coloured by layer, 1..30
    assert "smollm2" in about and "300 texts" in about and "head_corpus.txt" in about
    assert table["headers"][:2] == ["rank", "head"] and len(table["data"]) == RANKED
    assert table["data"][0][:2] == [1, "L19 H7"]
    assert picker["choices"][0][1] == "L19 H7" and timer == Change(active=False)
    assert list(fig.data[1].customdata)[0] == "L19 H7" and list(fig.data[1].text) == ["1", "2", "3", "4", "5"]


def test_a_score_without_meaning_is_said_not_drawn_as_zero(registry):
    about, fig, table, _, _ = finder_view(registry, "mlm", "previous", "induction", "first", False)
    assert len(fig.data[0].x) == 0  # no head has an induction score
    assert "induction* is left out" in about and "bidirectional" in about
    with pytest.raises(InputError, match="no induction score"):
        head_finder_api(registry)(model="mlm", score="induction")


def test_a_head_opens_in_every_head_on_the_text_that_shows_its_score(registry):
    scores = finder_for(registry).scores("lm")
    text, layer, head, kind, tab, current = open_head(registry, "lm", "L3 H1 #2", "induction")
    assert (layer, head, tab, current) == (3, 1, Change(selected="attention"), "attention")
    assert text == scores.data["repeated"]["text"]  # random words said twice
    words = text.split()
    assert words[: len(words) // 2] == words[len(words) // 2:]
    text, layer, head, *_ = open_head(registry, "lm", "L1 H4", "previous")
    assert (layer, head) == (1, 4) and text in finder_for(registry).scores("lm").data["examples"]
    # on that text L1 H4 is at its most previous-token: the table of the sentence says so
    columns = attention.stats_table(registry, "lm", text, None)
    assert columns["previous"][3] >= 0.95
    text, layer, head, kind, *_ = open_head(registry, "dates", "cross L1 H2", "first")
    assert (layer, head, kind) == (1, 2, "cross")


def test_ranking_lists_mean_and_spread(registry):
    columns = ranking(finder_for(registry).scores("lm"), "previous", limit=3)
    assert columns["head"][0] == "L1 H4" and columns["previous-token"][0] > 0.9
    assert 0 <= columns["± spread (sd over texts)"][0] < 0.1


def test_every_head_table_says_where_one_sentence_disagrees_with_the_corpus(registry):
    scores = finder_for(registry).scores("lm")
    # nothing repeats: L3 H1, an induction head over the corpus, cannot act as one
    columns = attention.stats_table(registry, "lm", "The cat sat on a mat.", None)
    said = disagreements(scores, columns)
    assert any("nothing repeats, so L3 H1 cannot act as an induction head" in s for s in said)
    # said twice, it does: no sentence says it is not one
    repeated = scores.data["repeated"]["text"]
    columns = attention.stats_table(registry, "lm", repeated, None)
    assert not any("L3 H1" in s and "induction" in s for s in disagreements(scores, columns, limit=50))
    note = corpus_note(scores, columns)
    assert "head_corpus.txt, 300 texts" in note


@pytest.mark.parametrize("model, claim, holds, value", [
    ("smollm2", "head L19 H7 ranks 1 for induction", True, 1),
    ("lm", "head L3 H1 ranks 1 for induction", True, 1),
    ("lm", "head L1 H4 ranks 1 for previous", True, 1),
    ("lm", "head L3 H4 ranks 1 for induction", False, 2),
    ("mlm", "head L1 H1 ranks 1 for induction", False, None)])
def test_a_lesson_claims_a_heads_rank_over_the_corpus(registry, model, claim, holds, value):
    from analysis.lessons import parse_claim
    from ui.lessons import claims
    from ui.page.links import ViewSettings

    settings = ViewSettings("The cat sat.", model, 1, 1, "self", False, "head_finder", False)
    result = claims.check(registry, settings, parse_claim(claim), None)
    assert result["holds"] is holds and result["value"] == value
