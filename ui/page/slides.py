"""Slides: every figure's toolbar saves it as SVG too (the disk button), beside the camera's PNG at twice the
drawn size. The PNG and the file name are each figure's own Plotly config (ui.page.components.Plot); an SVG
button needs a function, which a figure's JSON cannot hold, so this page script gives every plot one through
Plotly's public setPlotConfig as soon as Gradio loads Plotly. It reads the file name from the figure's own
config. Independent of ui/runtime/draw_once.py: either works without the other.
"""
from __future__ import annotations

from ui.runtime.plotly_loaded import on_plotly

SLIDES_JS = """() => {
  const svgButton = (plotly) => ({
    name: "downloadSvg", title: "Download as SVG (for slides)", icon: plotly.Icons.disk,
    click: (gd) => plotly.downloadImage(gd, {format: "svg",
      filename: (((gd._context || {}).toImageButtonOptions || {}).filename) || "attention-figure"}),
  });
  const ready = (plotly) => {
    if (plotly && plotly.setPlotConfig && !plotly.__slides) {
      plotly.setPlotConfig({modeBarButtonsToAdd: [svgButton(plotly)]});
      plotly.__slides = true;
    }
    return plotly;
  };
""" + on_plotly("ready") + "}"


def page_script(*scripts: str) -> str:
    """Page scripts (each "() => {...}") as the one function Gradio's launch(js=...) takes, run in order."""
    return "() => {\n" + "\n".join(f"  ({script})();" for script in scripts) + "\n}"
