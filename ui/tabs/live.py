"""Tab "Train live": a tiny transformer learns a toy task on the server while the class watches.

Each training runs in a process of its own (training/toy_session.py), a few at a time for the whole
server, one per visitor; what a visitor trained lives in their gr.State only. The API endpoint
/train_toy(task, positions, seconds) trains with the default sizes and returns the result as a dict.
"""
from __future__ import annotations

import contextlib
import logging
import os
import uuid

import gradio as gr

from training import toy
from training.toy_session import TrainingFailed, TrainingRefused, Trainings, Waiting, default_limit
from training.toy_tasks import TASKS, SettingsError
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, PRESENTER_SECOND, Context, figure_font, screen_height
from ui.page.messages import InputError, inform, shown
from ui.page.outputs import UNCHANGED, Change, enabled, hidden, show
from ui.runtime.events import repeat_outputs
from viz import toy as viz_toy

TAB = TabSpec(id="live", label="Train live", figure="#toy-progress")

log = logging.getLogger(__name__)

INTRO = """
**Watch a transformer learn.** Pick a task and press **Train**: a tiny transformer (the same code as the models
in the other tabs; the line under the buttons counts its parameters) trains on this server for up to a minute. Twice a second you see
the loss, the share of answers it gets right on inputs it has never seen (*held-out accuracy*), and where every
head looks on one fixed example. Nobody programs those patterns: they are learned from examples.
"""
HOW_TO_READ = """
In each head's square, row *i* is the place writing answer *i* and column *j* a place it reads: a dark cell
means answer *i* is taken from input *j*. Reversing ten letters shows up as the anti-diagonal (bottom left to
top right). Heads the task does not need keep spreading their weight evenly (often a whole layer).
"""
WHY_POSITIONS = """
**Why can't it reverse without positions?** Attention compares tokens by their content alone. Without a
positional encoding the letter *c* looks exactly the same to the model whether it stands first or last: the
model sees a bag of letters, not a sequence. To reverse, the first answer must be the *last* letter, and
nothing tells the model which letter is last. The best it can do is guess one of the other nine letters, right
about one time in nine (11%), however long it trains. With positions, every place gets its own vector, one
head learns to look from place *i* to place *n − 1 − i* (the anti-diagonal in its map) and the task is solved
within seconds. Copy and count need no order: try them with positions off.
"""
WIDE_VS_NARROW = """
**Wide or narrow heads?** *Narrow* heads split the embedding (width *k*) between the *h* heads, each working in
*k/h* dimensions; *wide* heads each see all *k*, which costs *h* times the attention parameters and compute.
**Compare** trains both versions of the settings above side by side, one step each in turn, for the same time.
"""
REASONS = {
    "time": "the time is up",
    "steps": f"it reached the cap of {toy.MAX_STEPS:,} steps",
    "stopped": "you stopped it; what it learned so far is kept (try it below)",
    "learned": f"every held-out answer had been right for {toy.LEARNED_FOR_S:g} seconds",
}
DEFAULTS = toy.ToySettings()


def limit_from_env() -> int:
    """Trainings at once for the whole server: $ATTENTION_TOY_TRAININGS, else one per core beyond the first."""
    value = os.environ.get("ATTENTION_TOY_TRAININGS", "")
    return int(value) if value.isdigit() and int(value) > 0 else default_limit()


def owner_of(request: gr.Request | None) -> str:
    """The visitor: one browser tab (or one API client) is one Gradio session."""
    session = getattr(request, "session_hash", None) if request is not None else None
    return session or f"anonymous-{uuid.uuid4().hex}"


def make_settings(task, positions, heads_kind, layers, heads, width, seconds) -> toy.ToySettings:
    if heads_kind not in ("narrow", "wide"):
        raise SettingsError(f"heads must be 'narrow' or 'wide', not {shown(heads_kind)}.")
    return toy.ToySettings(task=task, positions=positions, layers=layers, heads=heads, width=width,
                           wide=heads_kind == "wide", seconds=seconds)


def _describe(settings: dict) -> str:
    heads = "wide" if settings["wide"] else "narrow"
    return (f"{settings['task']}, positions {'on' if settings['positions'] else 'off'}, {settings['layers']} "
            f"layer(s) × {settings['heads']} {heads} head(s), width {settings['width']}")


