"""Everyone in the room: screen readers, keyboards and phones.

CSS: a focus ring on every control, and a phone layout (390 px wide): the figure toolbar, which Plotly
lays over each figure's title, is left off; side-by-side panels keep a readable width and scroll
sideways. The tab bar wraps onto rows (gr.Tabs(overflow_behavior="wrap"), app.py) instead of folding
tabs into a "⋯" menu.

Page script (PAGE_JS, run once on load): each figure is named for screen readers by the text
alternative viz.describe wrote into it (layout.meta.alt); where the Lens's cell labels or position labels
would overlap (a phone), it leaves the cells' out or labels every k-th position, and says so. Gradio's own ARIA faults are fixed by
ui/runtime/aria.py.
tests/e2e/test_e2e_accessibility.py (axe-core, keyboard) and tests/e2e/test_e2e_phone.py check them.
"""
from __future__ import annotations

PHONE_MAX_PX = 640
CELL_LABELS_NOTE = ("The cells are too narrow here to write their tokens in them, so the labels are left out: "
                    "tap or point at a cell to read its token.")

CSS = f"""
/* keyboard users see where they are: the theme's own focus styles are faint or none on buttons and tabs */
button:focus-visible, [role=tab]:focus-visible, input:focus-visible, textarea:focus-visible,
[role=combobox]:focus-visible, summary:focus-visible, a:focus-visible {{
    outline: 3px solid #1d4ed8 !important; outline-offset: 2px !important; }}
/* a status line stays readable while its next line is computed: Gradio fades a pending Markdown to opacity 0.2,
   1.5:1 against white, which axe-core 4.14 counts as a contrast failure (Train live's "Not trained yet …") */
#toy-status .pending, #toy-compare-status .pending {{ opacity: 1 !important; }}
/* a figure whose cells were too narrow for their labels (the page script left them out): it says so */
.cell-labels-dropped::after {{ content: "{CELL_LABELS_NOTE}"; display: block; padding: 4px 8px; font-size: 14px;
    color: #374151; }}
@media (max-width: {PHONE_MAX_PX}px) {{
  /* touch screens show Plotly's toolbar all the time, over the title: downloads are for the lecturer's laptop */
  .js-plotly-plot .modebar-container {{ display: none !important; }}
  /* a figure of side-by-side panels (marked by the page script) is stacked to the screen's width (ui/page/phone.py);
     were one still wider, it scrolls in its box, not the page */
  .wide-figure {{ overflow-x: auto !important; }}
}}
"""

