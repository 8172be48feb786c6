"""Lessons: the shipped ones hold on the shipped weights, and a lesson file with a mistake is refused with a
message naming the file, the line and the fix while the others still load (ui/lessons/library.py, analysis/lessons.py)."""
from __future__ import annotations

import pytest

from analysis import lessons as fmt
from ui.lessons import library as lessons
from ui.page.controls import default_settings
from ui.page.links import setting_names  # every tab's linked settings, and the view's own
from ui.page.messages import InputError

GOOD = """---
title: A test lesson
id: test-lesson
model: lm
text: The cat sat on the mat
---

## The previous token
tab: attention
layer: 1
head: 4

Each token looks at the one before it.

Question: Where does "sat" look?
Answer: At "cat".

Claims:
- weight L1 H4 from "sat" to "cat" >= 0.9
"""


@pytest.fixture(scope="module")
def library(registry) -> lessons.LessonLibrary:
    return lessons.LessonLibrary.load(registry, default_settings(registry), folders=[])


def shipped_steps() -> list[tuple[str, int]]:
    found = []
    for path in lessons.lesson_files(lessons.SHIPPED):
        lesson = fmt.parse_lesson(path.read_text(encoding="utf-8"), path.name, setting_names())
        found += [(lesson.id, n) for n in range(1, len(lesson.steps) + 1)]
    return found


def test_every_shipped_lesson_loads(library):
    assert not library.errors, library.errors
    assert len(library.lessons) >= 6
    assert {"what-attention-computes", "why-positions-matter", "causal-mask", "heads-have-jobs",
            "cross-attention-on-dates", "heads-forming"} <= set(library.lessons)
    assert sum(len(lesson.steps[n].claims) for lesson in library.lessons.values()
               for n in range(len(lesson.steps))) >= 25


@pytest.mark.parametrize("lesson_id, step", shipped_steps())
def test_every_shipped_claim_holds_on_the_shipped_weights(library, lesson_id, step):
    results = library.claims(lesson_id, step)
    assert len(results) == len(library.lessons[lesson_id].steps[step - 1].claims)
    failed = [r for r in results if not r["holds"]]
    assert not failed, f"{lesson_id} step {step}: {failed}"


def test_lesson_step_answers_with_deep_link_settings_text_and_measured_claims(library):
    answer = library.step("causal-mask", 2)
    assert set(answer) == {"settings", "text", "claims"}
    assert answer["settings"]["model"] == "mlm" and answer["settings"]["tab"] == "attention"
    assert (answer["settings"]["layer"], answer["settings"]["head"]) == (1, 3)
    assert answer["settings"]["text"] == "The cat sat on the mat"  # the header's default
    assert "presenter" not in answer["settings"] and "quiz" not in answer["settings"]
    assert "Without a mask" in answer["text"]
    claim = answer["claims"][1]
    assert claim["claim"] == 'weight L1 H3 from "cat" to "sat" >= 0.5'
    assert claim["holds"] is True and claim["value"] >= 0.5
    listing = library.listing()
    assert {"id": "causal-mask", "title": "The causal mask", "steps": 2} in listing


def test_a_step_opens_what_its_deep_link_opens(library, registry):
    from ui.page.links import parse_query
    settings = library.settings("cross-attention-on-dates", 2)
    linked, notes = parse_query({"model": "dates", "text": "21 November 2026", "tab": "encoder_decoder", "step": "6"},
                                registry, default_settings(registry))
    assert settings == linked and not notes


@pytest.mark.parametrize("bad, step", [("no-lesson", 1), ("causal-mask", 0), ("causal-mask", 3),
                                       ("causal-mask", "two"), (None, 1), (["x"], 1), ("causal-mask", True)])
def test_a_lesson_or_step_that_does_not_exist_is_a_message(library, bad, step):
    with pytest.raises(InputError):
        library.step(bad, step)


def test_a_false_claim_is_flagged_on_its_step(registry):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    library.add(GOOD.replace(">= 0.9", "<= 0.1") + "- top next token is \" nothing\"\n", "false.md")
    results = library.claims("test-lesson", 1)
    assert [r["holds"] for r in results] == [False, False]
    assert results[0]["value"] >= 0.9
    warning = lessons.failed_claims(results)
    assert "This no longer holds on this model" in warning and '<= 0.1' in warning and "measured" in warning


def test_the_player_shows_the_failed_claim_on_its_step(registry):
    from ui.lessons.player import Player
    library = lessons.LessonLibrary(registry, default_settings(registry))
    library.add(GOOD.replace(">= 0.9", "<= 0.1"), "false.md")
    values = dict(zip(["picker", "lesson", "step", "position", "back", "forward", "column", "text", "reveal",
                       "warning"], Player(library).values("test-lesson", 1, quiz=False)))
    assert values["position"] == "step 1 of 1" and values["warning"]["visible"] is True
    assert "This no longer holds on this model" in values["warning"]["value"] and "<= 0.1" in values["warning"]["value"]
    assert values["reveal"]["visible"] is False  # not in quiz mode: the answer is in the text
    assert Player(library).values("test-lesson", 1, quiz=True)[8]["visible"] is True


def test_a_claim_that_cannot_be_measured_says_why(registry):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    library.add(GOOD.replace('from "sat"', 'from "dog"'), "missing.md")
    (result,) = library.claims("test-lesson", 1)
    assert result["holds"] is False and "dog" in result["why"]
    assert "could not be measured" in lessons.failed_claims([result])


def test_quiz_mode_asks_before_it_answers(registry):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    step = library.add(GOOD, "good.md").steps[0]
    assert "Answer:** At" in lessons.step_text(step)
    asked = lessons.step_text(step, quiz=True)
    assert "Where does" in asked and "At \"cat\"" not in asked
    assert "At \"cat\"" in lessons.step_text(step, quiz=True, revealed=True)


