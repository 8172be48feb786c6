"""Lessons through the running app: /lessons and /lesson_step, a lecturer's folder given with --lessons (its bad
file named on the page, its good one in the list), and bad requests answered with clear messages."""
from __future__ import annotations

import sys
import urllib.request

import pytest

from harness.live_app import ARTIFACTS, assert_clear_message, live_app

MINE = """---
title: My own lesson
id: my-own
model: lm
text: The cat sat on the mat
---

## Look back
layer: 1
head: 4

Claims:
- weight L1 H4 from "sat" to "cat" <= 0.1
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("my_lessons")
    (folder / "mine.md").write_text(MINE, encoding="utf-8")
    (folder / "broken.md").write_text(MINE.replace("id: my-own", "id: broken").replace("layer: 1", "lair: 1"), encoding="utf-8")
    with live_app(ARTIFACTS / "logs" / "lessons_app.log",
                  command=[sys.executable, "app.py", "--lessons", str(folder)]) as running:
        yield running


@pytest.fixture(scope="module")
def client(app):
    return app.client()


def test_lessons_lists_the_shipped_ones_then_the_lecturers(client):
    listing = client.predict(api_name="/lessons")
    ids = [lesson["id"] for lesson in listing]
    assert ids[-1] == "my-own" and "causal-mask" in ids and "broken" not in ids
    assert all(set(lesson) == {"id", "title", "steps"} and lesson["steps"] >= 1 for lesson in listing)


def test_lesson_step_gives_settings_text_and_claims(client):
    answer = client.predict("cross-attention-on-dates", 2, api_name="/lesson_step")
    assert answer["settings"]["model"] == "dates" and answer["settings"]["step"] == 6
    assert answer["settings"]["tab"] == "encoder_decoder"
    assert "month head" in answer["text"]
    assert answer["claims"] == [{"claim": "month cross L2 H3 >= 0.9", "value": answer["claims"][0]["value"],
                                 "holds": True}]


def test_a_false_claim_in_the_lecturers_lesson_says_it_does_not_hold(client):
    (claim,) = client.predict("my-own", 1, api_name="/lesson_step")["claims"]
    assert claim["holds"] is False and claim["value"] > 0.9


def test_the_page_names_the_broken_file_its_line_and_the_fix(app):
    page = urllib.request.urlopen(app.url, timeout=30).read().decode("utf-8")
    assert "broken.md, line 9" in page and "Fix:" in page
    assert str(ARTIFACTS.parent) not in page


@pytest.mark.parametrize("lesson, step", [("nope", 1), ("causal-mask", 99), ("causal-mask", "x"),
                                          ("<b>x</b>" * 50, 1), ("../../etc/passwd", 1)])
def test_bad_requests_get_a_clear_message(client, lesson, step):
    with pytest.raises(Exception) as caught:
        client.predict(lesson, step, api_name="/lesson_step")
    assert_clear_message(caught.value, f"/lesson_step({lesson[:20]!r}, {step!r})")
    assert "<b>" not in str(caught.value)
    assert client.predict(api_name="/ping") == "ok"
