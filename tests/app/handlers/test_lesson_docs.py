"""docs/lessons.md documents every claim form with an example, and the complete lesson it shows loads and holds."""
from __future__ import annotations

from pathlib import Path

import pytest

from analysis import lessons as fmt
from ui.lessons import library as lessons
from ui.page.controls import default_settings
from ui.page.links import setting_names

DOCS = (Path(__file__).resolve().parents[3] / "docs" / "lessons.md").read_text(encoding="utf-8")


def test_the_docs_document_every_claim_form():
    table = DOCS.split("\n## Claims\n", 1)[1].split("\n## ", 1)[0]
    for kind, (_, example) in fmt.VOCABULARY.items():
        written = example.split(":")[0]
        assert f"`{written}`" in table, kind
        assert fmt.parse_claim(written).kind == kind


def example(heading: str) -> str:
    return DOCS.split(f"\n## {heading}\n", 1)[1].split("```markdown\n", 1)[1].split("\n```", 1)[0] + "\n"


def test_every_claim_form_is_used_by_a_lesson_the_docs_show():
    used = {fmt.parse_claim(line[2:]).kind for heading in ("A complete lesson", "A lesson with the newer forms")
            for line in example(heading).splitlines() if line.startswith("- ")}
    shipped = {claim.kind for lesson in (fmt.parse_lesson(p.read_text(encoding="utf-8"), p.name, setting_names())
                                         for p in lessons.lesson_files(lessons.SHIPPED))
               for step in lesson.steps for claim in step.claims}
    assert set(fmt.VOCABULARY) <= used | shipped, set(fmt.VOCABULARY) - used - shipped


@pytest.mark.parametrize("heading", ["A complete lesson", "A lesson with the newer forms"])
def test_the_docs_lessons_load_and_every_claim_holds(registry, heading):
    library = lessons.LessonLibrary(registry, default_settings(registry))
    lesson = library.add(example(heading), "example.md")
    assert lesson is not None, library.errors
    assert {step.question_kind for step in lesson.steps} >= {"token", "head"}
    for n in range(1, len(lesson.steps) + 1):
        assert all(r["holds"] for r in library.claims(lesson.id, n)), library.claims(lesson.id, n)
        if lesson.steps[n - 1].question_kind:
            assert library.model_answer(lesson.id, n) in library.choices(lesson.id, n)
        assert "{" not in library.text(lesson.id, n), "every placeholder filled"
