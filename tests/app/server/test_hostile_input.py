"""Hostile and odd input through the real app's API (gradio_client and raw HTTP), plus a
property-based test of the text-to-figures handler in-process.

Every input must get either a correct result or a clear message: a gradio_client AppError
whose text is written for a person, never Gradio's generic "upstream Gradio app has raised
an exception", never a traceback, never the app's catch-all for its own bugs. And the next
normal request must still work.
"""
from __future__ import annotations

import html
import json
import math
import re

import httpx
import pytest
from gradio_client.exceptions import AppError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile_strings import HOSTILE, LONE_SURROGATES, MAX_CHARS, expects_result
from harness import api_doc
from harness.live_app import Endpoints, assert_clear_message
from viz.labels import label_step

NORMAL = "The cat sat on the mat"


@pytest.fixture(scope="module")
def app(live):
    return live


@pytest.fixture(scope="module")
def client(app):
    return app.client()


@pytest.fixture(scope="module")
def api(client):
    return Endpoints(client)


def plot_layout(payload) -> dict:
    assert isinstance(payload, dict) and payload.get("type") == "plotly", f"not a Plotly figure: {payload!r:.200}"
    figure = json.loads(payload["plot"])
    assert figure.get("data"), "a figure with no traces"
    return figure["layout"]


def tick_texts(layout: dict) -> list[list[str]]:
    return [axis["ticktext"] for key, axis in layout.items()
            if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and "ticktext" in axis]


def assert_escaped_labels(layout: dict, tokens: list[str] | None = None) -> None:
    """Tick labels are HTML-escaped (Plotly would swallow '<s>'), and show the tokens themselves."""
    axes = tick_texts(layout)
    for labels in axes:
        for label in labels:
            assert html.escape(html.unescape(label), quote=False) == label, f"tick label not escaped: {label!r}"
    if tokens is not None:
        assert axes, "the head figure has no token tick labels"
        for labels in axes:
            shown = [html.unescape(label) for label in labels]
            # a long input labels every k-th token, and a narrow figure (the head in presenter mode) more sparsely
            # than a wide one: k is whichever step gives as many labels as were drawn
            step = next((k for k in range(1, len(tokens) + 1) if len(range(0, len(tokens), k)) == len(shown)), None)
            assert step is not None, f"{len(shown)} tick labels for {len(tokens)} tokens"
            assert step >= label_step(len(tokens)), f"{len(shown)} tick labels for {len(tokens)} tokens: too many"
            every_kth = [tokens[i] for i in range(0, len(tokens), step)]
            plain = [t for t in every_kth if t.isprintable() and t.strip()]
            assert all(t in shown for t in plain), f"tokens missing from the labels: {set(plain) - set(shown)}"


def check_analyze(result) -> list[str]:
    """The /analyze outputs are a coherent view; returns the tokens the app says it read."""
    note, highlighted, grid, average, frame, tile = result
    tokens = highlighted["value"] if isinstance(highlighted, dict) and "value" in highlighted else highlighted
    tokens = [t["token"] for t in tokens]
    assert tokens, "no tokens shown"
    for figure in (grid, average):
        assert_escaped_labels(plot_layout(figure))
    assert frame["data"], "empty head statistics"
    return tokens


def analyze_and_head(client, api, text, name="lm"):
    tokens = check_analyze(client.predict(*api.args("/analyze", text=text, name=name, kind=None), api_name="/analyze"))
    head = client.predict(*api.args("/head", text=text, name=name, layer=1, head=1, kind=None), api_name="/head")
    predicted = client.predict(*api.args("/predict", text=text, name=name), api_name="/predict")
    assert isinstance(predicted, str) and predicted, "no predictions text"
    assert_escaped_labels(plot_layout(head), tokens)
    return tokens


def assert_still_works(client, api) -> None:
    tokens = analyze_and_head(client, api, NORMAL)
    assert len(tokens) > 2


