"""A class's followers share the step's views (ui/classroom/page.py, ctx.shared_redraws): the page's redraw after a
follower opens the lecturer's step computes each view once for every follower."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from harness.classroom import follower_redraw

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

