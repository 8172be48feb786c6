"""A class of 300 following pages, with the page's own Gradio requests (python -m bench.class_pages; `make bench`
runs it with bench/classroom.py).

bench/classroom.py measures the cheap path (the long poll and /class_answer). A real following page does more on a
step change, and this measures that, each simulated page sending what the page sends, through the same HTTP calls:
it has joined as a page does (the page load's load_settings and class_load, with its own Gradio session, which hands
it its signed pass) and waits on /class/wait. When the lecturer moves, its script
(ui/classroom/script.py) fetches /class/step and shows the step at once (its text and the question's answers to tap,
written by the script; "shown" is when that reply is in: the page's drawing of a few paragraphs and buttons is not
simulated). The student reads for 1-5 s and taps one of those answers (POST /class/answer with the page's pass).
Meanwhile, after a wait spread as the script spreads it (20 ms a student, at most 6 s), the page's own view follows:
class_step (POST /gradio_api/run/predict: the view's controls, the lesson player and the student panel; "followed"),
then the redraw of the step's views, redraw_after_class_step (POST /gradio_api/queue/join and the session's event
stream /gradio_api/queue/data, through Gradio's queue; "drawn"). The page's other requests after a step change (the
link box, a tab's select, visibility) are bookkeeping of a few ms each and are not replayed.

The server runs in this process (its views' cache, classroom.once, counts what it computed); the 300 pages run in
a second process (multiprocessing, spawn), so that their requests cost this one only what they cost a server.
Measured: errors, the count exact, each page's time from the move to showing the new step, to its own view
following and to its views drawn, the last answer in, how many times the step's views were computed, and server CPU.
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from ui.classroom import script

PAGES = 300
LESSON, STEP = "causal-mask", 2  # step 1 asks nothing; step 2 asks a token question
SPREAD_PER_STUDENT_S = script.SPREAD_PER_STUDENT_MS / 1000  # the page's own round trip, spread as its script does
SPREAD_MAX_S = script.SPREAD_MAX_MS / 1000
THINK_S = (1.0, 5.0)  # a student reads the question before tapping: spread evenly over these seconds
TARGETS = {"follow_s": 3.0, "within_s": 10.0}
JOINING_AT_ONCE = 16  # pages joining before the move (not timed): a hall's pages load over minutes


async def _send(url: str, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
    """One HTTP/1.0 request on its own connection (answered close-delimited, so an event stream reads as lines)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps(body).encode() if body is not None else b""
    writer.write(f"{method} /{path} HTTP/1.0\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), payload


async def _run(url: str, fn: int, data: list, session: str, query: str) -> list:
    status, payload = await _send(url, "POST", f"gradio_api/run/predict?{query}",
                                  {"data": data, "fn_index": fn, "session_hash": session, "event_data": None})
    reply = json.loads(payload or b"null")
    if status != 200 or not isinstance(reply, dict) or "data" not in reply:
        raise RuntimeError(f"run {fn}: {status} {str(reply)[:100]}")
    return reply["data"]


async def _queued(url: str, fn: int, data: list, session: str, query: str) -> int:
    """A queued event as the page sends it: join, then read the session's stream until it is complete; the number of
    updates it streamed (one a view drawn)."""
    status, payload = await _send(url, "POST", f"gradio_api/queue/join?{query}",
                                  {"data": data, "fn_index": fn, "session_hash": session, "event_data": None})
    if status != 200:
        raise RuntimeError(f"join {fn}: {status} {payload[:100]!r}")
    event = json.loads(payload)["event_id"]
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(f"GET /gradio_api/queue/data?session_hash={session} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n"
                 .encode())
    await writer.drain()
    updates = 0
    try:
        while line := await reader.readline():
            if not line.startswith(b"data:"):
                continue
            message = json.loads(line[5:])
            if message.get("event_id") != event:
                continue
            if message.get("msg") == "process_generating":
                updates += 1
            if message.get("msg") == "process_completed":
                if not message.get("success"):
                    raise RuntimeError(f"redraw: {str(message.get('output'))[:100]}")
                return updates
    finally:
        writer.close()
    raise RuntimeError("redraw: the stream ended before the event completed")



def tally(outcomes: list[dict]) -> tuple[list[dict], list[str], dict[str, int]]:
    """(the students that got through, the errors of the others, each choice's count as sent): what both class benches
    check against the server's own count."""
    good = [o for o in outcomes if "error" not in o]
    sent: dict[str, int] = {}
    for o in good:
        sent[o["choice"]] = sent.get(o["choice"], 0) + 1
    return good, [o["error"] for o in outcomes if "error" in o], sent

def _held(layout: dict, held: dict, outputs: str, data: list) -> None:
    """What the page holds once an event's answer is applied: each output's new value (an update's "value")."""
    for component, value in zip(layout[outputs], data):
        if isinstance(value, dict) and str(value.get("__type__", "")) == "update":
            if "value" in value:
                held[component] = value["value"]
        else:
            held[component] = value


async def _pages(url: str, code: str, fns: dict, layout: dict, pages: int, ready) -> list:
    query = f"class={code}"
    joining = asyncio.Semaphore(JOINING_AT_ONCE)

    async def page(n: int) -> dict:
        session = f"bench{n:04d}{random.randrange(10**6):06d}"
        try:
            held = dict(layout["defaults"])
            async with joining:  # the page load's two events: the view of the class's step, the class's panel
                _held(layout, held, "load_settings", await _run(url, fns["load_settings"], [], session, query))
                loaded = await _run(url, fns["class_load"], ["", ""], session, query)
            token = loaded[0]
            status, first = await _send(url, "GET", f"class/wait?code={code}&since=-1")
            version = json.loads(first)["version"]
            ready.put(n)
            while True:  # as the page's script: a wait that ends unchanged (after route.WAIT_S) is sent again
                status, payload = await _send(url, "GET", f"class/wait?code={code}&since={version}")
                follow = json.loads(payload)
                if status != 200 or follow.get("version", version) > version:
                    break
            woken = time.time()
            if status != 200 or follow.get("step") != STEP:
                return {"error": f"wait: {status} {payload[:80]!r}"}
            # the page's script shows the step at once: its text and the question's answers, from /class/step
            status, payload = await _send(url, "GET", f"class/step?code={code}")
            now = json.loads(payload)
            if status != 200 or now.get("step") != STEP or not now.get("text") or not now.get("choices"):
                return {"error": f"step: {status} {payload[:80]!r}"}
            shown = time.time()
            choice = now["choices"][n % len(now["choices"])]

            async def answer() -> float:  # the student reads the question, then taps one of the answers shown
                await asyncio.sleep(THINK_S[0] + (THINK_S[1] - THINK_S[0]) * n / max(1, pages - 1))
                status, payload = await _send(url, "POST", "class/answer", {"code": code, "pass": token,
                                                                           "answer": choice})
                if status != 200 or not json.loads(payload).get("accepted"):
                    raise RuntimeError(f"answer: {status} {payload[:80]!r}")
                return time.time()

            async def view() -> tuple[float, float, int]:  # meanwhile the page's own view follows, spread
                await asyncio.sleep(random.random() * min(SPREAD_MAX_S, SPREAD_PER_STUDENT_S * follow["students"]))
                _held(layout, held, "class_step", await _run(url, fns["class_step"], [code, token, False, False],
                                                             session, query))
                followed = time.time()
                drawn_views = await _queued(url, fns["redraw_after_class_step"],
                                            [held.get(c) for c in layout["redraw_after_class_step"]], session, query)
                return followed, time.time(), drawn_views

            answered, (followed, drawn, drawn_views) = await asyncio.gather(answer(), view())
            return {"woken": woken, "shown": shown, "followed": followed, "drawn": drawn, "views": drawn_views,
                    "choice": choice, "answered": answered}
        except Exception as e:  # anything a page would see as a failure
            return {"error": f"{type(e).__name__}: {e}"[:160]}

    tasks = [asyncio.ensure_future(page(n)) for n in range(pages)]
    return await asyncio.gather(*tasks)


def _pages_process(url, code, fns, layout, pages, ready, results) -> None:
    results.put(asyncio.run(_pages(url, code, fns, layout, pages, ready)))


def _layout(demo, names) -> dict:
    """The page's components as its events name them: their first values, and each event's outputs or inputs."""
    def first(component):
        try:
            return json.loads(json.dumps(getattr(component, "value", None)))
        except (TypeError, ValueError):
            return None
    events = {f.api_name: f for f in demo.fns.values() if f.api_name in names}
    layout = {"defaults": {c._id: first(c) for f in events.values() for c in (*f.inputs, *f.outputs)}}
    for name in ("load_settings", "class_step"):
        layout[name] = [c._id for c in events[name].outputs]
    layout["redraw_after_class_step"] = [c._id for c in events["redraw_after_class_step"].inputs]
    return layout


def run(pages: int = PAGES) -> dict:
    import app
    from bench.load import cpu_seconds
    from harness.live_app import free_port

    folder = tempfile.mkdtemp()
    demo = app.build_demo(classes=Path(folder) / "classes.sqlite3")
    port = free_port()
    demo.queue(**app.queue_options()).launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **app.launch_options(demo))
    url = f"http://127.0.0.1:{port}/"
    try:
        classes = demo.classes
        opened = classes.open(LESSON, url)
        code, key = opened["code"], opened["key"]
        classes.step_of(LESSON, STEP)  # the lecturer's page has opened the step before moving the class there
        demo.registry.get(classes.step_of(LESSON, STEP).settings.get("model", "lm"))  # its model loaded
        names = ("load_settings", "class_load", "class_step", "redraw_after_class_step", "class_answer_page")
        fns = {f.api_name: i for i, f in demo.fns.items() if f.api_name in names}
        layout = _layout(demo, names)
        context = multiprocessing.get_context("spawn")
        ready, results = context.Queue(), context.Queue()
        worker = context.Process(target=_pages_process, args=(url, code, fns, layout, pages, ready, results))
        worker.start()
        for _ in range(pages):
            ready.get(timeout=900)
        deadline = time.time() + 60
        while classes.board.waiting(code) < pages and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)
        computed, cpu = demo.classroom.views.computed, cpu_seconds(os.getpid())
        start = time.time()
        classes.drive(code, key, LESSON, STEP)
        outcomes = results.get(timeout=900)
        worker.join(timeout=60)
        cpu = round(cpu_seconds(os.getpid()) - cpu, 2)
        views = demo.classroom.views.computed - computed
        counted = classes.results(code, key)
    finally:
        demo.close()
    good, errors, sent = tally(outcomes)
    shown = sorted(o["shown"] - start for o in good)
    followed = sorted(o["followed"] - start for o in good)
    drawn = sorted(o["drawn"] - start for o in good)
    per_page = sorted({o["views"] for o in good})

    def at(xs, q):
        return round(xs[min(len(xs) - 1, int(q * len(xs)))], 2) if xs else None

    return {
        "pages": pages, "errors": len(errors), "error_examples": errors[:3],
        "students": counted["students"], "answered": counted["answered"],
        "count_exact": counted["answered"] == counted["students"] == len(good) == pages
        and all(counted["answers"].get(c, 0) == n for c, n in sent.items()),
        "step_shown_p50_s": at(shown, 0.5), "step_shown_max_s": at(shown, 1.0),
        "view_followed_p50_s": at(followed, 0.5), "view_followed_max_s": at(followed, 1.0),
        "views_drawn_p50_s": at(drawn, 0.5), "views_drawn_max_s": at(drawn, 1.0),
        "last_answer_s": round(max(o["answered"] for o in good) - start, 2) if good else None,
        "views_per_page": per_page, "views_computed": views,
        "computed_once": len(per_page) == 1 and views == per_page[0],
        "server_cpu_s": cpu, "spread_s": min(SPREAD_MAX_S, SPREAD_PER_STUDENT_S * pages),
    }


def met(figures: dict) -> bool:
    return bool(figures["errors"] == 0 and figures["count_exact"] and figures["computed_once"]
                and figures["step_shown_max_s"] is not None and figures["step_shown_max_s"] <= TARGETS["follow_s"]
                and figures["last_answer_s"] <= TARGETS["within_s"])


if __name__ == "__main__":
    figures = run(int(sys.argv[1]) if len(sys.argv) > 1 else PAGES)
    figures["met"] = met(figures)
    print(json.dumps(figures, indent=2))
    sys.exit(0 if figures["met"] else 1)
