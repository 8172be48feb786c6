"""A class's follower as the page runs it, without a browser (bench/classroom.py and the tests share it): the
redraw that follows a student's page opening the lecturer's step (the event redraw_after_class_step), with the
values a following page holds then."""
from __future__ import annotations

# the header's controls by elem_id -> the step's setting of the same meaning
SHARED_IDS = {"sentence": "text", "model": "model", "layer": "layer", "head": "head", "kind": "kind",
              "presenter": "presenter"}


def follower_redraw(demo, follow: dict):
    """(run, values): run(values) draws the step's views for one follower, as the page's redraw does (a generator's
    yields counted: one a view), through ctx.shared_redraws' sharing. follow: /class_follow's answer."""
    redraw = next(f for f in demo.fns.values() if f.api_name == "redraw_after_class_step")
    settings = {**follow["settings"], "presenter": False}
    values = [settings.get(SHARED_IDS.get(getattr(c, "elem_id", None)), c.value)
              if SHARED_IDS.get(getattr(c, "elem_id", None)) else c.value for c in redraw.inputs]
    values[0], values[1] = follow["tab"], redraw.inputs[1].value  # the open tab and sections, as a fresh page's

    def run(values) -> int:
        return sum(1 for _ in redraw.fn(None, *values))

    return run, values
