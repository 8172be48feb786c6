"""gr.Plot drawing each new figure once, not three times (a page script: app.launch_options passes it)."""

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
  // after any page script that wraps Plotly before it (ui/runtime/titles.py): theirs run inside the deferred draw
  const before = Object.getOwnPropertyDescriptor(window, "Plotly");
  let current = once(window.Plotly);
  Object.defineProperty(window, "Plotly", {configurable: true,
    get: () => (before && before.get ? before.get() : current),
    set: (v) => { if (before && before.set) before.set(v); else current = v; once(window.Plotly); }});
}"""

