"""The tabs: one module per tab (a TAB, ui.page.tabspec.TabSpec, and a build(ctx)), in TABS's teaching order (below),
with the sections that live inside a tab beside it (qk in Step by step, sampling in Every head, flow in
Interventions, routes in Causal tracing). A tab imports no other tab: what tabs share lives in ui/page/ or below."""

import importlib

# The tabs, in teaching order: each module has a TAB (ui.page.tabspec.TabSpec) and a build(ctx). A missing one is an
# error. This list is the only one: the page (app.py) is built from it, every test that walks the tabs reads it,
# and a link or a lesson read without a page learns every tab's linked settings from it (ui.page.links).
TABS = ["ui.tabs.attention", "ui.tabs.steps", "ui.tabs.masking", "ui.tabs.positions", "ui.tabs.encoder_decoder",
        "ui.tabs.learning", "ui.tabs.multihead", "ui.tabs.interventions", "ui.tabs.patching", "ui.tabs.lens",
        "ui.tabs.generation", "ui.tabs.induction", "ui.tabs.classifier", "ui.tabs.live",
        "ui.tabs.head_finder"]


def tab_modules(names=TABS) -> list:
    return [importlib.import_module(name) for name in names]
