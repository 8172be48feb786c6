"""The Interventions tab's handlers on the shipped models."""
from __future__ import annotations


import numpy as np
import pytest

from ui.tabs import flow, interventions
from ui.page.labels import parse_heads
from ui.page.messages import InputError


def test_interventions_view_knocks_out_the_month_head_and_maps_importance(registry):
    month = interventions.month_head(registry)
    assert month is not None and month.startswith("cross L")
    summary, guesses, importance, heads, picked, button = interventions.view(
        registry, "21 November 2026", "dates", [month], "zero", False)
    assert month in summary and "month digits" in summary
    assert heads["value"] == [month] and picked["value"] in picked["choices"]
    assert button["visible"] is True and month in button["value"]
    assert {a["text"] for a in importance.layout.annotations} >= {"encoder self-attention", "cross-attention"}
    note, figure = interventions.explanations(registry, "21 November 2026", "dates", None, False)
    assert "output character" in note
    assert list(figure.data[0].y) == [0, 1, 2] and figure.data[0].z.shape[0] == 3


def test_interventions_view_on_lm_has_guesses_and_no_month_button(registry):
    summary, guesses, importance, heads, picked, button = interventions.view(
        registry, "The cat sat on the", "lm", ["L1 H2"], "uniform", True)
    assert "L1 H2" in summary and not button["visible"]
    assert guesses["visible"]
    assert [bar.name for bar in guesses["value"].data] == ["before", "after"]
    assert importance.data[0].z.shape == (4, 4)


def test_the_tab_runs_the_plain_output_and_the_trace_once_per_text(registry, monkeypatch):
    """The knock-outs, the explanations, the picked head and What flows share one plain run (with its continuation)
    and one detailed trace of the text: on smollm2 at 512 tokens each more is a forward pass or two."""
    from experiments import interventions as runs

    text = "The dog sat on the warm"
    plain, traced = [], []
    outcome, trace = runs.outcome, registry.get("lm").trace
    monkeypatch.setattr(runs, "outcome", lambda *a, **k: (plain.append(k.get("reference")) or outcome(*a, **k)))
    monkeypatch.setattr(registry.get("lm"), "trace", lambda *a, **k: traced.append(k) or trace(*a, **k))
    view = interventions.view(registry, text, "lm", [], "uniform", False)
    interventions.head_view(registry, text, "lm", view[4]["value"], False)
    interventions.explanations(registry, text, "lm", None, False)
    assert plain == [None] and len(traced) == 1  # the plain run once (the exact map's knock-outs score against it)
    interventions.view(registry, text, "lm", ["L1 H2"], "zero", False)
    assert len(plain) == 2 and plain[1] is not None and len(traced) == 1  # a knock-out runs once more, scored on it


@pytest.mark.parametrize("name", ["lm", "smollm2"])
def test_the_detailed_trace_keeps_no_raw_scores_and_the_same_numbers(registry, name):
    """The tab's detailed trace (What flows, the explanations, the picked head, the Lens) leaves every head's raw
    scores out, as the plain traces do: on smollm2 at 512 tokens they were 283 MB and ~1.5 s of the trace's ~3.8 s
    CPU; and the top token at every position, which no view of it reads (smollm2: 512 positions by 49,152 tokens).
    Everything it keeps is the scored trace's, bit for bit."""
    if name not in registry.available:
        pytest.skip(f"{name} is not available here")
    text = "When Mary and John went to the store, John gave a drink to"
    kept, scored = registry.detailed(name, text), registry.get(name).trace(text, detail=True)
    for kind, att in kept.attention.items():
        assert att.scores is None and scored.attention[kind].scores is not None
        for field in ("probs", "q", "k", "v", "output", "out_weight"):
            assert np.array_equal(np.asarray(getattr(att, field)), np.asarray(getattr(scored.attention[kind], field)))
    assert kept.predictions == [] and len(scored.predictions) == len(scored.tokens)
    assert kept.residual.keys() == scored.residual.keys() and all(
        np.array_equal(np.asarray(kept.residual[k]), np.asarray(scored.residual[k])) for k in kept.residual)


def test_where_the_map_is_estimated_the_gradient_pass_records_the_tabs_detailed_trace(registry, monkeypatch):
    """Where the importance map is the first-order estimate (here lm with EXACT_FLOPS 0, as smollm2 at 512 tokens),
    the gradient pass's forward pass records the detailed trace the picked head, the explanations and What flows
    read: no forward pass of its own (~2 s of smollm2's at 512 tokens). Its numbers are a separate detailed trace's,
    bit for bit: the same float32 arithmetic on the same inputs (autograd records, and changes no kernel); the long
    texts' one-head-at-a-time path against the batched one is tests/experiments/test_importance.py's."""
    from experiments import importance

    monkeypatch.setattr(importance, "EXACT_FLOPS", 0)
    loaded = registry.get("lm")
    text = "The old man walked his dog to the park every"
    traced, trace = [], loaded.trace
    monkeypatch.setattr(loaded, "trace", lambda *a, **k: traced.append(k) or trace(*a, **k))
    view = interventions.view(registry, text, "lm", [], "zero", False)
    assert "estimated, not measured" in view[0]
    interventions.head_view(registry, text, "lm", view[4]["value"], False)
    interventions.explanations(registry, text, "lm", None, False)
    flow.view(registry, text, "lm", 1, 1)
    assert traced == []  # the gradient pass's recording served every view
    shared, separate = registry.detailed("lm", text), trace(text, detail=True, scores=False, predictions=False)
    for field in ("probs", "q", "k", "v", "inputs", "output", "out_bias"):
        assert np.array_equal(getattr(shared.attention["self"], field), getattr(separate.attention["self"], field))
    assert np.array_equal(shared.residual["self"], separate.residual["self"])
    assert shared.tokens == separate.tokens and shared.predictions == [] and shared.truncated == separate.truncated
    assert np.array_equal(shared.token_embeddings, separate.token_embeddings)