# ---- text through /analyze and /head ----------------------------------------------------
@pytest.mark.parametrize("text", [t for _, t in HOSTILE], ids=[i for i, _ in HOSTILE])
def test_hostile_text_lm(client, api, text):
    try:
        tokens = analyze_and_head(client, api, text)
    except AppError as e:
        assert_clear_message(e.message, f"lm refused {text[:40]!r}")
        assert not expects_result(text), f"lm refused text it should draw: {e.message}"
        if len(text) > MAX_CHARS:
            assert str(MAX_CHARS) in e.message, f"the message should state the limit: {e.message}"
    else:
        assert expects_result(text), f"lm drew text it should refuse ({len(text)} chars)"
        if "<img" in text:
            assert "<img" in "".join(tokens).replace("▁", " "), f"'<img' not shown literally: {tokens}"
    assert_still_works(client, api)


MODEL_SAMPLE = ["", "a" * 100_000, "\x00", "👩\u200d👩\u200d👧\u200d👦 family", "שלום עולם", "中文字符测试",
                "<img src=x onerror=alert(1)>", "</s>", "<s>", "<mask>", "<mask><mask><mask>", "{{7*7}}",
                "'; DROP TABLE users; --", "w" * 5000, "the dog and " * 120]


@pytest.mark.parametrize("name", ["mlm", "dates"])
def test_hostile_text_other_models(client, api, name):
    for text in MODEL_SAMPLE:
        try:
            check_analyze(client.predict(*api.args("/analyze", text=text, name=name, kind=None), api_name="/analyze"))
        except AppError as e:
            assert_clear_message(e.message, f"{name} refused {text[:40]!r}")
            assert not expects_result(text), f"{name} refused text it should draw: {e.message}"
        else:
            assert expects_result(text), f"{name} drew text it should refuse ({len(text)} chars)"
    normal = "3 March 1999" if name == "dates" else NORMAL
    check_analyze(client.predict(*api.args("/analyze", text=normal, name=name, kind=None), api_name="/analyze"))


@pytest.mark.parametrize("text", ["", "a" * 100_000, "\x00", "😀 <img src=x onerror=alert(1)>", "</s> <s>",
                                  "{{7*7}}", "中文"])
def test_hostile_text_translate(client, api, text):
    try:
        answer = client.predict(*api.args("/translate", text=text), api_name="/translate")
    except AppError as e:
        assert_clear_message(e.message, f"/translate refused {text[:40]!r}")
        assert not expects_result(text), f"/translate refused text it should read: {e.message}"
    else:
        assert isinstance(answer, str)
        assert expects_result(text)


# ---- raw HTTP: what gradio_client cannot send -------------------------------------------
def raw_call(base_url: str, api: str, data: list, timeout: float = 60) -> tuple[str, object]:
    """POST /gradio_api/call/<api>, then read its SSE stream: ("complete", outputs) or ("error", payload)."""
    with httpx.Client(base_url=base_url, timeout=timeout) as http:
        # json.dumps keeps lone surrogates as \\udXXX escapes: valid JSON text, even if not valid UTF-16
        posted = http.post(f"gradio_api/call/{api}", content=json.dumps({"data": data}),
                           headers={"content-type": "application/json"})
        assert posted.status_code == 200, f"POST {api}: HTTP {posted.status_code} {posted.text[:300]}"
        stream = http.get(f"gradio_api/call/{api}/{posted.json()['event_id']}")
        assert stream.status_code == 200, f"GET {api}: HTTP {stream.status_code}"
    event, payload = None, None
    for line in stream.text.splitlines():
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event in ("complete", "error"):
            payload = json.loads(line.split(":", 1)[1])
            return event, payload
    raise AssertionError(f"no result in the stream: {stream.text[:300]}")


def error_message(payload) -> str | None:
    return payload.get("error") if isinstance(payload, dict) else payload


