"""The "Causal tracing" tab's handlers on the shipped models: every sentence it writes about a number is checked
against the numbers its figures draw, the lecture example's claims (docs/tabs.md) are measured, and bad input is refused
with a message."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from analysis import patching as numbers
from analysis.routes import route_graph
from model import api
from experiments import patching
from ui.tabs import patching as tab
from ui.tabs import patching_jobs as jobs
from ui.tabs import routes as routes_section
from model.registry import ModelRegistry
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED, Change

pytestmark = pytest.mark.skipif(not (api.ASSETS / "lm" / "model.safetensors").is_file(),
                                reason="needs the shipped lm (python -m training.train lm)")


@pytest.fixture(scope="module")
def registry() -> ModelRegistry:
    loaded = ModelRegistry.load(api.ASSETS, names=("lm", "mlm", "classifier", "dates"), device="cpu", extra={})
    assert not loaded.errors, loaded.errors
    return loaded


@pytest.fixture(scope="module")
def example(registry):
    """The lecture example, its preview, and its exact grids as the page streams them."""
    out = tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", False)
    steps = list(tab.exact_stream(registry, out[-1], False))
    job = jobs.job_of(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "")
    return out, steps, jobs.tracing(registry, job), jobs.cached_grids(registry, job)


def floats(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", text)]


def test_the_lecture_example_restores_the_answer_where_the_readme_says(example):
    _, _, found, exact = example
    assert (found.pair.target_label, found.pair.contrast_label) == ("▁T", "▁S")
    t = found.pair.clean_tokens.index("▁T")
    assert round(float(exact["mlp"][0, t]), 2) == 0.91  # docs/tabs.md: the feed-forward of layer 1 at "▁T"
    assert numbers.strongest(exact["mlp"], 1)[0][:2] == (0, t)
    heads = numbers.strongest(exact["heads"], 2)
    assert [(l, h, round(v, 2)) for l, h, v in heads] == [(2, 3, 0.44), (3, 1, 0.38)]  # L3 H4, L4 H2


def test_the_preview_comes_first_and_the_exact_grids_follow(example):
    out, steps, found, exact = example
    summary, residual = out[0], out[1]
    assert "Computing the exact grids" in summary and "The preview (left) is an estimate" in summary
    assert json.loads(out[-1])["clean"] == jobs.CLEAN
    assert "not computed yet" in residual.layout.annotations[1].text
    final = steps[-1]
    assert final[0] == tab.exact_summary(found, exact)
    assert final[1].layout.annotations[1].text == "exact"
    # the figure carries the exact grid as float32: the same numbers, cast once
    np.testing.assert_array_equal(np.asarray(final[1].data[2]["z"]), np.asarray(exact["residual"]).astype(np.float32))
    # lm's preview and exact grid favour the same head, L3 H4: the head view() opened stays
    assert tab.strongest_head(found, {}) == tab.strongest_head(found, exact) == "L3 H4"
    assert final[-2:] == (UNCHANGED, UNCHANGED) and out[5]["value"] == "L3 H4"


def test_a_newer_request_stops_the_stream(registry):
    out = tab.view(registry, "Monday, Monday,", "Friday, Saturday,", "lm", "▁T", "▁S", False)
    asked = iter([True, False])
    steps = list(tab.exact_stream(registry, out[-1], False, wanted=lambda: next(asked, False)))
    assert len(steps) <= 1 and not jobs.cached_grids(registry, jobs.job_of(registry, "Monday, Monday,",
                                                                          "Friday, Saturday,", "lm", "▁T", "▁S"))
    latest = tab.Latest(most=2)
    latest.start("a", "1"), latest.start("b", "2"), latest.start("a", "3"), latest.start("c", "4")
    assert latest.is_latest("a", "3") and not latest.is_latest("a", "1") and not latest.is_latest("b", "2")


def test_a_second_view_of_the_same_pair_draws_the_exact_grids_at_once(registry, example):
    out = tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", False)
    assert out[-1] == UNCHANGED  # no new job: the grids are cached
    assert out[0] == tab.exact_summary(example[2], example[3])


def test_the_summary_states_the_numbers_the_figures_draw(example):
    _, steps, found, exact = example
    text = tab.exact_summary(found, exact)
    assert f"p(“▁T”) = {found.clean_probs[0]:.3f}" in text and f"p(“▁S”) = {found.corrupted_probs[1]:.3f}" in text
    assert f"is {found.clean_diff:.2f} on the clean run and {found.corrupted_diff:.2f}" in text
    assert "+ 1.70" in text  # d_corrupted is −1.70: the cells are (d + 1.70) / (1.01 + 1.70)
    assert "positions 2, 3, 6, 7 (marked *)" in text
    for site, line in zip(patching.SITES, text.split("\n- ")[1:]):
        r = numbers.agreement(found.preview[site], exact[site])
        assert f"r = {r:.2f}" in line, site
        if site != "heads":
            layer, position, value = numbers.strongest(exact[site], 1)[0]
            assert f"at layer {layer + 1}, " in line and f"(position {position + 1}): {value:.2f}" in line
    t = found.pair.clean_tokens.index("▁T")
    layers = numbers.restoring_layers(exact["residual"], t)
    assert layers == [0, 1] and np.all(exact["residual"][2:, t] < numbers.RESTORES)
    assert "At the changed tokens, patching the residual stream restores at least 0.5 of the answer: “▁T” " \
           "(position 6) at layers 1–2." in text
    # the agreement is high on this pair: the preview is a good first look
    assert min(numbers.agreement(found.preview[s], exact[s]) for s in patching.SITES) > 0.95
    # the figures' text alternative names the same largest cell
    assert f"({exact['residual'].max():.2f})" in steps[-1][1].layout.meta["alt"]


def test_the_routes_summary_states_the_graphs_numbers(registry):
    text, figure = routes_section.routes_view(registry, "lm", jobs.CLEAN, 0, 0.04, False)
    found = routes_section.flow(registry, "lm", jobs.CLEAN)
    top, at = found.n_layers - 1, found.position
    graph = route_graph(found.heads, found.residual, at, 0.04)
    assert f"the stream before it {found.residual[top, at]:.2f}" in text
    assert f"attention {found.attention[top, at].sum():.2f}" in text
    assert f"the feed-forward {found.mlp[top, at]:.2f}" in text
    assert f"{len(graph.nodes)} nodes and {len(graph.edges)} edges" in text
    strongest = max((e for e in graph.edges if e.kind == "attention"), key=lambda e: e.weight)
    assert f"into “,” (position 9) {strongest.weight:.2f}, most through head L{strongest.layer} " \
           f"H{strongest.head + 1}" in text
    assert f"{len(graph.edges)} edges" in figure.layout.meta["alt"]
    fewer, _ = routes_section.routes_view(registry, "lm", jobs.CLEAN, 0, 0.3, False)
    edges = (lambda said: int(re.search(r"(\d+) edges", said).group(1)))
    assert edges(fewer) < edges(text)


def test_the_api_returns_numbers(registry, example):
    result = jobs.patch_numbers(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", "attention")
    # the same cached grid, as /patch rounds it to 4 places: exactly
    assert result["exact"] == np.asarray(example[3]["attention"]).astype(float).round(4).tolist()
    assert result["position"] == 9 and result["columns"] == "positions" and result["agreement"] > 0.95
    heads = jobs.patch_numbers(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", " T", "▁S", "heads")
    assert np.array(heads["exact"]).shape == (4, 4) and heads["target"] == "▁T"
    routes = routes_section.routes_numbers(registry, "The cat sat on the mat", "lm", 0, 0.04)
    assert routes["position"] == 7 and [4, 7] in routes["nodes"]
    assert all(e["importance"] >= 0.04 for e in routes["edges"])
    json.dumps(result), json.dumps(routes)  # plain JSON


@pytest.mark.parametrize("args, message", [
    (("", jobs.CORRUPTED, "lm", "", ""), "clean prompt is empty"),
    ((jobs.CLEAN, "   ", "lm", "", ""), "corrupted prompt is empty"),
    (("The king said to the", "The queen said to the", "lm", "", ""), r"6 tokens \(<s> \| The \| ▁king.*8 \(<s> \| The \| ▁qu \| e \| en"),
    ((jobs.CLEAN, jobs.CORRUPTED, "lm", " happy", ""), "not one token of lm"),
    ((jobs.CLEAN, jobs.CORRUPTED, "lm", "x" * 200, ""), "at most 100"),
    ((jobs.CLEAN, jobs.CORRUPTED, "nope", "", ""), "Unknown model"),
    (("The cat sat", "The dog sat", "mlm", "", ""), "put <mask>"),
])
def test_bad_input_is_refused_with_a_message(registry, args, message):
    with pytest.raises(InputError, match=message):
        tab.view(registry, *args)


def test_models_without_a_next_token_say_why(registry):
    for name, why in (("classifier", "names a category"), ("dates", "ISO date")):
        out = tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, name, "", "", False)
        assert out[0].startswith(f"**No causal tracing for {name}.**") and why in out[0]
    with pytest.raises(InputError, match="site must be one of"):
        jobs.patch_numbers(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", "keys")
    with pytest.raises(InputError, match="threshold"):
        routes_section.routes_numbers(registry, jobs.CLEAN, "lm", 0, 5)
    with pytest.raises(InputError, match="between 1 and 9"):
        routes_section.routes_numbers(registry, jobs.CLEAN, "lm", 10, 0.1)


def test_a_picked_head_shows_its_attention_on_the_clean_prompt(registry):
    figure = tab.head_view(registry, "lm", jobs.CLEAN, "L3 H4", False)
    assert "L3 H4 on the clean prompt" in figure.layout.title.text
    with pytest.raises(InputError, match="no head L9 H1"):
        tab.head_view(registry, "lm", jobs.CLEAN, "L9 H1", False)


def test_a_llama_family_folder_is_traced_and_routed(tmp_path):
    """Any Llama-family folder (here a tiny one with grouped-query heads) works in the tab as lm does."""
    from tests.llama_checkpoints import save_tiny

    folder = save_tiny("llama", tmp_path / "llama", num_key_value_heads=2)
    registry = ModelRegistry.load(api.ASSETS, names=(), device="cpu", extra={"tiny-llama": str(folder)})
    clean, corrupted = "the cat sat on the mat", "the mat sat on the cat"
    out = tab.view(registry, clean, corrupted, "tiny-llama", "▁the", "▁cat", False)
    final = list(tab.exact_stream(registry, out[-1], False))[-1]
    job = jobs.job_of(registry, clean, corrupted, "tiny-llama", "▁the", "▁cat")
    exact = jobs.cached_grids(registry, job)
    assert exact["heads"].shape == (2, 4) and final[0] == tab.exact_summary(jobs.tracing(registry, job), exact)
    text, _ = routes_section.routes_view(registry, "tiny-llama", clean, 0, 0.04, False)
    assert "the output bias" not in text  # Llama has no b_O


def test_a_click_on_the_heads_map_opens_the_head_it_names(registry, example):
    """The heads map names each cell as a tile (ui/runtime/tile_click.py reads layout.meta); a click's box value
    ("L2 H1 #3") picks that head in the dropdown and draws its attention; an empty box changes nothing."""
    _, _, found, exact = example
    heads_figure = tab.figures(found, exact, False)[3]
    layers, heads = found.preview["heads"].shape
    meta = heads_figure.layout.meta
    assert meta["tile_grid"]["cols"] == heads and len(meta["tiles"]) == layers * heads
    assert meta["tiles"][1 * heads + 0] == "L2 H1"  # row i, column j of either panel is layer i + 1, head j + 1
    pair = (jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", False)
    chosen, figure, outlined = tab.on_click(registry, "L2 H1 #3", *pair)
    assert chosen == "L2 H1" and figure.layout.title.text.startswith("L2 H1 on the clean prompt")
    assert tab.on_click(registry, "", *pair) == (UNCHANGED, UNCHANGED, UNCHANGED)
    with pytest.raises(InputError):
        tab.on_click(registry, "L9 H9 #1", *pair)
