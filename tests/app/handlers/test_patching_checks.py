"""Causal tracing a class can trust, on lm (issue 56): a target that is not one token is refused with the single
tokens that spell the same word; a typed token the run hardly gives, a clean run that does not prefer the target
and a corrupted run that does not prefer the contrast are said first, and /patch returns the same sentences in
`warnings`; where the preview was wrong is said and marked; the head picker, the heads map's outlined cell and the
head's figure name one head. Every sentence is checked against the numbers it states."""
from __future__ import annotations

import re

import numpy as np
import pytest

from analysis import patching as numbers
from analysis.heads import head_name
from experiments import patching
from model import api
from model.registry import ModelRegistry
from ui.page.messages import InputError
from ui.page.outputs import UNCHANGED
from ui.tabs import patching as tab
from ui.tabs import patching_jobs as jobs
from ui.tabs import patching_summary as words

pytestmark = pytest.mark.skipif(not (api.ASSETS / "lm" / "model.safetensors").is_file(),
                                reason="needs the shipped lm (python -m training.train lm)")
# the contrast and the target swapped: the clean run prefers " T" (the contrast), the corrupted " S" (the target)
SWAPPED = (jobs.CLEAN, jobs.CORRUPTED, "lm", " S", " T")


@pytest.fixture(scope="module")
def registry() -> ModelRegistry:
    loaded = ModelRegistry.load(api.ASSETS, names=("lm",), device="cpu", extra={})
    assert not loaded.errors, loaded.errors
    return loaded


def found_of(registry, *args) -> patching.Tracing:
    return jobs.tracing(registry, jobs.job_of(registry, *args))


def outlined(figure) -> tuple[int, int]:
    """The (layer, column) a comparison figure outlines, 0-based."""
    shape = figure.layout.shapes[0]
    return round(shape["y0"] + 0.5), round(shape["x0"] + 0.5)


def test_a_target_of_several_tokens_is_refused_with_the_single_tokens_that_spell_it(registry):
    loaded = registry.get("lm")
    with pytest.raises(InputError) as refused:
        tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", " The", "", False)
    said = str(refused.value)
    pieces = [loaded.label(i) for i in loaded.tokenizer.encode(" The", add_special_tokens=False).ids]
    assert len(pieces) > 1 and f"it reads as {len(pieces)} ({' | '.join(pieces)})" in said
    listed = re.search(r"spell the same word: (.*?); type", said).group(1)
    for typed in ("The", " the", "the"):  # capitalised or not, with a leading space or without
        assert repr(typed) in listed and len(loaded.tokenizer.encode(typed, add_special_tokens=False).ids) == 1
    with pytest.raises(InputError, match="No single token spells the same word"):
        tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", " happy", False)


def test_a_target_the_clean_run_hardly_gives_is_taken_with_its_likelier_spelling(registry):
    """"T" (no space) is one token of lm, but the clean run gives it almost nothing; " T" is its answer."""
    found = found_of(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "T", "")
    assert found.pair.target_label == "T" and found.clean_probs[0] < words.LOW_P
    likeliest = found.likelier["target"][0]
    assert likeliest.label == "▁T" and likeliest.p > found.clean_probs[0]
    said = words.target_warnings(found)
    assert (f"The clean run gives the target “T” almost no probability (p = {found.clean_probs[0]:.3f}); the same "
            f"word spelt ' T' is likelier (p = {likeliest.p:.3f}): type that as the target.") in said
    summary = tab.view(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "T", "", False)[0]
    assert summary.startswith("⚠️ **") and summary.index("almost no probability") < summary.index("**Clean run:**")
    assert words.target_warnings(found_of(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "")) == []


@pytest.fixture(scope="module")
def swapped(registry):
    out = tab.view(registry, *SWAPPED, False)
    steps = list(tab.exact_stream(registry, out[-1], False))
    return out, steps, found_of(registry, *SWAPPED), jobs.cached_grids(registry, jobs.job_of(registry, *SWAPPED))


def test_a_clean_run_that_prefers_the_contrast_is_said_first(swapped):
    out, steps, found, exact = swapped
    d_clean, d_corrupted = found.clean_diff, found.corrupted_diff
    assert d_clean <= 0 and d_corrupted >= 0  # the measure no longer means "the answer comes back"
    said = words.target_warnings(found)
    assert said[0] == (f"The clean run does not prefer “▁S” to “▁T”: its logit difference “▁S” − “▁T” is "
                       f"{d_clean:.2f}, not above 0.")
    assert said[1] == (f"The corrupted run does not prefer “▁T” to “▁S”: its logit difference “▁S” − “▁T” is "
                       f"{d_corrupted:.2f}, not below 0.")
    # what a cell above 1 or below 0 means, checked against the cells: d = d_corrupted + m (d_clean − d_corrupted)
    above, below = re.search(r"above 1 makes the patched run prefer “▁S” to “▁T” (more|less) than the clean run does, "
                             r"and a cell below 0 (more|less) than the corrupted run does", said[2]).groups()
    cells = np.concatenate([g.ravel() for g in exact.values()])
    low = float(cells.min())
    assert low < 0, "a cell below 0 to check the sentence against"
    d = d_corrupted + low * (d_clean - d_corrupted)  # the patched run's logit difference " S" − " T"
    assert (d > d_corrupted) == (below == "more")
    d_above = d_corrupted + 1.5 * (d_clean - d_corrupted)  # what a cell of 1.5 would be
    assert (d_above > d_clean) == (above == "more")
    for summary in (out[0], steps[0][0], steps[-1][0]):  # first, while computing and once the grids are in
        assert summary.startswith("⚠️ **" + said[0])


