"""The head finder's store (headfinder/store.py): /head_finder's answer from the precomputed files, refusals with a
message, and a brought GGUF measured once in a worker process and then read from the cache folder by its hash."""
from __future__ import annotations

import pytest

from headfinder.store import KEYS, HeadFinder, cache_dir, CACHE_ENV
from model.inputs import InputError
from model.registry import ModelRegistry
from tests import gguf_files
from tests.llama_checkpoints import save_tiny


@pytest.fixture(scope="module")
def finder(registry):
    return HeadFinder(registry, sources={})


def test_the_answer_has_the_keys_the_issue_names_and_ranks_by_the_score(finder):
    answer = finder.answer(model="lm", score="induction")
    assert set(answer) >= {"model", "corpus", "heads", "ranked"} and answer["model"] == "lm"
    assert answer["corpus"] == {"name": "head_corpus.txt", "texts": 300, "tokens": answer["corpus"]["tokens"]}
    assert answer["corpus"]["tokens"] > 3000
    assert len(answer["heads"]) == 16 and all(set(KEYS) <= set(h) for h in answer["heads"])
    scores = {h["head"]: h["induction"] for h in answer["heads"]}
    assert answer["ranked"] == sorted(scores, key=lambda name: -scores[name])
    first = answer["heads"][0]
    assert (first["head"], first["layer"], first["index"]) == ("L1 H1", 1, 1)


def test_the_lecture_heads_rank_first_on_lm_over_the_corpus(finder):
    # the app names them from single texts (the Copying tab, the lm's training history); the corpus agrees
    assert finder.answer("lm", "induction")["ranked"][0] == "L3 H1"
    assert finder.answer("lm", "previous")["ranked"][0] == "L1 H4"
    lm = finder.scores("lm")
    assert lm.rank("L3 H4", "induction") == 2
    # docs/head_finder.md: over ordinary text the induction head rests on the first token
    assert lm.head("L3 H1")["induction"] == pytest.approx(0.54, abs=0.005) and lm.rank("L3 H1", "first") == 1
    assert lm.head("L3 H1")["first"] == pytest.approx(0.91, abs=0.005)
    assert lm.head("L1 H4")["previous"] == pytest.approx(0.99, abs=0.005)


def test_the_lecture_head_of_smollm2_ranks_as_measured(finder):
    scores = finder.scores("smollm2")
    assert scores.corpus["texts"] >= 100
    assert scores.rank("L19 H7", "induction") == 1
    # docs/head_finder.md's numbers
    assert scores.ranked("induction")[:4] == ["L19 H7", "L18 H5", "L18 H6", "L18 H4"]
    assert scores.head("L19 H7")["induction"] == pytest.approx(0.91, abs=0.005)
    assert scores.head("L19 H7")["first"] == pytest.approx(0.96, abs=0.005)
    assert scores.ranked("previous")[:3] == ["L17 H1", "L12 H2", "L2 H3"]
    assert len(scores.heads) == 270


@pytest.mark.parametrize("model, score, words", [
    ("nonsense", "induction", "Unknown model"), ("lm", "loudness", "Unknown score"),
    ("mlm", "induction", "bidirectional"), ("lm", ["induction"], "Unknown score")])
def test_an_unknown_model_or_score_is_refused_with_a_message(finder, model, score, words):
    with pytest.raises(InputError, match=words):
        finder.answer(model, score)


def test_every_shipped_model_answers(finder, registry):
    for name in registry.available:
        score = "first"
        answer = finder.answer(name, score)
        assert answer["ranked"] and len(answer["heads"]) >= len(answer["ranked"])


def test_a_brought_gguf_is_measured_once_in_a_worker_and_kept_by_its_hash(tmp_path, model_assets):
    folder = save_tiny("llama", tmp_path / "hf", num_key_value_heads=2)
    (tmp_path / "models").mkdir()
    weights = gguf_files.write(tmp_path / "models" / "tiny.gguf", folder, "llama")
    registry = ModelRegistry.load(model_assets, names=(), device="cpu", extra={"tiny": str(weights)})
    cache = tmp_path / "cache"
    finder = HeadFinder(registry, sources={"tiny": str(weights)}, cache=cache, texts=4)
    with pytest.raises(InputError, match="Measuring every head of tiny over 5 texts"):
        finder.answer("tiny", "induction")
    assert finder.status("tiny") == "computing"
    scores = finder.wait("tiny", timeout=300)
    assert finder.status("tiny") == "ready" and scores.corpus["texts"] == 4
    kept = list(cache.glob("*.json"))
    assert [p.stem for p in kept] == [finder._sha256(weights)]
    assert sorted(p.name for p in weights.parent.iterdir()) == ["tiny.gguf"]  # nothing beside the lecturer's file
    again = HeadFinder(registry, sources={"tiny": str(weights)}, cache=cache)
    assert again.status("tiny") == "ready"  # read from the cache: no second computation
    answer = again.answer("tiny", "induction")
    assert len(answer["heads"]) == 8 and len(answer["ranked"]) == 8


def test_the_cache_folder_is_a_setting(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert cache_dir() == tmp_path / "elsewhere"
