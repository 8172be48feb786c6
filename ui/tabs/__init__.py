"""The tabs: one module per tab (a TAB, ui.page.tabspec.TabSpec, and a build(ctx)), in TABS's teaching order (below),
with the sections that live inside a tab beside it (qk in Step by step, sampling in Every head, flow in
Interventions, routes in Causal tracing) and a tab's own parts named after it (patching_jobs and patching_summary:
Causal tracing's computations and its words). A tab imports no other tab: what tabs share lives in ui/page/ or
below."""

# imported in teaching order: the order the tabs declare their linked settings, which a link writes them in
from ui.tabs import (attention, steps, masking, positions, encoder_decoder, learning, multihead,
                     interventions, patching, lens, generation, induction, classifier, live, head_finder)

# The tabs, in teaching order: each module has a TAB (ui.page.tabspec.TabSpec) and a build(ctx). This tuple is the
# only list: the page (app.py) is built from it and every test that walks the tabs reads it. Importing it (or any
# tab) imports every tab, and a tab module declares its linked settings when imported (ui.page.links.Linked), so a
# link or a lesson read without a page knows every tab's settings once the tabs are imported.
TABS = (attention, steps, masking, positions, encoder_decoder, learning, multihead, interventions, patching, lens,
        generation, induction, classifier, live, head_finder)
