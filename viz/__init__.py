"""Figures and tables from a Trace's arrays. Knows Plotly, numpy and pandas; never torch or Gradio."""
