"""minilm (a real pretrained BERT) in the app: listed by the registry, and every tab either works on it
or says plainly why it does not apply. Extra models come from the server's $ATTENTION_MODELS alone."""
from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from model import api
from ui.tabs import attention, learning, masking, multihead, positions, predictions, steps
from ui.page import lecture_examples
from model.registry import ModelRegistry
from tests.shuffle_bound import reordered_bound
from ui.page.labels import head_choices
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED

ANIMAL = "The animal didn't cross the street because it was too tired."


def _figures(result):
    return [x for x in result if isinstance(x, go.Figure)]


def test_minilm_is_listed_after_the_trained_models(registry):
    assert registry.names == (*api.SHIPPED, "minilm", "smollm2")
    assert registry.get("minilm").pretrained and registry.shape("minilm") == (6, 12)
    assert registry.kinds("minilm") == ("self",)


def test_analyze_on_minilm(registry):
    note, tokens, grid, average, columns, _ = attention.analyze(registry, ANIMAL, "minilm")
    frame = pd.DataFrame(columns)
    names = head_choices(registry, "minilm")
    assert note == ""
    assert [t for t, _ in tokens][:3] == ["[CLS]", "the", "animal"] and tokens[-1][0] == "[SEP]"
    assert len(names) == 72 and names[-1] == "L6 H12"
    assert isinstance(grid, go.Figure) and isinstance(average, go.Figure)
    labels = dict(zip(frame["head"], frame["label"]))
    assert labels["L1 H3"] == "previous-token"  # measured: all of its attention on the token before
    assert "[CLS]/[SEP] sink" in labels.values() and "broad" in labels.values()
    assert frame.loc[frame["head"] == "L1 H3", "previous"].item() > 0.95
    sink = frame[frame["label"] == "[CLS]/[SEP] sink"]
    assert (sink["special"] >= 0.5).all()


def test_wordpiece_pieces_and_specials_are_readable(registry):
    _, tokens, *_ = attention.analyze(registry, "Tokenization splits words", "minilm")
    assert [t for t, _ in tokens] == ["[CLS]", "token", "##ization", "splits", "words", "[SEP]"]
    detail = attention.show_head(registry, "Tokenization splits words", "minilm", 4, 2)
    assert list(detail.layout.xaxis.ticktext)[:3] == ["[CLS]", "token", "##ization"]
    with pytest.raises(InputError, match="between 1 and 6"):
        attention.show_head(registry, ANIMAL, "minilm", 7, 1)


def test_text_minilm_reads_as_nothing_is_refused_plainly(registry):
    with pytest.raises(InputError, match="no tokens"):
        registry.trace("minilm", "\ue000\U0010fffd")  # its normaliser drops private-use characters
    assert registry.trace("lm", "\ue000\U0010fffd").tokens  # read as bytes by ours


def test_predictions_say_plainly_there_are_none(registry):
    text = predictions.predictions(registry, "minilm", "The cat sat on the [MASK].")
    assert "no word-prediction head" in text and "|" not in text  # no table of invented guesses


def test_the_animal_example_opens_on_the_measured_head(registry):
    assert (ANIMAL, "minilm") in [tuple(e) for e in lecture_examples.EXAMPLES]
    layer, head, weight, source, target = lecture_examples.linked_head(registry, "minilm", ANIMAL)
    assert (layer, head, source, target) == (4, 2, "it", "animal") and weight == pytest.approx(0.68, abs=0.01)
    att = registry.attention("minilm", ANIMAL)
    assert weight == pytest.approx(att.probs[3, 1, att.queries.index("it"), att.queries.index("animal")])
    assert lecture_examples.linked_head(registry, "minilm", "The cat sat") is None
    assert lecture_examples.previous_token_head(registry, "minilm") == (1, 3)  # measured on its first example


