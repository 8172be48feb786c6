"""The app launched for real (python app.py on a free port) and called through gradio_client."""
from __future__ import annotations

import json
import re

import httpx
import pytest
from gradio_client.exceptions import AppError



def endpoint_parameters(client, api_name: str) -> list[str]:
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    assert api_name in info, f"the app has no endpoint {api_name}; it has {sorted(info)}"
    return [p["parameter_name"] for p in info[api_name]["parameters"]]


@pytest.fixture(scope="module")
def client(live):
    return live.client()


def test_the_api_names_its_endpoints(client):
    assert endpoint_parameters(client, "/analyze")[:2] == ["text", "name"]
    assert endpoint_parameters(client, "/translate") == ["text", "beam"]
    assert client.predict(api_name="/ping") == "ok"


def test_analyze_returns_the_core_outputs(client):
    note, tokens, grid, average, table, picker = client.predict(
        "The cat sat on the mat", "lm", None, False, 2, 3, api_name="/analyze")  # kind, presenter, layer, head
    assert tokens[0]["token"] == "<s>"
    figure = json.loads(grid["plot"])
    assert (figure["data"][0]["zmin"], figure["data"][0]["zmax"]) == (0, 1)  # the fixed 0..1 scale
    assert any(a["text"] == "<b>L1 H1</b>" for a in figure["layout"]["annotations"])
    assert table["headers"][:2] == ["head", "layer"] and table["data"][0][0] == "L1 H1"
    assert picker == "L2 H3"  # the head open in detail, picked in the tile picker
    predicted = client.predict("The cat sat on the", "lm", api_name="/predict")
    assert "Next token" in predicted and "Greedy continuation" in predicted


def test_translate_gives_the_iso_date(client):
    assert client.predict("Saturday, 21st of November 2026", api_name="/translate") == "2026-11-21"
    assert client.predict("Saturday, 21st of November 2026", 2, api_name="/translate") == "2026-11-21"


@pytest.mark.parametrize("args,message", [
    (("", "lm"), "Type a sentence"),
    (("x" * 2500, "lm"), "at most 2000"),
])
def test_bad_input_is_a_clear_message_and_the_next_call_works(client, args, message):
    with pytest.raises(AppError, match=message):
        client.predict(*args, api_name="/analyze")
    assert client.predict("Mary gave roses to Susan", "lm", api_name="/analyze")[1][0]["token"] == "<s>"


def test_wrong_types_and_out_of_range_heads_are_clear(client):
    with pytest.raises(AppError, match="must be a string"):
        client.predict(123, api_name="/translate")
    with pytest.raises(AppError, match="between 1 and|maximum value"):
        client.predict("The cat", "lm", 99, 1, api_name="/head")
    assert client.predict(api_name="/ping") == "ok"


def test_ablate_knocks_out_heads_and_reports_the_change(client):
    assert endpoint_parameters(client, "/ablate")[:3] == ["text", "model", "heads"]
    nothing = client.predict("3 March 1999", "dates", "", api_name="/ablate")
    assert nothing["before"] == nothing["after"] == client.predict("3 March 1999", api_name="/translate")
    assert nothing["change"] == 0 and nothing["heads"] == []
    blind = [client.predict(text, "dates", "cross all", api_name="/ablate")
             for text in ("3 March 1999", "21 November 2026")]
    assert blind[0]["after"] == blind[1]["after"] != blind[0]["before"]
    assert blind[0]["change"] > 1 and len(blind[0]["heads"]) == 8
    lm = client.predict("The cat sat on the", "lm", "L1 H1, L2 H2", api_name="/ablate")
    assert lm["heads"] == ["L1 H1", "L2 H2"] and isinstance(lm["change"], float)
    assert len(lm["before_top"]) == 5


@pytest.mark.parametrize("args,message", [
    (("3 March 1999", "dates", "L2 H3"), "name the kind first"),
    (("3 March 1999", "dates", "cross L9 H1"), "does not exist"),
    (("The cat", "lm", "head two"), "write heads like"),
    (("The cat", "lm", "L1 H1", "sideways"), "method must be one of"),
    # a Gradio message is HTML (its toast renders it): the marker is escaped, or the page drops it as a tag
    (("The cat sat", "mlm", "L1 H1"), "Put a &lt;mask&gt; in the text"),
])
def test_ablate_bad_heads_get_a_clear_message(client, args, message):
    with pytest.raises(AppError, match=message):
        client.predict(*args, api_name="/ablate")
    assert client.predict(api_name="/ping") == "ok"


