"""A session keeps no copy of every value sent to it (ui/runtime/sessions.py), but keeps its State."""
from __future__ import annotations

import gradio as gr
import numpy as np
from gradio.state_holder import SessionState

from ui.runtime.sessions import keep_no_output_values


def test_a_session_keeps_its_state_but_no_copies_of_what_was_sent():
    keep_no_output_values()
    with gr.Blocks() as demo:
        plot = gr.Plot()
        box = gr.Textbox()
        state = gr.State()
    session = SessionState(demo)
    session._update_value_in_config(plot._id, {"plot": "x" * 1_000_000})
    session[box._id] = gr.Textbox(value="replaced")  # a component an event replaced is still this session's
    session[state._id] = {"weights": b"123"}
    assert list(session.components) == [] and len(session.config_values) == 0
    assert session[state._id] == {"weights": b"123"} and session[box._id].value == "replaced"
    assert SessionState(demo)[state._id] is None  # another session has its own


def test_every_sessions_state_values_together_stay_within_their_bytes():
    """Past the budget the oldest value written goes (whoever wrote it); its session then reads the State's initial
    value, as a new visitor does, and the budget counts a value written again once."""
    from ui.runtime import sessions

    keep_no_output_values()
    with gr.Blocks() as demo:
        state = gr.State("initial")
    budget = sessions.StateBudget(most=1_000_000)
    old, sessions.BUDGET = sessions.BUDGET, budget
    try:
        visitors = [SessionState(demo) for _ in range(4)]
        for n, visitor in enumerate(visitors):
            visitor[state._id] = b"x" * 300_000  # a trained model's weights, say
            visitor[state._id] = b"y" * 300_000  # written again: counted once
            assert budget.total <= 1_000_000 and len(budget.kept) == min(n + 1, 3)
        assert visitors[0][state._id] == "initial"  # the oldest went
        assert all(v[state._id] == b"y" * 300_000 for v in visitors[1:])
        assert sessions.size_of({"rows": [np.zeros((4, 100), np.float32)] * 3}) >= 3 * 1600
    finally:
        sessions.BUDGET = old
