"""Every view that reads a model, on smollm2 (SmolLM2-135M-Instruct, 4-bit: 30 layers × 9 query heads sharing 3
key/value heads, no start token): each draws its figures at 270 heads or says why it does not apply, in-process
with the app's own functions. tests/e2e/test_e2e_smollm2_tabs.py opens every tab on it in a browser."""
from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from ui.tabs import (attention, predictions, flow as ui_flow, generation, induction, interventions, learning, lens, multihead,
                positions, qk, sampling, steps)
from model.registry import ModelRegistry

TEXT = "The Eiffel Tower is in the city of"  # 9 tokens


@pytest.fixture(scope="module")
def registry(smollm2, model_assets):
    registry = ModelRegistry.load(model_assets, names=("lm",), extra={}, device="cpu")
    registry.models["smollm2"] = smollm2  # the session's one copy, as ModelRegistry.load would share it
    return registry


def figures(result) -> list[go.Figure]:
    return [x for x in result if isinstance(x, go.Figure)]


def test_every_head_and_its_statistics_cover_270_heads(registry):
    note, tokens, grid, average, columns, _ = attention.analyze(registry, TEXT, "smollm2")
    assert len(tokens) == 9 and len(grid.layout.annotations) == 270 and len(columns["head"]) == 270
    assert np.shape(average.data[0].z)[0] > 0
    detail = attention.show_head(registry, TEXT, "smollm2", 30, 9)
    assert "keys and values shared by H7–H9" in detail.layout.title.text
    assert "▁Paris" in predictions.predictions(registry, "smollm2", TEXT)


def test_step_by_step_turns_q_and_k_and_names_the_shared_heads(registry):
    caption, *rest = steps.view(registry, TEXT, "smollm2", 19, 7, None, False, 0.0, True)
    assert len(figures(rest)) == 4 and re.search("rotat|turn", caption)


def test_positions_show_the_rotation(registry):
    tables, waves, similar, added = positions.view(registry, TEXT, "smollm2", "0, 1, 6", False)
    summary, turned, slid, table = positions.rotary_view(registry, TEXT, "smollm2", 2, False)
    assert "uses rotary positions** (θ = 100000" in summary and isinstance(turned, go.Figure)
    assert figures(positions.shuffle_view(registry, TEXT, "smollm2", 2, 0, False))


def test_multi_head_counts_nine_query_heads_on_three_key_value_heads(registry):
    heads, sizes, table = multihead.view(registry, TEXT, "smollm2", 1, None, False)
    assert isinstance(heads, go.Figure) and "3" in sizes and "9" in sizes


def test_interventions_map_every_head(registry):
    summary, guesses, importance, *_ = interventions.view(registry, TEXT, "smollm2", ["L25 H5"], "zero", False)
    assert "Knocked out (output zeroed): **L25 H5**" in summary
    assert np.shape(importance.data[0].z) == (30, 9)
    # knocking out 270 heads one by one costs 140 forward passes: past one token the map is an estimate, and says so
    assert importance.layout.title.text.startswith("One head zeroed, estimated:")
    assert ("for all 270 heads on this 9-token text that would cost about 140 runs of it (smollm2 has every head "
            "measured only on texts of at most 1 token). So each head's change is estimated from one run instead: how "
            "fast the output's score changes") in summary, summary
    # the heads named as measured are the estimate's first three, each knocked out for real, largest change first
    z = np.asarray(importance.data[0].z)
    first = [f"L{l + 1} H{h + 1}" for l, h in zip(*np.unravel_index(np.argsort(-z, axis=None)[:3], z.shape))]
    said = re.search(r"most to least: (.*?)\. Knock out", summary).group(1)
    pairs = re.findall(r"\*\*(L\d+ H\d+)\*\* by \*\*(-?\d+\.\d+)\*\*", said)
    assert sorted(h for h, _ in pairs) == sorted(first)
    values = [float(v) for _, v in pairs]
    assert values == sorted(values, reverse=True)
    top, value = pairs[0]
    measured = interventions.ablate(registry, TEXT, "smollm2", [top], "zero")["change"]
    assert float(value) == pytest.approx(measured, abs=2e-3)
    assert "Causal tracing's heads map" in summary and "exactly up to" not in summary
    assert isinstance(interventions.head_view(registry, TEXT, "smollm2", "L19 H7", False), go.Figure)
    about, figure = interventions.explanations(registry, TEXT, "smollm2", None, False)
    assert isinstance(figure, go.Figure)


def test_what_flows_measures_the_sink_on_the_first_token(registry):
    """smollm2 adds no start token: its heads park their weight on the first token, and the view measures that."""
    told, head, sinks, roll = ui_flow.view(registry, TEXT, "smollm2", 1, 1)
    assert "smollm2 adds no start token, so its sink is the first token, **The**" in told
    assert sinks.layout.title.text.endswith("on The") and len(sinks.data[1].x) == 270
    found = ui_flow.flow.sink_shares(registry.detailed("smollm2", TEXT).attention["self"], [0])
    assert (f"**{len(found.heads)} of the 270 heads** put at least half their weight there" in told
            and f"**{found.weight:.2f} of their weight but {found.norm:.2f} of what they move**" in told)
    assert len(found.heads) > 135 and found.norm < found.weight  # most heads park weight there, and move less


def test_what_flows_states_the_readme_sink_numbers(registry):
    told, *_ = ui_flow.view(registry, "When Mary and John went to the store, John gave a drink to", "smollm2", 1, 1)
    assert ("**166 of the 270 heads** put at least half their weight there" in told
            and "**0.70 of their weight but 0.51 of what they move**" in told)


def test_queries_and_keys_lens_and_sampling(registry):
    assert figures(qk.view(registry, TEXT, "smollm2", 19, 7))
    found = lens.view(registry, TEXT, "smollm2")
    assert figures(found) and "▁Paris" in " ".join(x for x in found if isinstance(x, str))
    assert figures(sampling.view(registry, TEXT, "smollm2", seed=1))


def test_generation_and_copying_from_context(registry):
    result = generation.run(registry, TEXT, "smollm2", tokens=3)
    assert len(result["steps"]) == 3
    assert figures(generation.step_view(result, 1, 19, 7))
    summary, *rest = induction.view(registry, "smollm2", 0, 12, induction.STRONGEST, "zero", False)
    assert figures(rest) and summary


def test_learning_says_why_it_does_not_apply(registry):
    summary, *_ = learning.view(registry, learning.SnapshotTraces(registry), TEXT, "smollm2", 1, 1, None, 1, False)
    assert re.search("does not apply to smollm2.*pretrained", summary)
