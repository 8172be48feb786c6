"""What a view hands back besides plain values (a figure, a table, a text): how one of its outputs changes.

Plain data, no Gradio. A tab's handlers return these and stay plain functions that a test calls directly;
ui.page.context turns them into Gradio's updates, in one place (`ui.page.context.as_gradio`), for every way a handler
is registered (ctx.listen, ctx.page_event, ctx.on).
"""
from __future__ import annotations


class Change:
    """Set these properties of an output and leave the rest as they are. The names are the component's own
    (value, visible, choices, interactive, minimum, maximum, placeholder, info, open, selected)."""

    __slots__ = ("props",)

    def __init__(self, **props):
        self.props = props

    def __getitem__(self, name: str):
        return self.props[name]

    def __eq__(self, other) -> bool:
        return isinstance(other, Change) and self.props == other.props

    def __repr__(self) -> str:
        return f"Change({', '.join(f'{k}={v!r}' for k, v in self.props.items())})"


UNCHANGED = Change()  # the output stays exactly as it is on the page


def show(value) -> Change:
    """A value that also makes its output visible (a figure hidden until there is something to draw)."""
    return Change(value=value, visible=True)


def hidden(clear: bool = False) -> Change:
    """The output hidden; `clear` also empties it, so nothing stale shows when it comes back."""
    return Change(value=None, visible=False) if clear else Change(visible=False)


def visible(on) -> Change:
    return Change(visible=bool(on))


def enabled(on) -> Change:
    """A control the visitor can use (True) or not (False), as while a training runs."""
    return Change(interactive=bool(on))
