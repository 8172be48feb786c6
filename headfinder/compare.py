"""One sentence against the corpus: where the single-sentence head table (analysis.head_stats) and the corpus
scores disagree about what a head does.

A head "acts as" a pattern when that pattern takes at least analysis.head_stats.CLEAR of its attention (the table's
own rule for a label). The corpus names a head for a pattern when its mean over the corpus does; the sentence
disagrees when the head falls below it there (or, for induction, when nothing in the sentence repeats), or when a
head the corpus does not name for it acts as it on this sentence.
"""
from __future__ import annotations

import math

from analysis.head_stats import CLEAR
from headfinder.store import Scores

PATTERNS = {"previous": "a previous-token head", "induction": "an induction head", "first": "a first-token sink",
            "self": "a self head"}
MOST = 4  # sentences said at most (the strongest disagreements first)


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def disagreements(scores: Scores, columns: dict[str, list], limit: int = MOST, kind: str = "self") -> list[str]:
    """Sentences for the head table: columns are analysis.head_stats.head_columns' (one value per head, head names
    'L1 H2') of one attention kind; heads the corpus has no score for are left alone. The largest gaps come first."""
    found = []
    for i, table_name in enumerate(columns["head"]):
        name = table_name if kind == "self" else f"{kind} {table_name}"  # the dates model's heads of each kind
        if name not in scores.names:
            continue
        corpus = scores.head(name)
        for score, pattern in PATTERNS.items():
            over_corpus, here = _number(corpus.get(score)), _number(columns[score][i])
            if over_corpus is None:
                continue
            if over_corpus >= CLEAR and here is None:
                if score == "induction":
                    found.append((over_corpus, f"On this sentence nothing repeats, so {name} cannot act as {pattern} "
                                               f"(over the corpus it is one: {over_corpus:.2f})."))
                continue
            if here is None:
                continue
            if over_corpus >= CLEAR > here:
                found.append((over_corpus - here, f"On this sentence, {name} is not acting as {pattern}: {here:.2f} "
                                                  f"here, {over_corpus:.2f} over the corpus."))
            elif here >= CLEAR > over_corpus:
                found.append((here - over_corpus, f"On this sentence, {name} acts as {pattern} ({here:.2f}), though "
                                                  f"over the corpus it is not ({over_corpus:.2f})."))
    found.sort(key=lambda item: -item[0])
    return [sentence for _, sentence in found[:limit]]


def corpus_note(scores: Scores, columns: dict[str, list], limit: int = MOST, kind: str = "self") -> str:
    """Markdown under the head table: the corpus's name and size, and the disagreements (or that there are none)."""
    corpus = scores.corpus
    said = disagreements(scores, columns, limit, kind)
    head = (f"**Against the corpus** ({corpus['name']}, {corpus['texts']} texts, {corpus['tokens']:,} tokens; the "
            "Head finder tab ranks every head): ")
    if not said:
        return head + "on this sentence every head does what it does over the corpus (no pattern crosses 0.5 here " \
                      "that does not cross it there, or the other way round)."
    return head + "\n\n" + "\n".join(f"- {s}" for s in said)
