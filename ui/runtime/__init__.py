"""Every piece of the app that depends on Gradio's or Plotly's private or version-specific behaviour.

README.md beside this file lists them with the upstream behaviour each compensates for, and
tests/app/api/test_runtime_premises.py asserts each behaviour: when an upgrade fixes one, its test fails and
names the workaround to delete. Tab modules use none of this directly (ui.page.context does), except Train live's
streamed updates (events.repeat_outputs) and Every head's box for a clicked tile (tile_click.clicked_tiles).

Imports nothing itself: app.py applies env before Gradio is imported.
"""
