"""What the /class_* endpoints answer: a class read from the store (classroom/store.py) with the lesson step it is
on, read once from the lesson library when the lecturer drives (its settings, question, choices, the model's
answer and After: text are kept with the class, so a follower's answer costs one row, and a restart needs no
lesson measured again). No Gradio: ui/classroom/page.py and route.py call it.

    classes = Classes(ClassStore(path), library, Board())
    opened = classes.open("causal-mask", "http://10.0.0.5:7860/")   # {"code", "key", "link"}
    classes.drive(opened["code"], opened["key"], "causal-mask", 2)
    classes.answer(opened["code"], "s1", "layer 3")                 # {"accepted": True, "answered": 1}
"""
from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import socket
from urllib.parse import urlencode, urlsplit

from classroom.board import Board
from classroom.store import ClassError, ClassState, ClassStore, Step
from ui.page.messages import InputError

log = logging.getLogger(__name__)

PUBLIC_URL_ENV = "ATTENTION_PUBLIC_URL"  # the address students reach (a public or LAN address), for the link and QR


class Classes:
    """The class endpoints over one store, one lesson library and one board of followers."""

    def __init__(self, store: ClassStore, library, board: Board | None = None):
        self.store, self.library, self.board = store, library, board or Board()

    # ---- the lecturer ------------------------------------------------------------------------------------------

    def open(self, lesson, page_url: str | None = None) -> dict:
        """A class on `lesson`'s first step: {"code", "key", "link"} (the link: page_url's address, or
        $ATTENTION_PUBLIC_URL's, with ?class=CODE)."""
        lesson_id = self.library.get(lesson).id
        step = self.step_of(lesson_id, 1)  # before opening: a lesson that cannot be read opens no class
        code, key = self.store.open()
        self._moved(self.store.drive(code, key, step))
        return {"code": code, "key": key, "link": class_link(code, page_url)}

    def drive(self, code, key, lesson, step) -> dict:
        self.store.check_key(code, key)  # a wrong key reads no lesson either
        lesson_id = self.library.get(lesson).id
        number = self.library.step_number(self.library.get(lesson_id), step)
        self._moved(self.store.drive(code, key, self.step_of(lesson_id, number)))
        return self.follow(code)

    def reveal(self, code, key) -> dict:
        self._moved(self.store.reveal(code, key))
        return self.follow(code)

    def results(self, code, key) -> dict:
        self.store.check_key(code, key)
        state, answers, students, answered = self.store.tally(code)
        return {"question": state.step.question, "choices": list(state.step.choices), "answers": answers,
                "students": students, "answered": answered}

    # ---- the code alone -----------------------------------------------------------------------------------------

    def follow(self, code) -> dict:
        state, answers, students, _ = self.store.tally(code)
        self._moved(state)  # after a restart, the board learns the version from the store
        step = state.step
        return {"code": state.code, "lesson": step.lesson, "step": step.step, "tab": step.tab,
                "settings": dict(step.settings), "question": step.question, "choices": list(step.choices),
                "students": students, "revealed": state.revealed, "answers": answers if state.revealed else {}}

    def answer(self, code, student, answer) -> dict:
        return {"accepted": True, "answered": self.store.answer(code, student, answer)}

    def join(self, code, student) -> int:
        return self.store.join(code, student)

    def page_student(self, code, token=None) -> tuple[str, str]:
        """A page's (student id, pass) in the class, the student counted in it: the pass's own student when `token`
        is a pass this class gave (the same page after a restart or a reload), else a new student's."""
        state = self.store.get(code)
        student = self.store.student_of(state.code, token) or secrets.token_urlsafe(12)
        self.store.join(state.code, student)
        return student, self.store.student_pass(state.code, student)

    def page_step(self, code) -> dict:
        """The class's step as a following page first shows it (its script, before the page's own view has caught
        up): {"code", "version", "lesson", "step", "position", "title", "text", "question", "choices", "revealed"};
        "text" is the step's text as the lesson player shows it (Markdown), in quiz form while its question is open.
        The same for every follower of the class: bench/class_pages.py, ui/classroom/route.py computes it once a
        move."""
        state = self.state(code)
        step = state.step
        shown = {"code": state.code, "version": state.version, "lesson": step.lesson, "step": step.step,
                 "position": "", "title": "", "text": "", "question": step.question, "choices": list(step.choices),
                 "revealed": state.revealed}
        if step.lesson:
            lesson = self.library.get(step.lesson)
            shown.update(position=f"step {step.step} of {len(lesson.steps)}", title=lesson.title,
                         text=self.library.text(step.lesson, step.step, bool(step.choices and not state.revealed)))
        return shown

    def page_answer(self, code, token, answer) -> dict:
        """A following page's answer, sent with its pass (page_student): {"accepted", "answered", "pass"}; the
        pass's student answers (one page, one student), a page without a pass this class gave joins first."""
        student, token = self.page_student(code, token)
        return {**self.answer(code, student, answer), "pass": token}

    def answer_of(self, code, token) -> str | None:
        """The answer the page with this pass gave to the class's step now (None: none, or not a pass of it)."""
        student = self.store.student_of(self.store.get(code).code, token)
        return self.store.answer_of(code, student) if student else None

    def state(self, code) -> ClassState:
        state = self.store.get(code)
        self._moved(state)
        return state

    # ---- inside ---------------------------------------------------------------------------------------------------

    def step_of(self, lesson_id: str, number: int) -> Step:
        """What the class sees on a step, read once from the library."""
        lesson = self.library.get(lesson_id)
        found = lesson.steps[number - 1]
        settings = self.library.step(lesson_id, number)["settings"]
        choices, model_answer = question_choices(self.library, lesson_id, number)
        return Step(lesson=lesson_id, step=number, tab=str(settings.get("tab", "attention")), settings=settings,
                    question=found.question if choices else "", choices=choices, model_answer=model_answer,
                    after=getattr(found, "after", ""))

    def _moved(self, state: ClassState) -> None:
        self.board.moved(state.code, state.version)


