"""The tabs: one module per tab (a TAB, ui.page.tabspec.TabSpec, and a build(ctx)), in app.TABS's teaching order,
with the sections that live inside a tab beside it (qk in Step by step, sampling in Every head, flow in
Interventions, routes in Causal tracing). A tab imports no other tab: what tabs share lives in ui/page/ or below."""
