"""A tab setting that links keep is declared once, beside its control (ui.page.links.Linked), and registered with it
(ctx.link): the page load sets it, the link box writes it, a lesson may name it. Adding a tab with one linked
setting is one new module and one entry in ui.tabs.TABS: the page below is the shipped one plus such a module."""
from __future__ import annotations

import importlib
import sys
import textwrap
from urllib.parse import parse_qsl, urlsplit

import gradio as gr
import pytest

import app
from ui import tabs
from ui.page import links
from ui.page.links import Linked, ViewSettings, make_link, parse_query

# The whole of a new tab: its TabSpec, its linked setting, its control and its view
EXTRA_TAB = '''
import gradio as gr

from ui.page import components
from ui.page.links import Linked
from ui.page.tabspec import TabSpec

TAB = TabSpec("extra", "Extra", figure="#extra-view")
WIDTH = Linked("extra_width", default=3, low=1, high=9)


def build(ctx):
    with ctx.tab(TAB):
        width = components.Slider(WIDTH.low, WIDTH.high, value=WIDTH.default, step=1, label="width",
                                  elem_id="extra-width")
        ctx.link(WIDTH, width)
        shown = gr.Markdown(elem_id="extra-view")

    def view(text, width):
        return f"{text} at width {width}"

    ctx.listen(view, inputs=[ctx.text, width], outputs=[shown], api_name="extra_view",
               triggers=ctx.triggers + [width.input])
'''


def handler(demo, api_name: str):
    return next(fn for fn in demo.fns.values() if fn.api_name == api_name)


def elem_ids(components) -> list:
    return [getattr(c, "elem_id", None) for c in components]


@pytest.fixture
def page_with_extra_tab(shipped_registry, tmp_path, monkeypatch):
    """The app with one more tab module in ui.tabs.TABS; what it declares is forgotten afterwards."""
    (tmp_path / "extra_tab.py").write_text(textwrap.dedent(EXTRA_TAB))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(tabs, "TABS", tabs.TABS + (importlib.import_module("extra_tab"),))  # the entry a new tab adds
    try:
        yield app.build_demo(registry=shipped_registry)
    finally:
        sys.modules.pop("extra_tab", None)
        links.DECLARED.pop("extra_width", None)


def test_a_new_tabs_linked_setting_goes_from_a_link_to_its_control_and_back(page_with_extra_tab):
    demo = page_with_extra_tab
    load = handler(demo, "load_settings")
    assert "extra-width" in elem_ids(load.outputs), "the page load sets it"
    request = gr.Request(query_params={"tab": "extra", "extra_width": "5"}, headers={})
    opened = load.fn(request)
    slider = next(c for c in load.outputs if getattr(c, "elem_id", None) == "extra-width")
    assert opened[slider] == 5

    with pytest.warns(UserWarning, match="extra_width '12' is out of range; showing 9"):  # clamped, and said
        clamped = load.fn(gr.Request(query_params={"extra_width": "12"}, headers={}))
    assert clamped[slider] == 9

    box = handler(demo, "link")
    assert "extra-width" in elem_ids(box.inputs), "the link box reads it"
    values = [{"extra-width": 7, "sentence": "The cat sat"}.get(getattr(c, "elem_id", None), c.value)
              for c in box.inputs]
    values[elem_ids(box.inputs).index(None)] = "extra"  # the open tab (a gr.State)
    link = box.fn(gr.Request(headers={"referer": "http://host/"}), *values)
    query = dict(parse_qsl(urlsplit(link).query))
    assert query["extra_width"] == "7" and query["tab"] == "extra"
    settings, notes = parse_query(query, demo.registry, ViewSettings("x", "lm"), ("attention", "extra"))
    assert settings.extra_width == 7 and settings.tab == "extra" and notes == []
    assert "extra_width" not in dict(parse_qsl(urlsplit(make_link(ViewSettings("x", "lm", extra_width=3))).query)), \
        "at its default a link leaves it out"


def test_a_setting_whose_tab_the_page_lacks_is_not_on_that_page(demo):
    """The shipped page: no tab registered extra_width, so neither the load nor the link box has it, and a link
    that names it opens the rest of the view."""
    assert "extra-width" not in elem_ids(handler(demo, "load_settings").outputs)
    linked = elem_ids(handler(demo, "link").inputs)
    for elem_id in ("temperature", "decoding-step", "beam-width", "snapshot", "shuffle-seed", "sample-temperature",
                    "sample-top-k", "sample-top-p", "sample-seed", "sample-tokens"):
        assert elem_id in linked, f"{elem_id}: a shipped tab's linked control is not in the link box's inputs"


def test_a_misspelt_or_doubled_setting_is_an_error_at_start(monkeypatch):
    links.every_setting()  # every tab's declared first: the copy below is forgotten afterwards
    monkeypatch.setattr(links, "DECLARED", dict(links.DECLARED))
    with pytest.raises(KeyError):
        ViewSettings("x", "lm", temprature=0.5)  # no setting has that name
    with pytest.raises(ValueError, match="declared twice"):
        Linked("temperature", default=2.0, low=0.0, high=5.0)  # another tab's name
    with pytest.raises(ValueError, match="declared twice"):
        Linked("layer", default=1, low=1, high=4)  # the header's own
    with pytest.raises(ValueError, match="outside"):
        Linked("fresh", default=10, low=1, high=4)
    with gr.Blocks():
        from ui.page.context import Context

        ctx = Context(None, registry=None, text=gr.Textbox(), model=gr.Dropdown(), analyze=gr.Button(),
                      layer=gr.Slider(), head=gr.Slider(), kind=gr.Radio(), presenter=gr.Checkbox())
        setting, slider = Linked("fresh", default=2, low=1, high=4), gr.Slider(1, 4)
        ctx.link(setting, slider)
        with pytest.raises(ValueError, match="registered twice"):
            ctx.link(setting, gr.Slider(1, 4))