def status_text(snap: toy.Snapshot) -> str:
    """One paragraph: where the training is, and at the end why it stopped and what it means."""
    s, task = snap.settings, TASKS[snap.settings["task"]]
    example = f"On the example `{task.example}` it writes `{snap.example_output}`."
    if snap.step == 0 and not snap.done:
        return (f"**Not trained yet** ({_describe(s)}, {snap.parameters:,} parameters): its random weights spread "
                f"attention almost evenly and it is right {snap.accuracy:.0%} of the time. {example}")
    head = f"**Done** after {snap.step:,} steps, {snap.seconds:.1f} s: {REASONS.get(snap.reason, snap.reason)}." \
        if snap.done else f"**Training**: step {snap.step:,}, {snap.seconds:.1f} s of {s['seconds']:g}."
    text = (f"{head} {_describe(s)}; {snap.steps_per_second:.0f} steps/s. Held-out accuracy **{snap.accuracy:.1%}** "
            f"(whole answers right: {snap.sequence_accuracy:.0%}; guessing: {task.chance:.0%}). {example}")
    if snap.done and task.needs_positions and not s["positions"]:
        text += (f" Without positions it cannot beat guessing by much (at best {task.blind_best:.0%} on reverse): "
                 "see below why." if task.blind_best else " Without positions it cannot tell the places apart.")
    return text


BUTTONS_PX = 60  # the Train buttons above the figures, in presenter mode


def progress_figures(snap: toy.Snapshot, presenter) -> tuple:
    task, font = TASKS[snap.settings["task"]], figure_font(presenter)
    blind = task.blind_best if task.needs_positions else None
    title = "Before training" if snap.step == 0 and not snap.done else f"{snap.settings['task']}: step {snap.step:,}"
    curve = viz_toy.progress_figure(snap.loss_steps, snap.losses, snap.eval_steps, snap.accuracies, task.chance,
                                    blind, title=title, font_size=font,
                                    max_height=screen_height(presenter, above=BUTTONS_PX))
    heads = viz_toy.heads_figure(snap.attention, task.example, snap.example_output, font_size=font)
    return curve, heads


def same_model(a: dict, b: dict) -> bool:
    return all(a[k] == b[k] for k in ("task", "positions", "layers", "heads", "width", "wide"))


def preview(task, positions, heads_kind, layers, heads, width, presenter, trained=None):
    """The chosen model before training (untrained weights on the task's example), or, when the visitor
    has just trained exactly this model, its final state again (presenter mode redraws it larger)."""
    settings = make_settings(task, positions, heads_kind, layers, heads, width, DEFAULTS.seconds)
    if trained and same_model(trained["snapshot"].settings, settings.to_dict()):
        snap = trained["snapshot"]
    else:
        snap = toy.untrained(settings)
    curve, heads_fig = progress_figures(snap, presenter)
    hint = TASKS[settings.task].hint
    return status_text(snap), curve, heads_fig, Change(placeholder=hint, info=f"Type {hint}.")


def predict(text, trained, presenter):
    """The trained model's answer to a typed input, with every head and the sharpest head in detail."""
    if not trained:
        raise SettingsError("Train a model first (press Train above), then type an input here.")
    if trained.get("current") is False:
        raise SettingsError(f"The settings above are not those of the model trained last "
                            f"({_describe(trained['settings'])}): press Train to train this one first.")
    model = toy.TrainedToy(trained["settings"], trained["weights"])
    result = model.predict(text)
    font = figure_font(presenter)
    right = result.right
    if right is None:
        verdict = "These brackets do not balance, so there is no right answer; the model was trained on balanced ones."
    else:
        verdict = f"{sum(right)} of {len(right)} right" + ("." if all(right) else f"; the right answer is `{result.expected}`.")
    summary = (f"The model ({_describe(trained['settings'])}) reads `{result.text}` and writes **`{result.output}`**: "
               f"{verdict}")
    layer, head = viz_toy.sharpest_head(result.attention)
    grid = viz_toy.heads_figure(result.attention, result.text, result.output, font_size=font)
    detail = viz_toy.head_detail(result.attention, result.text, result.output, layer, head, font_size=font)
    return summary, show(grid), show(detail)


