"""A lesson's handout: one self-contained HTML page with each step's text, its claims as measured, the link that
opens its view, and its figures as SVG, for students to keep. Made in the browser, as the CSV download is: the page
script opens each step of the open lesson in a hidden frame of its own (its own session: the player and the tab
the class sees do not move), waits for its views, asks Plotly for each drawn figure as SVG at the size it was drawn,
and saves the page; nothing is written on the server.
"""
from __future__ import annotations

HANDOUT_JS = """async () => {
  const $ = (s, root) => (root || document).querySelector(s);
  const title = ($('#lesson input') || {}).value;
  const button = $('#lesson-handout');
  const link = ($('#view-link textarea') || $('#view-link input') || {}).value || location.href;
  let lesson = null;
  try { lesson = new URL(link, location.href).searchParams.get('lesson'); } catch (e) {}
  const count = +((($('#lesson-position') || {}).innerText || '').match(/of (\\d+)/) || [0, 0])[1];
  if (!title || !lesson || !count) return [];
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const escape = (s) => s.replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
  const base = location.origin + location.pathname;
  button.disabled = true;
  const frame = document.createElement('iframe');  // off screen, a projector's width: figures drawn full size
  frame.setAttribute('aria-hidden', 'true');
  frame.style.cssText = 'position:fixed;left:-20000px;top:0;width:1280px;height:900px;border:0;visibility:hidden';
  document.body.appendChild(frame);
  try {
    const steps = [];
    for (let n = 1; n <= count && n <= 60; n++) {
      await new Promise((done) => { frame.onload = done; frame.src = `${base}?lesson=${encodeURIComponent(lesson)}&step=${n}`; });
      const doc = () => frame.contentDocument;
      const busy = () => !!$('.pending', doc()) || [...doc().querySelectorAll('[data-testid=status-tracker]')]
        .some((e) => !/\\bhide\\b/.test(e.className));
      const at = () => ((doc() && $('#lesson-position', doc())) || {}).innerText || '';
      for (let i = 0; i < 1200 && !at().includes(`step ${n} of`); i++) await sleep(100);
      const shape = () => [...doc().querySelectorAll('[role=tabpanel] .js-plotly-plot')].filter((e) => e.offsetParent)
        .map((e) => `${e.offsetWidth}x${e.offsetHeight}`).join();
      let last = '', still = 0;
      for (let i = 0; i < 1800 && still < 8; i++) {  // every view in and its size still for a while
        await sleep(150);
        const now = shape();
        still = (!busy() && now && now === last) ? still + 1 : 0;
        last = now;
      }
      const plotly = frame.contentWindow.Plotly;
      const figures = [];
      for (const plot of [...doc().querySelectorAll('[role=tabpanel] .js-plotly-plot')].filter((e) => e.offsetParent)) {
        const full = plot._fullLayout || {};
        try {
          const url = await plotly.toImage(plot, {format: 'svg', width: full.width || plot.offsetWidth,
                                                  height: full.height || plot.offsetHeight});
          figures.push(decodeURIComponent(url.slice(url.indexOf(',') + 1)));
        } catch (e) {}
      }
      const warning = $('#lesson-warning', doc());
      const settings = ($('#lesson-step-link textarea', doc()) || $('#lesson-step-link input', doc()) || {}).value || '';
      const opens = settings ? base + settings.replace(/^\\/?/, '') : '';
      steps.push(`<section><p class="at">${escape(at())}</p>${$('#lesson-text', doc()).innerHTML}` +
                 (warning && warning.offsetParent ? `<div class="warning">${warning.innerHTML}</div>` : '') +
                 (opens ? `<p class="at">Open this view: <a href="${escape(opens)}">${escape(opens)}</a></p>` : '') +
                 figures.map((f) => `<figure>${f}</figure>`).join('') + '</section>');
    }
    const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>` +
      '<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;line-height:1.5}' +
      'section{border-top:1px solid #ccc;padding-top:1em;margin-top:2em}.at{color:#555;overflow-wrap:anywhere}' +
      'figure{margin:1em 0}figure svg{max-width:100%;height:auto}' +
      '.warning{border-left:4px solid #c2410c;padding-left:1em}</style>' +
      `</head><body><h1>${escape(title)}</h1>${steps.join('')}` +
      `<p class="at">Made with Attention, made visible: ${escape(base)}</p></body></html>`;
    const save = document.createElement('a');
    save.href = URL.createObjectURL(new Blob([page], {type: 'text/html'}));
    save.download = title.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').toLowerCase() + '.html';
    document.body.appendChild(save); save.click(); save.remove();
  } finally { frame.remove(); button.disabled = false; }
  return [];
}"""
