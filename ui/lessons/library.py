"""The lessons the page offers: the shipped ones (lessons/*.md) and a lecturer's own folder ($ATTENTION_LESSONS or
app.py's --lessons; a visitor never chooses a path), each step's settings read with the deep link's own parser
(ui.page.links.parse_query), and each step's claims measured on the model (ui/lessons/claims.py).

No Gradio: the player (ui/lessons/player.py) and the endpoints /lessons and /lesson_step call these.

    library = LessonLibrary.load(registry)
    library.listing()                          # [{"id", "title", "steps"}, ...]
    library.step("causal-mask", 1)             # {"settings": {...}, "text": "...", "claims": [...]}
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from analysis import lessons as format
from analysis.lessons import Lesson, LessonError
from ui.lessons import claims as lesson_claims
from ui.lessons import figures
from ui.lessons.checks import check_step
from ui.tabs.learning import SnapshotTraces
from ui.page.links import ViewSettings, parse_query, setting_names, whole_number
from ui.page.messages import InputError, shown
from model.registry import ModelRegistry

log = logging.getLogger(__name__)

LESSONS_ENV = "ATTENTION_LESSONS"
SHIPPED = Path(__file__).resolve().parents[2] / "lessons"
MAX_FILES = 200  # a lecturer's folder of lessons, not a disk


def configured_folders() -> list[Path]:
    """The lecturer's folders from $ATTENTION_LESSONS (several separated by the system's path separator)."""
    value = os.environ.get(LESSONS_ENV, "")
    return [Path(part) for part in value.split(os.pathsep) if part.strip()]


def lesson_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if p.is_file())[:MAX_FILES]


@dataclass
class LessonLibrary:
    """Lessons by id, in the picker's order (shipped first), and a message for each file that could not be used.
    Read-only after loading but for the claims' results, measured once per step and kept (a few numbers each)."""

    registry: ModelRegistry
    defaults: ViewSettings  # what a deep link falls back to (ui.page.controls.default_settings)
    tabs: tuple[str, ...] = ()  # the page's tabs (every tab when empty: a library checked without a page)
    linked: tuple | None = None  # the page's linked tab settings (ui.page.links.Linked; None: every tab's)
    lessons: dict[str, Lesson] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    snapshots: SnapshotTraces | None = None
    _checked: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.snapshots is None:
            self.snapshots = SnapshotTraces(self.registry)

    @classmethod
    def load(cls, registry: ModelRegistry, defaults: ViewSettings, folders: list[Path] | None = None,
             tabs: tuple[str, ...] = ()) -> "LessonLibrary":
        """The shipped lessons, then those in `folders` (default: $ATTENTION_LESSONS)."""
        library = cls(registry, defaults, tuple(tabs), snapshots=SnapshotTraces(registry))
        folders = configured_folders() if folders is None else folders
        for folder in [SHIPPED, *folders]:
            if not Path(folder).is_dir():
                library.errors.append(f"The lessons folder {Path(folder).name} was not found. Fix: set "
                                      f"{LESSONS_ENV} (or --lessons) to a folder of .md lessons.")
                log.warning("lessons folder %s not found", folder)
                continue
            for path in lesson_files(Path(folder)):
                library.add_file(path)
        return library

    def add_file(self, path: Path) -> Lesson | None:
        """Read one lesson; a mistake becomes a message naming the file, the line and the fix."""
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            return self._refuse(LessonError(path.name, None, f"the file could not be read ({type(e).__name__}).",
                                            "save it as UTF-8 text."))
        return self.add(content, path.name)

    def add(self, content: str, source: str) -> Lesson | None:
        try:
            lesson = format.parse_lesson(content, source, self.names)
            if lesson.id in self.lessons:
                raise LessonError(source, 1, f"the id “{lesson.id}” is taken by {self.lessons[lesson.id].source}.",
                                  "give this lesson another 'id: ...' in its header.")
            for step in lesson.steps:
                self._check_step(lesson, step)
        except LessonError as e:
            return self._refuse(e)
        self.lessons[lesson.id] = lesson
        return lesson

    @property
    def names(self) -> tuple[str, ...]:
        """The settings a step may give: the deep link's names (those of the page's tabs)."""
        return setting_names(self.linked)

    def restrict_to(self, tabs: tuple[str, ...], linked: tuple | None = None) -> None:
        """Check every lesson against the page's tabs and their linked settings (known once they are built);
        those that fail are left out."""
        self.tabs = tuple(tabs)
        self.linked = self.linked if linked is None else tuple(linked)
        for lesson in list(self.lessons.values()):
            try:
                for step in lesson.steps:
                    self._check_step(lesson, step)
            except LessonError as e:
                del self.lessons[lesson.id]
                self._refuse(e)

    def _refuse(self, error: LessonError) -> None:
        log.warning("lesson not loaded: %s", error)
        self.errors.append(str(error))
        return None

    def params(self, lesson: Lesson, step: format.Step) -> dict[str, str]:
        """The step's deep link query: the header's defaults, a pasted `link`, then the step's own lines."""
        params = dict(lesson.defaults)
        if "link" in step.settings:
            params.update(parse_qsl(urlsplit(step.settings["link"].strip()).query or step.settings["link"].lstrip("?")))
        params.update({k: v for k, v in step.settings.items() if k not in format.STEP_ONLY})
        for name in format.VIEWER_SETTINGS:  # from a pasted link too: the lecturer's choice
            params.pop(name, None)
        return params

    def _check_step(self, lesson: Lesson, step: format.Step) -> None:
        check_step(self, lesson, step)

    # ---- what the page and the API read -------------------------------------------------------------------------

    def get(self, lesson_id) -> Lesson:
        if not isinstance(lesson_id, str) or lesson_id not in self.lessons:
            known = ", ".join(self.lessons) or "none are loaded"
            raise InputError(f"No lesson is called {shown(lesson_id)}: choose one of {known}.")
        return self.lessons[lesson_id]

    def step_number(self, lesson: Lesson, step) -> int:
        """A 1-based step number as sent (a number, a link's text), or InputError."""
        number = whole_number(step, None)
        if number is None or isinstance(step, bool) or not 1 <= number <= len(lesson.steps):
            raise InputError(f"“{lesson.title}” has steps 1 to {len(lesson.steps)}; got {shown(step)}.")
        return number

    def settings(self, lesson_id, step) -> ViewSettings:
        """The view the step opens, read as a deep link is (ui.page.links.parse_query)."""
        lesson = self.get(lesson_id)
        number = self.step_number(lesson, step)
        settings, _ = parse_query(self.params(lesson, lesson.steps[number - 1]), self.registry, self.defaults,
                                  self.tabs, self.linked)
        return settings

    def query(self, lesson_id, step) -> dict[str, str]:
        """The step's settings as a deep link's query parameters (what /lesson_step's "settings" holds)."""
        lesson = self.get(lesson_id)
        return self.params(lesson, lesson.steps[self.step_number(lesson, step) - 1])

    def claims(self, lesson_id, step) -> list[dict]:
        """Each of the step's claims measured on its model, once (the weights never change while serving)."""
        lesson = self.get(lesson_id)
        number = self.step_number(lesson, step)
        key = (lesson.id, number)
        if key not in self._checked:
            settings = self.settings(lesson.id, number)
            self._checked[key] = [lesson_claims.check(self.registry, settings, claim, self.snapshots)
                                  for claim in lesson.steps[number - 1].claims]
        return self._checked[key]

    def _step_of(self, lesson_id, step) -> tuple[Lesson, int, format.Step]:
        lesson = self.get(lesson_id)
        number = self.step_number(lesson, step)
        return lesson, number, lesson.steps[number - 1]

    def choices(self, lesson_id, step) -> list[str]:
        """The answers to offer for the step's question, by its kind: "token": the step's tokens as its figures label
        them (" to", then " to"#2 for the second); "head": every head of the step's layer ("L25 H5"); "layer":
        "layer 1" to "layer N" (from 1, as the app counts). [] for a question with no kind, or no question."""
        lesson, number, found = self._step_of(lesson_id, step)
        settings = self.settings(lesson.id, number)
        if found.question_kind == "token":
            return format.token_choices(lesson_claims.step_tokens(self.registry, settings, self.snapshots))
        if found.question_kind in ("head", "layer"):
            kind = self._answer_kind(found) or settings.kind
            layers, heads = self.registry.shape(settings.model, kind)
            if found.question_kind == "layer":
                return [format.layer_choice(n) for n in range(1, layers + 1)]
            return [format.head_choice(settings.layer, h, kind if kind != settings.kind else "") for h in range(1, heads + 1)]
        return []

    @staticmethod
    def _answer_claim(found: format.Step) -> int | None:
        """The index of the claim that checks the step's answer (the one naming it)."""
        return next((i for i, c in enumerate(found.claims) if format.ANSWERS.get(c.kind) == found.question_kind
                     and format.same_answer(format.claimed_answer(c), found.answer_choice)), None)

    @staticmethod
    def _answer_kind(found: format.Step) -> str:
        head = found.answer_choice.split(" ")
        return head[0] if found.question_kind == "head" and len(head) == 3 else ""

    def model_answer(self, lesson_id, step) -> str:
        """The model's own answer to the step's question, as measured by the claim that names the lesson's answer
        (one of `choices`; when the claim fails, the answer the model gives instead). InputError for a step whose
        question has no kind, or whose answer could not be measured."""
        lesson, number, found = self._step_of(lesson_id, step)
        index = self._answer_claim(found)
        if not found.question_kind or index is None:
            raise InputError(f"Step {number} of “{lesson.title}” asks no question with answers to choose from.")
        result = self.claims(lesson.id, number)[index]
        if result["value"] is None:
            raise InputError(f"The model's answer could not be measured: {result.get('why', 'no value')}")
        value = result["value"]
        return format.layer_choice(value) if found.question_kind == "layer" else str(value)

    def text(self, lesson_id, step, quiz: bool = False, revealed: bool = False) -> str:
        """What the student reads on the step (step_text), its placeholders filled with the claims' values."""
        lesson, number, found = self._step_of(lesson_id, step)
        results = self.claims(lesson.id, number) if found.numbers else []
        values = {written: format.numbers_of.formatted(results[index]["value"], places)
                  for written, (index, places) in found.numbers.items()}
        return step_text(found, quiz, revealed, values)

    def figure(self, lesson_id, step) -> str:
        """The CSS selector of the figure the step names (`figure: head`), or "" for the tab's own first figure."""
        lesson, number, found = self._step_of(lesson_id, step)
        name = found.settings.get("figure", "")
        return figures.selector(self.settings(lesson.id, number).tab, name) if name else ""

    def listing(self) -> list[dict]:
        return [{"id": lesson.id, "title": lesson.title, "steps": len(lesson.steps)} for lesson in self.lessons.values()]

    def step(self, lesson_id, step) -> dict:
        """/lesson_step's answer: the step's settings (the deep link's names, as a link writes them), what the
        student reads (its title, text, question and answer, as Markdown) and its claims measured."""
        lesson = self.get(lesson_id)
        number = self.step_number(lesson, step)
        settings = self.settings(lesson.id, number).as_dict(self.linked)
        for name in format.VIEWER_SETTINGS:
            settings.pop(name)
        return {"settings": settings, "text": self.text(lesson.id, number),
                "claims": self.claims(lesson.id, number)}


def step_text(step: format.Step, quiz: bool = False, revealed: bool = False, values: dict | None = None) -> str:
    """What the student reads on a step, as Markdown: in quiz mode the question comes before its answer, which
    stays out until revealed, and so does the step's After: paragraph (what gives the answer away). values: each
    placeholder as written -> the number it shows (LessonLibrary.text measures them)."""
    parts = [f"**{step.title}**", step.text]
    if step.question:
        parts.append(f"**Question:** {step.question}")
        if step.answer and (revealed or not quiz):
            parts += [f"**Answer:** {step.answer}", step.after]
    text = "\n\n".join(p for p in parts if p)
    for written, value in (values or {}).items():
        text = text.replace(written, value)
    return text


def failed_claims(results: list[dict]) -> str:
    """The lecturer's warning for a step whose claims do not hold on this model ('' when all hold)."""
    failed = [r for r in results if not r["holds"]]
    if not failed:
        return ""
    lines = [f"- `{r['claim']}`: " + (f"could not be measured: {r['why']}" if "why" in r
                                       else f"measured {r['value']}") for r in failed]
    return "⚠️ **This no longer holds on this model:**\n" + "\n".join(lines)
