"""The head-importance map, knocked out or estimated (experiments/importance.py): which texts get the estimate,
that it ranks heads as the knock-outs do on short texts, and that the head it ranks first is measured for real."""
import copy
import dataclasses

import numpy as np
import pytest
import torch

from experiments import importance, interventions
from model import api
from model.block import RMSNorm
from model.switches import Switches
from tests import tolerances

# Short texts, where the knock-outs are cheap: the estimate is compared with them head by head.
TEXTS = {"lm": ["The cat sat on the mat and then it", "It is a good idea to",
                "Mary gave roses to Susan because she loves her", "the act of",
                "In the morning the children walked to school and"],
         "mlm": ["The cat sat on the <mask>.", "Mary gave roses to <mask> because she loves her",
                 "a small <mask> of water", "the act of <mask> something", "He drove his <mask> to work"],
         "minilm": ["The cat sat on the mat.", "Mary gave roses to Susan because she loves her",
                    "A dog is running in the park."]}


@pytest.fixture(scope="module")
def models(model_assets):
    return {**{name: api.load_from(model_assets / name, name, device="cpu") for name in ("lm", "mlm")},
            "minilm": api.load("minilm", device="cpu")}


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Rank correlation of two maps, cell by cell (no ties in float maps)."""
    ranks = [np.argsort(np.argsort(np.ravel(m))).astype(np.float64) for m in (a, b)]
    return float(np.corrcoef(*ranks)[0, 1])


def compared(loaded, text: str, method: str) -> tuple[float, bool]:
    """(Spearman, whether the top head agrees) of the estimate against the knock-outs."""
    layers, heads = loaded.config.n_layers, loaded.config.n_heads
    exact = interventions.head_importance(loaded, text, {"self": (layers, heads)}, method)["self"]
    estimate = importance.estimate(loaded, text, layers, heads, method)
    assert estimate.shape == exact.shape and np.isfinite(estimate).all()
    return spearman(exact, estimate), int(np.argmax(exact)) == int(np.argmax(estimate))


@pytest.mark.parametrize("method", ["zero", "uniform"])
def test_first_order_ranks_heads_as_the_knock_outs_do(models, method):
    """lm and mlm, five texts each (measured 2026-11-26: zero median 0.83, lowest 0.50, top head 8 of 10;
    uniform median 0.985, lowest 0.70, top head 9 of 10)."""
    found = [compared(models[name], text, method) for name in ("lm", "mlm") for text in TEXTS[name]]
    rhos = [rho for rho, _ in found]
    assert np.median(rhos) >= 0.75 and min(rhos) >= 0.45, rhos
    assert sum(top for _, top in found) >= 7, found


@pytest.mark.parametrize("method", ["zero", "uniform"])
def test_through_the_norms_ranks_minilms_heads_as_the_knock_outs_do(models, method):
    """A sentence vector's 1 − cosine has no first-order term: the estimate carries each head's change up through the
    norms (measured 2026-11-26: Spearman 0.88-0.94 on each text; the top head agrees on all three when zeroed)."""
    found = [compared(models["minilm"], text, method) for text in TEXTS["minilm"]]
    assert min(rho for rho, _ in found) >= 0.8, found
    if method == "zero":
        assert all(top for _, top in found), found


@pytest.mark.parametrize("norm", [torch.nn.LayerNorm(16, eps=1e-5), RMSNorm(16, eps=1e-6)])
def test_a_norms_step_is_its_jacobian(norm):
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        norm.weight.copy_(torch.rand(16, generator=generator) + 0.5)
    at, change = torch.randn(1, 5, 16, generator=generator), torch.randn(3, 5, 16, generator=generator)
    _, expected = torch.func.jvp(norm, (at.expand_as(change).contiguous(),), (change,))  # (n, t, k)
    exact = torch.func.jvp(copy.deepcopy(norm).double(), (at.expand_as(change).double(),), (change.double(),))[1]
    with torch.no_grad():  # the step takes the positions first: (t, n, k)
        passed = importance.NormStep(norm, at)(change.transpose(0, 1).contiguous()).transpose(0, 1)
    # the same derivative in another order of float32 steps: within 3x autograd's own float32 rounding of it,
    # measured against its float64 run
    passed, expected, exact = (x.detach().numpy() for x in (passed, expected, exact))
    tolerances.assert_within(passed, expected, tolerances.beside_oracle(passed, expected, exact))


def test_the_estimate_is_taken_where_knocking_out_costs_too_much(models):
    minilm, lm = models["minilm"].config, models["lm"].config
    assert importance.forward_passes(minilm) == 12 * 7 / 2  # layer l's 12 heads run layers l … 6
    edge = importance.exact_tokens(minilm)
    assert importance.knockout_flops(minilm, edge) <= importance.EXACT_FLOPS < importance.knockout_flops(minilm, edge + 1)
    assert edge == 44
    assert not importance.is_estimated(models["minilm"], edge) and importance.is_estimated(models["minilm"], edge + 1)
    assert importance.exact_tokens(lm) == lm.max_len  # lm is knocked out exactly at any length it reads


@pytest.mark.parametrize("name,text,method", [
    ("minilm", " ".join(["The cat sat on the mat while the dog slept by the door."] * 5), "uniform"),
    ("lm", TEXTS["lm"][2], "zero"), ("mlm", TEXTS["mlm"][1], "uniform")])
def test_an_estimated_map_measures_the_head_it_ranks_first(models, monkeypatch, name, text, method):
    """The head the estimate ranks first is knocked out for real, from its layer up: the change of a whole forward
    pass with it knocked out. (lm and mlm are estimated only here, with no arithmetic allowed the exact map.)"""
    loaded = models[name]
    if name != "minilm":
        monkeypatch.setattr(importance, "EXACT_FLOPS", 0)
    layers, heads = loaded.config.n_layers, loaded.config.n_heads
    found = importance.importance(loaded, text, {"self": (layers, heads)}, method)
    assert found.estimated and found.tokens == len(loaded.encode(text).ids)
    kind, layer, head, change = found.checked
    assert (layer, head) == np.unravel_index(int(np.argmax(found.maps["self"])), (layers, heads))
    assert_whole_pass(loaded, text, Switches(ablate={(kind, layer, head)}, method=method), change)
    # the estimate's first MEASURED heads are each knocked out for real too, named by measured change
    first = np.argsort(-found.maps["self"], axis=None, kind="stable")[:importance.MEASURED]
    assert sorted((l, h) for _, l, h, _ in found.measured) == sorted(
        tuple(int(i) for i in np.unravel_index(int(f), (layers, heads))) for f in first)
    assert [m[3] for m in found.measured] == sorted((m[3] for m in found.measured), reverse=True)
    assert found.checked in found.measured
    kind, layer, head, change = found.measured[-1]
    assert_whole_pass(loaded, text, Switches(ablate={(kind, layer, head)}, method=method), change)


def assert_whole_pass(loaded, text, switches, change):
    """change (knocked out from its layer up) against a whole forward pass's: the same layers on the same inputs,
    within 3x the whole pass's own float32 rounding (against loaded's float64 copy, freed on return), plus a spacing
    of each float32 score the change subtracts (tests/tolerances.py)."""
    before, after = interventions.compare(loaded, text, switches)
    double = dataclasses.replace(loaded, model=copy.deepcopy(loaded.model).double())
    whole = interventions.change(before, after)
    exact = interventions.change(*interventions.compare(double, text, switches))
    allowed = tolerances.beside_oracle(change, whole, exact) + 2 * tolerances.spacing32(before.score)
    tolerances.assert_within(change, whole, allowed)


def test_a_short_text_is_knocked_out_exactly(models):
    found = importance.importance(models["minilm"], TEXTS["minilm"][0], {"self": (6, 12)})
    assert not found.estimated and found.checked is None
    assert np.array_equal(found.maps["self"], interventions.head_importance(
        models["minilm"], TEXTS["minilm"][0], {"self": (6, 12)})["self"])


def fused_first_order(loaded, text: str, method: str) -> np.ndarray:
    """The first-order estimate as it was computed before the estimate and the explanations shared one pass: its own
    forward pass on the fused attention path (no recording), the graph started at the stream entering layer 1."""
    from experiments.patch_cells import Hooks
    from model import tokenizer as tok

    ids = interventions._ids(loaded, text)
    hooks = Hooks(("residual_in", "heads"), track=True)
    with torch.enable_grad():
        logits, _ = loaded.model(ids, switches=Switches(hooks=hooks))
        logp = torch.log_softmax(loaded._no_specials(logits[0, -1], keep=(tok.EOS,)), -1)
        heads = hooks.recorded["heads"]
        grads = torch.autograd.grad(logp[int(logp.argmax())], [heads[layer] for layer in range(len(heads))])
    with torch.no_grad():
        entering = hooks.recorded["residual_in"]
        return torch.stack([-(grad * importance._knocked_out(loaded, method, layer, heads, entering)).sum((-1, -2))[0]
                            for layer, grad in enumerate(grads)]).numpy()


@pytest.mark.parametrize("method", ["zero", "uniform"])
def test_one_gradient_pass_gives_the_estimate_and_the_explanations_gradient_times_input(models, monkeypatch, method):
    """The estimated map and the explanations read one forward and backward pass (smollm2 at 512 tokens ran two, ~6 s
    of CPU): its gradient × input is interventions.attribution's, bit for bit; its estimate is the standalone one's,
    bit for bit, and the separate fused pass's within 3x that pass's own float32 rounding (its float64 run)."""
    loaded, text = models["lm"], TEXTS["lm"][2]
    monkeypatch.setattr(importance, "EXACT_FLOPS", 0)
    layers, heads = loaded.config.n_layers, loaded.config.n_heads
    plain = interventions.outcome(loaded, text)
    found = importance.gradient_pass(loaded, text, plain)
    np.testing.assert_array_equal(found.attribution, interventions.attribution(loaded, text, plain))
    assert found.before.reference == plain.reference and importance.first_order(loaded, text)
    asked = []
    shared = importance.importance(loaded, text, {"self": (layers, heads)}, method, lambda: plain,
                                   lambda: asked.append(method) or found)
    assert asked == [method]  # the map read the pass it was given, not a pass of its own
    np.testing.assert_array_equal(shared.maps["self"], importance.estimate(loaded, text, layers, heads, method))
    fused = fused_first_order(loaded, text, method)
    double = dataclasses.replace(loaded, model=tolerances.in_float64(loaded.model))
    exact = fused_first_order(double, text, method)
    tolerances.assert_within(shared.maps["self"], fused, tolerances.beside_oracle(shared.maps["self"], fused, exact))


def test_the_gradient_pass_records_the_detailed_trace_a_separate_pass_gives(models, monkeypatch):
    """gradient_pass(detail=True) also records the text's detailed trace, on the forward pass it runs anyway (the
    Interventions tab's other views read it: no pass of their own), and changes nothing else of the pass. A separate
    detailed trace of a long text computes each head's weights one at a time (model.attention._head_by_head, forced
    here on a short one), the gradient pass on the batched path autograd follows: two orders of the same float32
    sums, so within 4x the separate trace's own float32 rounding, measured against its float64 run
    (tolerances.beside_oracle)."""
    import model.attention

    loaded, text = models["lm"], TEXTS["lm"][2]
    plain = interventions.outcome(loaded, text)
    found, bare = importance.gradient_pass(loaded, text, plain, detail=True), importance.gradient_pass(loaded, text, plain)
    assert bare.trace is None and found.before == bare.before
    np.testing.assert_array_equal(found.attribution, bare.attribution)
    for layer in bare.grads:
        assert torch.equal(found.grads[layer], bare.grads[layer]) and torch.equal(found.heads[layer], bare.heads[layer])
    monkeypatch.setattr(model.attention, "HEAD_BY_HEAD_CELLS", 0)
    options = dict(detail=True, scores=False, predictions=False)
    separate = loaded.trace(text, **options)
    exact = dataclasses.replace(loaded, model=tolerances.in_float64(loaded.model)).trace(text, **options)
    shared = found.trace
    assert shared.tokens == separate.tokens and shared.predictions == [] and shared.attention.keys() == {"self"}
    for field in ("probs", "q", "k", "v", "inputs", "output"):
        ours, theirs, oracle = (getattr(t.attention["self"], field) for t in (shared, separate, exact))
        tolerances.assert_within(ours, theirs, tolerances.beside_oracle(ours, theirs, oracle), field)
    ours, theirs, oracle = shared.residual["self"], separate.residual["self"], exact.residual["self"]
    tolerances.assert_within(ours, theirs, tolerances.beside_oracle(ours, theirs, oracle), "residual")
    assert np.array_equal(shared.attention["self"].mask, separate.attention["self"].mask)
    assert all(np.array_equal(a, b) for a, b in zip(shared.attention["self"].out_weight,
                                                    separate.attention["self"].out_weight))
