"""The logit lens, value-weighted attention, the query-key space and sampling, called through gradio_client
on the real app (python app.py), with their endpoints' exact names and parameters, and checked against oracles."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest
import torch
from gradio_client.exceptions import AppError

from analysis import sampling
from model import api
from tests import tolerances

SINK_SENTENCE = "The animal didn't cross the street because it was too tired."


@pytest.fixture(scope="module")
def client(live):
    return live.client()


def parameters(client, api_name: str) -> list[str]:
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert api_name in info, f"no endpoint {api_name}"
    return [p["parameter_name"] for p in info[api_name]["parameters"]]


@pytest.mark.parametrize("api_name, named", [
    ("/logit_lens", ["text", "model"]),
    ("/value_weighted", ["text", "model", "layer", "head"]),
    ("/qk_space", ["text", "model", "layer", "head"]),
    ("/generate", ["text", "model", "temperature", "top_k", "top_p", "seed", "tokens"]),
])
def test_the_endpoints_take_the_named_parameters(client, api_name, named):
    assert parameters(client, api_name)[:len(named)] == named  # then presenter and quiz, which may be left out


def plot(value) -> dict:
    return json.loads(value["plot"])


def numbers_of(values) -> np.ndarray:
    """A figure's array as sent: a list, or Plotly's typed-array spec (base64 bytes, dtype and shape)."""
    if not isinstance(values, dict):
        return np.array(values, dtype=np.float64)
    array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
    return array.reshape([int(n) for n in values["shape"].split(",")]) if "shape" in values else array


def test_logit_lens_last_row_is_the_models_own_prediction(client):
    summary, top, final = client.predict("not able to", "lm", api_name="/logit_lens")
    cells = plot(top)["data"][1]["text"]  # the top token written in each cell, row by row (layer 1 first)
    lm = api.load("lm")
    tokens = len(lm.encode("not able to").ids)
    assert cells[-tokens:] == [t.replace("<", "&lt;").replace(">", "&gt;") for t in lm.trace("not able to").predictions]
    assert "from layer 2 on it is **▁be**" in summary  # the lecture example: the answer appears partway up
    assert plot(final)["data"][0]["zmax"] == 1


@pytest.mark.parametrize("model, text", [("mlm", "the United <mask> of America"), ("dates", "3 March 1999")])
def test_logit_lens_reads_every_model_with_a_word_head(client, model, text):
    summary, top, _ = client.predict(text, model, api_name="/logit_lens")
    assert "the model's answer is" in summary and plot(top)["data"]


@pytest.mark.parametrize("model", ["minilm", "classifier"])
def test_logit_lens_says_why_a_model_without_a_word_head_has_none(client, model):
    summary, top, _ = client.predict("a dog with a long tail", model, api_name="/logit_lens")
    assert summary.startswith(f"**No logit lens for {model}.**") and "no word-prediction head" in summary


def test_quiz_mode_hides_the_lens(client):
    summary, top, _ = client.predict("not able to", "lm", False, True, api_name="/logit_lens")
    assert summary.startswith("**Quiz.**") and "▁be" not in summary
    assert "▁be" not in json.dumps(plot(top))


def test_a_switch_is_true_or_false_and_any_kind_is_taken(client):
    """quiz="no" is refused, not read as true; kind "self" (which the dates-only radio does not list) is taken by
    /head and /steps as docs/api.md says."""
    with pytest.raises(AppError, match="must be true or false"):
        client.predict("not able to", "lm", False, "no", api_name="/logit_lens")
    figure = client.predict("The cat sat on the mat", "lm", 1, 2, "self", False, False, api_name="/head")
    assert plot(figure)["data"]
    steps = client.predict("The cat sat on the mat", "lm", 1, 2, "self", False, 0.0, True, api_name="/steps")
    assert steps[0]


def test_quiz_mode_sends_no_flow_norms(client):
    """The question quotes the weights (the premise); what the head moves, the sinks and the rollouts stay home."""
    numbers, head, sinks, rollout = client.predict(SINK_SENTENCE, "minilm", 3, 2, False, True,
                                                   api_name="/value_weighted")
    assert numbers.startswith("**Quiz.**") and "what they move" not in numbers and "moves" not in numbers
    (weights,) = plot(head)["data"]  # the weights alone: no empty map that would read as "moves nothing"
    assert np.nansum(numbers_of(weights["z"])) > 0 and "hidden until Reveal" in plot(head)["layout"]["title"]["text"]
    assert not plot(sinks)["data"] and not plot(rollout)["data"]  # notes: no numbers in them


def test_quiz_mode_sends_no_line_to_the_strongest_key(client):
    numbers, picture, exported = client.predict(SINK_SENTENCE, "minilm", 4, 2, False, True, api_name="/qk_space")
    assert numbers.startswith("**Quiz.**") and "highest" not in numbers and "q·k" not in numbers
    assert [trace["name"] for trace in plot(picture)["data"]] == ["queries (looking)", "keys (looked at)"]
    assert exported is None  # the full q and k would let a script compute the answer


def test_quiz_mode_sends_neither_the_sample_nor_what_the_settings_keep(client):
    args = ("The cat sat on the", "lm", 0.7, 3, 0.9, 5, 6, False)
    _, text = client.predict(*args, False, api_name="/generate")
    quiz_figure, question = client.predict(*args, True, api_name="/generate")
    assert "Seeded sample" in text and "…" in text and "can be drawn next" in text
    assert question.startswith("**Quiz.**") and "Seeded sample" not in question and "…" not in question
    assert "can be drawn next" not in question
    bars = plot(quiz_figure)["data"]
    assert len(bars) == 1 and not plot(quiz_figure)["layout"]["annotations"]
    lm = api.load("lm")
    ids = lm.encode("The cat sat on the").ids
    logits = lm.next_logits(ids)
    before = np.sort(sampling.softmax(logits))[::-1]
    drawn = numbers_of(bars[0]["y"])
    # the likeliest, in order. The server's float32 logits (another process, its own threads and kernels) are within
    # beside_oracle of these (their rounding measured against lm's float64 copy); a float64 softmax then moves each
    # probability, and each order statistic, by at most exp(2 x the largest change) - 1 of itself, plus its own
    # rounding (v terms, 2^-53 each, on both sides); the figure carries float32 (half a spacing)
    with torch.no_grad():
        exact = tolerances.in_float64(lm.model)(torch.tensor([ids]))[0][0, -1].numpy()
    seen = np.isfinite(logits)  # special tokens at -inf on both sides
    change = float(tolerances.beside_oracle(logits[seen], logits[seen], exact[seen]).max())
    relative = np.expm1(2 * change) + 2 * seen.sum() * tolerances.EPS64
    expected = before[:len(drawn)]
    tolerances.assert_within(drawn, expected, relative * expected + tolerances.spacing32(drawn) / 2)


def test_value_weighted_states_the_minilm_sink_numbers(client):
    numbers, head, sinks, rollout = client.predict(SINK_SENTENCE, "minilm", 3, 2, api_name="/value_weighted")
    assert ("**34 of the 72 heads** put at least half their weight there (averaged over every token): "
            "together they give those tokens **0.66 of their weight but 0.17 of what they move**") in numbers
    assert len(plot(head)["data"]) == 2 and len(plot(rollout)["data"]) == 2
    points = plot(sinks)["data"][1]
    assert len(points["text"]) == 72


def test_value_weighted_for_every_model_and_bad_heads(client):
    for model, text in [("lm", "not able to"), ("mlm", "the United <mask> of America"), ("dates", "3 March 1999"),
                        ("classifier", "a large grey animal")]:
        numbers, head, _, _ = client.predict(text, model, 1, 1, api_name="/value_weighted")
        assert "puts most weight on" in numbers
    with pytest.raises(AppError, match="This model has 4 heads"):
        client.predict("not able to", "lm", 1, 9, api_name="/value_weighted")


def test_qk_space_exports_q_and_k_whose_dot_products_are_the_traces_scores(client):
    numbers, picture, exported = client.predict(SINK_SENTENCE, "minilm", 4, 2, api_name="/qk_space")
    att = api.load("minilm").trace(SINK_SENTENCE).attention["self"]
    q, k = np.array(exported["q"], dtype=np.float32), np.array(exported["k"], dtype=np.float32)
    np.testing.assert_array_equal(q, att.q[3, 1])  # exported exactly
    # numpy's product against torch's: each sums d_head terms in its own order (tests/tolerances.py)
    tolerances.assert_within(q @ k.T, att.scores[3, 1], tolerances.product(q, k.T))
    assert exported["keys"] == att.keys and 0 < exported["explained_variance"][1] <= exported["explained_variance"][0]
    row = len(att.queries) - 2  # the last word, "." (the [SEP] after it is the model's own)
    best = int(np.argmax(q[row] @ k.T))
    assert f"scores **{att.keys[best]}** highest: q·k = {float(q[row] @ k[best]):.2f}" in numbers


def test_generate_greedy_settings_write_the_greedy_continuation(client):
    lm = api.load("lm")
    greedy = lm.generate("The cat sat on the", 8, no_repeat_ngram=0)
    for temperature, top_k in [(0, 0), (1.5, 1)]:
        _, text = client.predict("The cat sat on the", "lm", temperature, top_k, 1.0, 3, 8, api_name="/generate")
        assert f"…{greedy.replace('▁', ' ')}" in text.replace("\\", "")


def test_generate_is_seeded(client):
    run = lambda seed: client.predict("The cat sat on the", "lm", 1.2, 0, 0.95, seed, 10, api_name="/generate")[1]
    assert run(4) == run(4)
    assert len({run(seed) for seed in range(4)}) > 1


@pytest.mark.parametrize("args, message", [
    (("The cat", "lm", -1, 0, 1.0, 0, 5), "temperature"),
    (("The cat", "lm", 1.0, 0, 0.0, 0, 5), "top-p"),
    (("The cat", "lm", 1.0, 0, 1.0, -3, 5), "seed"),
    (("The cat", "lm", 1.0, 0, 1.0, 0, 500), "tokens|between"),
    (("", "lm", 1.0, 0, 1.0, 0, 5), "Type a sentence"),
])
def test_generate_bad_settings_are_clear(client, args, message):
    with pytest.raises(AppError, match=message):
        client.predict(*args, api_name="/generate")


def test_generate_explains_a_model_that_writes_no_next_token(client):
    _, text = client.predict("The cat", "minilm", 1.0, 0, 1.0, 0, 5, api_name="/generate")
    assert text.startswith("**No sampling for minilm.**")
