"""The class panels' style and the following page's script (ui/classroom/page.py builds the panels).

The script waits on the plain route /class/wait (ui/classroom/route.py) while the page follows a class (its
status carries data-class-code). When the lecturer moves to another step it shows the step at once from the plain
route /class/step (one reply a move for every follower): the step's text and its question's answers, written as
text (escaped), each answer a button that answers through /class/answer with the page's pass. Then it presses one of
the panel's two hidden buttons: #class-step when the lesson or step changed (the page's own view follows, then its
figures redraw; the box shown at once goes when the page's status names the step), #class-tick otherwise (the
count, a reveal). A hall's pages spread those presses (SPREAD_PER_STUDENT_MS), so the server meets them a few at a
time: 300 Gradio round trips cannot all be answered within seconds on 2 cores, which is why the step is shown first.
"""
from __future__ import annotations

# The page's own round trip after a move (its view and figures follow), spread over the class: 20 ms a student, at
# most 6 s (300 students: 0-6 s). The page has shown the new step already (/class/step, at once).
SPREAD_PER_STUDENT_MS = 20
SPREAD_MAX_MS = 6000
# Across a server restart (ui/classroom/page.py): what a page keeps in its sessionStorage (this tab's, so one page is
# one student; gone when the tab closes), under the class's code. Never in the address.
LECTURING = "attention-class-lecturing"  # the code of the class this tab's lecturer drives
LECTURER_KEY = "attention-class-key:"  # + code: its lecturer's key
STUDENT_PASS = "attention-class-student:"  # + code: this page's signed student pass in it

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
/* the lecturer's new step, shown by the page's script until the page's own view has followed (class-ahead) */
#class-now:has(#class-now-box[hidden]) { display: none !important; }
#class-now-box { font-size: 16px; }
#class-now-box .class-now-position { font-weight: 600; }
#class-now-box .class-now-question { font-size: 20px; }
#class-now-box .class-now-choices { display: flex; flex-wrap: wrap; gap: 8px; }
#class-now-box .class-now-choices button { min-height: 44px; min-width: 64px; font-size: 18px; padding: 4px 14px;
  border-radius: 8px; border: 1px solid var(--border-color-primary); background: var(--background-fill-secondary);
  color: var(--body-text-color); }
