"""The Generation tab's handlers and /generate_steps on the shipped lm and tiny Llama-family folders: the exact
JSON, the refusals, the cache growing by the stated bytes per token, and every sentence's numbers checked
against the figures drawn beside it."""
from __future__ import annotations

import re

import numpy as np
import pytest

from analysis import generation as costs_of
from analysis import sampling
from model import api
from model.cache import nbytes
from tests import tolerances
from tests.llama_checkpoints import save_tiny
from ui.tabs import generation as ui_generation
from model.registry import ModelRegistry
from ui.page.messages import InputError

pytestmark = pytest.mark.skipif(not (api.ASSETS / "lm" / "model.safetensors").is_file(),
                                reason="needs the shipped lm (python -m training.train lm)")
TEXT = "The cat sat on the mat and looked at the dog"


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> ModelRegistry:
    """Its own registry: the shipped models plus two tiny Llama-family folders (grouped heads, a sliding window)."""
    pytest.importorskip("transformers", reason="transformers builds the checkpoints (requirements-dev.txt)")
    root = tmp_path_factory.mktemp("generation")
    extra = {"llama-gqa": str(save_tiny("llama", root / "llama", num_key_value_heads=2)),
             "mistral-window": str(save_tiny("mistral", root / "mistral", num_key_value_heads=2, sliding_window=4))}
    loaded = ModelRegistry.load(api.ASSETS, names=("lm", "mlm", "classifier", "dates"), device="cpu", extra=extra)
    assert not loaded.errors, loaded.errors
    return loaded


def numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def test_the_endpoint_answers_exactly_the_promised_json(registry):
    answer = ui_generation.generate_steps(registry, TEXT, "lm", 6)
    assert set(answer) == {"prompt_tokens", "prompt_ids", "steps"}
    prompt = len(answer["prompt_ids"])
    assert answer["prompt_tokens"][0] == "<s>" and len(answer["prompt_tokens"]) == prompt
    assert len(answer["steps"]) == 6
    config = registry.get("lm").config
    per_token = 2 * config.n_layers * config.n_heads * config.d_head * 4
    for t, step in enumerate(answer["steps"]):
        assert set(step) == {"token", "id", "probability", "attention", "cache_bytes"}
        assert isinstance(step["id"], int) and isinstance(step["token"], str) and 0 < step["probability"] <= 1
        rows = np.array(step["attention"])
        assert rows.shape == (config.n_layers, config.n_heads, prompt + t)
        # float32 softmax rows (tolerances.weights_sum), each weight rounded to 6 decimals in the JSON (half of 1e-6)
        s = rows.shape[-1]
        assert np.allclose(rows.sum(-1), 1, atol=tolerances.weights_sum(s) + s * 0.5e-6, rtol=0)
        assert step["cache_bytes"] == (prompt + t) * per_token


def test_sampled_steps_are_the_tokens_generate_draws(registry):
    lm = registry.get("lm")
    settings = dict(temperature=1.2, top_k=50, top_p=0.9, seed=3)
    answer = ui_generation.generate_steps(registry, "The cat", "lm", 12, **settings)
    drawn = sampling.generate(lm.next_logits, lm.encode("The cat").ids, 12, end=lm.end_id, **settings)
    assert [s["id"] for s in answer["steps"]][:len(drawn.ids)] == drawn.ids
    greedy = ui_generation.generate_steps(registry, "The cat", "lm", 5)
    assert [s["id"] for s in greedy["steps"]] == [s["id"] for s in ui_generation.generate_steps(
        registry, "The cat", "lm", 5, 0.0, 7, 0.5, 99)["steps"]]  # temperature 0: greedy, the rest ignored


BAD = [dict(text=""), dict(text="   "), dict(text=None), dict(text=42), dict(model="mlm"), dict(model="classifier"),
       dict(model="dates"), dict(model="gpt-4"), dict(model=None), dict(tokens=0), dict(tokens=65),
       dict(tokens=2.5), dict(tokens="8"), dict(tokens=True), dict(tokens=None), dict(temperature=-1),
       dict(temperature=3), dict(temperature="hot"), dict(temperature=float("nan")), dict(top_k=-1),
       dict(top_k=1.5), dict(top_p=0), dict(top_p=1.5), dict(seed=-1), dict(seed="x"), dict(seed=2 ** 40)]