@pytest.mark.parametrize("text", [t for _, t in LONE_SURROGATES], ids=[i for i, _ in LONE_SURROGATES])
def test_lone_surrogates(app, client, api, text):
    event, payload = raw_call(app.url, "analyze", api.args("/analyze", text=text, name="lm", kind=None))
    if event == "error":
        assert_clear_message(error_message(payload), f"lone surrogate {text!r}")
    else:
        highlighted = payload[1]["value"] if isinstance(payload[1], dict) else payload[1]
        assert [t["token"] for t in highlighted], "no tokens"
    assert_still_works(client, api)


WRONG_TEXT = [42, 3.5, None, True, [], ["a", "b"], {"a": 1}, {"text": "<img src=x onerror=alert(1)>"}]


@pytest.mark.parametrize("value", WRONG_TEXT, ids=[repr(v) for v in WRONG_TEXT])
def test_wrong_type_text(app, client, api, value):
    event, payload = raw_call(app.url, "analyze", api.args("/analyze", text=value, name="lm", kind=None))
    if event == "error":
        assert_clear_message(error_message(payload), f"text={value!r}")
    else:
        highlighted = payload[1]["value"] if isinstance(payload[1], dict) else payload[1]
        assert [t["token"] for t in highlighted], f"text={value!r}: no tokens"
    assert_still_works(client, api)


WRONG_MODEL = ["gpt-4", "", None, 42, "../lm", "LM", ["lm"], {"name": "lm"}, "lm\x00"]


@pytest.mark.parametrize("name", WRONG_MODEL, ids=[repr(v) for v in WRONG_MODEL])
def test_unknown_model(app, client, api, name):
    event, payload = raw_call(app.url, "analyze", api.args("/analyze", text=NORMAL, name=name, kind=None))
    assert event == "error", f"model={name!r} was accepted"
    assert_clear_message(error_message(payload), f"model={name!r}")
    assert_still_works(client, api)


WRONG_INDEX = [0, -1, 5, 99, 1e9, 2.5, "x", "1", None, [1], {"n": 1}, True]


@pytest.mark.parametrize("field", ["layer", "head"])
@pytest.mark.parametrize("value", WRONG_INDEX, ids=[repr(v) for v in WRONG_INDEX])
def test_out_of_range_layer_head(app, client, api, field, value):
    numbers = {"layer": 1, "head": 1, field: value}
    event, payload = raw_call(app.url, "head", api.args("/head", text=NORMAL, name="lm", kind=None, **numbers))
    if event == "error":
        assert_clear_message(error_message(payload), f"{field}={value!r}")
    else:  # "1" as a string may fairly be read as 1
        assert value == "1", f"{field}={value!r} was accepted: {str(payload)[:200]}"
    assert_still_works(client, api)


# /analyze reads its inputs in the handler's own thread (ui.runtime.wire.received): every one of them is checked there
WRONG_ANALYZE_INPUT = [("layer", 99), ("layer", "x"), ("layer", [1]), ("layer", math.nan), ("head", {"n": 1}),
                       ("head", 0), ("kind", "sideways"), ("kind", ["self"]), ("presenter", {"on": True})]


@pytest.mark.parametrize("field,value", WRONG_ANALYZE_INPUT, ids=[f"{f}={v!r}" for f, v in WRONG_ANALYZE_INPUT])
def test_wrong_analyze_inputs(app, client, api, field, value):
    given = {"text": NORMAL, "name": "lm", "kind": None, field: value}
    event, payload = raw_call(app.url, "analyze", api.args("/analyze", **given))
    if event == "error":
        assert_clear_message(error_message(payload), f"{field}={value!r}")
    else:  # Gradio's checkbox reads any value as true or false; nothing else may pass
        assert field == "presenter", f"{field}={value!r} was accepted: {str(payload)[:200]}"
    assert_still_works(client, api)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "NaN", "Infinity"], ids=repr)
