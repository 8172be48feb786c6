"""The classifier's data: WordNet lines parsed into (definition, category), split by synset; a tiny
classifier trained on them end to end."""
import numpy as np
import pytest

from training import categories
from training.categories import LEXNAMES, Gloss, parse_line

ELEPHANT = ('02504458 05 n 02 elephant 0 pachyderm 0 001 @ 02503517 n 0000 | five-toed pachyderm; '
            '"the elephant raised its trunk" ; "an elephant" ')
RUN = "01926311 38 v 01 run 0 001 @ 01835496 v 0000 | move fast by using one's feet  "
SATELLITE = '00004296 00 s 01 abaxial 0 000 | facing away from the axis of an organ or organism; "the abaxial surface"  '


def test_a_data_line_gives_the_synset_its_category_definition_and_examples():
    g = parse_line(ELEPHANT)
    assert g == Gloss("n02504458", "elephant", "noun.animal", "five-toed pachyderm",
                      ("the elephant raised its trunk",))  # two-word examples are dropped
    assert parse_line(RUN).category == "verb.motion"
    assert parse_line(RUN).definition == "move fast by using one's feet"
    assert parse_line(SATELLITE).synset == "a00004296" and parse_line(SATELLITE).category == "adj.all"


def test_headers_and_malformed_lines_are_skipped():
    assert parse_line("  1 This software and database is being provided to you") is None
    assert parse_line("no bar here") is None
    assert parse_line("00001 99 n 01 x 0 000 | a lexicographer file that does not exist") is None
    assert parse_line('00001 05 n 01 x 0 000 | "only an example here"') is None


def test_the_45_categories_are_wordnets_list_in_order():
    assert len(LEXNAMES) == 45 and len(set(LEXNAMES)) == 45
    assert LEXNAMES[5] == "noun.animal" and LEXNAMES[38] == "verb.motion" and LEXNAMES[44] == "adj.ppl"


def test_split_is_by_synset_stable_and_disjoint(fixture_wordnet_dir):
    glosses = categories.read_glosses(fixture_wordnet_dir)
    train, validation = categories.split(glosses)
    assert train and validation
    assert not {g.synset for g in train} & {g.synset for g in validation}
    assert len(train) + len(validation) == len(glosses)
    assert categories.split(glosses) == (train, validation)
    # every example sentence goes with its synset: none of a held-out synset is trained on
    train_texts = {text for text, _ in categories.examples(train, with_sentences=True)}
    assert not any(e in train_texts for g in validation for e in g.examples)


def test_examples_pair_text_with_the_category_number():
    g = parse_line(ELEPHANT)
    assert categories.examples([g]) == [("five-toed pachyderm", 5)]
    assert categories.examples([g], with_sentences=True)[1] == ("the elephant raised its trunk", 5)
    assert categories.majority([g, g, parse_line(RUN)]) == ("noun.animal", 2 / 3)


@pytest.mark.parametrize("pooling", ["mean", "max", "cls"])
def test_a_tiny_classifier_trains_loads_classifies_and_evaluates(tmp_path, fixture_wordnet_dir, pooling):
    from model import api
    from training import evaluate, train

    out = tmp_path / "model"
    metrics = train.train(f"tiny-classifier-{pooling}", out=out, tokenizer_path=api.ASSETS / "tokenizer.json",
                          wordnet_dir=fixture_wordnet_dir, runs=tmp_path / "runs")
    assert metrics["steps"] == 6 and np.isfinite(metrics["final"]["val_loss"])
    loaded = api.load_from(out, "classifier")
    assert loaded.arch == "classifier" and loaded.config.pooling == pooling and loaded.config.labels == LEXNAMES
    top = loaded.classify("a small cat that keeps the lamp", 3)
    assert len(top) == 3 and [p for _, p in top] == sorted((p for _, p in top), reverse=True)
    trace = loaded.trace("a small cat that keeps the lamp")
    assert trace.attention["self"].probs.shape[:2] == (1, 2) and trace.predictions == [top[0][0]]
    train_glosses, val_glosses = categories.split(categories.read_glosses(fixture_wordnet_dir))
    result = evaluate.evaluate_classifier(loaded, val_glosses, train_glosses)
    assert result["majority_category"] == "noun.animal" and result["majority_accuracy"] == 1.0  # one category
    assert 0 <= result["top1_accuracy"] <= result["top3_accuracy"] <= 1
