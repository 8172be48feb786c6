"""/head_finder through gradio_client on the real app (python app.py): named parameters, the issue's keys, the
ranking, and refusals that say what to send instead."""
from __future__ import annotations

import pytest
from gradio_client.exceptions import AppError


@pytest.fixture(scope="module")
def client(live):
    return live.client()


def test_head_finder_answers_with_named_parameters_and_the_keys_it_promises(client):
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/head_finder"]
    assert [p["parameter_name"] for p in info["parameters"]] == ["model", "score"]
    answer = client.predict(model="smollm2", score="induction", api_name="/head_finder")
    assert answer["model"] == "smollm2" and answer["corpus"]["texts"] == 300
    assert set(answer["corpus"]) == {"name", "texts", "tokens"}
    assert len(answer["heads"]) == 270 and answer["ranked"][0] == "L19 H7"
    assert {"head", "layer", "index", "previous", "induction", "first", "self", "entropy_bits",
            "mean_distance"} <= set(answer["heads"][0])


@pytest.mark.parametrize("model, score, said", [("lm", "loudness", "Unknown score"), ("gpt-9", "first", "Unknown model"),
                                                ("mlm", "induction", "bidirectional")])
def test_head_finder_refuses_with_a_message(client, model, score, said):
    with pytest.raises(AppError, match=said):
        client.predict(model=model, score=score, api_name="/head_finder")
