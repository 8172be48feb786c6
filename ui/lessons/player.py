"""The lesson player: pick a lesson, then Next and Back (or the arrow keys), "step k of n"; each step opens its
view as its deep link would (ui.page.controls.wire_page hands the player the page load's own code), its text under
the tabs, its question before its answer in quiz mode, and any claim that fails on this model shown on its step.

The library (ui/lessons/library.py) is read once at start; which lesson and step a visitor is on lives in gr.State.
"""
from __future__ import annotations

import gradio as gr

from ui.page import components
from ui.page.context import Context
from ui.lessons.handout import HANDOUT_JS
from ui.lessons.library import LessonLibrary, failed_claims
from ui.page.links import TRUE, make_link, whole_number
from ui.page.messages import InputError, warn
from ui.page.outputs import UNCHANGED, Change

CSS = """
#lesson-position { flex: 0 0 auto !important; width: auto !important; min-width: 0 !important; align-self: center;
                   white-space: nowrap; }
#lesson-position .prose { width: auto !important; }
/* the player shares the header's first row: the sentence box gives up the room, and "Show attention" stays on one
   line (two lines make the row, and so the header, taller than a projector's first screen leaves it) */
#input-row #analyze { white-space: nowrap; min-width: max-content !important; }
#lesson-position:empty, #lesson-position .prose:empty { display: none; }
/* Back and Next only while a lesson is open: before, they are disabled, and on a projector they wrapped the first
   row onto a second line, pushing every tab's first figure 19 px past a 720-px screen */
body:not(:has(#lesson-panel)) #lesson-back, body:not(:has(#lesson-panel)) #lesson-next { display: none !important; }
body.presenter #lesson-position .prose, body.presenter #lesson-position p { font-size: 18px !important; }
#lesson-errors, #lesson-warning { color: var(--body-text-color); }
/* the picker says what it is, "Lesson", beside its box (a label above would make the header's first row taller) */
#lesson-label { flex: 0 0 auto !important; min-width: 0 !important; width: auto !important; align-self: center; }
#lesson-label p { margin: 0 !important; font-weight: 600; white-space: nowrap; }
/* the boxes the page script reads (the step's figure, its link) take no room */
#lesson-figure, #lesson-step-link { display: none !important; }
/* the step's text: built right under the header, so on a phone it comes before the figures */
#lesson-panel { border-left: 4px solid var(--color-accent); padding-left: 12px !important; }
#lesson-panel .prose p { margin: 0.3em 0 !important; }
/* a projector (presenter mode): the text beside the figures, the tab's content making room for it on the right;
   its top follows the row of tabs (--lesson-top, set by the page script), so the header keeps its width */
body.presenter #lesson-panel { position: absolute !important; right: 16px; top: var(--lesson-top, 280px);
    width: 350px !important; max-height: calc(100vh - var(--lesson-top, 280px) - 4px); overflow-y: auto; z-index: 5;
    background: var(--background-fill-primary); }
body.presenter:has(#lesson-panel) [role=tabpanel] { padding-right: 366px !important; box-sizing: border-box; }
body.presenter #lesson-text .prose, body.presenter #lesson-text p, body.presenter #lesson-text li {
    font-size: 17px !important; line-height: 1.3 !important; }
/* while a lesson is open the sentence box gives up room, so the player keeps the header's first row; the picker
   writes its titles small enough to show them whole */
body:has(#lesson-panel) #input-row #sentence { min-width: 150px !important; }
body.presenter #lesson input { font-size: 16px !important; }
/* a phone: the page's introduction gives way to the step's text, which then starts on the first screen */
@media (max-width: 640px) { div:has(> #lesson-panel) > #intro { display: none; } }  /* Gradio scopes this rule */
body.presenter #lesson-warning .prose, body.presenter #lesson-warning p { font-size: 16px !important; }
/* the figure a step names (figure: ...) comes first in presenter mode, before the tab's own first figure */
body.presenter .lesson-figure { order: -3 !important; }
"""

