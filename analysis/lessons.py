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

# The settings a step may give: the deep link's names (ui.page.links.ViewSettings), plus `link` (a link pasted from
# the page's link box, whose settings the other lines override). Presenter and quiz mode are the lecturer's.
VIEWER_SETTINGS = ("presenter", "quiz")
HEADER_KEYS = ("title", "id", "model", "text")  # `model` and `text`: the default of every step
LESSON_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
MAX_STEPS = 40
MARKERS = ("question:", "answer:", "claims:")  # paragraphs a step gives apart from its text
MAX_BYTES = 200_000  # a lesson is a few pages of text; a bigger file is a mistake (or not a lesson)

# ---- the claim vocabulary -------------------------------------------------------------------------------------
# A claim is one line. Quoted tokens are matched as the figures label them, without the tokenizer's marks
# ("▁", "Ġ", "##"); a leading space in quotes stands for the "▁" of a word that starts with one. "word"#2 is the
# word's second occurrence. A head is written as the app writes it: L2 H3, or with its kind for dates (cross L2 H3).
HEAD = r"(?:(?P<kind>self|encoder|decoder|cross) )?L(?P<layer>\d+) H(?P<head>\d+)"
TOKEN = r'"(?P<{0}>[^"]*)"(?:#(?P<{0}_n>\d+))?'
COMPARE = r"(?P<op>>=|<=|=|>|<) ?(?P<number>-?\d+(?:\.\d+)?(?:e-?\d+)?)"
STATS = ("previous", "next", "first", "special", "self", "induction", "entropy_bits", "spread", "mean_distance")
LABEL = r"(?P<label>previous-token|next-token|first-token sink|\S+ sink|self|induction|broad|mixed)"

# kind -> (pattern, what it measures). ui/lessons/claims.py has one function per kind.
VOCABULARY = {
    "weight": (rf"weight {HEAD} from {TOKEN.format('source')} to {TOKEN.format('target')} {COMPARE}",
               'weight L2 H3 from "it" to "animal" >= 0.5: the weight the head in detail shows in that cell '
               "(on the Learning tab: at the step's snapshot)"),
    "head type": (rf"head {HEAD} type {LABEL}",
                  "head L1 H4 type previous-token: the head's label in the head statistics table"),
    "head stat": (rf"head {HEAD} (?P<stat>{'|'.join(STATS)}) {COMPARE}",
                  "head L1 H4 previous >= 0.9: one column of the head statistics table"),
    "top next": (r'top next token is "(?P<token>[^"]*)"',
                 'top next token is " be": the first row of the predictions (a causal model)'),
    "top fill": (r'top fill is "(?P<token>[^"]*)"', 'top fill is " States": the first fill-in of the first <mask>'),
    "translation": (r'translation is "(?P<token>[^"]*)"', 'translation is "1999-03-03": the dates model\'s output'),
    "lens": (rf'lens first top "(?P<token>[^"]*)" after layer (?P<after>\d+)',
             'lens first top " be" after layer 2: the first layer after which the logit lens puts the token on top '
             "at the position the Lens tab asks about (the last token; a masked model's first <mask>)"),
    "shuffle": (rf"shuffle difference (?P<positions>with|without) positions {COMPARE}",
                "shuffle difference without positions <= 0.001: the largest change of a weight when the sentence is "
                "shuffled and put back (Positions, the step's head and seed)"),
    "rotary": (rf"(?P<scores>rotary|added) score spread {COMPARE}",
               "rotary score spread <= 0.001: how much the score of the same two tokens moved along a text varies "
               "(Positions' rotary table; added: with sinusoids added instead)"),
    "month": (rf"month {HEAD} {COMPARE}",
              "month cross L2 H3 >= 0.9: the cross-attention weight on the month while the month's digits are written"),
    "copying head": (r"copying induction head is L(?P<layer>\d+) H(?P<head>\d+)",
                     "copying induction head is L3 H1: the strongest induction head on Copying from context's "
                     "repeated random words"),
    "copying gain": (rf"copying gain {COMPARE}",
                     "copying gain >= 3: nats a word the model gains on the second copy (Copying from context)"),
}
# the head finder's corpus scores (headfinder/, the Head finder tab): a head's rank by one score over the corpus
FINDER_SCORES = ("previous", "induction", "first", "self", "entropy_bits", "mean_distance")
VOCABULARY["corpus rank"] = (rf"head {HEAD} ranks (?P<rank>\d+) for (?P<score>{'|'.join(FINDER_SCORES)})",
                             "head L19 H7 ranks 1 for induction: the head's rank by that score over the head finder's "
                             "corpus (the Head finder tab, the step's model; 1 = the strongest)")
