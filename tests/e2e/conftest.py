"""Real-browser fixtures (the app itself is tests/conftest.py's `live`, one per session): one headless Chromium,
and a fresh page per test that fails the test if the page ever opens a dialog (a script ran)
or throws an uncaught JavaScript error. Screenshots go to test-artifacts/screens/."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import trainings_left
from harness.live_app import ARTIFACTS, CHROMIUM_ARGS, require_chromium

from harness.browser import WAIT_MS, wait_until_idle

SCREENS = ARTIFACTS / "screens"


def pytest_collection_modifyitems(items):
    """Every test in this folder drives a real browser: `pytest -m "not browser"` is the quick inner loop."""
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def leaves_no_training_behind(request):
    """Every test leaves no training, training process or slot behind (tests/trainings_left.py); this fixture's
    end comes after the page's, whose closing ends a training the page left running."""
    yield
    trainings_left.check(request)


@pytest.fixture(scope="session")
def browser():
    try:
        executable = require_chromium()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.call_failed = report.failed
    return report


def screenshot(page, name: str, selector: str | None = None) -> None:
    """Save the viewport (or one element, e.g. the open tab) as test-artifacts/screens/<name>.png."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    path = str(SCREENS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png")
    if selector:
        page.locator(f"{selector}:visible").first.screenshot(path=path, timeout=60_000)
    else:
        page.screenshot(path=path, timeout=60_000)


def new_page(browser, **context_options):
    """A new page in a context of its own (the suite's window unless told), that records the dialogs it opens and its
    uncaught JavaScript errors: no input may ever make the page run a script (no_script_ran)."""
    context = browser.new_context(**{"viewport": {"width": 1400, "height": 1000}, **context_options})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.dialogs, page.page_errors = [], []

    def on_dialog(dialog):
        page.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    return page


def close_page(page) -> None:
    try:  # leave no work queued on the shared app: the next test's requests would wait behind it
        wait_until_idle(page, timeout=30_000)
    except Exception:  # a failed test's page may never settle; its own failure is what matters
        pass
    page.context.close()


def no_script_ran(page) -> None:
    assert not page.dialogs, f"the page opened dialogs (a script ran): {page.dialogs}"
    assert not page.page_errors, f"uncaught JavaScript errors on the page: {page.page_errors[:3]}"


@pytest.fixture
def page(browser, request):
    """A new page (own context, so no state is shared between tests). Dialogs and page errors
    are recorded and fail the test: no input may ever make the page run a script."""
    page = new_page(browser)
    yield page
    if getattr(request.node, "call_failed", False):
        try:
            screenshot(page, f"FAILED-{request.node.name}")
        except Exception:  # the failure itself is what matters
            pass
    close_page(page)
    no_script_ran(page)


@pytest.fixture(scope="module")
def module_page(browser):
    """One page for the tests of a module that read it in turn (a page load is seconds of Chromium's CPU): each
    opens it where it needs, or reads it as the test before left it, and ends with no_script_ran(page)."""
    page = new_page(browser)
    yield page
    close_page(page)
