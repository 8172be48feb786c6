"""Figures on a phone (a page script: app.launch_options passes it): the server draws one figure for every screen,
and this script fits it to a narrow one just before Plotly draws it, as ui/runtime/titles.py fits its title.

Plotly.js has no responsive rules of its own (a layout is pixels and fractions of the figure), so on a figure under
PHONE_MAX_PX wide on a screen under PHONE_MAX_PX wide (a phone: presenter mode's columns are narrower on a projector),
and only there:

- panels side by side (Step by step's four, Masking's, Positions' tables, causal tracing's two grids) are stacked
  one under the other, each the full width, the figure as much taller; their titles and colour bars move with them
  (a row of 4 panels on a 390-px screen left each 70 px: labels ran into each other, or the figure scrolled);
- a colour bar is a thin vertical strip, its labels and title small (a bar of 14 px with its title "weight" beside
  it took a sixth of the width; a horizontal one under a figure, most of it);
- no text is drawn under 10 px, the smallest a phone reads (STYLE.md);
- after the draw, a category axis whose labels overlap labels every k-th, and its title says which ("every 2nd
  labelled"), as viz.labels does for long inputs (the figure Gradio holds is not changed: a wider screen draws
  every label again).

The figure Gradio holds is never changed: each draw starts from it. tests/e2e/test_e2e_readability.py walks every
tab on a phone; tests/e2e/test_e2e_phone_fit.py checks each rule on a figure of its own.

The page around the figures (PHONE_CSS, PHONE_SETTINGS_JS): on a phone the first screen held only controls (the
introduction, the sentence, the model, the examples, layer, head and modes, the tabs: the default tab's figure began
at 1,039 px of 844). There the settings are an accordion, closed once the page has loaded (every control one tap
away), the title takes one line and the sentence's row two; tests/e2e/test_e2e_phone.py checks the first screen.
"""
from __future__ import annotations

from ui.page.accessibility import PHONE_MAX_PX
from ui.runtime.plotly_loaded import on_plotly

SMALLEST_PX = 10  # the smallest text a phone reads (STYLE.md; viz.labels.smallest_text)
BAR_PX = 8  # a colour bar's thickness on a phone

# A wide screen shows the settings' accordion as the plain row it was (no header, no frame: presenter mode's first
# screen has no pixel to spare); a phone gives the title one line, the model and "Show attention" one row, the lesson
# picker and its label another.
PHONE_CSS = """
@media (min-width: PHONE_WIDE_PXpx) {
  #settings { padding: 0 !important; border: none !important; background: none !important; box-shadow: none !important; }
  #settings > .label-wrap { display: none !important; }
}
@media (max-width: PHONE_MAX_PXpx) {
  #intro h1 { font-size: 24px !important; margin-bottom: 6px !important; }
  #intro .intro-models { display: none; }
  #input-row #analyze { min-width: 150px !important; flex-grow: 2 !important; }
  #input-row #lesson { min-width: 150px !important; }
  #settings { padding-top: 0 !important; padding-bottom: 0 !important; }
  #settings > .label-wrap { min-height: 44px; margin: 0 !important; align-items: center; }
}
"""

# Runs once when the page loads: on a phone, the settings' accordion (open as built, so that its controls are drawn
# and hold their values) is closed, once Gradio has drawn it; the visitor opens it with a tap.
PHONE_SETTINGS_JS = """() => {
  if (!window.matchMedia('(max-width: PHONE_MAX_PXpx)').matches) return;
  const close = () => {
    const header = document.querySelector('#settings > .label-wrap');
    const content = document.querySelector('#settings > [data-testid=accordion-content]');
    if (!header || !content || !document.querySelector('#settings-row')) return false;
    if (getComputedStyle(content).display !== 'none') header.click();
    return true;
  };
  if (close()) return;
  const watch = new MutationObserver(() => { if (close()) watch.disconnect(); });
  watch.observe(document.body, {childList: true, subtree: true});
}"""