#class-now-box .class-now-choices button[aria-pressed=true] { background: var(--color-accent); color: white; }
body.class-ahead #class-question, body.class-ahead #class-choices, body.class-ahead #class-answered,
body.class-ahead #class-student-results, body.class-ahead #lesson-panel { display: none !important; }
body.class-ahead #lesson-position { visibility: hidden; }
/* a following page: the class first (above the header, on a phone the first screen), the page's intro out */
#class-student { order: -3; }
body:has(#class-status [data-class-code]) #intro { display: none; }
#class-after .prose, #class-after p { font-size: 20px !important; }
body.presenter #class-after .prose, body.presenter #class-after p { font-size: 24px !important; }
"""

FOLLOW_JS = """() => {
  const SPREAD_PER_STUDENT_MS = __PER__, SPREAD_MAX_MS = __MAX__, PASS = '__PASS__';
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const press = (id) => { const b = document.getElementById(id); if (b) b.click(); };
  const base = () => window.location.href.split('?')[0].split('#')[0].replace(/[^/]*$/, '');
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text) e.textContent = text;
                                   if (cls) e.className = cls; return e; };
  // the step's Markdown, every piece written as text (escaped): paragraphs, **bold** and `code`, nothing else
  const markdown = (box, text) => String(text || '').split(/\\n\\s*\\n/).forEach((paragraph) => {
    const p = el('p');
    paragraph.replace(/\\n/g, ' ').split(/(\\*\\*[^*]+\\*\\*|`[^`]+`)/).forEach((part) => {
      if (/^\\*\\*[^*]+\\*\\*$/.test(part)) p.appendChild(el('b', part.slice(2, -2)));
      else if (/^`[^`]+`$/.test(part)) p.appendChild(el('code', part.slice(1, -1)));
      else if (part) p.appendChild(document.createTextNode(part));
    });
    box.appendChild(p);
  });
  const passOf = (code) => {
    try { const kept = sessionStorage.getItem(PASS + code); if (kept) return kept; } catch (e) {}
    const box = document.querySelector('#class-pass textarea, #class-pass input');
    return box ? box.value : '';
  };
  const ahead = (on) => document.body.classList.toggle('class-ahead', on);
  // the lecturer's new step shown at once from /class/step, until the page's own view (class_step) has followed
  const show = async (code) => {
    let now = null;
    try {
      const answer = await fetch(base() + 'class/step?code=' + encodeURIComponent(code), {cache: 'no-store'});
      if (!answer.ok) return;
      now = await answer.json();
    } catch (e) { return; }
    const host = document.getElementById('class-now');
    if (!host || !now.lesson) return;
    let box = document.getElementById('class-now-box');
    if (!box) { box = el('div'); box.id = 'class-now-box'; host.appendChild(box); }
    box.replaceChildren();
    box.dataset.version = now.version; box.dataset.step = now.lesson + '/' + now.step;
    box.appendChild(el('p', now.position + ' · ' + now.title, 'class-now-position'));
    const text = el('div', '', 'class-now-text'); markdown(text, now.text); box.appendChild(text);
    if (now.choices.length && !now.revealed) {
      const question = el('p', '', 'class-now-question');
      question.appendChild(el('b', 'Question to the class: ')); question.appendChild(document.createTextNode(now.question));
      const row = el('div', '', 'class-now-choices'); row.setAttribute('role', 'group');
      row.setAttribute('aria-label', 'Your answer (tap one; the last counts)');
      const said = el('p', '', 'class-now-answered'); said.setAttribute('aria-live', 'polite');
      now.choices.forEach((choice) => {
        const b = el('button', choice); b.type = 'button'; b.setAttribute('aria-pressed', 'false');
        b.addEventListener('click', async () => {
          try {
            const answer = await fetch(base() + 'class/answer', {method: 'POST', cache: 'no-store',
              headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({code: now.code, pass: passOf(now.code), answer: choice})});
            const reply = await answer.json();
            if (!answer.ok) { said.textContent = reply.error || 'Not counted: try again.'; return; }
            if (reply.pass) { try { sessionStorage.setItem(PASS + now.code, reply.pass); } catch (e) {} }
            row.querySelectorAll('button').forEach((x) => x.setAttribute('aria-pressed', String(x === b)));
            said.textContent = 'Your answer: ' + choice + ' (' + reply.answered + ' answered so far; the last counts).';
          } catch (e) { said.textContent = 'Not sent: check the connection and tap again.'; }
        });
        row.appendChild(b);
      });
      box.append(question, row, said);
    }
    box.hidden = false; ahead(true);
  };
  // the page's own view has followed (its status names the step, at the version shown or later): the box goes
  setInterval(() => {
    const box = document.getElementById('class-now-box');
    if (!box || box.hidden) return;
    const mark = document.querySelector('#class-status [data-class-code]');
    if (!mark || (mark.dataset.classStep === box.dataset.step
                  && Number(mark.dataset.classVersion) >= Number(box.dataset.version))) {
      box.hidden = true; ahead(false);
    }
  }, 250);
  let code = null, since = -1, step = null, pending = false;
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
        if (here !== step) { pending = true; show(code); }
        step = here;
        // the page's own round trip, spread over the class: the server meets a hall's pages a few at a time
        await sleep(Math.random() * Math.min(SPREAD_MAX_MS, SPREAD_PER_STUDENT_MS * (reply.students || 1)));
        press(pending ? 'class-step' : 'class-tick');
        pending = false;
      }
    }
  })();
}""".replace("__PER__", str(SPREAD_PER_STUDENT_MS)).replace("__MAX__", str(SPREAD_MAX_MS)) \
    .replace("__PASS__", STUDENT_PASS)

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
