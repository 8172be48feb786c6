"""The class panels' style and the following page's script (ui/classroom/page.py builds the panels).

The script waits on the plain route /class/wait (ui/classroom/route.py) while the page follows a class (its
status carries data-class-code), and on each of the lecturer's moves presses one of the panel's two hidden buttons:
#class-step when the lesson or step changed (the view follows, then redraws), #class-tick otherwise (the count, a
reveal). 300 phones woken at once spread their presses over SPREAD_MS, so the server meets them a few at a time.
"""
from __future__ import annotations

SPREAD_MS = 1500  # within the 3 s a follower has to show the lecturer's step

CSS = """
.class-hidden { display: none !important; }
/* the lecturer's: presenter mode's header, in the corner the wrapped "Quiz mode (answers hidden)" leaves free,
   so that the header is no taller (a projector's first screen keeps the tab's figure whole) */
body:not(.presenter) #class-start { display: none !important; }
div:has(> #class-start) { position: relative; }
#class-start { position: absolute !important; right: 8px; bottom: 8px; width: auto !important;
               min-width: 0 !important; white-space: nowrap; padding: 2px 10px !important; }
#class-qr img { width: min(52vh, 420px); height: auto; image-rendering: pixelated; background: white; }
#class-join-text .prose, #class-join-text p { font-size: 28px !important; line-height: 1.4; }
#class-join-text code { font-size: 56px !important; letter-spacing: 0.12em; font-weight: 700; }
#class-count .prose, #class-count p { font-size: 26px !important; }
#class-question .prose, #class-question p { font-size: 20px !important; }
#class-choices label { min-height: 44px; min-width: 64px; align-items: center; font-size: 18px !important; }
#class-choices input[type=radio] { width: 22px; height: 22px; }
#class-status .class-line { font-size: 16px; }
/* a following page: the class first (above the header, on a phone the first screen), the page's intro out */
#class-student { order: -3; }
body:has(#class-status [data-class-code]) #intro { display: none; }
#class-after .prose, #class-after p { font-size: 20px !important; }
body.presenter #class-after .prose, body.presenter #class-after p { font-size: 24px !important; }
"""

FOLLOW_JS = """() => {
  const SPREAD_MS = %d;
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const press = (id) => { const b = document.getElementById(id); if (b) b.click(); };
  const base = () => window.location.href.split('?')[0].split('#')[0].replace(/[^/]*$/, '');
  let code = null, since = -1, step = null;
  (async () => {
    for (;;) {
      const mark = document.querySelector('#class-status [data-class-code]');
      const now = mark ? mark.dataset.classCode : null;
      if (!now) { code = null; await sleep(1000); continue; }
      if (now !== code) {
        code = now; since = Number(mark.dataset.classVersion || -1); step = mark.dataset.classStep || null;
      }
      let reply = null;
      try {
        const answer = await fetch(base() + 'class/wait?code=' + encodeURIComponent(code) + '&since=' + since,
                                   {cache: 'no-store'});
        reply = await answer.json();
        if (!answer.ok) { code = null; mark.removeAttribute('data-class-code'); press('class-tick'); continue; }
      } catch (e) { await sleep(2000); continue; }
      if (reply.version > since) {
        since = reply.version;
        const here = reply.lesson + '/' + reply.step;
        const moved = here !== step;
        step = here;
        await sleep(Math.random() * SPREAD_MS);
        press(moved ? 'class-step' : 'class-tick');
      }
    }
  })();
}""" % SPREAD_MS