# Runs once when the page loads, installed right after ui/runtime/titles.py: inside ui/runtime/draw_once.py's
# deferred draw (the figure's element has its width), before the title is fitted (to the stacked layout).
PHONE_FIT_JS = """() => {
  const SMALLEST = SMALLEST_PX, BAR = BAR_PX, NARROW = PHONE_MAX_PX, LONGEST = 5;
  // a phone's screen, not only a narrow figure: presenter mode's columns draw figures under NARROW wide on a projector
  const onPhone = () => window.matchMedia(`(max-width: ${NARROW}px)`).matches;
  const copy = (o) => Object.assign({}, o || {});
  const bigger = (font) => (font && font.size && font.size < SMALLEST ? Object.assign({}, font, {size: SMALLEST}) : font);
  const axisKeys = (layout, letter) => Object.keys(layout).filter((k) => new RegExp(`^${letter}axis\\\\d*$`).test(k));
  const ref = (key) => key.replace(/axis/, '');  // 'xaxis2' -> 'x2'
  // panels side by side: x axes whose domains do not overlap, each with its y axis across the same height
  const panelsOf = (layout) => {
    const xs = axisKeys(layout, 'x').filter((k) => Array.isArray((layout[k] || {}).domain))
      .map((k) => ({x: k, y: 'yaxis' + (layout[k].anchor || 'y').slice(1), d: layout[k].domain}))
      .sort((a, b) => a.d[0] - b.d[0]);
    if (xs.length < 2 || xs.some((p, i) => i && p.d[0] < xs[i - 1].d[1] - 1e-6)) return null;
    const ys = xs.map((p) => (layout[p.y] || {}).domain || [0, 1]);
    if (ys.some((d) => Math.abs(d[0] - ys[0][0]) > 1e-6 || Math.abs(d[1] - ys[0][1]) > 1e-6)) return null;
    return xs;
  };
  const inPanel = (panels, x) => panels.findIndex((p) => x >= p.d[0] - 0.02 && x <= p.d[1] + 0.02);
  const stack = (data, layout, panels, width) => {
    const n = panels.length, margin = copy(layout.margin);
    const top = margin.t === undefined ? 100 : margin.t, bottom = margin.b === undefined ? 80 : margin.b;
    // each panel as tall as the row was, or as its cells are wide now that it has the whole width
    const wide = Math.max(120, width - (margin.l === undefined ? 80 : margin.l) - 36);
    const zOf = (i) => (data.find((t) => (t.xaxis || 'x') === ref(panels[i].x)) || {}).z;
    const size = (i, dim) => { const z = i < 0 ? null : zOf(i);
      return Array.isArray(z) && z.length ? (dim ? (z[0] || []).length : z.length) : -1; };
    const cells = (i) => { const z = (data.find((t) => (t.xaxis || 'x') === ref(panels[i].x)) || {}).z;
      return Array.isArray(z) && z.length && Array.isArray(z[0]) ? z.length / z[0].length : 1; };
    const plot = Math.max(120, (layout.height || 450) - top - bottom,
                          Math.min(1.5 * wide, Math.max(...panels.map((_, i) => cells(i))) * wide));
    const gap = top;  // room for the next panel's title and its labels on top, as the first panel has
    const total = n * plot + (n - 1) * gap;
    const band = (i) => { const hi = 1 - i * (plot + gap) / total; return [hi - plot / total, hi]; };
    const out = Object.assign({}, layout, {height: Math.round(top + bottom + total),
                                           meta: Object.assign({}, layout.meta, {stacked: n})});
    panels.forEach((p, i) => {
      out[p.x] = Object.assign({}, layout[p.x], {domain: [0, 1]});
      out[p.y] = Object.assign({}, layout[p.y], {domain: band(i)});
      // a row's panels left their shared row labels to the first: stacked, each needs its own
      // a row's panels left the labels they shared to the first (rows) or to their left neighbour (columns):
      // stacked, each needs its own
      [[p.y, panels[0].y, 0], [p.x, panels[i - 1 < 0 ? 0 : i - 1].x, 1]].forEach(([key, from, dim]) => {
        const own = out[key], source = out[from] || {};
        if (!i || own.showticklabels !== false || !Array.isArray(source.tickvals) || source.showticklabels === false) return;
        if (size(i, dim) !== size(panels.indexOf(panels.find((q) => q.x === from || q.y === from)), dim)) return;
        out[key] = Object.assign(own, {showticklabels: true, tickmode: 'array', tickvals: source.tickvals,
          ticktext: source.ticktext, tickfont: source.tickfont, tickangle: source.tickangle});
      });
    });
    const move = (item) => {  // a paper-placed annotation or shape goes with its panel
      if (!item || item.xref !== 'paper' || typeof item.x !== 'number') return item;
      const i = inPanel(panels, item.x);
      if (i < 0) return item;
      const d = panels[i].d, b = band(i), w = d[1] - d[0] || 1;
      const moved = Object.assign({}, item, {x: (item.x - d[0]) / w});
      if (item.yref === 'paper' && typeof item.y === 'number') moved.y = b[0] + item.y * (b[1] - b[0]);
      return moved;
    };
    if (Array.isArray(layout.annotations)) out.annotations = layout.annotations.map(move);
    const bars = data.map((trace) => {
      const i = panels.findIndex((p) => ref(p.x) === (trace.xaxis || 'x'));
      if (i < 0 || !trace.colorbar) return trace;
      const b = band(i);
      return Object.assign({}, trace, {colorbar: Object.assign({}, trace.colorbar,
        {orientation: 'v', x: 1, xanchor: 'left', y: (b[0] + b[1]) / 2, yanchor: 'middle', len: 0.9 * (b[1] - b[0]),
         lenmode: 'fraction'})});
    });
    out.margin = Object.assign(margin, {b: Math.min(bottom, 30)});
    return [bars, out];
  };
  // a colour bar as a thin strip at the right, its labels and title small: a tenth of a phone's width at most
  const thinBar = (trace) => {
    if (trace.marker && trace.marker.colorbar && trace.marker.showscale !== false)  // a scatter's points coloured by a number
      return Object.assign({}, trace, {marker: Object.assign({}, trace.marker,
        {colorbar: thinBar({colorbar: trace.marker.colorbar, zmin: trace.marker.cmin, zmax: trace.marker.cmax}).colorbar})});
    if (!trace.colorbar || trace.showscale === false) return trace;
    const bar = copy(trace.colorbar), title = copy(bar.title);
    const vertical = bar.orientation !== 'h';
    Object.assign(bar, {orientation: 'v', thickness: BAR, thicknessmode: 'pixels', xpad: 0, ypad: 4,
                        outlinewidth: 0, ticks: '', ticklabelpadding: 1, tickfont: Object.assign({}, bar.tickfont, {size: SMALLEST})});
    if (!vertical) Object.assign(bar, {x: 1, xanchor: 'left', y: 0.5, yanchor: 'middle', len: 0.9, lenmode: 'fraction'});
    const low = trace.zmin, high = trace.zmax;
    const say = (v) => (Math.abs(v) < 1e-9 ? '0' : String(Number(v.toPrecision(2))).replace('-', '−'));
    if (!Array.isArray(bar.tickvals) && typeof low === 'number' && typeof high === 'number' && high > low) {
      bar.tickvals = [low, (low + high) / 2, high];
      bar.ticktext = bar.tickvals.map(say);
    } else if (!Array.isArray(bar.tickvals)) bar.nticks = 3;
    else if (bar.tickvals.length > 3) {  // the two ends and the middle
      const keep = (_, i, all) => i === 0 || i === all.length - 1 || i === Math.floor((all.length - 1) / 2);
      bar.tickvals = bar.tickvals.filter(keep);
      if (Array.isArray(bar.ticktext)) bar.ticktext = bar.ticktext.filter(keep);
    }
    // labels of over LONGEST characters ("−0.063": 31 px) made the bar wider than a tenth of the screen: the ticks
    // move to the value rounded toward zero to one digit ("−0.06"), written where it lies
    const numbers = Array.isArray(bar.tickvals) && bar.tickvals.every((v) => typeof v === 'number' && isFinite(v));
    const written = numbers ? (Array.isArray(bar.ticktext) ? bar.ticktext.map(String) : bar.tickvals.map(say)) : [];
    const plain = written.every((t) => /^[−-]?\\d*\\.?\\d+$/.test(t.trim()));  // numbers, not words ("low", "high")
    if (plain && written.some((t) => t.trim().length > LONGEST)) {
      bar.tickvals = bar.tickvals.map((v) => { if (Math.abs(v) < 1e-12) return 0;
        const unit = Math.pow(10, Math.floor(Math.log10(Math.abs(v)))); return Math.trunc(v / unit) * unit; });
      bar.ticktext = bar.tickvals.map(say);
    }
    if (title.text) Object.assign(title, {side: 'right', font: Object.assign({}, title.font, {size: SMALLEST})});
    bar.title = title;
    return Object.assign({}, trace, {colorbar: bar});
  };
  const fitted = (div, data, layout) => {
    const width = (layout && layout.width) || (div && div.clientWidth) || 0;
    if (!layout || !Array.isArray(data) || !width || width > NARROW || !onPhone()) return [data, layout];
    let out = Object.assign({}, layout);
    if (out.width && out.width > div.clientWidth) delete out.width;
    const panels = panelsOf(out);
    if (panels) [data, out] = stack(data, out, panels, width);
    data = data.map((trace) => {
      let t = thinBar(trace);
      if (t.textfont) t = Object.assign({}, t, {textfont: bigger(t.textfont)});
      return t;
    });
    ['x', 'y'].forEach((letter) => axisKeys(out, letter).forEach((k) => {
      const a = out[k] || {};
      if (a.tickfont && a.tickfont.size < SMALLEST) out[k] = Object.assign({}, a, {tickfont: bigger(a.tickfont)});
      // a log axis writes its labels between powers of ten ("2", "5") at 3/4 of its font: 14 px writes them at 10
      const size = ((out[k].tickfont || {}).size) || ((out.font || {}).size) || 12;
      if (a.type === 'log' && a.dtick === undefined && size < Math.ceil(SMALLEST / 0.75))
        out[k] = Object.assign({}, out[k], {tickfont: Object.assign({}, out[k].tickfont, {size: Math.ceil(SMALLEST / 0.75)})});
    }));
    if (Array.isArray(out.annotations))
      out.annotations = out.annotations.map((a) => (a && a.font && a.font.size < SMALLEST
        ? Object.assign({}, a, {font: bigger(a.font)}) : a));
    if (out.font && out.font.size < SMALLEST) out.font = bigger(out.font);
    const bars = data.some((t) => (t.colorbar && t.showscale !== false) || (t.marker && t.marker.colorbar && t.marker.showscale !== false));
    if (bars) {  // the bar's strip and labels beside the plot, not over it
      const margin = copy(out.margin);
      margin.r = Math.max(margin.r === undefined ? 80 : margin.r, 36);
      out.margin = margin;
    }
    return [data, out];
  };
  // after the draw: a category axis whose labels overlap labels every k-th, and says so in its title
  const ordinal = (k) => k + ((k % 100 >= 10 && k % 100 <= 20) ? 'th' : ({1: 'st', 2: 'nd', 3: 'rd'}[k % 10] || 'th'));
  const quad = (e) => { const b = e.getBBox(), m = e.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
  const apart = (p, q) => [p, q].some((poly) => poly.some((a, i) => {
    const b = poly[(i + 1) % 4], n = [a[1] - b[1], b[0] - a[0]], len = Math.hypot(n[0], n[1]) || 1;
    const on = (pts) => pts.map(([x, y]) => (x * n[0] + y * n[1]) / len);
    const P = on(p), Q = on(q);
    return Math.max(...P) <= Math.min(...Q) + 1 || Math.max(...Q) <= Math.min(...P) + 1; }));
  const thinned = (div) => {
    const layout = div.layout || {}, update = {};
    if ((div.getBoundingClientRect().width || 0) > NARROW || !onPhone()) return update;
    ['x', 'y'].forEach((letter) => axisKeys(layout, letter).forEach((key) => {
      const axis = layout[key], full = (div._fullLayout || {})[key] || {};
      const listed = axis && Array.isArray(axis.tickvals) && axis.tickvals.length >= 2;
      if (!axis || axis.visible === false || !(listed || full.type === 'category')) return;
      const cls = `.${ref(key)}tick text`;
      const texts = [...div.querySelectorAll(cls)].filter((e) => e.textContent);
      if (texts.length < 2) return;
      const quads = texts.map(quad);
      const along = (q) => (letter === 'x' ? q[0][0] + q[2][0] : q[0][1] + q[2][1]) / 2;
      const order = quads.map((q, i) => [along(q), i]).sort((a, b) => a[0] - b[0]).map(([, i]) => i);
      let every = 1;
      while (every < order.length && order.some((i, j) => j + every < order.length
             && !apart(quads[i], quads[order[j + every]]))) every++;
      if (every === 1) return;
      if (!listed) {  // categories Plotly placed itself: every k-th of them
        update[`${key}.tickmode`] = 'linear'; update[`${key}.tick0`] = 0; update[`${key}.dtick`] = every * (full.dtick || 1);
        const named = axis.title && typeof axis.title === 'object' ? axis.title.text || '' : axis.title || '';
        if (named) update[`${key}.title.text`] = `${named}, every ${ordinal(every * (full.dtick || 1))} labelled`;
        return;
      }
      // labels that repeat panel by panel (1 5 10 | 1 5 10) are thinned within each panel, alike in all of them
      const text = Array.isArray(axis.ticktext) ? axis.ticktext.map(String) : axis.tickvals.map(String);
      const period = [...Array(text.length).keys()].slice(1).find((p) => text.length % p === 0
        && text.every((t, i) => i + p >= text.length || t === text[i + p])) || text.length;
      const kept = (_, i) => (i % period) % every === 0;
      const vals = axis.tickvals, gaps = vals.slice(1, period).map((v, i) => v - vals[i]);
      const even = typeof vals[0] === 'number' && gaps.length && gaps.every((g) => g === gaps[0] && Number.isInteger(g));
      // evenly spaced positions say which ("every 8th labelled", as viz.labels writes it); others how many
      const note = even ? `every ${ordinal(every * gaps[0])} labelled` : `one in ${every} labelled`;
      const title = String((axis.title && typeof axis.title === 'object' ? axis.title.text : axis.title) || '')
        .replace(/,? ?(every \\d+\\w\\w|one in \\d+) labelled/, '');
      const font = (axis.title && axis.title.font && axis.title.font.size) || (layout.font || {}).size || 12;
      const room = letter === 'x' ? div.getBoundingClientRect().width - 20 : Infinity;
      const long = title.trim() && (title.length + note.length + 2) * 0.55 * font > room;  // a line of its own
      update[`${key}.tickvals`] = vals.filter(kept);
      if (Array.isArray(axis.ticktext)) update[`${key}.ticktext`] = axis.ticktext.filter(kept);
      update[`${key}.title.text`] = title.trim() ? title + (long ? '<br>' : ', ') + note : note;
      if (long) {
        const side = axis.side === 'top' ? 't' : 'b', margin = (div._fullLayout || {}).margin || {};
        update[`margin.${side}`] = (margin[side] || 0) + Math.ceil(1.3 * font);
      }
    }));
    return update;
  };
  // names written on a figure (annotations) that overlap: all of them at the smallest size a phone reads
  const smaller = (div) => {
    const notes = (div.layout || {}).annotations, update = {};
    if (!Array.isArray(notes) || div.getBoundingClientRect().width > NARROW || !onPhone()) return update;
    const texts = [...div.querySelectorAll('.annotation-text')].filter((e) => e.textContent && e.getBBox().width > 0);
    const quads = texts.map(quad);
    if (!quads.some((q, i) => quads.some((r, j) => j > i && !apart(q, r)))) return update;
    notes.forEach((note, i) => { const size = ((note && note.font) || {}).size || ((div.layout.font || {}).size) || 12;
      if (size > SMALLEST) update[`annotations[${i}].font.size`] = SMALLEST; });
    return update;
  };
  // a colour bar's labels, a scatter's point labels: of two that overlap, the later is left off (the hover names it)
  const unclutter = (div) => {
    const groups = [...div.querySelectorAll('.colorbar')].map((bar) => [...bar.querySelectorAll('.cbaxis text')]);
    groups.push([...div.querySelectorAll('.textpoint text')]);
    groups.push([...div.querySelectorAll('.xtick text, .ytick text, [class*="tick"] text')]
      .filter((e, i, all) => all.indexOf(e) === i && !e.closest('.colorbar')));  // one axis's label at another's corner
    groups.push([...div.querySelectorAll('.annotation-text')]);
    // a tick label under a name written on the figure (a tile's, a panel's) gives way to the name
    const names = [...div.querySelectorAll('.annotation-text')].filter((e) => e.textContent && e.getBBox().width > 0);
    if (names.length) {
      const named = names.map(quad);
      div.querySelectorAll('.xtick text, .ytick text, [class*="tick"] text').forEach((e) => {
        if (!e.closest('.colorbar') && e.textContent && e.getBBox().width > 0
            && named.some((q) => !apart(q, quad(e)))) e.style.display = 'none';
      });
    }
    groups.forEach((texts) => {
      const kept = [];
      texts.filter((e) => e.textContent && e.getBBox().width > 0).forEach((e) => {
        const q = quad(e);
        if (kept.some((k) => !apart(k, q))) e.style.display = 'none'; else kept.push(q);
      });
    });
  };
  const fit = (plotly) => {
    if (!plotly || plotly.__phoneFit || !plotly.react) return plotly;
    for (const name of ['react', 'newPlot']) {
      const draw = plotly[name];
      plotly[name] = function (div, data, layout, ...rest) {
        try {
          if (data && !Array.isArray(data) && data.layout) {
            const [d, l] = fitted(div, data.data, data.layout);
            data = Object.assign({}, data, {data: d, layout: l});
          } else [data, layout] = fitted(div, data, layout);
        } catch (e) { /* a figure drawn as the server wrote it is still a figure */ }
        const drawn = draw.call(this, div, data, layout, ...rest);
        return Promise.resolve(drawn).then((gd) => {
          try {
            const update = div && div.isConnected ? Object.assign(thinned(div), smaller(div)) : {};
            const narrowDrawn = div && div.isConnected && div.getBoundingClientRect().width <= NARROW && onPhone();
            if (Object.keys(update).length)
              return plotly.relayout(div, update).then(() => { if (narrowDrawn) unclutter(div); return gd; });
            if (narrowDrawn) unclutter(div);
          } catch (e) { /* labels left as drawn */ }
          return gd;
        });
      };
    }
    plotly.__phoneFit = true;
    return plotly;
  };
""" + on_plotly("fit") + "}"

