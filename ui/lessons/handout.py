"""A lesson's handout: one self-contained HTML page with each step's text, its claims as measured and its figures as
SVG, for students to keep. Made in the browser, as the CSV download is: the page script walks the open lesson from
its first step to its last through the player's own Back and Next (so each figure is the one the class saw), asks
Plotly for each drawn figure as SVG, and saves the page; nothing is written on the server.
"""
from __future__ import annotations

HANDOUT_JS = """async () => {
  const $ = (s) => document.querySelector(s);
  const title = ($('#lesson input') || {}).value;
  const back = $('#lesson-back'), next = $('#lesson-next'), button = $('#lesson-handout');
  if (!title || !next || !window.Plotly) return [];
  const busy = () => document.querySelector('.pending') || [...document.querySelectorAll(
    '[data-testid=status-tracker]')].some((e) => !/\\bhide\\b/.test(e.className));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const position = () => ($('#lesson-position') || {}).innerText || '';
  const settle = async (before) => {  // the step has changed (when it was asked to) and every view has arrived
    for (let i = 0; i < 600 && (position() === before || busy()); i++) await sleep(100);
    await sleep(400);
    for (let i = 0; i < 300 && busy(); i++) await sleep(100);
  };
  const escape = (s) => s.replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
  button.disabled = true;
  try {
    while (!back.disabled) { const at = position(); back.click(); await settle(at); }
    const steps = [];
    for (let n = 0; n < 60; n++) {
      await settle(null);
      const plots = [...document.querySelectorAll('[role=tabpanel] .js-plotly-plot')].filter((e) => e.offsetParent);
      const figures = [];
      for (const plot of plots) {
        const url = await window.Plotly.toImage(plot, {format: 'svg'});
        figures.push(decodeURIComponent(url.slice(url.indexOf(',') + 1)));
      }
      const warning = $('#lesson-warning');
      steps.push(`<section><p class="at">${escape(position())}</p>${$('#lesson-text').innerHTML}` +
                 (warning && warning.offsetParent ? `<div class="warning">${warning.innerHTML}</div>` : '') +
                 figures.map((f) => `<figure>${f}</figure>`).join('') + '</section>');
      if (next.disabled) break;
      const at = position(); next.click(); await settle(at);
    }
    const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>` +
      '<style>body{font-family:system-ui,sans-serif;max-width:900px;margin:2em auto;line-height:1.5}' +
      'section{border-top:1px solid #ccc;padding-top:1em;margin-top:2em}.at{color:#555}figure{margin:1em 0}' +
      'figure svg{max-width:100%;height:auto}.warning{border-left:4px solid #c2410c;padding-left:1em}</style>' +
      `</head><body><h1>${escape(title)}</h1>${steps.join('')}` +
      `<p class="at">Made with Attention, made visible: ${escape(location.origin + location.pathname)}</p></body></html>`;
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([page], {type: 'text/html'}));
    link.download = title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase() + '.html';
    document.body.appendChild(link); link.click(); link.remove();
  } finally { button.disabled = false; }
  return [];
}"""