_COMPILED = {kind: re.compile(pattern) for kind, (pattern, _) in VOCABULARY.items()}


class LessonError(ValueError):
    """A mistake in a lesson file: where it is and how to fix it."""

    def __init__(self, source: str, line: int | None, problem: str, fix: str):
        self.source, self.line, self.problem, self.fix = source, line, problem, fix
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {problem} Fix: {fix}")


@dataclass(frozen=True)
class Claim:
    """One claim as written (`text`), its kind (a VOCABULARY key), the parts its pattern named, and its line."""

    text: str
    kind: str
    parts: dict
    line: int


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


@dataclass
class Lesson:
    id: str
    title: str
    source: str  # the file's name (never its folder: messages to visitors name no server path)
    intro: str
    defaults: dict  # the header's model and text: every step's, unless the step sets its own
    steps: list[Step]


def parse_claim(text: str, source: str = "", line: int = 0) -> Claim:
    """One claim line (without its "- "), or LessonError listing the vocabulary."""
    text = " ".join(text.split())
    for kind, pattern in _COMPILED.items():
        match = pattern.fullmatch(text)
        if match:
            return Claim(text, kind, {k: v for k, v in match.groupdict().items() if v is not None}, line)
    forms = "; ".join(example.split(":")[0] for _, example in VOCABULARY.values())
    raise LessonError(source, line, f"“{text[:80]}” is not a claim this app can check.",
                      f"write it in one of these forms (the README's \"Claims\" lists them): {forms}.")


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
    allowed = tuple(n for n in setting_names if n not in VIEWER_SETTINGS) + ("link",)
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
    steps = [_step(number, title, body, source, allowed) for number, title, body in sections]
    defaults = {k: header[k] for k in ("model", "text") if header.get(k)}
    return Lesson(lesson_id, header["title"], source, "\n".join(intro).strip(), defaults, steps)


def _step(number: int, title: str, body: list[tuple[int, str]], source: str, allowed: tuple[str, ...]) -> Step:
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
    text, question, answer, claims = [], "", "", []
    for line, paragraph in paragraphs:
        first = paragraph[0].strip()
        if first.lower().startswith("question:"):
            question = " ".join([first[len("question:"):].strip()] + [p.strip() for p in paragraph[1:]]).strip()
        elif first.lower().startswith("answer:"):
            answer = " ".join([first[len("answer:"):].strip()] + [p.strip() for p in paragraph[1:]]).strip()
        elif first.lower() == "claims:":
            for offset, item in enumerate(paragraph[1:], 1):
                if not item.strip().startswith("- "):
                    raise LessonError(source, line + offset, "a line under 'Claims:' is not a claim.",
                                      "write each claim on its own line starting with '- '.")
                claims.append(parse_claim(item.strip()[2:], source, line + offset))
        else:
            text.append("\n".join(paragraph))
    if answer and not question:
        raise LessonError(source, number, "the step has an answer but no question.",
                          "add a paragraph starting 'Question:' before the answer.")
    return Step(title, settings, "\n\n".join(text), question, answer, claims, number, lines)