# The step's named figure (a CSS selector in the hidden #lesson-figure box) gets the class lesson-figure, and the text
# beside the figures starts under the row of tabs: both kept up by a light timer (the page redraws both at will).
PLACE_JS = """() => {
  const place = () => {
    const tabs = document.querySelector('.tab-wrapper') || document.querySelector('[role=tablist]');
    if (tabs) {
      const top = Math.round(tabs.getBoundingClientRect().bottom + window.scrollY + 8);
      if (document.body.style.getPropertyValue('--lesson-top') !== top + 'px')
        document.body.style.setProperty('--lesson-top', top + 'px');
    }
    const box = document.querySelector('#lesson-figure textarea, #lesson-figure input');
    const wanted = (box && document.querySelector('#lesson-panel') && box.value) || '';
    document.querySelectorAll('.lesson-figure').forEach((e) => {
      if (!wanted || !e.matches(wanted)) e.classList.remove('lesson-figure');
    });
    if (wanted) { try { document.querySelectorAll(wanted).forEach((e) => e.classList.add('lesson-figure')); }
                  catch (e) {} }
  };
  setInterval(place, 250);
}"""

# The arrow keys move through the open lesson from anywhere a key means nothing else: not while typing, on a
# slider, a radio, a tab list or an open list of choices (those keep their own arrow keys).
KEYS_JS = """() => {
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    const at = event.target;
    if (at && at.closest && at.closest('input, textarea, select, [contenteditable=true], [role=tablist], ' +
        '[role=listbox], [role=slider], [role=radiogroup]')) return;
    const button = document.querySelector(event.key === 'ArrowRight' ? '#lesson-next' : '#lesson-back');
    if (!button || button.disabled || !button.offsetParent) return;
    event.preventDefault();
    button.click();
  });
}"""