@pytest.mark.parametrize("bad", BAD, ids=[repr(b) for b in BAD])
def test_bad_input_is_refused_clearly(registry, bad):
    call = dict(text=TEXT, model="lm", tokens=4, temperature=0.0, top_k=0, top_p=1.0, seed=0, **{})
    call.update(bad)
    with pytest.raises(InputError) as refused:
        ui_generation.generate_steps(registry, **call)
    message = str(refused.value)
    assert 10 < len(message) < 400 and "Traceback" not in message and "/" not in message.replace("top-k", "")


def test_a_model_that_writes_no_text_is_named(registry):
    with pytest.raises(InputError, match="mlm writes no text token by token.*lm, or a GPT-2 or Llama-family"):
        ui_generation.generate_steps(registry, TEXT, "mlm", 4)


def test_a_long_text_is_cut_and_said_so(registry):
    result = ui_generation.run(registry, "the cat sat on the mat " * 40, "lm", 3)
    assert len(result["prompt_ids"]) == ui_generation.PROMPT_TOKENS and result["cut"]
    assert f"cut to its first {ui_generation.PROMPT_TOKENS} tokens" in ui_generation.notes_text(result)
    short = ui_generation.run(registry, "the cat sat on the mat " * 40, "llama-gqa", 3)  # a context of 64
    assert len(short["prompt_ids"]) == 63 and len(short["steps"]) == 1
    assert "Only 1 tokens fit the model's context of 64 tokens" in ui_generation.notes_text(short)


def test_the_session_keeps_a_bounded_number_of_bytes(registry):
    result = ui_generation.run(registry, "the cat sat on the mat " * 40, "lm", 64, timed=True)
    assert len(result["steps"]) == 64
    assert nbytes(result) <= ui_generation.SESSION_BYTES


