"""Interventions on the shipped models: ablation through the one forward pass, head importance,
gradient × input."""
import copy
import dataclasses

import numpy as np
import pytest
import torch

from model import api
from experiments import interventions
from experiments.interventions import change, compare, gradient_times_input, head_importance, outcome
from model import tokenizer as tok
from model.switches import Switches
from tests import tolerances

DATES_KINDS = {"encoder": (2, 4), "decoder": (2, 4), "cross": (2, 4)}
EVERY_CROSS_HEAD = frozenset(("cross", layer, head) for layer in range(2) for head in range(4))


@pytest.fixture(scope="module")
def models(model_assets):
    return {name: api.load_from(model_assets / name, name, device="cpu") for name in ("lm", "mlm", "dates")}


@pytest.mark.parametrize("name,text", [("lm", "The cat sat on the"), ("mlm", "The cat sat on the <mask>."),
                                       ("dates", "3 March 1999")])
def test_ablating_nothing_changes_nothing(models, name, text):
    before, after = compare(models[name], text, Switches())
    assert after.text == before.text and change(before, after) == 0.0  # the plain outcome again, not rerun


@pytest.mark.parametrize("name,text", [("lm", "The cat sat on the"), ("mlm", "The cat sat on the <mask>."),
                                       ("dates", "3 March 1999")])
@pytest.mark.parametrize("method", ["zero", "uniform"])
def test_knocking_out_no_head_gives_the_plain_run_without_running_the_model_again(models, name, text, method,
                                                                                   monkeypatch):
    """compare() skips the second run when the switches change nothing: what it gives is what that run gives."""
    loaded = models[name]
    ran = outcome(loaded, text, Switches(method=method), reference=outcome(loaded, text))
    before = outcome(loaded, text)
    calls = []
    monkeypatch.setattr(interventions, "outcome", lambda *a, **k: calls.append(a) or outcome(*a, **k))
    same, after = compare(loaded, text, Switches(method=method), before)
    assert calls == [] and same is before
    assert (after.text, after.score, after.top, after.reference) == (ran.text, ran.score, ran.top, ran.reference)
    assert interventions.changes_nothing(Switches(method=method))
    assert not interventions.changes_nothing(Switches(ablate={("self", 0, 0)}))
    assert not interventions.changes_nothing(Switches(positions=False))


def test_dates_before_is_the_translation(models):
    before = outcome(models["dates"], "3 March 1999")
    assert before.text == models["dates"].translate("3 March 1999")


def test_without_cross_attention_the_output_no_longer_depends_on_the_input(models):
    """Every cross-attention head knocked out: the decoder cannot read the source at all."""
    dates = models["dates"]
    outputs = {outcome(dates, text, Switches(ablate=EVERY_CROSS_HEAD)).text
               for text in ("3 March 1999", "Saturday, 21st of November 2026", "12/25/2001", "1.1.1900")}
    assert len(outputs) == 1
    assert outputs != {dates.translate("3 March 1999")}


def test_importance_agrees_with_ablating_each_head(models):
    """The head at the top of the importance map is the one whose removal, ablated on its own, hurts most."""
    dates = models["dates"]
    text = "21 November 2026"
    maps = head_importance(dates, text, DATES_KINDS)
    before = outcome(dates, text)
    measured = {(kind, layer, head): change(before, outcome(dates, text, Switches(ablate={(kind, layer, head)}), before))
                for kind, (layers, heads) in DATES_KINDS.items() for layer in range(layers) for head in range(heads)}
    top = max(measured, key=measured.get)
    kind, layer, head = top
    # the map runs this very outcome() per head (encoder-decoder): the same number, kept in float32 (one rounding)
    assert maps[kind][layer, head] == pytest.approx(measured[top], rel=tolerances.EPS32 / 2, abs=0)
    assert maps[kind][layer, head] == max(float(m.max()) for m in maps.values())


def test_uniform_ablation_is_a_different_experiment_from_zeroing(models):
    lm = models["lm"]
    zero = outcome(lm, "The cat sat on the", Switches(ablate={("self", 0, 0)}, method="zero"))
    uniform = outcome(lm, "The cat sat on the", Switches(ablate={("self", 0, 0)}, method="uniform"))
    assert zero.score != pytest.approx(uniform.score)


def test_the_masked_model_needs_a_mask(models):
    with pytest.raises(ValueError, match="<mask>"):
        outcome(models["mlm"], "The cat sat on the mat")


def test_gradient_times_input_on_a_linear_toy_gives_the_known_gradient():
    """score = Σ w·x: the gradient is w, so the attribution of token t is Σ_k w_k x_tk."""
    x = torch.randn(1, 4, 3, generator=torch.Generator().manual_seed(0), requires_grad=True)
    inputs = x * 1.0  # a tensor inside the graph, as the model's recorded embeddings are
    w = torch.tensor([0.5, -2.0, 1.0])
    attribution = gradient_times_input((inputs * w).sum(), inputs)
    # the gradient is w exactly; both sum the same 3 float32 products, each in its own order
    expected = (x.detach() * w).sum(-1).numpy()
    tolerances.assert_within(attribution, expected, tolerances.summed(3, (x.detach() * w).abs().sum(-1).numpy()))


