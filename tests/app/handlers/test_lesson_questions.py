"""Questions a machine can read: a question says what kind of answer it takes (token, head, layer), its Answer:
starts with that answer and a claim of the step names it, so the answers to offer (LessonLibrary.choices) and the
model's own answer (LessonLibrary.model_answer) are known; an After: paragraph is shown only with the answer."""
from __future__ import annotations

import pytest

from analysis import lessons as fmt
from ui.lessons import library as lessons
from ui.page.controls import default_settings
from ui.page.messages import InputError

ASKED = """---
title: A test lesson
id: test-lesson
model: lm
text: The cat sat on the mat
---

## The previous token
tab: attention
layer: 1
head: 4

Each row is a token asking where to look.

Question (token): Where does "sat" look?

Answer: "cat", almost all of its weight.

After: Every row does the same: the token just before.

Claims:
- weight L1 H4 from "sat" is highest on "cat"

## Which head
tab: attention
layer: 1
head: 1

Question (head): Which head of layer 1 looks from "sat" at "cat" most?

Answer: L1 H4: the previous-token head.

Claims:
- strongest head in layer 1 from "sat" to "cat" is L1 H4

## A plain question
tab: attention

Question: Is this an old lesson?

Answer: Yes: its question has no kind.
"""


@pytest.fixture(scope="module")
def library(registry) -> lessons.LessonLibrary:
    library = lessons.LessonLibrary.load(registry, default_settings(registry), folders=[])
    assert library.add(ASKED, "asked.md") is not None, library.errors
    return library


def test_a_question_says_its_kind_and_its_answer_is_read_from_the_answer():
    steps = fmt.parse_lesson(ASKED, "asked.md", ("tab", "layer", "head", "model", "text")).steps
    assert [s.question_kind for s in steps] == ["token", "head", ""]
    assert [s.answer_choice for s in steps] == ['"cat"', "L1 H4", ""]
    assert steps[0].question == 'Where does "sat" look?' and steps[0].after.startswith("Every row does the same")
    assert "Every row" not in steps[0].text and "Every row" not in steps[0].answer


def test_the_choices_and_the_models_answer_of_each_kind(library):
    tokens = library.choices("test-lesson", 1)
    assert '" cat"' in tokens and '" mat"' in tokens, tokens
    assert library.model_answer("test-lesson", 1) in tokens
    heads = library.choices("test-lesson", 2)
    assert heads == [f"L1 H{h}" for h in range(1, len(heads) + 1)] and len(heads) >= 4
    assert library.model_answer("test-lesson", 2) == "L1 H4"
    assert library.choices("test-lesson", 3) == []
    with pytest.raises(InputError):
        library.model_answer("test-lesson", 3)


def test_the_shipped_questions_answers_are_the_models(library):
    tokens = library.choices("who-gets-the-drink", 1)
    assert '" to"#2' in tokens and '" John"#2' in tokens and len(tokens) == len(set(tokens))
    assert library.model_answer("who-gets-the-drink", 1) == '" Mary"'
    layers = library.choices("a-fact-recalled", 1)
    assert layers == [f"layer {n}" for n in range(1, 31)]
    assert library.model_answer("a-fact-recalled", 1) == "layer 29"
    asked = [(lesson.id, n + 1) for lesson in library.lessons.values() for n, s in enumerate(lesson.steps)
             if s.question_kind]
    assert len(asked) >= 4
    for lesson_id, number in asked:
        step = library.lessons[lesson_id].steps[number - 1]
        answer = library.model_answer(lesson_id, number)
        assert fmt.same_answer(answer, step.answer_choice), (lesson_id, number, answer)
        assert answer in library.choices(lesson_id, number), (lesson_id, number)


def test_a_wrong_answer_is_flagged_and_the_model_answers_what_it_measures(registry):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    wrong = ASKED.replace('Answer: "cat"', 'Answer: "mat"').replace('highest on "cat"', 'highest on "mat"')
    library.add(wrong, "wrong.md")
    (result,) = library.claims("test-lesson", 1)
    assert result["holds"] is False and result["value"] == '" cat"'
    assert library.model_answer("test-lesson", 1) == '" cat"'


def test_quiz_mode_keeps_the_after_paragraph_until_the_answer_is_revealed(library):
    step = library.lessons["test-lesson"].steps[0]
    assert "Every row does the same" in lessons.step_text(step)
    asked = lessons.step_text(step, quiz=True)
    assert "Where does" in asked and "Every row" not in asked and "almost all" not in asked
    assert "Every row does the same" in lessons.step_text(step, quiz=True, revealed=True)


@pytest.mark.parametrize("change, line, words", [
    (('Question (token):', 'Question (word):'), 15, "no kind"),
    (('Answer: "cat"', 'Answer: cat'), 17, "does not start with its token"),
    (('Answer: "cat"', 'Answer: "mat"'), 17, "no claim of the step names the answer \"mat\""),
    (("Answer: L1 H4", "Answer: L2 H4"), 31, "no claim"),
    (("layer: 1\nhead: 1", "layer: 2\nhead: 1"), 26, "not a head of the step's layer 2"),
    (("Answer: Yes: its question has no kind.", "After: no answer here."), 36, "no answer"),
])
def test_a_question_whose_answer_nothing_checks_is_refused_with_the_line_and_the_fix(registry, change, line, words):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    assert library.add(ASKED.replace(*change), "bad.md") is None
    (message,) = library.errors
    assert message.startswith(f"bad.md, line {line}:") and words in message and "Fix:" in message, message
