"""A class's followers share the step's views (ui/classroom/page.py, ctx.shared_redraws): the page's redraw after a
follower opens the lecturer's step computes each view once for every follower."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from classroom.once import Once
from harness.classroom import follower_redraw
from ui.classroom.page import shared_views
from ui.page.redraw import View

FOLLOWERS = 24


def test_the_followers_redraw_computes_each_view_of_the_step_once(demo):
    classes = demo.classes
    opened = classes.open("causal-mask", "http://lecture-hall/")
    follow = classes.drive(opened["code"], opened["key"], "causal-mask", 2)
    run, values = follower_redraw(demo, follow)
    views = demo.classroom.views
    views.clear()
    before = views.computed
    with ThreadPoolExecutor(8) as pool:
        drawn = list(pool.map(lambda _: run(values), range(FOLLOWERS)))
    assert drawn == [drawn[0]] * FOLLOWERS and drawn[0] >= 3  # the step's tab draws several views
    assert views.computed - before == drawn[0]  # each once, for all of them




def test_each_follower_is_sent_the_whole_view_though_sending_one_empties_its_updates():
    """Gradio pops an update's "value" as it sends it (blocks.postprocess_update_dict): a shared result handed out
    as it is would reach the second follower without its figure."""
    calls = []

    def figure_shown(text):
        calls.append(text)
        return {"value": {"plot": text}, "visible": True, "__type__": "update"}, "caption"

    share = shared_views(Once(1 << 20))(View(figure_shown, [], [], "attention", []))
    first = share.fn("The cat")
    first[0].pop("value")  # as Gradio does, sending it to the first follower
    second = share.fn("The cat")
    assert second[0]["value"] == {"plot": "The cat"} and second[1] == "caption" and calls == ["The cat"]