# Runs once when the page loads, installed right after ui/runtime/hundredths.py, so before it on every draw: a figure
# that carries its phone's own figure (layout.meta.narrow: viz/narrow.py, the every-head grid one layer at a time) is
# drawn as that one on a screen under PHONE_MAX_PX wide, and its weights are then turned into numbers as any figure's.
# Decided by the screen's width, not the element's: before ui/runtime/draw_once.py's deferred frame it may have none.
PHONE_SWAP_JS = """() => {
  const narrow = () => window.matchMedia('(max-width: PHONE_MAX_PXpx)').matches;
  const picked = (layout) => { const own = ((layout || {}).meta || {}).narrow;
    return own && narrow() ? {data: own.data.map((t) => Object.assign({}, t)), layout: Object.assign({}, own.layout)} : null; };
  const swap = (plotly) => {
    if (!plotly || plotly.__phoneSwap || !plotly.react) return plotly;
    for (const name of ['react', 'newPlot']) {
      const draw = plotly[name];
      plotly[name] = function (div, data, layout, ...rest) {
        if (data && !Array.isArray(data) && data.layout) {
          const own = picked(data.layout);
          if (own) data = Object.assign({}, data, own);
        } else {
          const own = picked(layout);
          if (own) [data, layout] = [own.data, own.layout];
        }
        return draw.call(this, div, data, layout, ...rest);
      };
    }
    plotly.__phoneSwap = true;
    return plotly;
  };
""" + on_plotly("swap") + "}"
PHONE_SWAP_JS = PHONE_SWAP_JS.replace("PHONE_MAX_PX", str(PHONE_MAX_PX))
PHONE_SETTINGS_JS = PHONE_SETTINGS_JS.replace("PHONE_MAX_PX", str(PHONE_MAX_PX))
PHONE_CSS = PHONE_CSS.replace("PHONE_MAX_PX", str(PHONE_MAX_PX)).replace("PHONE_WIDE_PX", str(PHONE_MAX_PX + 1))
PHONE_FIT_JS = (PHONE_FIT_JS.replace("SMALLEST_PX", str(SMALLEST_PX)).replace("BAR_PX", str(BAR_PX))
                .replace("PHONE_MAX_PX", str(PHONE_MAX_PX)))
