"""What the tests and `python -m bench` share: the real app started in a subprocess (live_app) and a
Playwright page read as a person sees it (browser). No test framework is imported here, so bench runs it
without pytest."""
