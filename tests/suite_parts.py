"""How `make test`'s two pytest-xdist workers (`-n 2 --dist loadgroup`) share the suite.

Each part (suite_part) goes whole to one worker, in collection order (the browser tests last: tests/conftest.py). The
largest part goes first: the rest, to one worker; the other takes the first browser module. The next part goes to a
worker with at most two tests left: the browser modules go to whichever worker is free, the rest's worker too once
its own tests are done (so the browser tests run after the others there as well), and the two end together
(docs/testing.md has the figures).

Our own scheduler, not xdist_group marks: pytest-xdist 3.8's loadgroup writes the group into `item._nodeid`, which
pytest 9 no longer reads (tests/test_suite_parts.py checks that premise), so every test was a group of its own and the
browser modules' tests were dealt out one by one to both workers, each opening its own copy of a module's pages and
servers.
"""
from __future__ import annotations

E2E = "tests/e2e/"


def suite_part(nodeid: str) -> str:
    """Each browser module is a part of its own (its tests read the pages and servers its module-scoped fixtures
    open); the rest is one part."""
    module = nodeid.split("::", 1)[0]
    return module if module.startswith(E2E) else "rest"


def scheduler(config, log):
    """The scheduler for `--dist loadgroup`; None (xdist's own) for any other distribution."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByPart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return suite_part(nodeid)

    return ByPart(config, log)