def test_attribution_has_one_value_per_input_token(models):
    for name, text in (("lm", "The cat sat on the"), ("mlm", "The cat <mask> on the mat"), ("dates", "3 March 1999")):
        loaded = models[name]
        values = interventions.attribution(loaded, text)
        assert values.shape == (len(loaded.encode(text).ids),) and np.isfinite(values).all()
        assert np.abs(values).sum() > 0


@pytest.mark.parametrize("name,text,row", [("lm", "The cat sat on the", None), ("mlm", "The cat <mask> on the mat", None),
                                           ("dates", "3 March 1999", 5)])
def test_explained_is_the_outcome_and_its_attribution(models, name, text, row):
    loaded = models[name]
    plain, grads = interventions.explained(loaded, text, row)
    reference = outcome(loaded, text)
    assert (plain.text, plain.score, plain.reference) == (reference.text, reference.score, reference.reference)
    # explained() calls attribution() itself, on the same inputs: the same numbers, bit for bit
    np.testing.assert_array_equal(grads, interventions.attribution(loaded, text, reference, row))


@pytest.mark.parametrize("name,text", [("lm", "The cat sat on the"), ("mlm", "The cat sat on the <mask>.")])
@pytest.mark.parametrize("method", ["zero", "uniform"])
def test_batched_importance_equals_one_pass_per_head(models, name, text, method):
    """Each head knocked out in its own batch row gives the numbers of one forward pass per head."""
    loaded = models[name]
    maps = head_importance(loaded, text, {"self": (4, 4)}, method)
    assert_one_pass_per_head(loaded, text, maps["self"], [(0, 0), (1, 3), (3, 2)], method)


def assert_one_pass_per_head(loaded, text, importance, heads, method="zero"):
    """importance (L, H) at `heads` against one whole pass per head. The batch runs the same layers on the same
    inputs in another grouping: within 3x the float32 rounding the passes per head make, measured against the same
    passes by loaded's float64 copy, plus a spacing of each of the two float32 log-probabilities a change subtracts
    (tests/tolerances.py)."""
    # its own float64 copy, freed on return (tolerances.in_float64 would keep smollm2's 1 GB for the session)
    double = dataclasses.replace(loaded, model=copy.deepcopy(loaded.model).double())
    before, exact_before = outcome(loaded, text), outcome(double, text)
    alone, exact = [], []
    for layer, head in heads:
        switches = Switches(ablate={("self", layer, head)}, method=method)
        alone.append(change(before, outcome(loaded, text, switches, before, describe=False)))
        exact.append(change(exact_before, outcome(double, text, switches, exact_before, describe=False)))
    batched = np.array([importance[cell] for cell in heads])
    allowed = tolerances.beside_oracle(batched, alone, exact) + 2 * tolerances.spacing32(before.score)
    tolerances.assert_within(batched, alone, allowed, f"heads {heads}")


def test_rows_and_a_shared_knock_out_do_not_mix():
    with pytest.raises(ValueError, match="not both"):
        Switches(ablate={("self", 0, 0)}, rows=(("self", 0, 1),))
    assert Switches(rows=(("self", 1, 2), ("self", 0, 3))).heads_off("self", 1) == ((0, 2),)


def test_importance_of_270_heads_equals_one_pass_per_head(smollm2):
    """smollm2's 30 layers × 9 heads: each layer's rows start from the plain residual stream entering that layer and
    read out one position; the numbers are those of a whole forward pass per knocked-out head."""
    text = "The capital of France is"
    maps = head_importance(smollm2, text, {"self": (30, 9)})
    assert maps["self"].shape == (30, 9) and np.isfinite(maps["self"]).all()
    assert_one_pass_per_head(smollm2, text, maps["self"], [(0, 0), (0, 8), (14, 4), (28, 3), (29, 8)])


def test_the_plain_output_reads_its_score_from_its_continuations_first_step(models):
    """A causal model's plain output runs its prompt once: the score and the guesses are the continuation's first
    step's (generate(first=...)), within 3x a separate forward pass's own float32 rounding (its float64 run)."""
    loaded, text = models["lm"], "The cat sat on the"
    first = []
    continuation = loaded.generate(text, 8, first=first)
    plain = outcome(loaded, text)
    assert plain.text.endswith(" → " + continuation) and len(first) == 1
    assert plain.score == float(first[0][plain.reference[0]])

    def separate(loaded):
        logits, _ = interventions.read_logits(loaded, interventions._ids(loaded, text), -1)
        return torch.log_softmax(loaded._no_specials(logits, keep=(tok.EOS,)), -1).detach().numpy()

    ours, exact = separate(loaded), separate(dataclasses.replace(loaded, model=tolerances.in_float64(loaded.model)))
    assert int(ours.argmax()) == plain.reference[0]
    read = np.isfinite(ours)  # the special tokens are -inf in both
    assert np.array_equal(read, np.isfinite(first[0].numpy()))
    tolerances.assert_within(first[0].numpy()[read], ours[read],
                             tolerances.beside_oracle(ours[read], ours[read], exact[read]))