# Runs once on load. A MutationObserver (batched to one pass per frame) names every figure drawn since the
# last pass: Plotly keeps the figure's layout on its element, and the text alternative is in layout.meta.alt.
PAGE_JS = """() => {
  let queued = false;
  // a figure that writes a label in each cell (meta.cell_labels: the logit lens): where two labels of a row
  // overlap (a phone's narrow cells), every label is hidden and the figure's block says so (CSS)
  const dropCrowdedLabels = (plot, block) => {
    const layer = plot.querySelector('.scatterlayer');
    if (!layer || !block) return;
    const boxes = [...layer.querySelectorAll('.textpoint text')].map((e) => e.getBoundingClientRect())
      .filter((r) => r.width > 0).sort((a, b) => a.top - b.top || a.left - b.left);
    const crowded = boxes.some((a, i) => i > 0 && Math.abs(boxes[i - 1].top - a.top) < 1 && boxes[i - 1].right > a.left + 0.5);
    layer.style.visibility = crowded ? 'hidden' : '';
    block.classList.toggle('cell-labels-dropped', crowded);
  };
  // a figure whose position labels may crowd (meta.thin_x, the x axis's short name: the logit lens): where
  // neighbouring labels would overlap (a phone, presenter mode's larger font), every k-th position is labelled and
  // the axis title says so, as the head in detail does. Rotated labels lie on parallel baselines, a tick distance apart along the
  // axis and that times sin(angle) across: under 0.9 of the font's size and their letters overlap. The labels the
  // figure came with are kept, so a wider screen labels more again.
  const cameWith = new WeakMap();
  const ordinal = (k) => k + ((k % 100 >= 10 && k % 100 <= 20) ? 'th' : ({1: 'st', 2: 'nd', 3: 'rd'}[k % 10] || 'th'));
  const thinTicks = (plot, title) => {
    const axis = plot.layout.xaxis || {};
    if (!window.Plotly || !Array.isArray(axis.tickvals) || axis.tickvals.length < 2) return;
    if (!cameWith.has(plot.layout)) cameWith.set(plot.layout, {vals: axis.tickvals.slice(), text: axis.ticktext.slice()});
    const all = cameWith.get(plot.layout), shown = axis.tickvals;
    const texts = [...plot.querySelectorAll('.xtick text')];
    if (texts.length !== shown.length) return;  // not drawn yet, or not all of them
    // each label is moved to its tick by the first of its SVG transforms (Plotly: translate(x, 0) rotate(...))
    const tick = (e) => (e.transform.baseVal.numberOfItems ? e.transform.baseVal.getItem(0).matrix.e : 0);
    const xs = texts.map(tick).sort((a, b) => a - b);
    const perPosition = (xs[xs.length - 1] - xs[0]) / (shown[shown.length - 1] - shown[0]);
    const size = parseFloat(getComputedStyle(texts[0]).fontSize), angle = Math.abs(axis.tickangle || 0) * Math.PI / 180;
    const room = angle ? 0.9 * size / Math.sin(angle) : Math.max(...texts.map((e) => e.getBoundingClientRect().width)) + 4;
    const came = all.vals[1] - all.vals[0];  // the figure's own step (a long input comes labelled every k-th)
    const every = Math.max(1, Math.ceil(room / (perPosition * came)));
    if (!(perPosition > 0) || every * came === shown[1] - shown[0]) return;
    const kept = (_, i) => i % every === 0;
    window.Plotly.relayout(plot, {'xaxis.tickvals': all.vals.filter(kept), 'xaxis.ticktext': all.text.filter(kept),
      'xaxis.title.text': title + (every * came > 1 ? `, every ${ordinal(every * came)} labelled` : '')});
  };
  const pass = () => {
    queued = false;
    document.querySelectorAll('.js-plotly-plot').forEach((plot) => {
      const layout = plot.layout || {};
      const alt = (layout.meta || {}).alt;
      if (alt && plot.getAttribute('aria-label') !== alt) {
        plot.setAttribute('role', 'figure');
        plot.setAttribute('aria-label', alt);
      }
      // three or more panels side by side, or a figure that says it is wide (meta.wide: causal tracing's two
      // grids of a cell per token): on a phone they keep a readable width (CSS .wide-figure)
      const panels = Object.keys(layout).filter((key) => /^xaxis\\d*$/.test(key)).length;
      const wide = (panels >= 3 || !!(layout.meta || {}).wide) && !(layout.meta || {}).stacked;  // ui/page/phone.py
      const block = plot.closest('.block');
      if (block && block.classList.contains('wide-figure') !== wide) {
        block.classList.toggle('wide-figure', wide);
        if (window.matchMedia('(max-width: PHONE_MAX_PXpx)').matches && window.Plotly) window.Plotly.Plots.resize(plot);
      }
      if ((layout.meta || {}).cell_labels) dropCrowdedLabels(plot, block);
      if ((layout.meta || {}).thin_x) thinTicks(plot, layout.meta.thin_x);
    });
  };
  new MutationObserver(() => { if (!queued) { queued = true; requestAnimationFrame(pass); } })
    .observe(document.body, {childList: true, subtree: true});
  pass();
}""".replace("PHONE_MAX_PX", str(PHONE_MAX_PX))