def test_non_finite_layer_is_refused(app, client, api, value):
    """Python's JSON parser on the server accepts the NaN and Infinity tokens that json.dumps writes."""
    event, payload = raw_call(app.url, "head", api.args("/head", text=NORMAL, name="lm", layer=value, head=1, kind=None))
    assert event == "error", f"layer={value!r} was accepted"
    assert_clear_message(error_message(payload), f"layer={value!r}")
    assert_still_works(client, api)


# ---- the API contract a script relies on (found by driving every endpoint with bad values) ----------------
MINILM = "The animal didn't cross the street because it was too tired."


def test_a_fresh_api_session_reaches_every_head_of_the_model_it_names(app):
    """The layer and head sliders are drawn for lm (4 x 4); an API call naming minilm (6 x 12) is checked
    against minilm, whatever the session's sliders held."""
    client = app.client()
    api = Endpoints(client)
    analyzed = client.predict(*api.args("/analyze", text=MINILM, name="minilm", layer=6, head=12, kind=None),
                              api_name="/analyze")
    assert analyzed[-1] == "L6 H12"
    head = client.predict(*api.args("/head", text=MINILM, name="minilm", layer=5, head=9, kind=None), api_name="/head")
    assert "layer 5, head 9" in plot_layout(head)["title"]["text"].lower()
    summary = client.predict(*api.args("/interventions", text=MINILM, name="minilm", chosen=["L6 H12"]),
                             api_name="/interventions")[0]
    assert "L6 H12" in summary
    with pytest.raises(AppError, match="6 layers"):
        client.predict(*api.args("/head", text=MINILM, name="minilm", layer=7, head=1, kind=None), api_name="/head")


@pytest.mark.parametrize("api_name,field,value", [
    ("shuffle", "seed_value", "abc"), ("shuffle", "seed_value", [1]), ("shuffle", "seed_value", -1),
    ("copying", "seed_value", math.nan), ("copying", "seed_value", -1), ("analyze", "text", ["a", "b"]),
    ("predict", "text", 12345), ("steps", "log_temperature", "warm")])
def test_bad_numbers_and_texts_get_a_message_not_a_silent_failure(app, client, api, api_name, field, value):
    event, payload = raw_call(app.url, api_name, api.args(f"/{api_name}", **{field: value}))
    assert event == "error", f"/{api_name} {field}={value!r} was accepted: {str(payload)[:200]}"
    assert_clear_message(error_message(payload), f"/{api_name} {field}={value!r}")
    assert_still_works(client, api)


def test_a_decoding_step_past_the_output_is_its_last_step(client, api):
    """The step slider is drawn 1..11; a link or a call may ask for any step, and the view takes the last one."""
    out = client.predict(*api.args("/encoder_decoder", text="3 March 1999", step_value=999), api_name="/encoder_decoder")
    assert "1999-03-03" in out[0] and out[-1]["value"] == out[-1]["maximum"] == len("1999-03-03") + 1  # + end token


def test_no_temperature_is_t_equal_one(client, api):
    caption = client.predict(*api.args("/steps", text=NORMAL, model="lm", layer=1, head=1, kind=None,
                                       log_temperature=None), api_name="/steps")[0]
    assert caption.startswith("**Temperature 1,"), caption[:300]


def test_messages_echo_no_huge_value_and_no_html(app, client, api):
    for api_name, values in (("translate", dict(beam="x" * 100_000)), ("analyze", dict(name="<img src=x>" * 10_000)),
                            ("ablate", dict(model="y" * 100_000))):
        args = api.args(f"/{api_name}", **{"text": "3 March 1999" if api_name == "translate" else NORMAL, **values})
        event, payload = raw_call(app.url, api_name, args)
        message = error_message(payload)
        assert event == "error" and len(message) < 500 and "<img" not in message, message[:200]
        assert_clear_message(message, f"/{api_name}")


