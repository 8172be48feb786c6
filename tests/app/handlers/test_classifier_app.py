"""The Classifier tab's handlers on the shipped weights (its /classify endpoint: tests/app/server/test_app_server.py)."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import pooling
from training.evaluate import CLASSIFIER_EXAMPLES
from ui.tabs import classifier
from model.registry import ModelRegistry
from ui.page.messages import MAX_CHARS, InputError
from tests import tolerances

@pytest.mark.parametrize("text,category", CLASSIFIER_EXAMPLES)
def test_the_lecture_examples_get_the_category_a_reader_would_give(registry, text, category):
    result = classifier.classify(registry, text)
    assert list(result)[0] == category, result
    assert len(result) == classifier.TOP_K
    # a float32 softmax row of every category sums to 1 within weights_sum; these are some of its weights
    categories = len(registry.get("classifier").config.labels)
    assert all(0 <= p <= 1 for p in result.values()) and sum(result.values()) <= 1 + tolerances.weights_sum(categories)
    assert list(result.values()) == sorted(result.values(), reverse=True)


@pytest.mark.parametrize("text,message", [
    ("", "Type a definition first"), ("   \n ", "Type a definition first"), (None, "Type a definition first"),
    (42, "must be a string"), (["a", "dog"], "must be a string"), ("x" * (MAX_CHARS + 1), "at most"),
])
def test_bad_input_gets_a_clear_message(registry, text, message):
    with pytest.raises(InputError, match=message):
        classifier.classify(registry, text)
    with pytest.raises(InputError, match=message):
        classifier.view(registry, text, False)


def test_view_shows_the_label_and_which_tokens_decide(registry):
    text = CLASSIFIER_EXAMPLES[0][0]
    summary, label, explain, contributions, pooled = classifier.view(registry, text, True)
    assert "noun.animal" in summary and list(label)[0] == "noun.animal"
    rows = list(explain.data[0].y)
    pooling_rows = 1 if registry.get("classifier").config.pooling == "cls" else 2  # [CLS]'s attention, or 2
    assert len(rows) == pooling_rows + 2  # + rollout + gradient × input
    z = np.asarray(explain.data[0].z)
    # every row: shares of the tokens, float64 |v| / sum cast to float32 (2^-24 of each share, so of their 1), summed
    # here in float64 (t terms and the division: t x 2^-53)
    np.testing.assert_allclose(z.astype(np.float64).sum(1), 1, rtol=0,
                               atol=tolerances.EPS32 / 2 + z.shape[1] * tolerances.EPS64)
    tokens = registry.get("classifier").encode(text).tokens
    assert z.shape[1] == len(tokens) == len(contributions.data[0].x)
    assert pooled.data[0].z.shape[0] == len(tokens) + 1  # the tokens' vectors and the pooled one


def test_the_contributions_add_up_to_the_score(registry):
    loaded = registry.get("classifier")
    decision = loaded.classification("a sweet yellow fruit with a thick skin")
    best = int(np.argmax(decision.probs))
    parts = pooling.score_contributions(decision.features, decision.weights[best], decision.pooling)
    logits = decision.weights @ decision.pooled + decision.bias
    # the same k products w_d p_d, summed two ways: float64 per token, each cast to float32 and the t parts summed in
    # float32 (t roundings of 2^-24 of sum |w_d p_d|), against a float32 k-term product (k roundings); each side
    # then adds the bias and rounds once
    total = float(np.abs(decision.weights[best]).astype(np.float64) @ np.abs(decision.pooled).astype(np.float64))
    t, k = len(parts), len(decision.pooled)
    allowed = (t + k) * tolerances.EPS32 / 2 * total + tolerances.EPS32 * (total + abs(float(decision.bias[best])))
    assert abs(float(parts.sum() + decision.bias[best]) - float(logits[best])) <= allowed
    # two float32 softmaxes (numpy's here, torch's in the model) of logits from two float32 products (numpy's and
    # torch's Linear: product's bound, plus the bias's rounding on each side)
    magnitude = np.abs(decision.weights).astype(np.float64) @ np.abs(decision.pooled).astype(np.float64)
    logits_error = tolerances.product(decision.weights, decision.pooled[:, None])[:, 0] \
        + tolerances.EPS32 * (magnitude + np.abs(decision.bias))
    tolerances.assert_within(np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum(), decision.probs,
                             tolerances.softmax_rows(logits_error, decision.probs))


def test_knocking_out_one_head_changes_the_label_of_a_torn_definition(registry):
    summaries = []
    for text in classifier.ABLATION_EXAMPLES:
        head = classifier.strongest_head(registry, text, "zero")
        summary, figure = classifier.ablate_view(registry, text, [head], "zero", False)
        assert [bar["name"] for bar in figure.data] == ["before", "after"]
        summaries.append(summary)
    assert any("changes the label" in s for s in summaries), summaries
    # a confident decision survives its strongest head
    text = CLASSIFIER_EXAMPLES[0][0]
    summary, _ = classifier.ablate_view(registry, text, [classifier.strongest_head(registry, text, "zero")], "zero",
                                        False)
    assert "keeps the label **noun.animal**" in summary


def test_ablation_input_is_checked(registry):
    text = CLASSIFIER_EXAMPLES[0][0]
    with pytest.raises(InputError, match="at least one head"):
        classifier.ablate_view(registry, text, [], "zero", False)
    with pytest.raises(InputError, match="does not exist"):
        classifier.ablate_view(registry, text, ["L9 H9"], "zero", False)
    with pytest.raises(InputError, match="how to knock"):
        classifier.ablate_view(registry, text, ["L1 H1"], "sideways", False)


def test_the_classifier_examples_above_the_tabs_are_checked_here_and_say_what_was_measured(registry):
    from ui.page import lecture_examples

    shown = [text for text, model in lecture_examples.EXAMPLES if model == "classifier"]
    expected = dict(CLASSIFIER_EXAMPLES)
    assert shown and set(shown) <= set(expected)
    for text in shown:
        claim = lecture_examples.example_claim(registry, text, "classifier", 1, 1)
        assert f"names it {expected[text]}" in claim, claim


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_the_views_of_every_pooling_variant(tmp_path, fixture_wordnet_dir, pooling):
    """The shipped model has one pooling; a tiny model of each other kind goes through the same views."""
    import shutil

    from model import api
    from training import train

    assets = tmp_path / "assets"
    train.train(f"tiny-classifier-{pooling}", out=assets / "classifier", tokenizer_path=api.ASSETS / "tokenizer.json",
                wordnet_dir=fixture_wordnet_dir, runs=tmp_path / "runs")
    shutil.copy(api.ASSETS / "tokenizer.json", assets / "tokenizer.json")
    tiny = ModelRegistry.load(assets, names=("classifier",), device="cpu")
    summary, label, explain, contributions, pooled = classifier.view(tiny, "a small cat that keeps the lamp", False)
    names = list(explain.data[0].y) if not hasattr(explain.layout.yaxis, "ticktext") else \
        list(explain.layout.yaxis.ticktext)
    if pooling == "cls":
        assert "[CLS] pooling" in summary and any("[CLS]" in str(n) for n in names), names
        assert np.count_nonzero(np.asarray(contributions.data[0].x)) == 1  # only [CLS]'s vector is read
    else:
        assert "mean pooling" in summary and any("share of the pooled vector" in str(n) for n in names), names
    assert len(label) == classifier.TOP_K
    summary, _ = classifier.ablate_view(tiny, "a small cat", ["L1 H2"], "uniform", False)
    assert "L1 H2" in summary
