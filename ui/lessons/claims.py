"""A lesson's claims measured on the model a step names, with the functions its views use, so that a claim is
about the numbers the figure shows (the vocabulary: analysis/lessons.py, VOCABULARY; the README's "Claims").

No Gradio here: each measure takes the registry, the step's settings (ui.page.links.ViewSettings) and the claim's
parts, and returns the value; `check` compares it with what the claim says.
"""
from __future__ import annotations

import numpy as np

from analysis.alignment import month_attention
from analysis.heads import head_name
from analysis.lesson_vocabulary import Claim, claimed_answer, head_choice, plain_token, same_answer, token_choices
from experiments.order import order_demo
from headfinder.store import finder_for
from analysis.rotary import SHIFTS
from experiments.rotary import rotary_demo
from ui.lessons import claims_experiments as experiment_claims
from ui.tabs import induction, lens
from ui.tabs.attention import trace_stats
from ui.tabs.learning import SnapshotTraces, snapshot_index
from ui.page.links import ViewSettings
from model.registry import ModelRegistry, attention_of
from ui.page.messages import InputError, check_index, clean_text

def _same_word(label: str, written: str) -> bool:
    return plain_token(label).strip() == written.strip()


def _position(labels, written: str, nth: str | None, where: str) -> int:
    """The position of the nth token labelled `written` (1st when nth is None), or InputError naming it."""
    found = [i for i, label in enumerate(labels) if _same_word(label, written)]
    n = int(nth or 1)
    if len(found) < n:
        shown = ", ".join(f'"{plain_token(t).strip()}"' for t in labels[:40])
        raise InputError(f'there is no “{written}”{f" #{n}" if n > 1 else ""} among the {where} ({shown}).')
    return found[n - 1]


def step_trace(registry: ModelRegistry, settings: ViewSettings, snapshots: SnapshotTraces):
    """The trace the step's figure shows: on the Learning tab, the model at the step's snapshot."""
    trace = registry.trace(settings.model, settings.text)
    steps = snapshots.steps(settings.model) if settings.tab == "learning" else []
    if not steps:
        return trace
    index = snapshot_index(steps, settings)
    output = None
    if trace.target_ids is not None:  # as the Learning view: every snapshot writes the trained model's output
        output = registry.get(settings.model).tokenizer.decode([int(i) for i in trace.target_ids[1:]])
    return snapshots.trace(settings.model, steps[index - 1], clean_text(settings.text), output)


def step_tokens(registry: ModelRegistry, settings: ViewSettings, snapshots: SnapshotTraces) -> list[str]:
    """The tokens the step's figures label: Causal tracing's clean prompt on that tab, else the step's text (the
    columns of its attention)."""
    if settings.tab == "patching":
        return experiment_claims.clean_tokens(registry, settings)
    return list(attention_of(step_trace(registry, settings, snapshots), settings.kind).keys)


def _head(trace, settings: ViewSettings, parts: dict):
    """(attention of the claim's kind, 0-based layer, 0-based head), checked against the model."""
    att = attention_of(trace, parts.get("kind") or settings.kind)
    return att, check_index(parts["layer"], att.n_layers, "layer"), check_index(parts["head"], att.n_heads, "head")


def weight(registry, settings, parts, snapshots):
    att, layer, head = _head(step_trace(registry, settings, snapshots), settings, parts)
    row = _position(att.queries, parts["source"], parts.get("source_n"), "rows (queries)")
    column = _position(att.keys, parts["target"], parts.get("target_n"), "columns (keys)")
    return float(att.probs[layer, head, row, column])


def top_weight(registry, settings, parts, snapshots):
    """The column of the row's largest weight, as a choice is written (a token answer)."""
    att, layer, head = _head(step_trace(registry, settings, snapshots), settings, parts)
    row = _position(att.queries, parts["source"], parts.get("source_n"), "rows (queries)")
    return token_choices(att.keys)[int(np.argmax(att.probs[layer, head, row]))]


def strongest_head(registry, settings, parts, snapshots):
    """The head of the claim's layer that puts the most weight in the cell (a head answer)."""
    att, layer, _ = _head(step_trace(registry, settings, snapshots), settings,
                          {**parts, "layer": parts["in_layer"], "head": 1})
    row = _position(att.queries, parts["source"], parts.get("source_n"), "rows (queries)")
    column = _position(att.keys, parts["target"], parts.get("target_n"), "columns (keys)")
    best = int(np.argmax(att.probs[layer, :, row, column]))
    return head_choice(layer + 1, best + 1, parts.get("kind", ""))


def _stats(registry, settings, parts, snapshots) -> tuple[dict, int]:
    trace = step_trace(registry, settings, snapshots)
    att, layer, head = _head(trace, settings, parts)
    return trace_stats(registry, settings.model, trace, att), layer * att.n_heads + head


def head_type(registry, settings, parts, snapshots):
    columns, index = _stats(registry, settings, parts, snapshots)
    return columns["label"][index]


def head_stat(registry, settings, parts, snapshots):
    columns, index = _stats(registry, settings, parts, snapshots)
    value = columns[parts["stat"]][index]
    return None if value is None or value != value else float(value)


def top_next(registry, settings, parts, snapshots):
    model = registry.get(settings.model)
    if model.arch != "decoder" or not model.has_lm_head:
        raise InputError(f"{settings.model} does not predict a next token (a causal language model does).")
    return plain_token(model.next_tokens(clean_text(settings.text), 1)[0][0])