def test_patch_returns_the_warnings_and_keeps_its_keys(registry, swapped):
    _, _, found, exact = swapped
    result = jobs.patch_numbers(registry, *SWAPPED, "mlp")
    assert set(result) == {"clean_tokens", "corrupted_tokens", "position", "target", "contrast", "clean_logit_diff",
                           "corrupted_logit_diff", "site", "rows", "columns", "exact", "preview", "agreement",
                           "warnings"}
    assert result["warnings"][:3] == words.target_warnings(found)
    assert all(isinstance(s, str) and s.endswith(".") for s in result["warnings"])
    wrong = words.preview_wrong(found, {"mlp": jobs.exact_grid(registry, jobs.job_of(registry, *SWAPPED), found,
                                                              "mlp")}, "mlp")
    assert result["warnings"][3:] == ([wrong] if wrong else [])
    # a pair the runs prefer as they should, and a preview that agrees: no warnings
    assert jobs.patch_numbers(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "", "residual")["warnings"] == []


def test_where_the_preview_was_wrong_is_said_and_marked(swapped):
    """The sentence names each wrong cell's layers and token, and the preview marks exactly those cells."""
    _, steps, found, exact = swapped
    figures = steps[-1][1:5]
    for site, figure in zip(patching.SITES, figures):
        backwards, off = numbers.wrong_cells(found.preview[site], exact[site])
        marks = [t for t in figure.data if t["type"] == "scatter" and t["mode"] == "markers"]
        wrong = backwards | off
        assert sorted(zip(marks[0]["y"], marks[0]["x"]) if marks else []) == sorted(zip(*np.nonzero(wrong)))
        said = words.preview_wrong(found, exact, site)
        assert bool(said) == bool(wrong.any())
        if said:
            assert f"({int(wrong.sum())} of {wrong.size} cells, marked × on the preview)" in said
        assert ("× wrong" in figure.layout.annotations[0].text) == bool(wrong.any())


def test_a_made_up_preview_is_said_wrong_where_it_is(registry):
    """The sentence on a preview wrong by construction: layers 1–3 at a token backwards, one cell far off."""
    found = found_of(registry, jobs.CLEAN, jobs.CORRUPTED, "lm", "", "")
    exact = {"residual": found.preview["residual"].astype(float)}  # the preview exact, but for these cells:
    preview = exact["residual"].copy()
    exact["residual"][:3, 5], preview[:3, 5] = 0.5, -0.5  # backwards
    exact["residual"][3, 8], preview[3, 8] = 0.2, 0.8  # the right sign, 0.6 off
    made = patching.Tracing(found.pair, found.clean_diff, found.corrupted_diff, found.clean_probs,
                            found.corrupted_probs, {**found.preview, "residual": preview})
    token = found.pair.clean_tokens
    said = words.preview_wrong(made, exact, "residual")
    assert said.startswith(f"The preview of the residual stream got layers 1–3 at “{token[5]}” backwards and was "
                           f"off by more than 0.3 at layer 4 at “{token[8]}” (4 of {preview.size} cells")
    assert said.endswith(words.WHY_WRONG + ".") and "first-order estimate" in said


def test_one_head_for_the_picker_its_outlined_cell_and_its_figure(registry):
    """A head picked while the exact grids stream in is outlined in every redraw and kept at the end."""
    args = (jobs.CLEAN, jobs.CORRUPTED, "lm", " T", " S")  # the default pair, typed: a request of its own
    out = tab.view(registry, *args, False)
    chosen, figure, heads_figure = out[5]["value"], out[6], out[4]
    assert figure.layout.title.text.startswith(f"{chosen} on the clean prompt")
    assert head_name(*outlined(heads_figure)) == chosen
    picked, drawn, map_after = tab.pick(registry, "L1 H2", *args, False)
    assert picked == "L1 H2" and drawn.layout.title.text.startswith("L1 H2 ")
    assert head_name(*outlined(map_after)) == "L1 H2"
    steps = list(tab.exact_stream(registry, out[-1], False, picked=lambda: "L1 H2"))
    assert all(head_name(*outlined(step[4])) == "L1 H2" for step in steps)
    assert steps[-1][5:] == (UNCHANGED, UNCHANGED)  # the visitor's pick is kept
    found = found_of(registry, *args)
    exact = jobs.cached_grids(registry, jobs.job_of(registry, *args))
    assert "the head you opened" in steps[-1][0] and "L1 H2" in steps[-1][0]
    assert f"The exact grid's strongest head is {words.strongest_head(found, exact)}" in steps[-1][0]
    with pytest.raises(InputError):
        tab.pick(registry, "L9 H1", *args, False)
    latest = tab.Latest()
    latest.start("a", "job"), latest.pick("a", "L2 H3")
    assert latest.picked("a") == "L2 H3" and latest.picked("b") is None
    latest.start("a", "job 2")
    assert latest.picked("a") is None  # a new pair starts with the head its own grids choose
