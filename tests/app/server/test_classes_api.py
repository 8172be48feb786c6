"""A class through the running app (docs/classes.md): /class_open, /class_follow, /class_drive, /class_answer,
/class_results and /class_reveal with named parameters, the followers' route /class/wait, each refusal a clear
message that changes nothing, and a restarted server that keeps the class, its step and its answers."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from harness.live_app import ARTIFACTS, assert_clear_message, live_app

LESSON = "what-attention-computes"  # step 1 asks a token question; step 2 asks nothing
FOLLOW_KEYS = {"code", "lesson", "step", "tab", "settings", "question", "choices", "students", "revealed", "answers"}


@pytest.fixture(scope="module")
def client(live):
    return live.client()


def opened(client) -> dict:
    return client.predict(lesson=LESSON, api_name="/class_open")


def refused(call, what: str) -> str:
    with pytest.raises(Exception) as caught:
        call()
    assert_clear_message(str(caught.value), what)
    return str(caught.value)


def waited(url: str, code: str, since: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{url}class/wait?code={code}&since={since}", timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_class_opens_on_the_lessons_first_step_with_a_secret_key_and_a_link_a_phone_reaches(client):
    one, two = opened(client), opened(client)
    assert set(one) == {"code", "key", "link"} and one["code"] != two["code"] and one["key"] != two["key"]
    assert len(one["key"]) == 22  # 128 random bits, URL-safe base64
    assert one["link"].endswith(f"/?class={one['code']}")
    assert "127.0.0.1" not in one["link"] and "localhost" not in one["link"]
    follow = client.predict(code=one["code"], api_name="/class_follow")
    assert set(follow) == FOLLOW_KEYS and one["key"] not in json.dumps(follow)
    assert (follow["lesson"], follow["step"], follow["tab"], follow["revealed"]) == (LESSON, 1, "attention", False)
    assert follow["settings"]["model"] == "lm" and follow["settings"]["layer"] == 1 and follow["settings"]["head"] == 4
    assert follow["question"] and len(follow["choices"]) >= 5 and follow["answers"] == {}


def test_answers_count_once_per_student_the_last_counts_and_the_class_sees_them_only_after_reveal(client):
    start = opened(client)
    code, key = start["code"], start["key"]
    choices = client.predict(code=code, api_name="/class_follow")["choices"]
    assert client.predict(code=code, student="s1", answer=choices[0], api_name="/class_answer") == \
        {"accepted": True, "answered": 1}
    assert client.predict(code=code, student="s1", answer=choices[1], api_name="/class_answer")["answered"] == 1
    assert client.predict(code=code, student="s2", answer=choices[1], api_name="/class_answer")["answered"] == 2
    results = client.predict(code=code, key=key, api_name="/class_results")
    assert set(results) == {"question", "choices", "answers", "students", "answered"}
    assert results["answers"] == {c: 2 if c == choices[1] else 0 for c in choices}
    assert (results["students"], results["answered"]) == (2, 2)
    assert client.predict(code=code, api_name="/class_follow")["answers"] == {}  # not before Reveal
    revealed = client.predict(code=code, key=key, api_name="/class_reveal")
    assert set(revealed) == FOLLOW_KEYS and revealed["revealed"] is True
    assert revealed["answers"] == results["answers"]
    moved = client.predict(code=code, key=key, lesson=LESSON, step=2, api_name="/class_drive")
    assert (moved["step"], moved["tab"], moved["revealed"], moved["answers"], moved["choices"]) == \
        (2, "steps", False, {}, [])
    refused(lambda: client.predict(code=code, student="s1", answer=choices[0], api_name="/class_answer"),
            "an answer to a step that asks nothing")


@pytest.mark.parametrize("key", ["", "not-the-key", "A" * 22])
def test_a_wrong_or_missing_key_is_refused_with_a_message_and_changes_nothing(client, key):
    start = opened(client)
    code = start["code"]
    client.predict(code=code, student="s1", answer=client.predict(code=code, api_name="/class_follow")["choices"][0],
                   api_name="/class_answer")
    before = client.predict(code=code, api_name="/class_follow")
    for name, params in (("/class_drive", dict(lesson=LESSON, step=2)), ("/class_reveal", {}),
                         ("/class_results", {})):
        message = refused(lambda: client.predict(code=code, key=key, api_name=name, **params), name)
        assert "lecturer's key" in message and "Nothing was changed" in message
    assert client.predict(code=code, api_name="/class_follow") == before


def test_what_the_code_alone_cannot_do_and_bad_answers_are_refused(client):
    start = opened(client)
    code = start["code"]
    choices = client.predict(code=code, api_name="/class_follow")["choices"]
    for what, call, words in [
        ("an answer that is no choice", lambda: client.predict(code=code, student="s1", answer="the mat",
                                                               api_name="/class_answer"), "not one of"),
        ("a student id with spaces", lambda: client.predict(code=code, student="Ada Lovelace", answer=choices[0],
                                                            api_name="/class_answer"), "student id"),
        ("an unknown code", lambda: client.predict(code="NOSUCH", api_name="/class_follow"), "No class has the code"),
        ("an unknown lesson", lambda: client.predict(lesson="no-such-lesson", api_name="/class_open"), "No lesson"),
        ("a step past the lesson", lambda: client.predict(code=code, key=start["key"], lesson=LESSON, step=99,
                                                          api_name="/class_drive"), "steps 1 to"),
    ]:
        assert words in refused(call, what)
    assert client.predict(code=code, key=start["key"], api_name="/class_results")["answered"] == 0


def test_the_followers_route_answers_at_once_then_when_the_lecturer_moves(live, client):
    start = opened(client)
    status, now = waited(live.url, start["code"].lower(), -1)
    assert status == 200 and set(now) == FOLLOW_KEYS | {"version"} and now["step"] == 1
    client.predict(code=start["code"], key=start["key"], lesson=LESSON, step=2, api_name="/class_drive")
    status, moved = waited(live.url, start["code"], now["version"])
    assert status == 200 and moved["step"] == 2 and moved["version"] > now["version"]
    status, unknown = waited(live.url, "NOSUCH", -1)
    assert status == 404 and "No class has the code" in unknown["error"]


def test_a_restarted_server_keeps_the_class_its_step_and_its_answers(tmp_path, model_assets):
    env = {"ATTENTION_ASSETS": str(model_assets), "ATTENTION_CLASSES": str(tmp_path / "classes.sqlite3")}
    with live_app(ARTIFACTS / "logs" / "classes_restart_1.log", env=env) as first:
        client = first.client()
        start = opened(client)
        code, key = start["code"], start["key"]
        choices = client.predict(code=code, api_name="/class_follow")["choices"]
        for n, choice in enumerate(choices[:3]):
            client.predict(code=code, student=f"s{n}", answer=choice, api_name="/class_answer")
        client.predict(code=code, key=key, lesson=LESSON, step=1, api_name="/class_drive")
        before = client.predict(code=code, key=key, api_name="/class_results")
    with live_app(ARTIFACTS / "logs" / "classes_restart_2.log", env=env) as second:
        client = second.client()
        assert client.predict(code=code, key=key, api_name="/class_results") == before
        assert before["answered"] == 3
        follow = client.predict(code=code, api_name="/class_follow")
        assert (follow["lesson"], follow["step"], follow["students"]) == (LESSON, 1, 3)
        assert waited(second.url, code, -1)[1]["step"] == 1  # the followers' route knows it too
        assert client.predict(code=code, key=key, api_name="/class_reveal")["answers"] == before["answers"]
        refused(lambda: client.predict(code=code, key="wrong", api_name="/class_results"), "a wrong key after restart")
