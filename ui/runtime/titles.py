"""A figure's title broken into lines that fit its width (a page script: app.launch_options passes it).

Plotly.js draws a title on one line, however narrow the figure: on a 390-px phone most titles ran past the
figure's right edge and were cut ("The top token after each layer (colour: its prob"). The server cannot break
them, as it does not know the screen. This script does, just before Plotly draws: it breaks each line of the
title at the spaces where the next word would cross the figure's edge, measured in the title's own font (Plotly
carries a <b> or <sub> open at a break on to the next line), and moves the plot area down by the lines it added
(the figure keeps its height, so a main figure stays on the first screen in presenter mode). A line is broken as
" <br>": the space stays in the title's text, so the text reads as before (Plotly writes a zero-width space where
a <sub> goes on to the next line, as it does after the title's own breaks).

Only a title that does not fit changes; the figure Gradio holds is not changed (each draw starts from it, so a
second draw never breaks a title twice). A figure drawn narrow keeps its breaks until its next draw.
"""
from __future__ import annotations

from ui.runtime.plotly_loaded import on_plotly

# Runs once when the page loads, first of the page scripts: it wraps Plotly.react and Plotly.newPlot closest to
# Plotly, after ui/runtime/draw_once.py has deferred the draw to the frame where the figure's element has its width.
TITLE_FIT_JS = """() => {
  const pen = document.createElement('canvas').getContext('2d'), box = document.createElement('textarea');
  const plain = (markup) => { box.innerHTML = markup.replace(/<[^>]*>/g, ''); return box.value; };
  const SAFETY = 8;  // px: the canvas's measure and Plotly's SVG text differ by a pixel or two
  const words = (line) => {  // the line cut at its spaces, never inside a tag's own markup (<a href="...">)
    const found = []; let start = 0;
    for (let i = 0; i < line.length; i++) {
      if (line[i] === '<') {
        const end = line.indexOf('>', i);
        if (end < 0) break;
        i = end;
      } else if (line[i] === ' ') {
        found.push(line.slice(start, i));
        start = i + 1;
      }
    }
    return [...found, line.slice(start)];
  };
  const wrap = (line, room) => {
    const lines = [];
    let current = null;
    for (const word of words(line)) {
      const longer = current === null ? word : current + ' ' + word;
      if (current !== null && pen.measureText(plain(longer)).width > room) {
        lines.push(current + ' ');
        current = word;
      } else current = longer;
    }
    return [...lines, current === null ? '' : current];
  };
  const fitted = (div, layout) => {
    const title = layout && layout.title;
    const text = title && typeof title === 'object' ? title.text : title;
    const width = (layout && layout.width) || (div && div.clientWidth) || 0;
    if (typeof text !== 'string' || !text || !width) return layout;
    const font = Object.assign({}, layout.font, title.font);
    const size = (title.font && title.font.size) || Math.round(((layout.font || {}).size || 12) * 1.4);
    pen.font = `${size}px ${font.family || '"Open Sans", verdana, arial, sans-serif'}`;
    const x = title.x === undefined ? 0.5 : title.x;
    const anchor = title.xanchor && title.xanchor !== 'auto' ? title.xanchor
      : (x < 1 / 3 ? 'left' : x > 2 / 3 ? 'right' : 'center');
    const room = (anchor === 'left' ? width * (1 - x) : anchor === 'right' ? width * x
      : 2 * width * Math.min(x, 1 - x)) - SAFETY;
    const before = text.split(/<br\\s*\\/?>/i);
    if (room <= 0 || before.every((line) => pen.measureText(plain(line)).width <= room)) return layout;
    const after = before.flatMap((line) => wrap(line, room));
    const added = after.length - before.length;
    if (added <= 0) return layout;
    const base = (layout.font || {}).size || 12, pad = Object.assign({}, title.pad);
    if (before.length === 1 && title.yanchor === 'top') pad.t = (pad.t || 0) + base;  // as viz/heatmap.py's rule
    const margin = Object.assign({}, layout.margin);
    margin.t = (margin.t === undefined ? 100 : margin.t) + Math.ceil(added * 1.3 * size);
    return Object.assign({}, layout, {margin, title: Object.assign({}, title, {text: after.join('<br>'), pad})});
  };
  const fit = (plotly) => {
    if (!plotly || plotly.__titlesFit || !plotly.react) return plotly;
    for (const name of ['react', 'newPlot']) {
      const draw = plotly[name];
      plotly[name] = function (div, data, layout, ...rest) {
        try {
          if (data && !Array.isArray(data) && data.layout) {
            data = Object.assign({}, data, {layout: fitted(div, data.layout)});
          } else layout = fitted(div, layout);
        } catch (e) { /* a title left as it was is still a figure */ }
        return draw.call(this, div, data, layout, ...rest);
      };
    }
    plotly.__titlesFit = true;
    return plotly;
  };
""" + on_plotly("fit") + "}"
