"""A tiny Llama and a tiny Qwen2 listed in ATTENTION_MODELS, in a real browser: the app started as a server
with that setting, each opened by a link on the Every head, Step by step and Positions tabs, with its tokens on
the axes, the rotary demonstration drawn, and no error."""
from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import pytest
from tokenizers import Tokenizer

from model import api
from harness.browser import (DETAIL, error_toasts, expected_labels, wait_for_figures, wait_for_ticks)
from tests.e2e.conftest import screenshot
from harness.live_app import ARTIFACTS, live_app
from tests.llama_checkpoints import save_tiny
from model.registry import assets_dir

TEXT = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("llama-e2e")
    vocabulary = lambda: Tokenizer.from_file(str(assets_dir() / "tokenizer.json"))  # noqa: E731
    llama = save_tiny("llama", root / "tiny-llama", tokenizer=vocabulary(), num_key_value_heads=2,
                      bos_token_id=1, eos_token_id=2, max_position_embeddings=256)
    (llama / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": True}))
    qwen = save_tiny("qwen2", root / "tiny-qwen2", tokenizer=vocabulary(), num_key_value_heads=1,
                     tie_word_embeddings=True, eos_token_id=2, max_position_embeddings=256)
    return {"tiny-llama": llama, "tiny-qwen2": qwen}


@pytest.fixture(scope="module")
def llama_live(folders):
    """Its own server: the tiny Llama-family folders are listed in $ATTENTION_MODELS, read only at start."""
    models = ", ".join(f"{name}={folder}" for name, folder in folders.items())
    with live_app(ARTIFACTS / "logs" / "e2e-llama.log", env={"ATTENTION_MODELS": models}) as running:
        yield running


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-qwen2"])
def test_every_head_draws_the_models_tokens(page, llama_live, folders, name):
    page.goto(llama_live.url + "?" + urlencode(dict(text=TEXT, model=name, layer="2", head="3", tab="attention")))
    expected = expected_labels(TEXT, api.load_pretrained(folders[name], device="cpu"))
    assert (expected[0] == "<s>") == (name == "tiny-llama")  # the Llama's tokenizer_config adds a start token
    wait_for_ticks(page, expected)
    title = page.eval_on_selector(f"{DETAIL} .gtitle", "e => e.textContent")
    assert "Layer 2, head 3" in title and "keys and values shared by" in title
    assert all(f["svg"] and f["marks"] for f in wait_for_figures(page, "#all-heads"))
    assert not error_toasts(page)
    screenshot(page, f"llama-attention-{name}")


def test_step_by_step_on_a_rotary_model(page, llama_live):
    page.goto(llama_live.url + "?" + urlencode(dict(text=TEXT, model="tiny-llama", layer="2", head="3", tab="steps")))
    figures = [f for f in wait_for_figures(page, "[role=tabpanel]") if f["visible"]]
    assert figures and all(f["svg"] and f["marks"] for f in figures)
    page.wait_for_function("() => [...document.querySelectorAll('[role=tabpanel]')]"
                           ".some(p => /turn by position/.test(p.innerText))")
    panel = page.locator("[role=tabpanel]:visible").first.inner_text()
    assert "H3–H4 share one set of keys and values" in panel
    screenshot(page, "llama-steps", "[role=tabpanel]")


def test_positions_on_a_rotary_model(page, llama_live):
    page.goto(llama_live.url + "?" + urlencode(dict(text=TEXT, model="tiny-llama", layer="1", head="2",
                                                    tab="positions")))
    page.wait_for_function("() => /uses rotary positions/.test((document.querySelector('#rotary-summary') || "
                           "{}).innerText || '')")
    figures = [f for f in wait_for_figures(page, "[role=tabpanel]", count=6) if f["visible"]]
    assert len(figures) >= 6 and all(f["svg"] and f["marks"] for f in figures), figures
    page.wait_for_function("() => /\\d\\.\\d{4}/.test((document.querySelector('#rotary-scores') || {}).innerText || '')")
    summary = page.locator("#rotary-summary").inner_text()
    table = page.locator("#rotary-scores").inner_text()
    quoted = re.findall(r"-?\d+\.\d{4}", summary)
    assert len(quoted) == 7 and all(number in table for number in quoted), (quoted, table)  # the text quotes the table
    assert not error_toasts(page)
    page.locator("#rotary-summary").scroll_into_view_if_needed()
    screenshot(page, "llama-positions-rotary", "[role=tabpanel]")