BAD = {  # what is wrong -> (the file, the line named, words of the message)
    "no header": (GOOD.replace("---\n", "", 1), 1, "header"),
    "unclosed header": ("---\ntitle: x\nmodel: lm\n## Step\n", 4, "not closed"),
    "no title": (GOOD.replace("title: A test lesson\n", ""), 1, "no title"),
    "unknown header key": (GOOD.replace("model: lm", "modle: lm"), 4, "not a header line"),
    "unknown model": (GOOD.replace("model: lm", "model: gpt-17"), 1, "gpt-17"),
    "unknown model in a step": (GOOD.replace("tab: attention", "tab: attention\nmodel: nope"), 10, "nope"),
    "unknown tab": (GOOD.replace("tab: attention", "tab: atention"), 9, "atention"),
    "unknown setting": (GOOD.replace("head: 4", "haed: 4"), 11, "not a setting"),
    "presenter in a lesson": (GOOD.replace("head: 4", "presenter: 1"), 11, "lecturer's choice"),
    "layer out of range": (GOOD.replace("layer: 1", "layer: 9"), 10, "layer"),
    "claim outside the vocabulary": (GOOD.replace("- weight L1 H4", "- the weight of L1 H4"), 19, "not a claim"),
    "a claim's head the model lacks": (GOOD.replace("weight L1 H4", "weight L7 H4"), 19, "no head L7 H4"),
    "a claim's kind the model lacks": (GOOD.replace("weight L1 H4", "weight cross L1 H4"), 19, "no cross attention"),
    "no steps": (GOOD.split("## ")[0], None, "no steps"),
    "answer without question": (GOOD.replace("Question: Where does \"sat\" look?\n", ""), 8, "no question"),
    "bad id": (GOOD.replace("id: test-lesson", "id: ../etc"), 1, "id"),
    "not a list under Claims": (GOOD.replace("- weight", "weight"), 19, "not a claim"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_a_bad_lesson_file_names_the_file_the_line_and_the_fix(registry, tmp_path, what):
    content, line, words = BAD[what]
    (tmp_path / "bad.md").write_text(content, encoding="utf-8")
    (tmp_path / "good.md").write_text(GOOD.replace("test-lesson", "good-lesson"), encoding="utf-8")
    library = lessons.LessonLibrary.load(registry, default_settings(registry), folders=[tmp_path],
                                         tabs=("attention", "steps", "masking"))
    assert "good-lesson" in library.lessons, "the other lessons still load"
    (message,) = [e for e in library.errors if e.startswith("bad.md")]
    assert (f"bad.md, line {line}:" if line else "bad.md:") in message, message
    assert words in message and "Fix:" in message, message
    assert str(tmp_path) not in message, "no server path"


def test_a_damaged_file_and_a_missing_folder_are_messages(registry, tmp_path):
    (tmp_path / "binary.md").write_bytes(b"\xff\xfe\x00garbage")
    library = lessons.LessonLibrary.load(registry, default_settings(registry),
                                         folders=[tmp_path, tmp_path / "missing"])
    assert any(e.startswith("binary.md") and "UTF-8" in e for e in library.errors)
    assert any("missing" in e and "ATTENTION_LESSONS" in e for e in library.errors)
    assert len(library.lessons) >= 6  # the shipped ones


def test_a_duplicate_id_is_refused(registry, tmp_path):
    (tmp_path / "a.md").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.md").write_text(GOOD, encoding="utf-8")
    library = lessons.LessonLibrary.load(registry, default_settings(registry), folders=[tmp_path])
    assert library.lessons["test-lesson"].source == "a.md"
    assert any(e.startswith("b.md, line 1") and "taken by a.md" in e for e in library.errors)


def test_the_lecturers_folder_comes_from_the_environment(monkeypatch, registry, tmp_path):
    (tmp_path / "mine.md").write_text(GOOD, encoding="utf-8")
    monkeypatch.setenv(lessons.LESSONS_ENV, str(tmp_path))
    library = lessons.LessonLibrary.load(registry, default_settings(registry))
    assert library.listing()[-1] == {"id": "test-lesson", "title": "A test lesson", "steps": 1}


def test_a_pasted_link_gives_the_settings_and_the_lines_below_it_win(registry):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    pasted = GOOD.replace("tab: attention\n", "link: http://127.0.0.1:7860/?text=A+dog+ran&model=mlm&layer=2&head=1"
                          "&tab=steps&presenter=1&quiz=1\n")
    library.add(pasted, "pasted.md")
    settings = library.settings("test-lesson", 1)
    assert (settings.text, settings.model, settings.tab, settings.layer, settings.head) == \
        ("A dog ran", "mlm", "steps", 1, 4)
    assert not settings.presenter and not settings.quiz


@pytest.mark.parametrize("claim, kind", [('weight L2 H3 from "it" to "animal" >= 0.5', "weight"),
                                         ('weight cross L2 H3 from "1"#2 to "N" < 0.5', "weight"),
                                         ("head L1 H4 type previous-token", "head type"),
                                         ("head L3 H8 type [CLS]/[SEP] sink", "head type"),
                                         ("head L1 H4 previous >= 0.9", "head stat"),
                                         ('top next token is " Paris"', "top next"),
                                         ('lens first top " be" after layer 2', "lens"),
                                         ("month cross L2 H3 = 1.0", "month"),
                                         ("copying gain >= 3", "copying gain")])
def test_the_vocabulary_reads_each_documented_form(claim, kind):
    assert fmt.parse_claim(claim).kind == kind
