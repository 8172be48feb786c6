"""The classifier's task: read a WordNet definition, name its lexicographer category.

Every synset line of WordNet's data files carries, in its second field, the number of the
lexicographer file it was written in (0..44): noun.animal, noun.artifact, verb.motion, ...
That number is the label; the gloss's definition is the text. The quoted example sentences
after the definition can serve as extra training text with the same label.

The split is by synset, with a stable hash of its part of speech and offset, so a held-out
definition (or any example sentence of its synset) is never seen in training.
"""
from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from training.corpus import INSTALL_HINT, WORDNET_DIR

# WordNet's fixed list of lexicographer files (lexnames(5WN)); the number in a data line indexes it.
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
    "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
    "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change", "verb.cognition",
    "verb.communication", "verb.competition", "verb.consumption", "verb.contact", "verb.creation",
    "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
VALIDATION_PERCENT = 10

_QUOTED = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class Gloss:
    """One synset: its id ("n03001627"), first word, category, definition and example sentences."""

    synset: str
    word: str
    category: str
    definition: str
    examples: tuple[str, ...] = ()


def parse_line(data_line: str) -> Gloss | None:
    """One line of a WordNet data file as a Gloss, or None for the licence header and malformed lines."""
    if data_line.startswith("  ") or "|" not in data_line:
        return None
    head, gloss = data_line.split("|", 1)
    fields = head.split()
    if len(fields) < 5 or not fields[1].isdigit() or int(fields[1]) >= len(LEXNAMES):
        return None
    offset, lexfile, pos = fields[0], int(fields[1]), fields[2]
    definition = gloss.split('"', 1)[0].strip(" ;\n")  # examples (and attributions) follow it
    if not definition:
        return None
    examples = tuple(e.strip() for e in _QUOTED.findall(gloss) if len(e.split()) >= 3)
    pos = "a" if pos == "s" else pos  # adjective satellites share the adjectives' offsets
    return Gloss(f"{pos}{offset}", fields[4].replace("_", " "), LEXNAMES[lexfile], definition, examples)


def read_glosses(wordnet_dir: Path = WORDNET_DIR) -> list[Gloss]:
    """Every synset with a definition, in file order (nouns, verbs, adjectives, adverbs)."""
    paths = [Path(wordnet_dir) / name for name in DATA_FILES if (Path(wordnet_dir) / name).is_file()]
    if not paths:
        raise FileNotFoundError(f"WordNet data not found in {wordnet_dir}. Install it with: {INSTALL_HINT}")
    glosses = []
    for path in paths:
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            g = parse_line(raw)
            if g is not None:
                glosses.append(g)
    return glosses


def is_validation(synset: str) -> bool:
    """A stable hash of the synset id decides: the split never changes between runs."""
    return zlib.crc32(synset.encode("utf-8")) % 100 < VALIDATION_PERCENT


def split(glosses: list[Gloss]) -> tuple[list[Gloss], list[Gloss]]:
    """(train, validation) by synset, deterministic and disjoint."""
    return ([g for g in glosses if not is_validation(g.synset)],
            [g for g in glosses if is_validation(g.synset)])


def examples(glosses: list[Gloss], with_sentences: bool = False) -> list[tuple[str, int]]:
    """(text, label index) pairs: each definition, plus its example sentences when asked."""
    index = {name: i for i, name in enumerate(LEXNAMES)}
    pairs = []
    for g in glosses:
        pairs.append((g.definition, index[g.category]))
        if with_sentences:
            pairs.extend((e, index[g.category]) for e in g.examples)
    return pairs


def majority(glosses: list[Gloss]) -> tuple[str, float]:
    """The most common category and its share: what a classifier that always says it would score."""
    counts = Counter(g.category for g in glosses)
    name, n = counts.most_common(1)[0]
    return name, n / max(len(glosses), 1)
