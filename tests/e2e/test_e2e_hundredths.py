"""The every-head grid travels as whole hundredths (one byte a cell) and is drawn as the float32 weights the
server rounded to: the page script ui/runtime/hundredths.py divides before Plotly sees the figure."""
from __future__ import annotations

import numpy as np

from harness.browser import lm, sentence_box, wait_for_figures, wait_until_idle
from ui.page.messages import clean_text
from viz import tiles


def test_the_grid_is_drawn_with_the_servers_numbers_on_the_0_1_scale(page, live):
    page.goto(live.url)
    wait_for_figures(page, "#all-heads")
    wait_until_idle(page)
    drawn = page.evaluate("""() => { const gd = document.querySelector('#all-heads .js-plotly-plot');
        const trace = gd._fullData[0];
        return {z: gd.calcdata[0][0].z.map(row => Array.from(row)), zmax: trace.zmax, zmin: trace.zmin,
                meta: gd.data[0].meta || null, sent: typeof gd.data[0].z[0][0]}; }""")
    text = sentence_box(page).input_value()
    model = lm()
    trace = model.trace(clean_text(text))
    att = trace.attention["self"]
    layer = int(page.locator("#layer input[type=number]").input_value()) - 1
    head = int(page.locator("#head input[type=number]").input_value()) - 1
    expected = np.asarray(tiles.all_heads_grid(att.probs, att.queries, att.keys, mask=att.mask,
                                                 selected=(layer, head)).data[0].z)
    assert (drawn["zmin"], drawn["zmax"]) == (0, 1) and drawn["sent"] == "number"
    assert "z_divisor" not in (drawn["meta"] or {}), "the page divided, and says so no more"
    got = np.asarray(drawn["z"], dtype=np.float64)
    assert got.shape == expected.shape
    # every cell is exactly the float32 number the server rounded to (Plotly keeps float32 rows), and every
    # gap between tiles is a gap (NaN), not a weight of 0
    np.testing.assert_array_equal(got, expected.astype(np.float64))
    assert np.isnan(got).any() and np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.nanmax(got) <= 1 and np.nanmax(got) > 0.3
    # the hover reads the weight on the 0..1 scale, two decimals, as before
    r, c = np.unravel_index(np.nanargmax(got), got.shape)
    page.evaluate("([r, c]) => { const gd = document.querySelector('#all-heads .js-plotly-plot');"
                  " window.Plotly.Fx.hover(gd, [{curveNumber: 0, pointNumber: [r, c]}]); }", [int(r), int(c)])
    hover = page.wait_for_function("() => (document.querySelector('#all-heads .hovertext') || {}).textContent")
    assert f"≈ {got[r, c]:.2f}" in hover.json_value()
