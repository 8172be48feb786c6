"""The suite's parts for `make test`'s two workers (tests/suite_parts.py), and the premise of its scheduler."""
from __future__ import annotations

import inspect

from suite_parts import suite_part


def test_each_browser_module_is_a_part_and_the_rest_one():
    assert suite_part("tests/e2e/test_e2e_each_tab.py::test_axe_finds_no_serious_or_critical_violation_seated[live]") \
        == suite_part("tests/e2e/test_e2e_each_tab.py::test_the_tabs_main_figure_is_whole_on_the_first_screen[steps]") \
        == "tests/e2e/test_e2e_each_tab.py"
    assert suite_part("tests/e2e/test_e2e_patching.py::test_the_threshold_slider_redraws_the_routes") \
        == "tests/e2e/test_e2e_patching.py"
    assert suite_part("tests/app/handlers/test_live.py::test_x[a::b]") == suite_part("tests/test_rooms.py::test_y") \
        == "rest"


def test_xdists_loadgroup_still_cannot_group_premise(request):
    """pytest-xdist's loadgroup puts a test's group into `item._nodeid`; pytest 9 reads a node's id from elsewhere,
    so the group never reaches the scheduler. When this fails, xdist_group marks work again: suite_parts.scheduler
    may give way to them."""
    import xdist.remote

    assert "item._nodeid = " in inspect.getsource(xdist.remote.WorkerInteractor.pytest_collection_modifyitems)
    node, before = request.node, request.node.nodeid
    node._nodeid = before + "@browser"
    try:
        assert node.nodeid == before
    finally:
        node._nodeid = before