def follow_settings(settings_values, trained):
    """When the settings change, the trained model below is no longer the one set above: (trained marked
    current or not, answer, every head, one head). Its answer goes and Predict refuses until it is trained;
    set back to the trained model's settings, it answers again."""
    keep = UNCHANGED
    if not trained:
        return keep, keep, keep, keep
    same = same_model(trained["settings"], make_settings(*settings_values, DEFAULTS.seconds).to_dict())
    if same:
        cleared = "" if trained.get("current") is False else keep
        return {**trained, "current": True}, cleared, keep, keep
    note = (f"*The model trained last ({_describe(trained['settings'])}) is not the one set above: press **Train** "
            "to train this one, then try it here.*")
    return {**trained, "current": False}, note, hidden(), hidden()


def _errors_as_messages(events):
    """Iterate a training's events; a refusal or a failure is the visitor's message (an InputError)."""
    try:
        yield from events
    except TrainingRefused as e:
        raise InputError(str(e)) from None
    except TrainingFailed as e:
        log.error("toy training failed: %s", e)
        raise InputError(f"The training stopped unexpectedly ({e}). Press Train to try again.") from None


def waiting_text(event: Waiting) -> str:
    return (f"**Waiting for a free trainer**: {event.running} training(s) running on this server"
            f"{f', {event.ahead} visitor(s) ahead of you' if event.ahead else ''}. Each takes at most "
            f"{toy.MAX_SECONDS} s; yours starts by itself (Stop leaves the queue).")


def api_result(snap: toy.Snapshot) -> dict:
    task = TASKS[snap.settings["task"]]
    return {"status": "done", "task": task.name, "positions": snap.settings["positions"],
            "accuracy": round(snap.accuracy, 4), "sequence_accuracy": round(snap.sequence_accuracy, 4),
            "steps": snap.step, "seconds": round(snap.seconds, 2), "steps_per_second": round(snap.steps_per_second, 1),
            "loss": round(snap.losses[-1], 4) if snap.losses else None, "chance": round(task.chance, 4),
            "stopped_because": snap.reason, "parameters": snap.parameters,
            "example": {"input": task.example, "output": snap.example_output}, "settings": snap.settings}


def api_endpoint(trainings: Trainings):
    """The public /train_toy endpoint (a generator: progress dicts, then the result)."""

    def train_toy(task: str = "reverse", positions: bool = True, seconds: float = 30,
                  request: gr.Request = None) -> dict:
        """Train the default tiny transformer (2 layers × 2 narrow heads, width 32) on a toy task for at most
        `seconds` (1-60). task: reverse, sort, copy, count or brackets; positions: learned positional encoding
        on or off. Streams progress; the final value is a dict with the held-out "accuracy" (0..1), "steps",
        "seconds" and more."""
        settings = toy.ToySettings(task=task, positions=positions, seconds=seconds)  # refused: a SettingsError
        events = trainings.run(owner_of(request), [settings])
        with contextlib.closing(events):
            for event in _errors_as_messages(events):
                if isinstance(event, Waiting):
                    yield {"status": "waiting", "ahead": event.ahead, "running": event.running}
                elif event[0].done:
                    yield api_result(event[0])
                else:
                    yield {"status": "training", "step": event[0].step, "seconds": round(event[0].seconds, 2),
                           "accuracy": round(event[0].accuracy, 4)}

    train_toy.__annotations__["return"] = dict  # the API page then says the endpoint returns a dict
    return train_toy


