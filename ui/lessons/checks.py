"""A lesson's steps checked at load, before any class sees them (no model is run: tokenizers and configs only).

A step's settings are read as its deep link would read them (ui.page.links.parse_query): anything the link's parser
would replace or ignore is a mistake in the file, and so is a setting this model cannot take (a training step it
kept no snapshot of, a target or contrast that is not one token by Causal tracing's own rule, a head it lacks), a
claim naming a head the model lacks, and a head question whose answer is not among the heads it offers. Each
mistake is a LessonError naming the file, the line and the fix.
"""
from __future__ import annotations

from analysis import lessons as format
from analysis.lessons import Lesson, LessonError
from experiments.patching import PatchingError, token_id
from ui.lessons import figures
from ui.page.labels import parse_heads
from ui.page.links import ViewSettings, parse_query
from ui.page.messages import InputError


def check_step(library, lesson: Lesson, step: format.Step) -> ViewSettings:
    """The step's settings, or LessonError (library: the LessonLibrary loading it)."""
    params = library.params(lesson, step)
    line = lambda name: step.lines.get(name, step.lines.get("link", step.line))  # noqa: E731
    registry = library.registry
    model = params.get("model", "")
    if model not in registry.available:
        where = step.lines.get("model") or step.lines.get("link") or 1
        known = ", ".join(registry.available)
        raise LessonError(lesson.source, where, f"the model “{model[:40]}” is not available on this server.",
                          f"use one of {known} (a model of your own: list it in ATTENTION_MODELS).")
    if library.tabs and params.get("tab", "attention") not in library.tabs:
        raise LessonError(lesson.source, line("tab"), f"the tab “{params['tab'][:40]}” is not one of this page's.",
                          f"use one of {', '.join(library.tabs)}.")
    for name in params:
        if name not in library.names:
            raise LessonError(lesson.source, line(name), f"the link sets “{name[:40]}”, which is no setting.",
                              f"use the deep link's names: {', '.join(library.names)}.")
    settings, notes = parse_query(params, registry, library.defaults, library.tabs, library.linked)
    if notes:
        name = notes[0].split(" ", 1)[0]
        raise LessonError(lesson.source, line(name), f"{notes[0]}.",
                          f"give {name} a value this model takes (layers and heads count from 1).")
    _model_settings(library, lesson, params, settings, line)
    if "figure" in step.settings and not figures.selector(settings.tab, step.settings["figure"]):
        raise LessonError(lesson.source, line("figure"), f"the tab {settings.tab} has no figure called "
                          f"“{step.settings['figure'][:40]}”.",
                          f"name one of {', '.join(figures.names(settings.tab)) or 'none: leave it out'}.")
    _answer(lesson, step, settings, line)
    for claim in step.claims:
        _claim(registry, lesson, claim, settings)
    return settings


def _model_settings(library, lesson: Lesson, params: dict, settings: ViewSettings, line) -> None:
    """The settings a link would take but this model cannot: refused, where a link would show something else."""
    loaded = library.registry.get(settings.model)
    if "training_step" in params or "snapshot" in params:
        steps = library.snapshots.steps(settings.model)
        if "training_step" in params and settings.training_step not in steps:
            raise LessonError(lesson.source, line("training_step"), f"{settings.model} kept no snapshot at training "
                              f"step {settings.training_step}.",
                              f"name one of its snapshots' steps: {', '.join(map(str, steps)) or 'it has none'}.")
        if "snapshot" in params and not 0 <= settings.snapshot <= len(steps):
            raise LessonError(lesson.source, line("snapshot"), f"{settings.model} has {len(steps)} snapshots, not "
                              f"{settings.snapshot}.", "name the snapshot by its training step instead, e.g. "
                              f"'training_step: {steps[-1] if steps else 0}'.")
    for what in ("target", "contrast"):
        if params.get(what):
            try:
                token_id(loaded, params[what], what)
            except PatchingError as e:
                raise LessonError(lesson.source, line(what), str(e), f"write one token of {settings.model}, in "
                                  "quotes with its leading space, e.g. 'target: \" Paris\"'.") from None
    if params.get("knockout"):
        try:
            parse_heads(settings.knockout, library.registry, settings.model)
        except InputError as e:
            raise LessonError(lesson.source, line("knockout"), str(e),
                              "write the heads as the app does, separated by commas: 'knockout: L25 H5, L24 H1'.")


def _answer(lesson: Lesson, step: format.Step, settings: ViewSettings, line) -> None:
    if step.question_kind == "head" and format.answer_layer(step.answer_choice) != settings.layer:
        raise LessonError(lesson.source, line("layer"), f"the answer {step.answer_choice} is not a head of the "
                          f"step's layer {settings.layer}, whose heads the question offers.",
                          f"set 'layer: {format.answer_layer(step.answer_choice)}' on the step.")


def _claim(registry, lesson: Lesson, claim: format.Claim, settings: ViewSettings) -> None:
    if claim.kind in ("strongest head", "patching heads top") and claim.parts["in_layer"] != claim.parts["layer"]:
        raise LessonError(lesson.source, claim.line, f"L{claim.parts['layer']} H{claim.parts['head']} is not in "
                          f"layer {claim.parts['in_layer']}.", "name a head of the layer the claim compares.")
    if claim.kind == "knockout":
        try:
            parse_heads(claim.parts["heads"], registry, settings.model)
        except InputError as e:
            raise LessonError(lesson.source, claim.line, str(e), "name heads the model has (L1 H1 is the first).")
    if "layer" in claim.parts and claim.kind not in ("copying head",):
        kind = claim.parts.get("kind") or ("cross" if claim.kind == "month" else settings.kind)
        if kind not in registry.kinds(settings.model):
            raise LessonError(lesson.source, claim.line, f"{settings.model} has no {kind} attention.",
                              f"write one of {', '.join(registry.kinds(settings.model))} before the head.")
        layers, heads = registry.shape(settings.model, kind)
        if not (1 <= int(claim.parts["layer"]) <= layers and 1 <= int(claim.parts["head"]) <= heads):
            raise LessonError(lesson.source, claim.line, f"{settings.model} has no head "
                              f"L{claim.parts['layer']} H{claim.parts['head']}.",
                              f"layers go from 1 to {layers}, heads from 1 to {heads}.")