class Player:
    """The player's components and its events. build() makes the picker and buttons (ui.page.controls.build_controls
    puts them at the end of the header's first row), panel() the step's text under the tabs, wire() the events
    and the endpoints (called by ui.page.controls.wire_page with the page load's code)."""

    def __init__(self, library: LessonLibrary):
        self.library = library
        self.ctx: Context | None = None

    # ---- components ----------------------------------------------------------------------------------------------

    def build(self) -> "Player":
        choices = [(lesson.title, lesson.id) for lesson in self.library.lessons.values()]
        gr.Markdown("Lesson", elem_id="lesson-label", container=False)
        # wide enough for every title whole ("Heads forming during training"); its label is the word beside it
        self.picker = components.Dropdown(choices=choices, value=None, label="Lesson", show_label=False,
                                          elem_id="lesson", scale=2, min_width=290, container=False)
        self.back = gr.Button("◀ Back", elem_id="lesson-back", size="sm", scale=0, min_width=80, interactive=False)
        self.position = gr.Markdown("", elem_id="lesson-position", container=False, min_height=0)
        self.forward = gr.Button("Next ▶", elem_id="lesson-next", size="sm", scale=0, min_width=80,
                                 interactive=False)
        self.lesson = gr.State(None)  # the open lesson's id (None: none open)
        self.step = gr.State(0)  # its step, from 1
        return self

    def only_tabs(self, tabs: list[str], settings: tuple | None = None) -> None:
        """Once the tabs are built: a lesson that opens a tab this page lacks, or sets a setting none of its tabs
        links (ui.page.links.Linked), is left out, with its message."""
        self.library.restrict_to(tuple(tabs), settings)
        self.picker.choices = [(lesson.title, lesson.id) for lesson in self.library.lessons.values()]

    def panel(self) -> None:
        """What the student reads on a step: built right under the header, before the tabs (a phone reads it before
        the figures; a projector shows it beside them, ui/lessons/player.py's CSS)."""
        with gr.Column(visible=False, elem_id="lesson-panel") as self.column:
            self.text = gr.Markdown("", elem_id="lesson-text")
            self.figure = gr.Textbox("", visible="hidden", elem_id="lesson-figure", label="the step's figure")
            # the link opening the step's view (its settings): the handout prints it under each step
            self.link = gr.Textbox("", visible="hidden", elem_id="lesson-step-link", label="the step's settings link")
            self.reveal = gr.Button("Reveal the answer", variant="primary", size="sm", visible=False,
                                    elem_id="lesson-reveal", scale=0, min_width=160)
            self.warning = gr.Markdown("", visible=False, elem_id="lesson-warning")
            # the whole lesson as one HTML page (ui/lessons/handout.py): made in the browser from the figures drawn
            self.handout = gr.Button("Download the lesson as a handout (HTML)", size="sm", elem_id="lesson-handout",
                                     scale=0, min_width=200)

    def errors_panel(self) -> None:
        """For the lecturer, under the tabs: the lessons left out of the picker, and how to fix them."""
        if self.library.errors:
            gr.Markdown("\n".join(f"- ⚠️ {e}" for e in self.library.errors), elem_id="lesson-errors")

    @property
    def outputs(self) -> list:
        return [self.picker, self.lesson, self.step, self.position, self.back, self.forward, self.column, self.text,
                self.reveal, self.warning, self.figure, self.link]

    # ---- what a step shows ----------------------------------------------------------------------------------------

    def values(self, lesson_id: str, number: int, quiz: bool) -> tuple:
        """The player's outputs on step `number` of the lesson (self.outputs' order)."""
        lesson = self.library.get(lesson_id)
        step = lesson.steps[number - 1]
        warning = failed_claims(self.library.claims(lesson_id, number))
        return (lesson_id, lesson_id, number, f"step {number} of {len(lesson.steps)}",
                Change(interactive=number > 1), Change(interactive=number < len(lesson.steps)),
                Change(visible=True), self.library.text(lesson_id, number, bool(quiz)),
                Change(visible=bool(quiz and step.answer)), Change(value=warning, visible=bool(warning)),
                self.library.figure(lesson_id, number), make_link(self.library.settings(lesson_id, number)))

    def closed(self) -> tuple:
        return (None, None, 0, "", Change(interactive=False), Change(interactive=False), Change(visible=False), "",
                Change(visible=False), Change(value="", visible=False), "", "")

    def params(self, lesson_id: str, number: int, presenter, quiz) -> dict:
        """The step's deep link query, with the viewer's presenter and quiz mode."""
        return {**self.library.query(lesson_id, number), "presenter": "1" if presenter else "0",
                "quiz": "1" if quiz else "0"}

    def from_link(self, params: dict) -> tuple[dict, tuple]:
        """A page link's query: with `lesson` (and `step`, from 1), the step's settings in its place and the
        player's values; without, the query as it is and the player unchanged."""
        if "lesson" not in params:
            return params, (UNCHANGED,) * len(self.outputs)
        presenter = str(params.get("presenter", "0")).lower() in TRUE
        quiz = str(params.get("quiz", "0")).lower() in TRUE
        try:
            lesson = self.library.get(params["lesson"])
        except InputError as e:
            warn(str(e))
            rest = {k: v for k, v in params.items() if k not in ("lesson", "step")}
            return rest, (UNCHANGED,) * len(self.outputs)
        number = min(max(whole_number(params.get("step"), 1), 1), len(lesson.steps))
        return self.params(lesson.id, number, presenter, quiz), self.values(lesson.id, number, quiz)

    # ---- events -------------------------------------------------------------------------------------------------

    def wire(self, ctx: Context, apply_view, view_outputs: list, settings: tuple = ()) -> list:
        """The player's events: each sets the view through `apply_view(settings, notes)` (the page
        load's own code, ui/page/page_link.py), so the views that follow what it sets redraw, as after a page load.
        settings: the page's linked tab settings (ui.page.links.Linked). Returns the events that change the view (the
        link box follows them)."""
        self.ctx, library = ctx, self.library
        self.api()
        outputs = view_outputs + self.outputs
        linked = settings
        self.only_tabs(library.tabs, settings)  # the settings this page's tabs link

        def open_step(lesson_id, number, presenter, quiz):
            from ui.page.links import parse_query  # the deep link's parser: a step opens as its link would
            settings, notes = parse_query(self.params(lesson_id, number, presenter, quiz), library.registry,
                                          library.defaults, library.tabs, linked)
            return {**apply_view(settings, notes), **dict(zip(self.outputs, self.values(lesson_id, number,
                                                                                              quiz)))}

        def on_pick(lesson_id, current, presenter, quiz):
            # None: the picker opened and closed without a pick; the open lesson: Gradio sends the picker's value
            # again when it loses focus (ui/runtime/repeats.py), which must not take the class back to step 1
            if lesson_id in (None, "") or lesson_id == current:
                return (UNCHANGED,) * len(outputs)
            return open_step(library.get(lesson_id).id, 1, presenter, quiz)

        def on_move(lesson_id, number, presenter, quiz, delta):
            if not lesson_id:
                return (UNCHANGED,) * len(outputs)
            lesson = library.get(lesson_id)
            target = whole_number(number, 1) + delta
            if not 1 <= target <= len(lesson.steps):
                return (UNCHANGED,) * len(outputs)
            return open_step(lesson.id, target, presenter, quiz)

        modes = [ctx.presenter, ctx.quiz]
        picked = ctx.on([self.picker.input], on_pick, inputs=[self.picker, self.lesson] + modes, outputs=outputs,
                        api_name="lesson_pick")
        # always_last: a press while the last step is still opening is kept, not dropped (Gradio's default for a click)
        forward = ctx.on([self.forward.click], lambda *v: on_move(*v, 1), inputs=[self.lesson, self.step] + modes,
                         outputs=outputs, api_name="lesson_next", trigger_mode="always_last")
        back = ctx.on([self.back.click], lambda *v: on_move(*v, -1), inputs=[self.lesson, self.step] + modes,
                      outputs=outputs, api_name="lesson_back", trigger_mode="always_last")
        events = [picked, forward, back]

        def on_reveal(lesson_id, number):
            if not lesson_id:
                return UNCHANGED, Change(visible=False)
            return library.text(lesson_id, number, True, True), Change(visible=False)

        def on_quiz(lesson_id, number, quiz):
            if not lesson_id:
                return UNCHANGED, UNCHANGED
            step = library.get(lesson_id).steps[library.step_number(library.get(lesson_id), number) - 1]
            return library.text(lesson_id, number, bool(quiz)), Change(visible=bool(quiz and step.answer))

        ctx.on([self.handout.click], None, js=HANDOUT_JS, api_name="lesson_handout")
        ctx.on([self.reveal.click], on_reveal, inputs=[self.lesson, self.step], outputs=[self.text, self.reveal],
               api_name="lesson_reveal", queue=False)
        ctx.on([ctx.quiz.change], on_quiz, inputs=[self.lesson, self.step, ctx.quiz],
               outputs=[self.text, self.reveal], api_name="lesson_quiz", queue=False)
        return events

    def api(self) -> None:
        """The endpoints /lessons and /lesson_step (the README's "Every endpoint")."""
        library = self.library

        def lessons() -> list:
            """Every lesson the page offers: a list of {"id", "title", "steps"} (steps: how many)."""
            return library.listing()

        def lesson_step(lesson: str, step: int) -> dict:
            """Step `step` (from 1) of a lesson: {"settings": the deep link's settings, "text": what the student
            reads (Markdown), "claims": [{"claim", "value", "holds"}, ...] measured on the step's model}."""
            return library.step(lesson, step)

        self.ctx.api(lessons, api_name="lessons")
        self.ctx.api(lesson_step, api_name="lesson_step")
