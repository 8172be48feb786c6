"""docs/lessons.md documents every claim form with an example, and the complete lesson it shows loads and holds."""
from __future__ import annotations

from pathlib import Path

from analysis import lessons as fmt
from ui.lessons import library as lessons
from ui.page.controls import default_settings

DOCS = (Path(__file__).resolve().parents[3] / "docs" / "lessons.md").read_text(encoding="utf-8")


def test_the_docs_document_every_claim_form():
    table = DOCS.split("\n## Claims\n", 1)[1].split("\n## ", 1)[0]
    for kind, (_, example) in fmt.VOCABULARY.items():
        written = example.split(":")[0]
        assert f"`{written}`" in table, kind
        assert fmt.parse_claim(written).kind == kind


def test_the_docs_complete_lesson_loads_and_every_claim_holds(registry):
    example = DOCS.split("\n## A complete lesson\n", 1)[1].split("```markdown\n", 1)[1].split("\n```", 1)[0]
    library = lessons.LessonLibrary(registry, default_settings(registry))
    lesson = library.add(example + "\n", "example.md")
    assert lesson is not None, library.errors
    assert {step.question_kind for step in lesson.steps} >= {"token", "head", "layer"}
    for n in range(1, len(lesson.steps) + 1):
        assert all(r["holds"] for r in library.claims(lesson.id, n)), library.claims(lesson.id, n)
        if lesson.steps[n - 1].question_kind:
            assert library.model_answer(lesson.id, n) in library.choices(lesson.id, n)
