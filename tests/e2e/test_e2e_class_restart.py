"""A class across a server restart, in two browsers (issue 59): the server stops and starts again mid-lecture; both
pages reload themselves (ui/runtime/address.py); the lecturer's page takes its class back with the key its tab kept
(never in the address), and drives the next step, which the student's page follows; the student's page is the same
student (the signed pass its tab kept), so its second answer replaces its first: "1 of 1" answered."""
from __future__ import annotations

import json
import os
import re

from harness.live_app import ARTIFACTS, start_app, stop_app
from tests.e2e.test_e2e_classroom import phone, projector, text_of, wait_for_text  # noqa: F401 (fixtures)

LESSON = "what-attention-computes"  # step 1 asks a token question; step 2 asks nothing


def storage(page) -> dict:
    return page.evaluate("() => Object.fromEntries(Object.entries(sessionStorage))")


def reloaded(page) -> None:
    page.wait_for_function("() => window.__before_restart === undefined")


def test_after_a_restart_the_lecturer_drives_on_and_the_student_is_still_one_student(projector, phone, model_assets,
                                                                                      tmp_path):
    env = {"ATTENTION_ASSETS": str(model_assets), "ATTENTION_CLASSES": str(tmp_path / "classes.sqlite3")}
    log = ARTIFACTS / "logs" / f"class-restart-{os.getpid()}.log"
    app = start_app(log, env)
    env["GRADIO_SERVER_PORT"] = app.url.rstrip("/").rsplit(":", 1)[1]  # restarted on the address the pages know
    try:
        projector.goto(app.url + f"?lesson={LESSON}&step=1&presenter=1", wait_until="load")
        wait_for_text(projector, "#lesson-position", "step 1 of")
        projector.click("#class-start")
        projector.wait_for_selector("#class-qr img")
        code = re.search(r"code\s+([A-Z0-9]{6})", text_of(projector, "#class-join-text")).group(1)
        projector.wait_for_function("(c) => !!sessionStorage.getItem('attention-class-key:' + c)", arg=code)
        key = storage(projector)[f"attention-class-key:{code}"]
        assert len(key) == 22 and key not in projector.url
        assert projector.input_value("#class-lecturer textarea") == ""  # the key left the page's box at once

        phone.goto(app.url + f"?class={code}", wait_until="load")
        phone.wait_for_selector("#class-choices label")
        labels = phone.locator("#class-choices label")
        first, second = labels.nth(0).inner_text().strip(), labels.nth(1).inner_text().strip()
        labels.nth(0).tap()
        wait_for_text(phone, "#class-answered", "1 answered")
        kept = storage(phone)
        assert kept.get(f"attention-class-student:{code}", "").startswith(f"{code}.")
        assert key not in json.dumps(kept) and key not in phone.content()  # a student's page never holds the key

        for page in (projector, phone):
            page.evaluate("() => { window.__before_restart = true; }")  # gone once the page has reloaded
        stop_app(app)
        app = start_app(log, env)
        assert app.url.rstrip("/").endswith(f":{env['GRADIO_SERVER_PORT']}"), app.url
        reloaded(projector)
        reloaded(phone)

        # the lecturer's page has its class back: the projector's panel and its count, from the key its tab kept
        projector.wait_for_selector("#class-projector", state="visible")
        wait_for_text(projector, "#class-count", r"1 of 1\b")
        assert key not in projector.url and "class=" not in projector.url

        # the same page answers again: the same student, its last answer counts
        phone.wait_for_selector(f"#class-status [data-class-code='{code}']")
        phone.wait_for_selector("#class-choices label")
        phone.locator("#class-choices label").nth(1).tap()
        wait_for_text(phone, "#class-answered", "1 answered")
        wait_for_text(projector, "#class-count", r"1 of 1\b")
        client = app.client()
        results = client.predict(code=code, key=key, api_name="/class_results")
        assert (results["students"], results["answered"]) == (1, 1), results
        assert (results["answers"][second], results["answers"][first]) == (1, 0), (first, second, results)

        # the lecturer drives on after the restart, and the student's page follows
        projector.click("#lesson-next")
        wait_for_text(projector, "#lesson-position", "step 2 of")
        wait_for_text(phone, "#lesson-position", "step 2 of")
        assert client.predict(code=code, api_name="/class_follow")["step"] == 2
    finally:
        stop_app(app)