def build(ctx: Context) -> None:
    trainings = Trainings(limit=limit_from_env())
    task_choices = [(f"{t.name}: {t.summary}", t.name) for t in TASKS.values()]
    with ctx.tab(TAB):
        gr.Markdown(INTRO, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        with gr.Row():
            task = gr.Dropdown(task_choices, value=DEFAULTS.task, label="Task", elem_id="toy-task", scale=2)
            positions = gr.Checkbox(value=DEFAULTS.positions, label="Positional encoding (learned)",
                                    elem_id="toy-positions")
            heads_kind = gr.Radio([("narrow (split k)", "narrow"), ("wide (all of k)", "wide")], value="narrow",
                                  label="Heads", elem_id="toy-heads-kind")
        with gr.Row():
            layers = components.Slider(1, toy.MAX_LAYERS, value=DEFAULTS.layers, step=1, label="Layers",
                                       elem_id="toy-layers")
            heads = components.Radio(list(toy.HEAD_CHOICES), value=DEFAULTS.heads, label="Heads per layer", elem_id="toy-heads")
            width = components.Radio(list(toy.WIDTH_CHOICES), value=DEFAULTS.width, label="Width k", elem_id="toy-width")
            seconds = components.Slider(toy.MIN_SECONDS, toy.MAX_SECONDS, value=DEFAULTS.seconds, step=1,
                                        label="Seconds at most", elem_id="toy-seconds")
        with gr.Row(elem_classes=[PRESENTER_FIRST]):
            train_button = gr.Button("Train", variant="primary", elem_id="toy-train")
            stop_button = gr.Button("Stop", variant="stop", interactive=False, elem_id="toy-stop")
            compare_button = gr.Button("Compare wide and narrow", elem_id="toy-compare")
        status = gr.Markdown(elem_id="toy-status", elem_classes=[PRESENTER_SECOND])  # presenter mode: under the figures
        with gr.Row(elem_classes=[PRESENTER_FIRST]):
            curve = components.Plot(show_label=False, label="loss and accuracy", elem_id="toy-progress")
            heads_plot = components.Plot(show_label=False, label="every head", elem_id="toy-heads-plot")
        gr.Markdown(HOW_TO_READ)
        gr.Markdown("### Try the trained model")
        with gr.Row(equal_height=True):
            text = components.Textbox(label="Input", max_length=40, scale=3, elem_id="toy-input")
            predict_button = gr.Button("Predict", elem_id="toy-predict", scale=1)
        answer = gr.Markdown(elem_id="toy-answer")
        with gr.Row():
            answer_grid = components.Plot(show_label=False, visible=False, label="every head", elem_id="toy-answer-heads")
            answer_detail = components.Plot(show_label=False, visible=False, label="one head", elem_id="toy-answer-detail")
        gr.Markdown(WHY_POSITIONS, elem_id="toy-why")
        gr.Markdown(WIDE_VS_NARROW)
        compare_status = gr.Markdown(elem_id="toy-compare-status")
        compare_plot = components.Plot(show_label=False, visible=False, label="wide vs narrow", elem_id="toy-compare-plot")
        compare_table = gr.Dataframe(visible=False, interactive=False, label="wide vs narrow", elem_id="toy-compare-table")
        compare_heads = components.Plot(show_label=False, visible=False, label="heads side by side", elem_id="toy-compare-heads")
        trained = gr.State(None)
        # inside the tab: a gr.Tabs may hold only tabs
        ctx.api(api_endpoint(trainings), api_name="train_toy", concurrency_limit=None)

    model_controls = [task, positions, heads_kind, layers, heads, width]
    controls = model_controls + [seconds]
    buttons = [train_button, stop_button, compare_button]

    def lock(busy: bool) -> dict:
        updates = {c: enabled(not busy) for c in controls}
        updates.update({train_button: enabled(not busy), compare_button: enabled(not busy), stop_button: enabled(busy)})
        return updates

    def on_preview(*values):
        trainings.warm_up()  # someone looking at this tab is likely to press Train next
        *settings_values, _, trained_value = values
        return (*preview(*values), *follow_settings(settings_values, trained_value))

    ctx.listen(on_preview, inputs=model_controls + [ctx.presenter, trained],
               outputs=[status, curve, heads_plot, text, trained, answer, answer_grid, answer_detail],
               api_name="toy_preview", triggers=[c.input for c in model_controls] + [ctx.presenter.input],
               api_visibility="private")

    @repeat_outputs  # the lock and the last curve stay set while later updates stream in
    def on_train(request: gr.Request, task, positions, heads_kind, layers, heads, width, seconds, presenter):
        settings = make_settings(task, positions, heads_kind, layers, heads, width, seconds)
        yield {**lock(True), status: "**Starting** a trainer…"}
        events = trainings.run(owner_of(request), [settings])
        last = None
        with contextlib.closing(events):
            for event in _errors_as_messages(events):
                if isinstance(event, Waiting):
                    yield {status: waiting_text(event)}
                    continue
                last = event[0]
                figures = progress_figures(last, presenter)
                yield {status: status_text(last), curve: figures[0], heads_plot: figures[1]}
        if last is None:
            yield {status: "**Stopped** before it started: nothing was trained."}
            return
        result = {"settings": last.settings, "weights": last.weights, "snapshot": last}
        task_of = TASKS[last.settings["task"]]
        summary, grid, detail = predict(task_of.example, result, presenter)
        yield {trained: result, text: task_of.example, answer: summary, answer_grid: grid, answer_detail: detail}

    @repeat_outputs  # the lock and the last curve stay set while later updates stream in
    def on_compare(request: gr.Request, task, positions, heads_kind, layers, heads, width, seconds, presenter):
        narrow = make_settings(task, positions, heads_kind, layers, heads, width, seconds)
        pair = [toy.ToySettings(**{**narrow.to_dict(), "wide": False}), toy.ToySettings(**{**narrow.to_dict(), "wide": True})]
        font = figure_font(presenter)
        yield {**lock(True), compare_status: "**Starting** a trainer…"}
        events = trainings.run(owner_of(request), pair)
        with contextlib.closing(events):
            for event in _errors_as_messages(events):
                if isinstance(event, Waiting):
                    yield {compare_status: waiting_text(event)}
                    continue
                runs = dict(zip(("narrow", "wide"), event))
                task_of = TASKS[narrow.task]
                curves = {label: (s.eval_steps, s.eval_seconds, s.accuracies) for label, s in runs.items()}
                rows = [{"label": label, "parameters": s.parameters, "steps": s.step, "seconds": s.seconds,
                         "accuracy": s.accuracy, "eval_steps": s.eval_steps, "accuracies": s.accuracies}
                        for label, s in runs.items()]
                head = f"**Done** ({REASONS.get(event[0].reason, event[0].reason)}): " if event[0].done \
                    else "**Training both**, one step each in turn: "
                yield {compare_status: head + compare_text(runs),
                       compare_plot: show(viz_toy.comparison_figure(curves, task_of.chance, font)),
                       compare_table: show(viz_toy.comparison_table(rows)),
                       compare_heads: show(viz_toy.comparison_heads(
                           {label: s.attention for label, s in runs.items()}, task_of.example, font))}

    def on_stop(request: gr.Request = None):
        if not trainings.stop(owner_of(request)):
            inform("Nothing to stop: no training of yours is running.")

    inputs = controls + [ctx.presenter]
    train_event = ctx.on([train_button.click], on_train, inputs=inputs,
                         outputs=[status, curve, heads_plot, trained, text, answer, answer_grid, answer_detail,
                                  *controls, *buttons],
                         api_name="toy_train", public=True, concurrency_limit=None, show_progress="hidden")
    ctx.on(train_event, lambda: lock(False), outputs=[*controls, *buttons], queue=False)
    compare_event = ctx.on([compare_button.click], on_compare, inputs=inputs,
                           outputs=[compare_status, compare_plot, compare_table, compare_heads, *controls, *buttons],
                           api_name="toy_compare", public=True, concurrency_limit=None, show_progress="hidden")
    ctx.on(compare_event, lambda: lock(False), outputs=[*controls, *buttons], queue=False)
    ctx.on([stop_button.click], on_stop, api_name="toy_stop", queue=False)

    def on_predict(text_value, trained_value, presenter):
        return predict(text_value, trained_value, presenter)

    # on the page an input the model cannot read (a wrong length) is one warning and the last answer stays
    ctx.page_event([predict_button.click, text.submit], on_predict, inputs=[text, trained, ctx.presenter],
                   outputs=[answer, answer_grid, answer_detail], api_name="toy_predict")

    ctx.demo.toy_trainings = trainings  # for tests and notebooks: who is training now


def compare_text(runs: dict) -> str:
    parts = []
    for label, s in runs.items():
        reached = viz_toy.steps_to(s.eval_steps, s.accuracies, 0.95)
        when = f"95% after {reached:,} steps" if reached is not None else "95% not reached yet"
        parts.append(f"{label}: {s.parameters:,} parameters, {s.step:,} steps in {s.seconds:.1f} s "
                     f"({s.steps_per_second:.0f}/s), {when}, now {s.accuracy:.1%}")
    return "; ".join(parts) + "."
