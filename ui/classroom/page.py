"""The class on the page: presenter mode's "Start a class", the projector's panel (the code, the link and its QR
code, "23 of 41 answered", Reveal, then the class's answers beside the model's and the step's After: text), and a
student's panel (the question with answers to tap, "Follow the lecturer", the class's answers once revealed).

A student's page follows the lecturer's moves through the plain route /class/wait (ui/classroom/route.py,
ui/classroom/script.py): on a new step it opens the step as the lesson player does (its deep link, the same
apply_view), so the views follow, and their redraw shares each view among every follower (ctx.shared_redraws: a
view with the same inputs is computed once).

Across a server restart (the page reloads itself, ui/runtime/address.py), which ends every session:
- a student's id is made here, on the server, and handed to the page as a pass signed with the class database's
  secret (ClassStore.student_pass); the page keeps it in its sessionStorage under the class's code and shows it
  again on its next load, so one page stays one student, and no page can name another's id;
- the lecturer's key, kept in the lecturer's session, is also kept in the lecturer's page's sessionStorage under
  the class's code (never in the address, never sent to a student's page); the reloaded page shows it again and
  takes its class back (the projector's panel, the count, the next move).
"""
from __future__ import annotations

import dataclasses
import html

import gradio as gr
import segno  # QR codes, pure Python (requirements.txt)

from classroom.once import Once
from ui.classroom import script
from ui.classroom.service import Classes, class_link
from ui.page import components
from ui.page.links import parse_query
from ui.page.messages import InputError, inform, warn
from ui.page.outputs import UNCHANGED, Change
from viz.classroom import class_answers

COUNT_EVERY_S = 2.0  # the projector's "23 of 41 answered": one cheap request of the lecturer's page
VIEWS_SHARED_BYTES = 256 << 20  # the followers' views, kept once for them all
STEPS_KEPT = 64  # the followers' class_step answers, one a class's move (and presenter, quiz mode), the last kept


def qr_image(link: str) -> str:
    """The link's QR code as an inline SVG image (sized by CSS: ui/classroom/script.py, ~420 px on a projector)."""
    uri = segno.make(link, error="m").svg_data_uri(scale=10, border=2)
    return f'<img src="{html.escape(uri)}" alt="QR code of the class\'s link {html.escape(link)}">'


def count_text(results: dict) -> str:
    if not results["choices"]:
        return f"This step asks the class nothing · {results['students']} students"
    return f"**{results['answered']} of {results['students']}** answered"


def status_html(follow: dict, version: int) -> str:
    """A student's line; its data-class-* attributes tell the page script which class to follow."""
    return (f'<div class="class-line" data-class-code="{html.escape(follow["code"])}" data-class-version="{version}"'
            f' data-class-step="{html.escape(follow["lesson"])}/{follow["step"]}">Following class '
            f'<b>{html.escape(follow["code"])}</b>: step {follow["step"]} of the lesson. Explore freely; '
            '“Follow the lecturer” brings you back.</div>')


def shared_views(once: Once):
    """ctx.shared_redraws' wrapper: a view's result for the same inputs computed once for every follower, each
    handed its own copy of the updates in it (Gradio pops an update's "value" as it sends it), its figures
    serialised once for them all (components.shared_figure)."""
    def share(view):
        def fn(*values):
            return unshared(once.get((id(view), repr(values)), lambda: figures_shared(view.fn(*values))))
        return dataclasses.replace(view, fn=fn)
    return share


def figures_shared(result):
    """The view's result, its Plotly figures (alone or an update's value) marked as sent unchanged to every
    follower."""
    parts = result.values() if isinstance(result, dict) else result if isinstance(result, tuple) else (result,)
    for part in parts:
        value = part.get("value") if isinstance(part, dict) else getattr(part, "props", {}).get("value", part)
        if hasattr(value, "to_plotly_json"):
            components.shared_figure(value)
    return result


