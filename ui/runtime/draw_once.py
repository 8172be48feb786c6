"""gr.Plot drawing each new figure once, not three times (a page script: app.launch_options passes it)."""
from __future__ import annotations

from ui.runtime.plotly_loaded import on_plotly

# Runs once when the page loads (launch(js=...)). Gradio 6.31's gr.Plot (PlotlyPlot.svelte) draws every new figure three
# times: into the plot element it is about to throw away, into its replacement, and once more when it
# resizes the replacement right after. Draw on the next frame instead, only into an element still on
# the page, and skip the resize of a figure whose draw is still to come (it will fit its element).
DRAW_ONCE_JS = """() => {
  const once = (plotly) => {
    if (!plotly || plotly.__drawOnce) return plotly;
    const react = plotly.react, resize = plotly.Plots.resize;
    plotly.react = function (div, data, layout, config, ...rest) {
      if (div) div.__drawPending = true;
      return new Promise((resolve, reject) => requestAnimationFrame(() => {
        if (div) div.__drawPending = false;
        if (!div || !div.isConnected) return resolve(div);
        Promise.resolve(react.call(plotly, div, data, layout, config, ...rest)).then(resolve, reject);
      }));
    };
    // Gradio resizes right after each react; a deferred draw already fits its element, and the resize
    // would draw the figure again. Later resizes (the window's) still go through.
    plotly.Plots.resize = function (div, ...args) {
      if (div && div.__drawPending) return Promise.resolve(div);
      return resize.call(this, div, ...args);
    };
    plotly.__drawOnce = true;
    return plotly;
  };
  // after the page scripts installed before it (ui/runtime/titles.py): theirs run inside the deferred draw
""" + on_plotly("once") + "}"

