"""Where a page script takes hold of Plotly: now, and when Gradio loads it (it sets window.Plotly once, lazily).

Each page script that wraps Plotly (titles.py, draw_once.py, hundredths.py, ui/page/slides.py) ends with
`on_plotly("its function")`, which calls that function on the Plotly object after the scripts installed before it
have: every script wraps the same object, so the one installed first (app.launch_options's order) runs closest to
Plotly.
"""
from __future__ import annotations


def on_plotly(fn: str) -> str:
    """JavaScript calling `fn(plotly)` (a function of the page script around it) on window.Plotly now and whenever
    it is set, after the page scripts installed before this one."""
    return f"""  const before = Object.getOwnPropertyDescriptor(window, "Plotly");
  let value = {fn}(window.Plotly);
  Object.defineProperty(window, "Plotly", {{configurable: true,
    get: () => (before && before.get ? before.get() : value),
    set: (v) => {{ if (before && before.set) before.set(v); else value = v; {fn}(window.Plotly); }}}});
"""
