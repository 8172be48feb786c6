"""Weight maps that travel as whole hundredths, drawn as the 0..1 numbers they are (a page script:
app.launch_options passes it).

The every-head grid and the layer averages are rounded to 0.01 on the 0..1 scale of every view. Sent as
float32 they were three quarters of the /analyze answer (436 KB of 581 KB at 64 tokens). Plotly.js reads
no float16 typed array, and its hover cannot divide, so a trace whose `meta.z_divisor` is set
(viz.figure.as_hundredths: z as uint8 hundredths, one byte a cell) is turned back here, before Plotly sees
it, into rows of float32 numbers k / 100: the very numbers the server rounded to, so the colours, the
colour bar and the hover's "0.35" are what they were.
"""
from __future__ import annotations

from ui.runtime.plotly_loaded import on_plotly

# Runs once when the page loads. Wraps Plotly.react and Plotly.newPlot (gr.Plot draws with react; the
# slide export reads the figure Plotly keeps, already converted).
HUNDREDTHS_JS = """() => {
  const toNumbers = (trace) => {
    const meta = trace && trace.meta, z = trace && trace.z;
    if (!meta || !meta.z_divisor || !z || z.dtype !== 'u1' || typeof z.bdata !== 'string') return;
    const bytes = atob(z.bdata), shape = String(z.shape || bytes.length).split(',').map(Number);
    const cols = shape.length > 1 ? shape[1] : shape[0], rows = shape.length > 1 ? shape[0] : 1;
    const values = new Float32Array(rows * cols), divisor = meta.z_divisor, gap = meta.z_gap;
    for (let i = 0; i < values.length; i++) {
      const b = bytes.charCodeAt(i);
      values[i] = b === gap ? NaN : b / divisor;
    }
    trace.z = shape.length > 1 ? Array.from({length: rows}, (_, r) => values.subarray(r * cols, (r + 1) * cols))
                               : values;
    const rest = Object.assign({}, meta);
    delete rest.z_divisor;
    delete rest.z_gap;
    trace.meta = rest;
  };
  const unpack = (data) => { if (Array.isArray(data)) data.forEach(toNumbers); return data; };
  const wrap = (plotly) => {
    if (!plotly || plotly.__hundredths || !plotly.react) return plotly;
    for (const name of ['react', 'newPlot']) {
      const draw = plotly[name];
      plotly[name] = function (div, data, ...rest) {
        if (data && !Array.isArray(data) && data.data) unpack(data.data); else unpack(data);
        return draw.call(this, div, data, ...rest);
      };
    }
    plotly.__hundredths = true;
    return plotly;
  };
""" + on_plotly("wrap") + "}"