def test_the_running_app_serves_its_build_files_compressed_and_equal_to_gradios(live):
    page = httpx.get(live.url).text
    names = sorted(set(re.findall(r"assets/[\w.-]+\.(?:js|css)", page)))
    assert names, "the page names no build files"
    for name in names:
        url = live.url + name
        plain = httpx.get(url, headers={"accept-encoding": "identity"})  # Gradio's own answer, uncompressed
        first, second = (httpx.get(url, headers={"accept-encoding": "br"}) for _ in range(2))
        assert plain.status_code == first.status_code == second.status_code == 200
        assert first.headers["content-encoding"] == "br" and first.headers["content-type"] == plain.headers["content-type"]
        assert first.content == second.content == plain.content  # httpx decodes br
        etag = first.headers.get("etag")
        if etag:
            assert httpx.get(url, headers={"accept-encoding": "br", "if-none-match": etag}).status_code == 304


def test_paths_outside_the_build_are_gradios_to_answer(live):
    for path in ("assets/no-such-file.js", "assets/../app.py", "assets/%2e%2e/app.py"):
        answer = httpx.get(live.url + path, headers={"accept-encoding": "br"})
        assert answer.status_code in (403, 404) and "build_demo" not in answer.text, path  # Gradio's refusal


def test_the_page_itself_arrives_compressed_and_whole(live):
    plain = httpx.get(live.url + "?tab=steps&model=lm", headers={"accept-encoding": "identity"})
    packed = httpx.get(live.url + "?tab=steps&model=lm", headers={"accept-encoding": "br"})
    assert packed.headers["content-encoding"] == "br" and "content-encoding" not in plain.headers
    assert packed.text == plain.text and "gradio_config" in packed.text  # httpx decodes br
    assert int(packed.headers["content-length"]) < len(plain.content) / 5



def _analyze_stream(live, encoding: str, text: str) -> httpx.Response:
    """One /analyze over plain HTTP: POST the call, then read its event stream with this Accept-Encoding."""
    data = [text, "lm", None, False, 1, 1]
    with httpx.Client(base_url=live.url, timeout=120) as http:
        posted = http.post("gradio_api/call/analyze", json={"data": data})
        posted.raise_for_status()
        with http.stream("GET", f"gradio_api/call/analyze/{posted.json()['event_id']}",
                         headers={"accept-encoding": encoding}) as stream:
            stream.read()
            stream.wire_bytes = stream.num_bytes_downloaded
            return stream


def test_results_arrive_compressed_and_whole(live):
    """The event stream a result comes in is brotli-compressed for a client that accepts it
    (ui/runtime/streams.py), and decodes to what an uncompressed client gets."""
    text = "the cat sat on the mat while the dog watched " * 6  # 55 tokens: a grid of ~60 KB
    plain = _analyze_stream(live, "identity", text)
    packed = _analyze_stream(live, "br", text)
    assert "content-encoding" not in plain.headers and packed.headers["content-encoding"] == "br"
    assert "event: complete" in packed.text
    result = lambda response: json.loads(response.text.split("event: complete\ndata: ", 1)[1].splitlines()[0])
    assert result(packed) == result(plain)  # the same answer (the trace was cached: the same figures)
    assert packed.wire_bytes < len(plain.content) / 3


def test_the_classify_endpoint_answers_over_http(client):
    from ui.tabs import classifier
    from ui.page.messages import MAX_CHARS

    result = client.predict("a large grey animal with a long trunk", api_name="/classify")
    assert list(result)[0] == "noun.animal" and len(result) == classifier.TOP_K  # {category: probability}
    assert max(result, key=result.get) == "noun.animal"
    for bad, message in [("", "Type a definition first"), ("x" * (MAX_CHARS + 1), "at most"),
                         (42, "must be a string, not int")]:
        with pytest.raises(Exception, match=message):
            client.predict(bad, api_name="/classify")
