"""The address bar carries the view, and the page reloads itself once a restarted server answers again, so
that a restart mid-lecture (a lecturer's laptop sleeps, a Space rebuilds) lands every page where it was.

Gradio 6.31's page reloads itself after a restart only when an event was under way or is sent afterwards (its
"Connection Lost" notice polls the server every 2 s, then calls window.location.reload()). A page left open on a
step, which is what a lecture hall has, sent nothing and noticed nothing: it stayed as it was, its session gone
with the old server, until a student clicked, and then showed the connection error first.

RECONNECT_JS (a page script: app.launch_options passes it) keeps an EventSource on Gradio's own heartbeat route,
under a name of its own (it carries no session: its end runs nothing), as Gradio's page keeps one for its
session. When the server goes away the browser retries it every few seconds; the first time it connects again,
the page reloads, from its address as it is then. A reload is a new page load, which opens what the address's
query says (ui/page/page_link.py `on_load`). So the address must always say what is on the screen: each time the
"link to this view" box changes (every view drawn, a tab opened, a lesson step taken: page_link.view_link),
ADDRESS_JS writes its query into the address with history.replaceState (replaced, so Back still leaves the page).

KEPT names parameters the address keeps although the link box does not write them: a class's code (issue 59:
a student following a class must come back into it after a restart) goes there, and the link box need not know
about classes. A link that sets one itself wins.

Premise tests: tests/e2e/test_e2e_restart.py restarts the server under a page on a lesson step and finds the same
step drawn after the reload; tests/app/api/test_runtime_premises.py reads in Gradio's page where it reloads.
"""
from __future__ import annotations

import json

KEPT = ("class",)  # address parameters no link box writes, kept across its changes (the class room's hook)

# Gradio's js= for the link box's change: (its value) -> nothing; a value that is not a URL changes nothing
ADDRESS_JS = """(link) => {
  try {
    const next = new URL(link), here = new URLSearchParams(location.search);
    for (const name of %s) {
      if (here.has(name) && !next.searchParams.has(name)) next.searchParams.set(name, here.get(name));
    }
    history.replaceState(history.state, '', next.search || location.pathname);
  } catch (e) {}
}""" % json.dumps(list(KEPT))

# Runs once when the page loads. The heartbeat route answers "ALIVE" every 15 s on an open connection: one more idle
# connection per open page, beside Gradio's own, and no request while nothing happens.
RECONNECT_JS = """() => {
  const base = location.href.split(/[?#]/)[0].replace(/[^/]*$/, '');
  const name = 'address-' + Math.random().toString(36).slice(2);
  let opened = false, lost = false;
  const source = new EventSource(base + 'gradio_api/heartbeat/' + name);
  source.onopen = () => { if (lost) { source.close(); location.reload(); } opened = true; };
  source.onerror = () => { if (opened) lost = true; };
}"""
