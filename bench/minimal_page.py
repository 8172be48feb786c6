"""The smallest Gradio + Plotly page, the yardstick of bench/page_load.py: one text box and one gr.Plot heatmap
drawn on load. Started as `python -m bench.minimal_page` (honours GRADIO_SERVER_NAME / GRADIO_SERVER_PORT)."""
from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no network

import gradio as gr  # noqa: E402
import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402

SIZE = 16  # a 16 x 16 heatmap: the app's first figure is one head at the default sentence's ~16 tokens


def heatmap(text: str) -> go.Figure:
    """A lower-triangular map of random weights, one row and column per word of the text."""
    words = text.split() or ["(empty)"]
    n = min(len(words), SIZE)
    rng = np.random.default_rng(0)
    z = np.tril(rng.random((n, n), dtype=np.float32))
    figure = go.Figure(go.Heatmap(z=z, x=list(range(n)), y=list(range(n)), colorscale="Blues"))
    figure.update_layout(height=420, xaxis=dict(tickvals=list(range(n)), ticktext=words[:n]),
                         yaxis=dict(tickvals=list(range(n)), ticktext=words[:n], autorange="reversed"))
    return figure


def build() -> gr.Blocks:
    with gr.Blocks(title="Minimal Gradio + Plotly") as demo:
        text = gr.Textbox("He opened the door and the cat looked at him", label="Sentence")
        plot = gr.Plot(elem_id="plot")
        demo.load(heatmap, text, plot, api_name="heatmap")
    return demo


if __name__ == "__main__":
    build().launch()
