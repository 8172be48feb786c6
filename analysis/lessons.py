"""Lessons: guided walks through the views, written as plain Markdown files (the README's "Lessons" has the format).

This module reads the format alone (pure Python: no model, no Gradio): a header, one section per step, each
step's settings as the deep link names them, its text, an optional question and answer, and its claims in the
small vocabulary below. What the settings mean (a model that exists, a tab, a layer in range) is checked by
ui/lessons/library.py with the deep link's own parser (ui.page.links.parse_query); what a claim's numbers are is measured by
ui/lessons/claims.py with the functions the views use.

Every mistake is a LessonError naming the file, the line and the fix.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from analysis import lesson_numbers as numbers_of
from analysis.lesson_vocabulary import (ANSWER_EXAMPLES, ANSWER_KINDS, ANSWERS, VOCABULARY, Claim,  # noqa: F401
                                        LessonError, answer_layer, answer_of, claimed_answer, head_choice,
                                        layer_choice, parse_claim, same_answer, token_choice,
                                        token_choices)

# The settings a step may give: the deep link's names (ui.page.links.ViewSettings), plus `link` (a link pasted from
# the page's link box, whose settings the other lines override). Presenter and quiz mode are the lecturer's.
VIEWER_SETTINGS = ("presenter", "quiz")
# a step's lines that are not the view's settings: a pasted link, and the figure the step is about (`figure: head`:
# on a projector it comes first, beside the text; ui/lessons/figures.py names each tab's figures)
STEP_ONLY = ("link", "figure")
HEADER_KEYS = ("title", "id", "model", "text")  # `model` and `text`: the default of every step
LESSON_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
MAX_STEPS = 40
MARKERS = ("question:", "question (", "answer:", "after:", "claims:")  # paragraphs a step gives apart from its text
MAX_BYTES = 200_000  # a lesson is a few pages of text; a bigger file is a mistake (or not a lesson)


QUESTION = re.compile(r"question(?: \((?P<kind>[^)]*)\))?:", re.IGNORECASE)


@dataclass
class Step:
    """One section of a lesson: its title, settings (deep link name -> text, as written), what the student
    reads, an optional question and answer, its claims; `lines` maps each setting to its line."""

    title: str
    settings: dict
    text: str
    question: str = ""
    answer: str = ""
    claims: list[Claim] = field(default_factory=list)
    line: int = 0
    lines: dict = field(default_factory=dict)
    question_kind: str = ""  # "token", "head" or "layer" (Question (token): ...); "" for a plain Question:
    after: str = ""  # the After: paragraph: what gives the answer away, shown with the answer
    answer_choice: str = ""  # the answer its Answer: starts with, as a choice is written (a question with a kind)
    numbers: dict = field(default_factory=dict)  # each placeholder as written -> (its claim's index, decimals)


@dataclass
class Lesson:
    id: str
    title: str
    source: str  # the file's name (never its folder: messages to visitors name no server path)
    intro: str
    defaults: dict  # the header's model and text: every step's, unless the step sets its own
    steps: list[Step]


def _header(lines: list[str], source: str) -> tuple[dict, int]:
    """The front matter between the first two '---' lines: key -> value; and the index of the line after it."""
    if not lines or lines[0].strip() != "---":
        raise LessonError(source, 1, "a lesson starts with its header.",
                          "begin the file with a line '---', then 'title: ...' and 'model: ...', then '---'.")
    header = {}
    for i in range(1, len(lines)):
        raw = lines[i].strip()
        if raw == "---":
            break
        if not raw:
            continue
        if raw.startswith("#"):
            raise LessonError(source, i + 1, "the header is not closed before the first step.",
                              "end the header with a line '---'.")
        key, sep, value = raw.partition(":")
        key = key.strip().lower()
        if not sep or key not in HEADER_KEYS:
            raise LessonError(source, i + 1, f"“{raw[:60]}” is not a header line.",
                              f"write one of {', '.join(HEADER_KEYS)} as 'name: value'.")
        header[key] = _unquoted(value)
    else:
        raise LessonError(source, 1, "the header is not closed.", "end the header with a line '---'.")
    for key in ("title", "model"):
        if not header.get(key):
            raise LessonError(source, 1, f"the header has no {key}.", f"add '{key}: ...' between the '---' lines.")
    return header, i + 1


def _unquoted(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def parse_lesson(content: str, source: str, setting_names: tuple[str, ...]) -> Lesson:
    """A lesson from its file's text. source: the file's name (in messages); setting_names: the deep link's
    setting names (ui.page.links.ViewSettings' fields), the only ones a step may set."""
    if len(content.encode("utf-8", "replace")) > MAX_BYTES:
        raise LessonError(source, None, f"the file is over {MAX_BYTES // 1000} kB.", "split it into several lessons.")
    lines = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header, start = _header(lines, source)
    stem = source.rsplit("/", 1)[-1].removesuffix(".md")
    lesson_id = header.get("id") or stem.lower()
    if not LESSON_ID.fullmatch(lesson_id):
        raise LessonError(source, 1, f"the lesson id “{lesson_id[:40]}” is not usable in a link.",
                          "write 'id: ...' with lower-case letters, digits and dashes only (e.g. id: causal-mask).")
    allowed = tuple(n for n in setting_names if n not in VIEWER_SETTINGS) + STEP_ONLY
    sections: list[tuple[int, str, list[tuple[int, str]]]] = []
    intro: list[str] = []
    for number, raw in enumerate(lines[start:], start + 1):
        if raw.startswith("## "):
            sections.append((number, raw[3:].strip(), []))
        elif sections:
            sections[-1][2].append((number, raw))
        else:
            intro.append(raw)
    if not sections:
        raise LessonError(source, None, "the lesson has no steps.", "start each step with a line '## Its title'.")
    if len(sections) > MAX_STEPS:
        raise LessonError(source, sections[MAX_STEPS][0], f"the lesson has over {MAX_STEPS} steps.",
                          "split it into several lessons.")
    defaults = {k: header[k] for k in ("model", "text") if header.get(k)}
    steps = [_step(number, title, body, source, allowed, defaults) for number, title, body in sections]
    numbers_of.literal_numbers("\n".join(intro), set(), source, start)
    return Lesson(lesson_id, header["title"], source, "\n".join(intro).strip(), defaults, steps)


def _step(number: int, title: str, body: list[tuple[int, str]], source: str, allowed: tuple[str, ...],
          defaults: dict) -> Step:
    """One '## ' section: its settings block (the lines right under the title), then paragraphs, where a
    paragraph that starts 'Question:' or 'Answer:' is the question or its answer, and 'Claims:' starts a list."""
    if not title:
        raise LessonError(source, number, "a step has no title.", "write the step's title after '## '.")
    settings, lines, i = {}, {}, 0
    while i < len(body) and body[i][1].strip():
        line, raw = body[i]
        key, sep, value = raw.strip().partition(":")
        key = key.strip()
        if not sep or key not in allowed:
            if key in VIEWER_SETTINGS:
                fix = "leave it out: presenter and quiz mode are the lecturer's choice, in the page's header."
            else:
                fix = (f"write settings as 'name: value' with the deep link's names ({', '.join(allowed)}), "
                       "and leave a blank line before the step's text.")
            raise LessonError(source, line, f"“{raw.strip()[:60]}” is not a setting.", fix)
        settings[key], lines[key] = _unquoted(value), line
        i += 1
    paragraphs: list[tuple[int, list[str]]] = []  # (first line, its lines), split at blank lines
    current = None
    for line, raw in body[i:]:
        if not raw.strip():
            current = None
            continue
        if current is None or raw.strip().lower().startswith(MARKERS):  # a marker starts its own paragraph
            current = (line, [])
            paragraphs.append(current)
        current[1].append(raw.rstrip())
    text, question, answer, after, kind, claims = [], "", "", "", "", []
    read: list[tuple[int, str]] = []  # every paragraph a student reads, with its first line
    joined = lambda first, paragraph: " ".join([first] + [p.strip() for p in paragraph[1:]]).strip()  # noqa: E731
    answer_line = number
    for line, paragraph in paragraphs:
        first = paragraph[0].strip()
        asked = QUESTION.match(first)
        if asked:
            kind = (asked.group("kind") or "").strip().lower()
            if asked.group("kind") is not None and kind not in ANSWER_KINDS:
                raise LessonError(source, line, f"“{first[:40]}” asks for an answer of no kind the app knows.",
                                  "write Question (token):, Question (head):, Question (layer): or Question:.")
            question = joined(first[asked.end():].strip(), paragraph)
            read.append((line, question))
        elif first.lower().startswith("answer:"):
            answer, answer_line = joined(first[len("answer:"):].strip(), paragraph), line
            read.append((line, answer))
        elif first.lower().startswith("after:"):
            after = joined(first[len("after:"):].strip(), paragraph)
            read.append((line, after))
        elif first.lower() == "claims:":
            for offset, item in enumerate(paragraph[1:], 1):
                if not item.strip().startswith("- "):
                    raise LessonError(source, line + offset, "a line under 'Claims:' is not a claim.",
                                      "write each claim on its own line starting with '- '.")
                claims.append(parse_claim(item.strip()[2:], source, line + offset))
        else:
            text.append("\n".join(paragraph))
            read.append((line, text[-1]))
    if answer and not question:
        raise LessonError(source, number, "the step has an answer but no question.",
                          "add a paragraph starting 'Question:' before the answer.")
    if after and not answer:
        raise LessonError(source, number, "the step has an After: paragraph but no answer.",
                          "give the question its 'Answer:' (After: is shown with it), or make it the step's text.")
    choice = _answer_choice(kind, answer, claims, source, answer_line) if kind else ""
    numbers = _numbers(read, claims, settings, defaults, source, choice)
    return Step(title, settings, "\n\n".join(text), question, answer, claims, number, lines, kind, after, choice,
                numbers)


def _numbers(read: list[tuple[int, str]], claims: list[Claim], settings: dict, defaults: dict, source: str,
             choice: str) -> dict:
    """Each placeholder of the text -> (the index of the claim that measures it, its decimals): a claim of the same
    measure in the step, else the placeholder as a claim of its own (appended to `claims`). A literal number
    nothing checks is a LessonError (analysis/lesson_numbers.py)."""
    numbers = {}
    for line, paragraph in read:
        for written, claim in numbers_of.placeholders_in(paragraph, source, line):
            inner = written[1:-1]
            index = next((i for i, c in enumerate(claims) if c.kind == claim.kind
                          and numbers_of.measure_of(c) == numbers_of.VERBS.sub("", " ".join(inner.split()))), None)
            if index is None:
                claims.append(claim)
                index = len(claims) - 1
            numbers[written] = (index, numbers_of.decimals(claims[index]))
    allowed = numbers_of.allowed_numbers(settings, defaults, claims)
    for line, paragraph in read:
        numbers_of.literal_numbers(paragraph, allowed, source, line, choice.strip('"') if choice else "")
    return numbers


def _answer_choice(kind: str, answer: str, claims: list[Claim], source: str, line: int) -> str:
    """The answer a question of that kind takes, read from the start of its Answer:, which one of the step's claims
    must name (so the app checks it)."""
    example = ANSWER_EXAMPLES[kind]
    found = answer_of(kind, answer) if answer else None
    if found is None:
        raise LessonError(source, line, f"a {kind} question's Answer: does not start with its {kind}.",
                          f"start the answer with the {kind} as the app writes it, e.g. 'Answer: {example}: ...'.")
    choice = found[0]
    if not any(ANSWERS.get(c.kind) == kind and same_answer(claimed_answer(c), choice) for c in claims):
        forms = "; ".join(VOCABULARY[k][1].split(":")[0] for k, v in ANSWERS.items() if v == kind)
        raise LessonError(source, line, f"no claim of the step names the answer {choice}, so nothing checks it.",
                          f"add a claim naming {choice} under Claims:, in one of these forms: {forms}.")
    return choice
