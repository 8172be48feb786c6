"""What a following page shows at once when the lecturer moves (ui/classroom/route.py): /class/step answers the
step's text and its question's answers, computed once a move for every follower, and /class/answer takes a tap on
one of them with the page's signed pass, one page one student, the last answer counted; a refusal changes nothing.
On a real SQLite file, through the real routes (Starlette's test client), with a small lesson library in place of
the app's (no model)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from classroom.board import Board
from classroom.store import ClassStore
from ui.classroom.route import follow_routes
from ui.classroom.service import Classes

CHOICES = ['"<s>"', '"The"', '" cat"']


@dataclass
class Found:
    question: str = ""
    after: str = ""


@dataclass
class Lesson:
    id: str = "causal-mask"
    title: str = "The causal mask"
    steps: list = field(default_factory=lambda: [Found(), Found(question='Which token does "cat" look at?')])


class Library:
    """The few LessonLibrary calls the class endpoints make; text() counts how often a step's text is read."""

    def __init__(self):
        self.lesson, self.texts = Lesson(), 0

    def get(self, lesson_id):
        return self.lesson

    def step_number(self, lesson, step):
        return int(step)

    def step(self, lesson_id, number):
        return {"settings": {"tab": "masking", "model": "lm"}}

    def choices(self, lesson_id, number):
        return CHOICES if number == 2 else []

    def model_answer(self, lesson_id, number):
        return '" cat"'

    def text(self, lesson_id, number, quiz=False, revealed=False):
        self.texts += 1
        return f"**Step {number}** <b>not markup</b>" + ("\n\n**Question:** which?" if quiz else "")


@pytest.fixture
def hall(tmp_path):
    store = ClassStore(tmp_path / "classes.sqlite3")
    classes = Classes(store, Library(), Board())
    with TestClient(Starlette(routes=follow_routes(classes))) as client:
        yield classes, client
    store.close()


def test_a_follower_gets_the_new_steps_text_and_answers_once_a_move_for_every_follower(hall):
    classes, client = hall
    opened = classes.open("causal-mask", "http://10.0.0.5:7860/")
    code, key = opened["code"], opened["key"]
    classes.drive(code, key, "causal-mask", 2)
    read = classes.library.texts
    replies = [client.get(f"/class/step?code={code.lower()}") for _ in range(20)]
    assert {r.status_code for r in replies} == {200}
    now = replies[0].json()
    assert all(r.json() == now for r in replies)
    assert classes.library.texts == read + 1  # one reply a move, whoever asks
    assert (now["code"], now["lesson"], now["step"], now["position"], now["title"]) == \
        (code, "causal-mask", 2, "step 2 of 2", "The causal mask")
    assert now["text"].startswith("**Step 2** <b>not markup</b>")  # as written: the page's script escapes it
    assert "**Question:** which?" in now["text"]  # the quiz form while the question is open
    assert now["question"] == 'Which token does "cat" look at?' and now["choices"] == CHOICES
    assert now["revealed"] is False and now["version"] == classes.state(code).version
    classes.drive(code, key, "causal-mask", 1)  # the next move: a new reply
    assert client.get(f"/class/step?code={code}").json()["step"] == 1
    missing = client.get("/class/step?code=NOSUCH")
    assert missing.status_code == 404 and "No class has the code" in missing.json()["error"]


def test_a_tap_answers_with_the_pages_pass_one_page_one_student_the_last_counting(hall):
    classes, client = hall
    opened = classes.open("causal-mask", "http://10.0.0.5:7860/")
    code, key = opened["code"], opened["key"]
    classes.drive(code, key, "causal-mask", 2)
    _, mine = classes.page_student(code)  # the page's pass, as its load hands it
    _, other = classes.page_student(code)
    first = client.post("/class/answer", json={"code": code, "pass": mine, "answer": CHOICES[0]})
    assert first.status_code == 200 and first.json() == {"accepted": True, "answered": 1, "pass": mine}
    again = client.post("/class/answer", json={"code": code.lower(), "pass": mine, "answer": CHOICES[2]})
    assert again.json()["answered"] == 1  # the same page: its last answer counts, once
    assert client.post("/class/answer", json={"code": code, "pass": other, "answer": CHOICES[1]}).json()["answered"] == 2
    assert classes.answer_of(code, mine) == CHOICES[2]
    results = classes.results(code, key)
    assert results["answers"] == {CHOICES[0]: 0, CHOICES[1]: 1, CHOICES[2]: 1} and results["students"] == 2
    for body, why in (({"code": code, "pass": mine, "answer": "nope"}, "is not one of this question's answers"),
                      ({"code": "NOSUCH", "pass": mine, "answer": CHOICES[0]}, "No class has the code")):
        refused = client.post("/class/answer", json=body)
        assert refused.status_code == 400 and why in refused.json()["error"]
    garbled = client.post("/class/answer", content=b"not json", headers={"Content-Type": "application/json"})
    assert garbled.status_code == 400 and "as JSON" in garbled.json()["error"]
    assert classes.results(code, key)["answers"] == results["answers"]  # the refusals changed nothing