def test_a_plain_http_call_leaving_out_a_default_is_told_so(app, client, api):
    event, payload = raw_call(app.url, "translate", ["3 March 1999"])
    assert event == "error" and "takes 2 values and got 1" in error_message(payload)
    assert_still_works(client, api)


def test_a_quiz_guess_the_mask_hides_is_said_so(client, api):
    answer = client.predict(*api.args("/reveal", text=NORMAL, name="lm", layer=1, head=1, kind=None, row=1, guess=4),
                            api_name="/reveal")[1]
    assert "cannot see" in answer and "ranks" not in answer


PAGE_EVENTS = ("fit_controls", "fit_kind", "restore_view", "restore_heads", "toy_preview", "learning_snapshot",
               "pick_head", "month_head", "example", "steps_live", "decoding_step", "shuffle_again", "toy_stop")


def documented_endpoints() -> dict[str, list[str]]:
    """docs/api.md's list of public endpoints (written by harness/api_doc.py): name -> parameter names."""
    return api_doc.documented(api_doc.API_MD.read_text(encoding="utf-8"))


def test_the_api_doc_lists_exactly_the_endpoints_the_server_publishes(api):
    published = {name.lstrip("/"): [p["parameter_name"] for p in info["parameters"]] for name, info in api.info.items()}
    listed = documented_endpoints()
    assert listed == published, (
        f"docs/api.md lists but the server does not publish: {sorted(set(listed) - set(published))}; published, not in "
        f"docs/api.md: {sorted(set(published) - set(listed))}; parameters differ: "
        f"{sorted(n for n in set(listed) & set(published) if listed[n] != published[n])}")
    assert not any(p.startswith("param_") for params in published.values() for p in params)
    for name in ("analyze", "head", "predict", "translate", "ablate", "classify", "train_toy", "ping"):
        assert name in published


def test_events_that_keep_the_page_in_step_are_not_api(client, api):
    assert not set(PAGE_EVENTS) & {name.lstrip("/") for name in api.info}
    with pytest.raises(ValueError, match="example"):  # gradio_client does not call a private event
        client.predict(0, api_name="/example")


def test_the_monitoring_pages_are_closed(app):
    """Gradio's /monitoring summary lists every visitor's requests and timings, to anyone, unless turned off."""
    with httpx.Client(base_url=app.url, timeout=30) as http:
        assert http.get("monitoring/summary").status_code in (403, 404)
        assert http.get("gradio_api/monitoring/summary").status_code in (403, 404)


def test_server_log_has_no_handler_crash(app, client, api):
    """Runs last in this module: the app's own handlers never crashed on any input above."""
    assert_still_works(client, api)
    log = app.log_text()
    crashes = re.findall(r"handler \S+ failed", log)
    assert not crashes, f"the app's handlers crashed {len(crashes)} times ({crashes[:3]}); see {app.log}"


# ---- in-process property test of the text-to-figures path -------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=80) | st.sampled_from([t for _, t in HOSTILE]),
       name=st.sampled_from(["lm", "mlm", "dates"]), presenter=st.booleans())
def test_analyze_handler_property(registry, text, name, presenter):
    from ui.tabs.attention import analyze, show_head
    from ui.page.messages import InputError

    try:
        note, tokens, grid, average, frame, _ = analyze(registry, text, name, None, presenter)
        detail = show_head(registry, text, name, 1, 1, None, presenter)
    except InputError as e:
        assert_clear_message(str(e), f"{name} refused {text[:40]!r}")
        assert not expects_result(text), f"{name} refused text it should draw: {e}"
        return
    assert expects_result(text), f"{name} drew text it should refuse ({len(text)} chars)"
    assert tokens and all(isinstance(t, str) for t, _ in tokens)
    for figure in (grid, average, detail):
        assert figure.layout.height, "every figure needs an explicit height"
        assert_escaped_labels(figure.to_plotly_json()["layout"])
    assert_escaped_labels(detail.to_plotly_json()["layout"], [t for t, _ in tokens])