def unshared(result):
    """A view's result with each dict in it (an update, or {component: update}) copied: one follower's sending
    never changes what the next is sent."""
    copied = lambda v: dict(v) if isinstance(v, dict) else v  # noqa: E731
    if isinstance(result, tuple):
        return tuple(copied(v) for v in result)
    if isinstance(result, dict):
        return {k: copied(v) for k, v in result.items()}
    return result


class ClassPanel:
    """Build with build_start() in the header, panels() above the tabs, join_form() under them; wire() once the
    page's load code exists (ui.page.page_link.wire_link)."""

    def __init__(self, classes: Classes):
        self.classes = classes
        self.views = Once(VIEWS_SHARED_BYTES)
        self.steps = Once(STEPS_KEPT, size_of=lambda _: 1)  # (code, version, presenter, quiz) -> class_step's answer

    # ---- components ----------------------------------------------------------------------------------------------

    def build_start(self) -> None:
        self.start = gr.Button("Start a class", elem_id="class-start", size="sm", min_width=120)

    def panels(self) -> None:
        self.key, self.code = gr.State(None), gr.State(None)  # the lecturer's (server side)
        # the lecturer's "CODE KEY" on its way to or from the page's sessionStorage (emptied at once on the page)
        self.lecturer_pass = hidden_box("class-lecturer")
        # a student's page: its signed pass (ClassStore.student_pass) and the class it follows, kept in the page
        # (hidden boxes), so that after a server restart, which ends every session, it is the same student following
        self.student_pass = hidden_box("class-pass")
        self.following = hidden_box("class-following")
        self.timer = gr.Timer(COUNT_EVERY_S, active=False)
        with gr.Column(visible=False, elem_id="class-projector") as self.projector:
            with gr.Accordion("Join the class", open=True, elem_id="class-join") as self.join_box:
                with gr.Row():
                    self.qr = gr.HTML("", elem_id="class-qr")
                    self.join_text = gr.Markdown("", elem_id="class-join-text")
            with gr.Row(equal_height=True):
                self.count = gr.Markdown("", elem_id="class-count")
                self.reveal = gr.Button("Reveal the class's answers", variant="primary", elem_id="class-reveal",
                                        scale=0, min_width=220)
            with gr.Row(visible=False, elem_id="class-results") as self.results:
                self.chart = components.Plot(elem_id="class-chart", show_label=False)
                self.after = gr.Markdown("", elem_id="class-after")
        with gr.Column(visible=False, elem_id="class-student") as self.student_panel:
            self.status = gr.HTML("", elem_id="class-status")
            # the lecturer's new step as the page's script shows it at once (ui/classroom/script.py), until the
            # page's own view has followed
            gr.HTML('<div id="class-now-box" hidden></div>', elem_id="class-now")
            self.question = gr.Markdown("", elem_id="class-question")
            self.choices = gr.Radio([], label="Your answer (tap one; the last counts)", elem_id="class-choices",
                                    visible=False)
            self.answered = gr.Markdown("", elem_id="class-answered")
            with gr.Column(visible=False, elem_id="class-student-results") as self.student_results:
                self.student_chart = components.Plot(elem_id="class-student-chart", show_label=False)
                self.student_after = gr.Markdown("", elem_id="class-student-after")
            self.follow = gr.Button("Follow the lecturer", elem_id="class-follow", size="sm")
            self.step_button = gr.Button("step", elem_id="class-step", elem_classes=["class-hidden"])
            self.tick = gr.Button("tick", elem_id="class-tick", elem_classes=["class-hidden"])

    def join_form(self) -> None:
        with gr.Accordion("Join a class with its code", open=False, elem_id="class-join-form"):
            with gr.Row(equal_height=True):
                self.code_box = components.Textbox(label="The code on the projector", max_lines=1,
                                                   elem_id="class-code", scale=3)
                self.join_button = gr.Button("Join", elem_id="class-join-button", scale=1, min_width=100)

    # ---- what the panels show -------------------------------------------------------------------------------------

    def projector_values(self, code: str, key: str) -> tuple:
        """(count, results row, chart, After: text) for the lecturer's class now."""
        results = self.classes.results(code, key)
        state = self.classes.state(code)
        if state.revealed and results["choices"]:
            figure = class_answers(results["choices"], results["answers"], state.step.model_answer, 20)
            return count_text(results), Change(visible=True), figure, after_text(state.step)
        return count_text(results), Change(visible=False), None, ""

    def student_values(self, code: str, fresh: bool = True) -> tuple:
        """The student panel's outputs (self.student_outputs' order) for the class now; fresh: on a step the page
        has just opened (not fresh: the same step revealed, the student's answer kept as it is)."""
        follow = self.classes.follow(code)
        state = self.classes.state(code)
        asked = bool(follow["choices"])
        question = f"**Question to the class:** {follow['question']}" if asked else "No question on this step."
        if follow["revealed"] and asked:
            figure = class_answers(follow["choices"], follow["answers"], state.step.model_answer)
            shown = (Change(visible=True), figure, after_text(state.step))
        else:
            shown = (Change(visible=False), None, "")
        choices = Change(choices=follow["choices"], value=None, visible=asked, interactive=not follow["revealed"]) \
            if fresh else Change(visible=asked, interactive=not follow["revealed"])
        return (status_html(follow, state.version), question, choices, "" if fresh else UNCHANGED, *shown)

    @property
    def student_outputs(self) -> list:
        return [self.status, self.question, self.choices, self.answered, self.student_results, self.student_chart,
                self.student_after]

    # ---- events ---------------------------------------------------------------------------------------------------

    def from_link(self, params: dict) -> dict:
        """A link's ?class=CODE: the class's lesson and step, read as the lesson's link would be (page_link)."""
        if "class" not in params or "lesson" in params:
            return params
        rest = {k: v for k, v in params.items() if k != "class"}
        try:
            follow = self.classes.follow(params["class"])
        except InputError as e:
            warn(str(e))
            return rest
        if not follow["lesson"]:
            return rest
        asked = follow["choices"] and not follow["revealed"]
        return {**rest, "lesson": follow["lesson"], "step": str(follow["step"]),
                **({"quiz": "1"} if asked else {})}

    def wire(self, ctx, player, apply_view, view_outputs: list, linked: tuple) -> dict:
        """The class's events; returns those that set the view (the link box follows them)."""
        classes, library = self.classes, player.library
        lecturer_out = [self.key, self.code, self.projector, self.qr, self.join_text, self.join_box, self.count,
                        self.results, self.chart, self.after, self.timer, ctx.quiz]  # quiz: the
        # projector keeps each step's answer hidden until the lecturer reveals it

        def shown_class(key, code, page: str, join_open: bool) -> tuple:
            link = class_link(code, page)
            join = (f"Join on your phone: scan the code, or open **{html.escape(link)}**\n\n"
                    f"or type the code `{code}` under “Join a class with its code”.")
            return (key, code, Change(visible=True), qr_image(link), join, Change(label=f"Join the class {code}",
                    open=join_open), *self.projector_values(code, key), Change(active=True), True)

        def start(lesson, number, key, code, request: gr.Request):
            if not lesson:
                raise InputError("Open a lesson first (the Lesson picker), then start a class on it.")
            page = (request.headers.get("referer") if request is not None else None) or ""
            if not code:
                opened = classes.open(lesson, page)
                key, code = opened["key"], opened["code"]
            classes.drive(code, key, lesson, number)
            return (*shown_class(key, code, page, True), f"{code} {key}")  # the pass: kept by the page (script.py)

        def moved(lesson, number, key, code):
            if not code or not lesson:
                return (UNCHANGED,) * 4
            classes.drive(code, key, lesson, number)
            return self.projector_values(code, key)

        def counted(key, code):
            return self.projector_values(code, key) if code else (UNCHANGED,) * 4

        def revealed(key, code):
            if not code:
                raise InputError("Start a class first.")
            classes.reveal(code, key)
            return self.projector_values(code, key)

        shown = [self.count, self.results, self.chart, self.after]
        started = ctx.on([self.start.click], start, inputs=[player.lesson, player.step, self.key, self.code],
                         outputs=lecturer_out + [self.lecturer_pass], api_name="class_start")
        ctx.on(started, None, inputs=[self.lecturer_pass], outputs=[self.lecturer_pass], js=script.KEEP_LECTURER_JS)
        ctx.on([player.lesson.change, player.step.change], moved, inputs=[player.lesson, player.step, self.key,
               self.code], outputs=shown, api_name="class_moved", trigger_mode="always_last")
        ctx.on([self.timer.tick], counted, inputs=[self.key, self.code], outputs=shown, api_name="class_count",
               queue=False, show_progress="hidden")
        ctx.on([self.reveal.click], revealed, inputs=[self.key, self.code], outputs=shown, api_name="class_reveal_page",
               queue=False)

        # ---- a page (re)loaded: a student's page joins its link's class; a lecturer's takes its class back ----
        def joined(code, token):
            student, token = classes.page_student(code, token)
            return token, classes.state(code).code

        student_out = [self.student_pass, self.following, self.student_panel] + self.student_outputs
        nothing = (UNCHANGED,) * (len(student_out) + len(lecturer_out))

        def on_load(lecturer, token, request: gr.Request):
            """lecturer, token: what the page's sessionStorage kept (script.LOAD_JS): the lecturer's "CODE KEY", a
            student's pass of the link's class."""
            code = dict(request.query_params).get("class") if request is not None else None
            if code:
                try:
                    token, code = joined(code, token)
                except InputError:  # page_link's load has said why (self.from_link)
                    return nothing
                return (token, code, Change(visible=True), *self.student_values(code),
                        *(UNCHANGED,) * len(lecturer_out))
            code, _, key = str(lecturer or "").partition(" ")
            if not code:
                return nothing
            try:
                classes.store.check_key(code, key)
            except InputError:  # the class has closed since: the page is a lecturer's page without a class
                return nothing
            page = (request.headers.get("referer") if request is not None else None) or ""
            return (*(UNCHANGED,) * len(student_out), *shown_class(key, code, page, False))

        ctx.on([ctx.demo.load], on_load, inputs=[self.lecturer_pass, self.student_pass],
               outputs=student_out + lecturer_out, api_name="class_load", js=script.LOAD_JS)
        ctx.on([self.student_pass.change], None, inputs=[self.student_pass], js=script.KEEP_STUDENT_JS)

        def opened_step(code, presenter: bool, quiz: bool) -> tuple[dict, list]:
            """(what opening the class's step sets, the link's notes): the same for every follower."""
            follow = classes.follow(code)
            if not follow["lesson"]:
                return dict.fromkeys(student_out, UNCHANGED), []
            quiz = quiz or bool(follow["choices"] and not follow["revealed"])
            params = player.params(follow["lesson"], follow["step"], presenter, quiz)
            settings, notes = parse_query(params, library.registry, library.defaults, library.tabs, linked)
            return {**apply_view(settings, []),
                    **dict(zip(player.outputs, player.values(follow["lesson"], follow["step"], settings.quiz))),
                    **dict(zip(self.student_outputs, self.student_values(code)))}, notes

        def follow_step(code, token, presenter, quiz):
            """The lecturer's step opened as its lesson's link opens it, in quiz mode while its question is open:
            computed once a move for every follower (self.steps), each page shown its own answer if it answered
            before its view caught up (its script's, /class/answer)."""
            if not code:
                raise InputError("Join a class first: its link, or its code under “Join a class with its code”.")
            state = classes.state(code)
            view, notes = self.steps.get((state.code, state.version, bool(presenter), bool(quiz)),
                                         lambda: opened_step(state.code, bool(presenter), bool(quiz)))
            for note in notes:  # they quote the link's parameters, which anyone can write
                warn(note)
            view = dict(view)
            mine = classes.answer_of(state.code, token) if token and state.step.choices else None
            if mine is not None:
                view[self.choices] = Change(choices=list(state.step.choices), value=mine, visible=True,
                                            interactive=not state.revealed)
                view[self.answered] = f"Your answer: **{html.escape(mine)}** (the last counts)."
            return view

        def join_code(code, token, presenter, quiz):
            token, code = joined(str(code or "").strip().upper(), token)
            return {self.student_pass: token, self.following: code, self.student_panel: Change(visible=True),
                    **follow_step(code, token, presenter, quiz)}

        outputs = view_outputs + player.outputs + student_out
        inputs = [self.following, self.student_pass, ctx.presenter, ctx.quiz]
        stepped = ctx.on([self.step_button.click, self.follow.click], follow_step, inputs=inputs, outputs=outputs,
                         api_name="class_step", trigger_mode="always_last", queue=False)
        ctx.shared_redraws["class_step"] = shared_views(self.views)
        joined_event = ctx.on([self.join_button.click, self.code_box.submit], join_code,
                              inputs=[self.code_box, self.student_pass, ctx.presenter, ctx.quiz], outputs=outputs,
                              api_name="class_join", queue=False, js=script.JOIN_JS)
        ctx.on([self.tick.click], lambda code: self.student_values(code, False) if code else (UNCHANGED,) * 7,
               inputs=[self.following], outputs=self.student_outputs, api_name="class_tick", queue=False)

        def answered(code, token, choice):
            if not code or choice is None:
                return UNCHANGED, UNCHANGED
            student, token = classes.page_student(code, token)  # the pass's student; a page without one joins
            result = classes.answer(code, student, choice)
            return token, (f"Your answer: **{html.escape(str(choice))}** ({result['answered']} answered so far; "
                             "the last counts).")

        ctx.on([self.choices.input], answered, inputs=[self.following, self.student_pass, self.choices],
               outputs=[self.student_pass, self.answered], api_name="class_answer_page", queue=False)
        return {"class_step": stepped, "class_join": joined_event}

    def api(self, ctx) -> None:
        """The endpoints /class_open, /class_follow, /class_drive, /class_answer, /class_results, /class_reveal
        (docs/classes.md)."""
        classes = self.classes

        def class_open(lesson: str, request: gr.Request = None) -> dict:
            """Open a class on a lesson (its id, /lessons), at its first step: {"code", "key", "link"}. The code
            is what students type (or the link, ?class=CODE, its QR code on the projector); the key is the
            lecturer's secret, which every move of the class needs."""
            page = (request.headers.get("referer") or f"{request.url.scheme}://{request.headers.get('host', '')}/") \
                if request is not None else None
            return classes.open(lesson, page)

        def class_follow(code: str) -> dict:
            """Where the class is: {"code", "lesson", "step", "tab", "settings", "question", "choices",
            "students", "revealed", "answers"}; answers ({choice: count}) stays empty until revealed."""
            return classes.follow(code)

        def class_drive(code: str, key: str, lesson: str, step: int) -> dict:
            """Move the class to step `step` (from 1) of `lesson`: needs the lecturer's key. As /class_follow."""
            return classes.drive(code, key, lesson, step)

        def class_answer(code: str, student: str, answer: str) -> dict:
            """A student's answer to the class's question (one of its "choices"; one per student per step, the
            last counts): {"accepted", "answered"}. `student` is an id the caller makes (letters, digits, - or _)."""
            return classes.answer(code, student, answer)

        def class_results(code: str, key: str) -> dict:
            """The lecturer's count: {"question", "choices", "answers", "students", "answered"}."""
            return classes.results(code, key)

        def class_reveal(code: str, key: str) -> dict:
            """Show the class its answers: as /class_follow, with "revealed" true. Needs the lecturer's key."""
            return classes.reveal(code, key)

        for fn, quick in ((class_open, False), (class_follow, True), (class_drive, False), (class_answer, True),
                          (class_results, True), (class_reveal, True)):
            ctx.api(fn, api_name=fn.__name__, **({"queue": False, "concurrency_limit": None} if quick else {}))


def hidden_box(elem_id: str) -> gr.Textbox:
    """A value the page holds for its scripts and events, never shown."""
    return gr.Textbox("", elem_id=elem_id, elem_classes=["class-hidden"], show_label=False, container=False)


def after_text(step) -> str:
    return f"**The model's answer:** {html.escape(step.model_answer)}\n\n{step.after}".strip()

