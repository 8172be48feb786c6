"""Gradio's dropdown sends `input` twice for one pick (ui/runtime/repeats.py): the second is answered unchanged, once,
for the same visitor and values; every other event computes (split from test_dispatch.py)."""
from __future__ import annotations

import gradio as gr
import pytest

from harness.page_events import endpoint, is_skip, listeners_of, run


def all_skipped(updates: list[dict]) -> bool:
    return len(updates) == 1 and all(is_skip(value) for value in updates[0].values())


def test_a_dropdowns_second_event_is_answered_unchanged(demo):
    """Gradio 6.31's dropdown sends `input` twice for one pick (ui/runtime/repeats.py): the views that follow a
    model or example pick compute once per visitor; the same values from another visitor, or other values
    from the same one, compute."""
    (fit,) = listeners_of(demo, "model", "input")
    after = [fn for fn in demo.fns.values() if fn.api_name == "redraw_after_fit_controls"]
    assert len(after) == 1
    visitor, other = gr.Request(session_hash="visitor"), gr.Request(session_hash="other")
    first, error = run(after[0], "attention", visitor)
    assert error is None and not all_skipped(first) and len(first) >= 4  # the attention tab's views, one by one
    assert all_skipped(run(after[0], "attention", visitor)[0])
    assert not all_skipped(run(after[0], "attention", other)[0])
    assert not all_skipped(run(after[0], "attention", visitor, sentence="Another sentence")[0])
    assert not all_skipped(run(after[0], "attention", None)[0]), "no session: not from a page, always computed"


def test_an_example_pick_says_its_measured_claim_once(demo, capsys):
    (pick,) = listeners_of(demo, "examples", "input")
    from ui.page.controls import EXAMPLES

    index = next(i for i, (_, name) in enumerate(EXAMPLES) if name == "dates")
    visitor = gr.Request(session_hash="says-once")
    first = pick.fn(index, visitor)
    said = capsys.readouterr().out  # gr.Info outside a running app prints
    again = pick.fn(index, visitor)
    assert "writes" in said and capsys.readouterr().out == ""
    def settings(result):  # text, model, then the sliders and kind as updates (new components)
        return [(getattr(c, "value", c), getattr(c, "maximum", None), getattr(c, "visible", None)) for c in result]

    assert settings(first) == settings(again), "the second event sets the same controls (its views read them)"


@pytest.mark.parametrize("elem_id,api_name,overrides", [
    ("encoder-head", "encoder_decoder", {}),  # a view (ctx.listen)
    ("explain-row", "explain_output", {"sentence": "3 March 1999", "model": "dates", "explain-row": 2}),  # page_event
])
def test_a_tab_dropdowns_pick_runs_a_private_handler_that_answers_its_repeat_unchanged(demo, elem_id, api_name,
                                                                                         overrides):
    (picked,) = listeners_of(demo, elem_id, "input")
    assert picked.api_visibility == "private" and picked.api_name == f"{api_name}_page"
    public = endpoint(demo, api_name)
    assert public.api_visibility != "private"
    values = [overrides.get(c.elem_id, c.value) for c in picked.inputs]
    visitor = gr.Request(session_hash="tab-pick")
    shown = picked.fn(visitor, *values)
    assert not is_skip(shown) and len(shown) == len(picked.outputs)
    assert is_skip(picked.fn(visitor, *values))
    assert not is_skip(public.fn(*values)) and not is_skip(public.fn(*values)), "API callers: every call computed"


def test_a_repeat_is_the_same_values_from_the_same_session_once_per_computed_call():
    """No clock: the second of two calls with the same values is the repeat however long the first took, and a
    third (the visitor picking the same entry again) is computed however soon it comes."""
    from ui.runtime.repeats import Repeats

    repeats = Repeats(size=3)
    a, b = gr.Request(session_hash="a"), gr.Request(session_hash="b")
    assert not repeats.seen(a, "redraw", ("x", 1))
    assert repeats.seen(a, "redraw", ("x", 1)), "the pick's second event"
    assert not repeats.seen(a, "redraw", ("x", 1)), "a genuine second pick of the same entry: computed"
    assert repeats.seen(a, "redraw", ("x", 1)) and not repeats.seen(a, "redraw", ("x", 1))
    assert not repeats.seen(a, "other", ("x", 1)) and not repeats.seen(b, "redraw", ("x", 1))
    assert not repeats.seen(a, "redraw", ("y", 1)) and not repeats.seen(a, "redraw", ("x", 1)), "x, y, x: all run"
    repeats.forget(a)  # another view redrew the page
    assert not repeats.seen(a, "redraw", ("x", 1)), "after another redraw the same values compute"
    assert repeats.seen(a, "redraw", ("x", 1))
    for session in "cde":  # a full memory forgets the oldest visitor
        repeats.seen(gr.Request(session_hash=session), "redraw", ())
    assert not repeats.seen(a, "redraw", ("x", 1))
    assert not repeats.seen(None, "redraw", ()) and not repeats.seen(None, "redraw", ())
    repeats.forget(None)


def test_only_the_events_a_pick_runs_answer_a_repeat_unchanged(demo):
    """A new sentence, the Analyze button or a tab opened are sent once: the same values twice are computed
    twice (a second press of Analyze redraws), and they make the next pick compute even with values seen before."""
    after_model = endpoint(demo, "redraw_after_fit_controls")
    (analyzed,) = [fn for fn in listeners_of(demo, "analyze", "click") if fn.api_name.startswith("redraw_")]
    visitor = gr.Request(session_hash="not-a-pick")
    for _ in range(3):
        updates, error = run(analyzed, "attention", visitor)
        assert error is None and not all_skipped(updates)
    assert not all_skipped(run(after_model, "attention", visitor)[0])
    assert all_skipped(run(after_model, "attention", visitor)[0]), "the pick's second event"
    assert not all_skipped(run(analyzed, "attention", visitor)[0])
    assert not all_skipped(run(after_model, "attention", visitor)[0]), "the page was redrawn since: computed"
