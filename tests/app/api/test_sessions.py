"""A session keeps no copy of every value sent to it (ui/runtime/sessions.py), but keeps its State."""
from __future__ import annotations

import gradio as gr
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