def test_steps_multihead_and_positions_work_on_minilm(registry):
    caption, *figures = steps.view(registry, ANIMAL, "minilm", 4, 2, None, False, 0.0, True)
    assert len(_figures(figures)) == 4 and "Temperature 1" in caption
    heads, sizes, table = multihead.view(registry, ANIMAL, "minilm", 4, None, False)
    assert isinstance(heads, go.Figure) and "k = 384" in sizes and "h = 12" in sizes
    tables, waves, similar, added = positions.view(registry, ANIMAL, "minilm", "0, 1, 6", False)
    names = [a.text for a in tables.layout.annotations]
    assert any("learned (minilm, pretrained)" in n for n in names)
    own = registry.get("minilm").model.embed.positions.embedding.weight[:3].detach().numpy()
    from model.positions import position_table
    kind, table = position_table(registry.get("minilm"), 3)
    assert kind == "learned" and np.array_equal(table, own)
    summary, plain, positioned, seed = positions.shuffle_view(registry, ANIMAL, "minilm", 2, 0, False)
    assert "differ" in summary and seed == 0
    from experiments.order import order_demo
    demo = order_demo(registry.get("minilm"), ANIMAL, seed=3, head=2)
    assert demo.shuffled_tokens[0] == "[CLS]" and demo.shuffled_tokens[-1] == "[SEP]"  # specials stay put
    assert demo.shuffled_tokens != demo.tokens  # no positions: a permutation, up to rounding as derived
    assert demo.plain_difference <= reordered_bound(registry.get("minilm"), ANIMAL, head=2).max()


def test_tabs_that_do_not_apply_say_why(registry):
    # in the tab itself, once in words, and no figure: a refusal left the last model's figures under it
    summary, *figures, slider = learning.view(registry, learning.SnapshotTraces(registry), ANIMAL, "minilm", 1, 1,
                                              None, 1, False)
    assert re.search("does not apply to minilm.*pretrained", summary) and "lm, mlm or dates" in summary
    assert figures == [None, None, None], "said once, in words: no empty figures repeating it"
    assert slider == UNCHANGED, "the slider stays where it was (back on lm, the same snapshot)"
    explanation = " ".join(masking.EXPLANATION.split())
    assert "minilm" in explanation and "lm and mlm, whichever model is chosen" in explanation


def test_ablation_through_the_registry_model(registry):
    from model.switches import Switches

    loaded = registry.get("minilm")
    plain = loaded.trace(ANIMAL)
    off = loaded.trace(ANIMAL, switches=Switches(ablate=frozenset({("self", 3, 1)})))
    assert np.abs(off.attention["self"].probs[4:] - plain.attention["self"].probs[4:]).max() > 1e-4


# ---- extra models from the server's setting ------------------------------------------------------------
def _tiny_bert(folder):
    transformers = pytest.importorskip("transformers")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat"]
    tokenizer = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                             special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens(vocab[:5])
    folder.mkdir()
    tokenizer.save(str(folder / "tokenizer.json"))
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    transformers.BertForMaskedLM(config).save_pretrained(str(folder), safe_serialization=True)
    return folder


def test_extra_models_come_from_the_setting_alone(model_assets, tmp_path, monkeypatch):
    bert = _tiny_bert(tmp_path / "tiny-bert")
    broken = shutil.copytree(bert, tmp_path / "broken")
    (broken / "tokenizer.json").unlink()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ATTENTION_MODELS", f"tiny={bert}, broken={broken}, someone/remote-bert")
    registry = ModelRegistry.load(model_assets, device="cpu")
    assert registry.names == (*api.SHIPPED, "minilm", "smollm2", "tiny", "broken", "remote-bert")
    assert registry.available == [*api.SHIPPED, "minilm", "smollm2", "tiny"]
    assert "missing tokenizer.json" in registry.errors["broken"]
    assert "someone/remote-bert" in registry.errors["remote-bert"] and "HF_HUB_OFFLINE" in registry.errors["remote-bert"]
    out = attention.analyze(registry, "the cat sat on the mat", "tiny")
    assert [t for t, _ in out[1]] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]"]
    assert "mask" in predictions.predictions(registry, "tiny", "the cat [MASK] on the mat").lower()
    with pytest.raises(InputError, match="could not be loaded"):
        registry.trace("broken", "the cat")
    with pytest.raises(InputError, match="Unknown model"):
        registry.trace(str(bert), "the cat")  # a visitor can name a listed model, never a path


def test_a_name_taken_twice_is_reported(model_assets, tmp_path):
    bert = _tiny_bert(tmp_path / "tiny-bert")
    registry = ModelRegistry.load(model_assets, names=("lm",), device="cpu", extra={"lm": str(bert)})
    assert "Two models are named lm" in registry.errors["lm"]
    assert json.loads((bert / "config.json").read_text())["model_type"] == "bert"
