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

# Across a server restart (ui/classroom/page.py): what a page keeps in its sessionStorage (this tab's, so one page is
# one student; gone when the tab closes), under the class's code. Never in the address.
LECTURING = "attention-class-lecturing"  # the code of the class this tab's lecturer drives
LECTURER_KEY = "attention-class-key:"  # + code: its lecturer's key
STUDENT_PASS = "attention-class-student:"  # + code: this page's signed student pass in it

# the Start button's answer "CODE KEY": kept, and emptied from the page's hidden box at once
KEEP_LECTURER_JS = """(pass) => {
  const [code, key] = String(pass || '').split(' ');
  if (code && key) {
    try { sessionStorage.setItem('%s', code); sessionStorage.setItem('%s' + code, key); } catch (e) {}
  }
  return '';
}""" % (LECTURING, LECTURER_KEY)

# the page load's inputs (lecturer, student pass): a page on a class's link shows its pass of that class; any other
# page its lecturer's "CODE KEY", if this tab started a class
LOAD_JS = """(lecturer, pass) => {
  try {
    const code = (new URLSearchParams(location.search).get('class') || '').trim().toUpperCase();
    if (code) return ['', sessionStorage.getItem('%s' + code) || ''];
    const mine = sessionStorage.getItem('%s');
    const key = mine && sessionStorage.getItem('%s' + mine);
    return [key ? mine + ' ' + key : '', ''];
  } catch (e) { return ['', '']; }
}""" % (STUDENT_PASS, LECTURING, LECTURER_KEY)

# a student's pass "CODE.id.signature", each time the server hands the page one
KEEP_STUDENT_JS = """(pass) => {
  const code = String(pass || '').split('.')[0];
  if (code) { try { sessionStorage.setItem('%s' + code, pass); } catch (e) {} }
}""" % STUDENT_PASS

# joining by the code typed: the pass this page kept for that class, if any
JOIN_JS = """(code, pass, presenter, quiz) => {
  let kept = null;
  try { kept = sessionStorage.getItem('%s' + String(code || '').trim().toUpperCase()); } catch (e) {}
  return [code, kept || pass, presenter, quiz];
}""" % STUDENT_PASS
