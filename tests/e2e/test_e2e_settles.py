"""A control moved by the keyboard settles, in a real browser: the page sends the requests the change needs, then
stops (a page that keeps asking keeps a lecture hall's shared server busy for nothing)."""
from __future__ import annotations

import json
import urllib.request
from urllib.parse import quote_plus

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.browser import error_toasts, type_number, wait_for_figures, wait_until_idle, wait_until_settled

DATE = "Saturday, 21st of November 2026"  # 2026-11-21: eleven decoding steps
COUNT_JOINS = """() => { window.__joins = 0; const fetch = window.fetch;
    window.fetch = (...args) => { if (String(args[0]).includes('queue/join')) window.__joins += 1;
                                  return fetch(...args); }; }"""


def dependency_ids(url: str) -> dict[str, int]:
    """Each page event's api_name -> its fn_index, from the app's own configuration."""
    with urllib.request.urlopen(url + "config", timeout=30) as response:
        config = json.load(response)
    return {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_name")}


def test_a_decoding_step_typed_past_the_end_settles(page, live):
    """99 typed in the decoding step's box (the translation has 11 steps): the figures show step 11, the box says
    11, and then the page is quiet. It sent the step and its fitting twice a second, for good (two always_last
    listeners of one trigger re-run each other: tests/e2e/test_e2e_runtime_premises.py)."""
    ids = dependency_ids(live.url)
    watched = {ids["decoding_step"]: "decoding_step", ids["on_step_typed"]: "fitting"}
    sent = []
    page.on("request", lambda r: "queue/join" in r.url and sent.append(json.loads(r.post_data or "{}")))
    page.add_init_script(f"({COUNT_JOINS})()")
    page.goto(f"{live.url}?tab=encoder_decoder&text={quote_plus(DATE)}")
    wait_for_figures(page, "#step-bars")
    wait_until_idle(page)
    before = len(sent)
    type_number(page, page.locator("#decoding-step input[type=number]"), "99")
    page.wait_for_function("() => document.querySelector('#decoding-step input[type=number]').value === '11'"
                           " && /^Step 11: writing/.test((document.querySelector('#step-bars .gtitle') || {}).textContent)")
    try:  # quiet: no request for 1.5 s; a page that keeps asking fails after 20 s
        wait_until_settled(page, watch="window.__joins", quiet_ms=1500, timeout=20_000)
        settled = True
    except PlaywrightTimeout:
        settled = False
    calls = [watched[s["fn_index"]] for s in sent[before:] if s.get("fn_index") in watched]
    page.goto("about:blank")  # a page that never settled stops asking here, not in the next test's time
    assert settled, f"the page kept sending requests after 99 was fitted to 11: {len(calls)} of them ({calls[:12]} …)"
    # two digits typed, two inputs: each sends the step, and fits the box once its figures are drawn
    assert calls.count("decoding_step") <= 2 and calls.count("fitting") <= 2, calls
    assert not error_toasts(page)
