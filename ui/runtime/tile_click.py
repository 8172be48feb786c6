"""A click or a tap on a tile of the every-head grid opens that head (a page script: app.launch_options passes it).
The Causal tracing tab's heads map (elem_id "patching-heads") works the same way, each cell a tile of its own, and
so does the head finder's scatter (elem_id "finder-scatter"), each point named by its customdata.

Gradio 6.31's gr.Plot publishes one event, `change`: a click on a Plotly figure never reaches the server.
This script listens to Plotly's own `plotly_click` (which a tap fires too) on the grid (elem_id
"all-heads"), finds the tile the clicked cell lies in from the figure's `meta.tile_grid`
(viz.tiles.tiled_heatmap writes it, pooled or not), and writes the tile's name ("L3 H1") into a hidden textbox (`clicked_tiles`) with a
DOM `input` event; the textbox's `change` event, which the Every head tab answers exactly as a pick in its
tile picker, follows. (Gradio 6.31's textbox sends its own `input` event on key presses only, not on a DOM
`input` event.) The gaps between tiles and the rows under their names are gaps in the heatmap (no hover, so
no click); a click on a tile's name is Plotly's `plotly_clickannotation` (the names capture events).

Each grid has its own textbox (GRIDS: grid elem_id -> box elem_id), so a click answers only its own tab.
The textbox is Gradio's own, visually hidden (visible="hidden" keeps it in the page); nothing else sets it.
Each click adds a counter after the name ("L3 H1 #4"), so that a second click on the same tile changes the
value too; `tile_name` takes it off.
"""
from __future__ import annotations

import json

import gradio as gr

BOX_ID = "tile-clicked"
GRID_ID = "all-heads"
HEADS_MAP_BOX_ID = "patching-head-clicked"
FINDER_BOX_ID = "finder-clicked"
# each clickable grid and the box it writes into; the head finder's scatter names each point in its customdata
GRIDS = {GRID_ID: BOX_ID, "patching-heads": HEADS_MAP_BOX_ID, "finder-scatter": FINDER_BOX_ID}


def clicked_tiles(box_id: str = BOX_ID, label: str = "Head clicked in the every-head grid") -> gr.Textbox:
    """The hidden textbox the page script writes a clicked tile's name into (answer its `change` event)."""
    if box_id not in GRIDS.values():
        raise ValueError(f"no grid writes into {box_id!r}: add it to GRIDS")
    return gr.Textbox(visible="hidden", elem_id=box_id, label=label, interactive=True, max_lines=1)


def cell_tiles(names: list[str], cols: int) -> dict:
    """The figure meta making each cell of a heatmap its own tile: names row by row, `cols` a row."""
    return dict(tiles=list(names), tile_grid=dict(step_x=1, step_y=1, width=1, cols=cols))


def tile_name(value: str | None) -> str:
    """The tile's name from the box's value ("L3 H1 #4" -> "L3 H1"); empty for none."""
    return str(value or "").split("#")[0].strip()


# Runs once when the page loads. gr.Plot replaces its figure's element now and then, and Plotly.purge drops
# its listeners: a MutationObserver (one pass per frame) listens again on whichever grid element is on the
# page, once per Plotly event emitter (Plotly gives each new one a new `on`).
TILE_CLICK_JS = """() => {
  const grids = %(grids)s;
  let queued = false, count = 0;
  const open = (plot, box, data) => {
    const grid = ((plot.layout || {}).meta || {}).tile_grid, names = ((plot.layout || {}).meta || {}).tiles;
    const point = data && data.points && data.points[0];
    if (point && !grid && typeof point.customdata === 'string') { send(box, point.customdata); return; }
    if (!grid || !names || !point || !Array.isArray(point.pointNumber)) return;
    const [i, j] = point.pointNumber;
    let col = Math.floor(j / grid.step_x);
    if (j %% grid.step_x >= grid.width + (grid.step_x - grid.width) / 2) col += 1;  // a gap: the nearer tile
    send(box, names[Math.floor(i / grid.step_y) * grid.cols + Math.min(col, grid.cols - 1)]);
  };
  const send = (boxId, name) => {
    const box = document.querySelector(`#${boxId} textarea, #${boxId} input`);
    if (!name || !box) return;
    count += 1;
    box.value = `${name} #${count}`;
    box.dispatchEvent(new Event('input', {bubbles: true}));
  };
  const pass = () => {
    queued = false;
    for (const [gridId, box] of Object.entries(grids)) {
      const plot = document.querySelector(`#${gridId} .js-plotly-plot`);
      if (!plot || typeof plot.on !== 'function' || plot.__tileClickOn === plot.on) continue;
      plot.__tileClickOn = plot.on;
      plot.on('plotly_click', (data) => open(plot, box, data));
      plot.on('plotly_clickannotation', (event) => {  // a tile's name, written above it: "<b>▶ L3 H1</b>"
        const names = ((plot.layout || {}).meta || {}).tiles || [];
        const text = String(((event || {}).annotation || {}).text || '')
          .replace(/<[^>]*>/g, '').replace('▶', '').trim();
        if (names.includes(text)) send(box, text);
      });
    }
  };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(pass); } })
    .observe(document.body, {childList: true, subtree: true});
  pass();
}""" % {"grids": json.dumps(GRIDS)}
