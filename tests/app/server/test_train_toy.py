"""/train_toy and /toy_compare through a real server (the "Train live" tab's handlers: tests/app/handlers/test_live.py):
caps refused with clear messages, two visitors at once, one training per visitor, a cancelled call."""
from __future__ import annotations

import threading
import time

import pytest
from gradio_client.exceptions import AppError

from harness.live_app import ARTIFACTS, assert_clear_message, live_app
from training import toy


@pytest.fixture(scope="module")
def app(model_assets):
    """Its own server: two trainings at a time ($ATTENTION_TOY_TRAININGS, read at start), and the trainings
    these tests start (and cancel) would keep the session's shared server's cores busy."""
    env = {"ATTENTION_ASSETS": str(model_assets), "ATTENTION_TOY_TRAININGS": "2"}
    with live_app(ARTIFACTS / "logs" / "app_live.log", env=env) as running:
        yield running


# The API's trainings are bounded by seconds: given the most (60), copy ends when it is learned (every held-out
# answer right for toy.LEARNED_FOR_S), on a slow machine as on a fast one.
@pytest.mark.trains
def test_train_toy_learns_copy_and_returns_the_result(app):
    result = app.client().predict("copy", True, 60, api_name="/train_toy")
    assert result["status"] == "done" and result["task"] == "copy" and result["positions"] is True
    assert result["stopped_because"] == "learned" and result["accuracy"] == 1.0
    assert 0 < result["steps"] <= toy.MAX_STEPS and 0 < result["seconds"] <= 60
    assert result["example"]["output"] == result["example"]["input"]


@pytest.mark.parametrize("args,message", [
    (("reverse", True, 1000), "seconds must be from 1 to 60"),
    (("reverse", True, "ten"), "seconds must be a number"),
    (("reverse", "yes", 10), "positions must be true or false"),
    (("fly", True, 10), "task must be one of"),
    ((["reverse"], True, 10), "task must be one of"),
])
def test_caps_are_enforced_by_the_server(app, args, message):
    client = app.client()
    with pytest.raises(AppError, match=message) as info:
        client.predict(*args, api_name="/train_toy")
    assert_clear_message(info.value, f"/train_toy{args}")
    assert client.predict(api_name="/ping") == "ok"


@pytest.mark.trains
def test_two_visitors_train_at_once_and_see_only_their_own_run(app):
    results = {}

    def visit(name, task, positions, seconds):
        results[name] = app.client().predict(task, positions, seconds, api_name="/train_toy")

    # ann's copy ends once learned; bob's reverse without positions never is, and runs its 5 seconds
    threads = [threading.Thread(target=visit, args=a)
               for a in (("ann", "copy", True, 60), ("bob", "reverse", False, 5))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert (results["ann"]["task"], results["ann"]["positions"]) == ("copy", True)
    assert (results["bob"]["task"], results["bob"]["positions"]) == ("reverse", False)
    assert results["ann"]["accuracy"] >= 0.95 and results["bob"]["accuracy"] < 0.3


@pytest.mark.trains
def test_compare_trains_wide_and_narrow_step_for_step(app):
    status, _, table, heads, *_ = app.client().predict("copy", True, "narrow", 1, 2, 16, 2, False,
                                                       api_name="/toy_compare")
    assert status.startswith("**Done**")
    rows = {row[0]: row for row in table["value"]["data"]}
    assert set(rows) == {"narrow", "wide"} and rows["narrow"][2] == rows["wide"][2], "the same number of steps"
    assert rows["wide"][1] > rows["narrow"][1], "wide heads have more parameters"
    assert heads["visible"]


@pytest.mark.trains
def test_one_training_per_visitor_and_a_cancelled_call_frees_it(app):
    client = app.client()
    job = client.submit("reverse", True, 60, api_name="/train_toy")
    deadline = time.monotonic() + 60
    while not any(isinstance(o, dict) and o.get("status") == "training" for o in job.outputs()):
        assert time.monotonic() < deadline, f"no progress from the training: {job.status()}"
        time.sleep(0.2)
    with pytest.raises(AppError, match="one per visitor"):
        client.predict("copy", True, 2, api_name="/train_toy")
    job.cancel()
    deadline = time.monotonic() + 30
    while True:  # the slot comes free once the server has closed the cancelled run
        try:
            result = client.predict("copy", True, 2, api_name="/train_toy")
            break
        except AppError as e:
            assert "one per visitor" in str(e) and time.monotonic() < deadline, str(e)
            time.sleep(0.5)
    assert result["task"] == "copy"