def top_fill(registry, settings, parts, snapshots):
    model = registry.get(settings.model)
    if model.arch != "encoder" or not model.has_lm_head:
        raise InputError(f"{settings.model} does not fill in <mask> (a masked language model does).")
    answers = model.fill(clean_text(settings.text), 1)
    if not answers:
        raise InputError("the text has no <mask> to fill in.")
    return plain_token(answers[0][0][0])


def translation(registry, settings, parts, snapshots):
    model = registry.get(settings.model)
    if model.arch != "encoder-decoder":
        raise InputError(f"{settings.model} does not translate (the dates model does).")
    return model.translate(clean_text(settings.text))


def lens_first_top(registry, settings, parts, snapshots):
    """The first layer (1-based) after which the lens puts the token on top at the position the tab asks about."""
    found = lens.reading(registry, settings.model, settings.text)
    position = lens.asked_position(registry, settings.model, found)
    return next((layer + 1 for layer in range(found.n_layers)
                 if plain_token(found.top_tokens[layer][position]) == parts["token"]), None)


def shuffle(registry, settings, parts, snapshots):
    loaded = registry.get(settings.model)
    head = check_index(settings.head, loaded.config.n_heads, "head")
    demo = order_demo(loaded, clean_text(settings.text), seed=settings.seed, head=head)
    return demo.positioned_difference if parts["positions"] == "with" else demo.plain_difference


def rotary(registry, settings, parts, snapshots):
    """How much the score of the same two tokens moved along together varies (the table's first rows)."""
    loaded = registry.get(settings.model)
    head = check_index(settings.head, loaded.config.n_heads, "head")
    rows = rotary_demo(loaded, clean_text(settings.text), head=head).rows(SHIFTS)[:len(SHIFTS)]
    column = "rotary score" if parts["scores"] == "rotary" else "added sinusoids"
    scores = [row[column] for row in rows]
    return float(max(scores) - min(scores))


def month(registry, settings, parts, snapshots):
    text = clean_text(settings.text)
    att, layer, head = _head(registry.trace(settings.model, text), settings, {**parts, "kind": parts.get("kind") or "cross"})
    scores = month_attention(att.probs, text)
    if scores is None:
        raise InputError("the date has no month the app can find, or its output is too short.")
    return float(scores[layer, head])


def _copying(registry, settings):
    name, _ = induction.decoder_name(registry, settings.model)
    return registry.cached(("lesson copying", name), lambda: induction.measure(registry, name, 0, induction.DEFAULT_WORDS))


def copying_head(registry, settings, parts, snapshots):
    return head_name(*_copying(registry, settings)["induction_head"])


def copying_gain(registry, settings, parts, snapshots):
    return float(_copying(registry, settings)["table"].iloc[0]["gained from the context"])


MEASURES = {**experiment_claims.MEASURES, "weight": weight, "top weight": top_weight, "strongest head": strongest_head, "head type": head_type, "head stat": head_stat, "top next": top_next,
            "top fill": top_fill, "translation": translation, "lens": lens_first_top, "shuffle": shuffle,
            "rotary": rotary, "month": month, "copying head": copying_head, "copying gain": copying_gain}


def corpus_rank(registry, settings, parts, snapshots):
    """A head's rank by one score over the head finder's corpus (headfinder/), on the step's model."""
    name = head_name(int(parts["layer"]) - 1, int(parts["head"]) - 1)
    kind = parts.get("kind") or "self"
    return finder_for(registry).scores(settings.model).rank(name if kind == "self" else f"{kind} {name}",
                                                             parts["score"])


MEASURES["corpus rank"] = corpus_rank


def compare(value, parts: dict) -> bool:
    """Whether a measured number satisfies `op number`; '=' holds to the number's written precision."""
    if value is None:
        return False
    number, op = float(parts["number"]), parts["op"]
    if op == "=":
        written = parts["number"].split("e")[0]
        decimals = len(written.split(".")[1]) if "." in written else 0
        return abs(value - number) <= 0.5 * 10 ** -decimals + 1e-12
    return {">=": value >= number, "<=": value <= number, ">": value > number, "<": value < number}[op]


def expected(claim: Claim):
    """What a non-numeric claim says the value is."""
    parts = claim.parts
    if claim.kind == "head type":
        return parts["label"]
    if claim.kind == "lens":
        return int(parts["after"])
    if claim.kind == "snapshot":
        return int(parts["number"])
    if claim.kind in ("top weight", "strongest head", "copying head", "patching top", "patching heads top"):
        return claimed_answer(claim)
    if claim.kind == "corpus rank":
        return int(parts["rank"])
    return parts["token"]


def check(registry: ModelRegistry, settings: ViewSettings, claim: Claim, snapshots: SnapshotTraces) -> dict:
    """{"claim", "value", "holds"} measured on the step's settings; "why" says what could not be measured."""
    try:
        value = MEASURES[claim.kind](registry, settings, claim.parts, snapshots)
    except (InputError, ValueError) as e:
        return {"claim": claim.text, "value": None, "holds": False, "why": str(e)}
    if claim.parts.get("placeholder"):  # a number the text quotes: it holds when it can be measured
        holds = value is not None
    else:
        holds = compare(value, claim.parts) if "op" in claim.parts else same_answer(value, expected(claim))
    if isinstance(value, (float, np.floating)):  # as the views write numbers; compared unrounded, above
        value = float(f"{float(value):.4g}")
    return {"claim": claim.text, "value": value, "holds": bool(holds)}