def cache_state(figure) -> dict[str, int]:
    data, layout = figure._plain_parts()
    cells = np.asarray(data[0]["z"], dtype=float)
    panels = len(layout["annotations"])  # one panel per key/value head, each the same positions
    return {name: int((cells[0] == value).sum()) // panels for name, value in ui_generation.viz_generation.STATES.items()}


@pytest.mark.parametrize("name", ["lm", "llama-gqa", "mistral-window"])
def test_every_sentence_of_a_step_is_the_figures_numbers(registry, name):
    result = ui_generation.run(registry, TEXT, name, 6, timed=True)
    s = result["sizes"]
    per_token = costs_of.bytes_per_token(s)
    for step in range(1, len(result["steps"]) + 1):
        summary, row, strip, cache = ui_generation.step_view(result, step, 2, 2)
        st = result["steps"][step - 1]
        seen = len(result["prompt_ids"]) + step - 1
        states = cache_state(cache)
        kept = states["kept"] + states["new"]
        assert states["new"] == (kept if step == 1 else 1) and states["dropped"] == st["kept_from"]
        held = re.search(r"The cache now holds (\d+) positions × ([\d,]+) bytes = \*\*([\d,]+) bytes\*\* "
                         r"\(\+([\d,]+)(?: since the step before|: the prompt's positions, all at once)", summary)
        got = [int(g.replace(",", "")) for g in held.groups()]
        before = result["steps"][step - 2]["cache_bytes"] if step > 1 else 0
        assert got == [kept, per_token, kept * per_token, kept * per_token - before]
        assert got[2] == st["cache_bytes"]
        assert f"(position {seen})" in summary
        assert f"with probability {st['probability']:.3f}" in summary
        if step > 1:
            assert f"it read the {kept} keys and values kept in each layer's cache" in summary
        title = cache._plain_parts()[1]["title"]["text"]
        assert f"{st['cache_bytes']:,} bytes ({st['cache_bytes'] // s.n_layers:,} per layer)" in title
        assert st["cache_bytes"] == s.n_layers * (st["cache_bytes"] // s.n_layers)
        y = np.asarray(row._plain_parts()[0][0]["y"], dtype=np.float64)
        top = int(np.argmax(y))
        said = re.search(r"Head L2 H2 puts most weight, ([\d.]+), on .* \(position (\d+)\)", summary)
        assert float(said.group(1)) == pytest.approx(y[top], abs=0.005) and int(said.group(2)) == top + 1
        if st["kept_from"]:
            assert f"positions 1 to {st['kept_from']} have fallen out" in summary
            assert not y[:st["kept_from"]].any()
        alt = cache._plain_parts()[1]["meta"]["alt"]
        assert f"{kept} positions kept" in alt and f"{st['cache_bytes']:,} bytes" in alt
    if name == "mistral-window":
        assert result["steps"][-1]["kept_from"] > 0 and result["steps"][-1]["cache_bytes"] == 4 * per_token


@pytest.mark.parametrize("name", ["lm", "llama-gqa", "mistral-window"])
def test_the_costs_and_memory_sentences_are_the_arithmetic(registry, name):
    result = ui_generation.run(registry, TEXT, name, 5, timed=True)
    s, c = result["sizes"], result["costs"]
    text = ui_generation.costs_text(result)
    assert f"**{c.cached_ms:.2f} ms**" in text and f"**{c.recompute_ms:.2f} ms**" in text
    assert f"({c.recompute_ms / c.cached_ms:.1f}× as long)" in text
    prompt = len(result["prompt_ids"])
    cached = np.mean([costs_of.cached_flops(s, min(prompt + t, s.window or 10 ** 6)) for t in range(1, 5)])
    lengths = costs_of.recompute_lengths(prompt, 5)
    full = np.mean([costs_of.recompute_flops(s, n) for n in lengths])
    assert f"{cached:,.0f} floating-point operations with the cache against {full:,.0f} recomputing " \
           f"({full / cached:.1f}× as many)" in text
    memory = re.search(r"2 \(a key and a value\) × (\d+) layers × (\d+) key/value heads × (\d+) head size × (\d+) "
                       r"bytes = \*\*([\d,]+) bytes\*\*", text)
    layers, kv, d, b, per_token = (int(g.replace(",", "")) for g in memory.groups())
    config = registry.get(name).config
    assert (layers, kv, d, b) == (config.n_layers, config.kv_heads, config.d_head, 4)
    assert per_token == 2 * layers * kv * d * b
    if not s.window:  # a full window stops growing (below)
        assert per_token == result["steps"][1]["cache_bytes"] - result["steps"][0]["cache_bytes"]
    if name == "mistral-window":
        assert f"Its sliding window keeps at most 4 positions: at most {4 * per_token:,} bytes." in text
        assert max(st["cache_bytes"] for st in result["steps"]) == 4 * per_token
    if name != "lm":
        assert "Its 4 query heads share 2 key/value heads" in text and "query heads 1–2 read key/value head 1" in text
        assert f"= {2 * layers * 4 * d * b:,} bytes (2× as much)" in text
    else:
        assert f"so {per_token:,} bytes is also its size without grouping" in text


def test_quiz_mode_asks_before_it_shows(registry):
    result = ui_generation.run(registry, TEXT, "lm", 3)
    summary, row, strip, cache = ui_generation.step_view(result, 2, 1, 1, quiz=True)
    assert "Which earlier token will head L1 H1 look at most?" in summary and "puts most weight" not in summary
    assert "wrote" not in summary
    assert not any(t.get("type") == "bar" for t in row._plain_parts()[0])  # a note, not the row
    assert np.isnan(np.asarray(strip._plain_parts()[0][0]["z"], dtype=float)).all()
    full = ui_generation.step_view(result, 2, 1, 1)[0]
    top = costs_of.top_key(result["attention"][1][0, 0])
    assert f"(position {top + 1})" in full


def test_a_step_past_the_generation_is_refused(registry):
    result = ui_generation.run(registry, TEXT, "lm", 3)
    with pytest.raises(InputError, match="step"):
        ui_generation.step_view(result, 4, 1, 1)