@pytest.mark.parametrize("spec,expected", [
    ("", set()), ("L1 H2", {("self", 0, 1)}), (" L1 H2 , l4 h4 ", {("self", 0, 1), ("self", 3, 3)}),
    (["L2 H1"], {("self", 1, 0)}), ("self L1 H1", {("self", 0, 0)}),
])
def test_head_names_parse_as_the_app_writes_them(registry, spec, expected):
    assert parse_heads(spec, registry, "lm") == expected


def test_dates_head_names_carry_their_kind(registry):
    assert parse_heads("cross L2 H3, encoder L1 H1", registry, "dates") == {
        ("cross", 1, 2), ("encoder", 0, 0)}
    assert len(parse_heads("decoder all", registry, "dates")) == 8
    for bad in ("L2 H3", "cross L3 H1", "cross", 42, ["L1 H1", 3]):
        with pytest.raises(InputError):
            parse_heads(bad, registry, "dates")


@pytest.mark.parametrize("method,words,title", [("zero", "output zeroed", "One head zeroed"),
                                                ("uniform", "weights made uniform", "One head made uniform")])
def test_the_knock_out_method_is_named_in_the_summary_and_the_importance_map(registry, method, words, title):
    summary, _, importance, *_ = interventions.view(registry, "The cat sat on the", "lm", ["L1 H2"], method, False)
    assert f"Knocked out ({words})" in summary
    assert importance.layout.title.text.startswith(title)


def test_the_lms_next_token_and_continuation_have_a_column_each(registry):
    """The lm's output "</s> → " (it ends the text) read as an arrow to nothing."""
    table = interventions.before_after({"what": "next token", "before": "</s> → ", "after": "▁the →  the cat"})
    head, _, before, after = table.split("\n")
    assert head == "| | next token | continuation (written greedily, up to 8 tokens) |"
    assert before == "| before | &lt;/s&gt; | (none: &lt;/s&gt; ends the text) |"
    assert after.startswith("| after | ▁the | the cat")
    summary, *_ = interventions.view(registry, "The cat sat on the", "lm", ["L1 H2"], "zero", False)
    assert "| | next token | continuation" in summary


LONG = " ".join(["The cat sat on the mat while the dog slept by the door."] * 5)  # 72 minilm tokens


def test_the_map_says_estimated_exactly_when_it_is(registry):
    """minilm knocks out its 72 heads exactly up to 44 tokens; past that the map is an estimate, the title and the
    summary say so, and every number the summary gives is the figure's or measured."""
    short, _, figure, *_ = interventions.view(registry, "The cat sat on the mat.", "minilm", [], "zero", False)
    assert "estimat" not in short and "estimated" not in figure.layout.title.text
    assert "knocking out **L" in short and "Every head was measured, knocked out alone" in short

    summary, _, figure, _, picked, _ = interventions.view(registry, LONG, "minilm", [], "uniform", False)
    assert figure.layout.title.text.startswith("One head made uniform, estimated:")
    # no line of it longer than the exact map's title, which fits a presenter-mode panel (one line ran past its edge)
    exact_title = interventions.view(registry, "The cat sat on the mat.", "minilm", [], "uniform", False)[2].layout.title.text
    assert max(map(len, figure.layout.title.text.split("<br>"))) <= len(exact_title), figure.layout.title.text
    assert "**This map is estimated, not measured.**" in summary and "Every head was measured" not in summary
    tokens = len(registry.trace("minilm", LONG).tokens)
    z = np.asarray(figure.data[0].z)
    order = np.argsort(-z, axis=None, kind="stable")[:3]
    named = [f"L{l + 1} H{h + 1}" for l, h in zip(*np.unravel_index(order, z.shape))]
    first = named[0]
    assert (f"for all {z.size} heads on this {tokens}-token text that would cost about 42 runs of it (minilm has "
            "every head measured only on texts of at most 44 tokens)") in summary, summary
    # the estimate's first three heads, measured, named from the largest measured change down
    measured = sorted(((interventions.ablate(registry, LONG, "minilm", [h], "uniform")["change"], h) for h in named),
                      reverse=True)
    assert ("its first 3 heads move the output most to least: " + ", ".join(
        f"**{h}** by **{change:.3f}**" for change, h in measured)) in summary, summary
    assert f"The estimate ranks **{first}** first." in summary
    assert "through the layer norms alone" in summary and picked["value"] == first
    assert "Causal tracing's heads map asks which heads carry the difference between two prompts" in summary
    for jargon in ("exactly up to", "first order", "forward pass"):
        assert jargon not in summary, jargon
    summary, *_ = interventions.view(registry, "The cat sat on the mat and then it " * 4, "lm", [], "zero", False)
    assert "estimat" not in summary  # lm's 16 heads are knocked out exactly at any length