def question_choices(library, lesson_id: str, number: int) -> tuple[list[str], str]:
    """The step's answers to choose from and the model's answer (ui.lessons.library.LessonLibrary.choices and
    model_answer); ([], "") for a step that asks nothing the class can tap, or whose answer was not measured."""
    choices = list(library.choices(lesson_id, number))
    if not choices:
        return [], ""
    try:
        return choices, library.model_answer(lesson_id, number)
    except InputError as e:
        log.warning("step %s of %s: no model answer (%s)", number, lesson_id, e)
        return [], ""


def class_link(code: str, page_url: str | None = None) -> str:
    """The page's address students open: $ATTENTION_PUBLIC_URL, else the address the lecturer's page was opened
    at, unless that is this machine's own name (127.0.0.1, localhost), which no phone reaches: then this
    machine's address on its network."""
    base = os.environ.get(PUBLIC_URL_ENV, "").strip() or page_url or ""
    parts = urlsplit(base if "//" in base else f"http://{base}")
    host, port = parts.hostname or "", parts.port
    if not os.environ.get(PUBLIC_URL_ENV, "").strip() and (not host or is_loopback(host)):
        host = lan_address() or host or "127.0.0.1"
    netloc = f"[{host}]" if ":" in host else host
    if port:
        netloc += f":{port}"
    path = parts.path if parts.path.endswith("/") else parts.path.rsplit("/", 1)[0] + "/"
    return f"{parts.scheme or 'http'}://{netloc}{path}?{urlencode({'class': code})}"


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback or ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's address on its network: the source address a UDP socket would use (nothing is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(address) else address


__all__ = ["Classes", "ClassError", "class_link", "PUBLIC_URL_ENV"]
