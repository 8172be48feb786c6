"""A class of 300: every student follows the lecturer's step change and answers its question (python -m
bench.classroom; `make bench` runs it with the rest).

1. Over HTTP, against the real app (`python app.py`): 300 simulated phones wait on /class/wait (the plain long-poll
   route, ui/classroom/route.py), the lecturer moves the class to a step with a question (/class_drive), and each
   phone, when its wait answers, posts one answer (/class_answer, which skips Gradio's queue). Measured: errors,
   whether the lecturer's count is exact, each phone's time from the move to seeing the new step, and the time
   until the last answer is in.
2. In one process, the page's own redraw after a follower opens the step (the event redraw_after_class_step, as a
   following page runs it) for 300 followers on 8 threads: how many times the step's views are computed (once each,
   shared through ctx.shared_redraws) against how many views the step's tab draws.
3. Over HTTP, 300 following pages that send what the page sends on the step change (the step shown at once from
   /class/step, the answer tapped there, then the page's own class_step and the queued redraw of the step's views):
   bench/class_pages.py.
"""
from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from urllib.parse import urlsplit

from bench import class_pages
from bench.load import cpu_seconds
from harness.classroom import follower_redraw
from harness.live_app import ARTIFACTS, live_app

STUDENTS = 300
LESSON, STEP = "causal-mask", 2  # step 2 asks a token question
TARGETS = {"within_s": 10.0, "follow_s": 3.0}
THINK_S = (1.0, 5.0)  # a student reads the question before tapping: spread evenly over these seconds


async def request(url: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    """One HTTP/1.1 request on its own connection, written by hand: a phone costs the server what it costs, and the
    bench's 300 phones cost this process little (httpx took about 4 ms of CPU a request here, more than the
    server's answer)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    data = json.dumps(body).encode() if body is not None else b""
    head = (f"{method} {parts.path.rstrip('/')}/{path} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
    writer.write(head.encode() + data)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    status_line, _, rest = answer.partition(b"\r\n")
    headers, _, payload = rest.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in headers.lower():
        payload = _unchunked(payload)
    return int(status_line.split()[1]), json.loads(payload or b"null")


def _unchunked(payload: bytes) -> bytes:
    out = b""
    while payload:
        size, _, payload = payload.partition(b"\r\n")
        length = int(size.split(b";")[0], 16)
        if not length:
            break
        out, payload = out + payload[:length], payload[length + 2:]
    return out


async def _class_of(url: str, students: int, server_pid: int | None) -> dict:
    from gradio_client import Client  # /class_open and /class_drive go through the queue, as a lecturer's do

    lecturer = Client(url, verbose=False)
    opened = await asyncio.to_thread(lecturer.predict, lesson=LESSON, api_name="/class_open")
    code, key = opened["code"], opened["key"]
    # the lecturer's page has opened the step before moving the class there: its claims are measured
    await asyncio.to_thread(lecturer.predict, lesson=LESSON, step=STEP, api_name="/lesson_step")
    _, first = await request(url, "GET", f"class/wait?code={code}&since=-1")
    sent_all, moved = asyncio.Event(), {}
    waiting = [0]

    async def student(n: int) -> dict:
        try:
            task = asyncio.ensure_future(request(url, "GET", f"class/wait?code={code}&since={first['version']}"))
            waiting[0] += 1
            if waiting[0] == students:
                sent_all.set()
            status, follow = await task
            seen = time.perf_counter()
            if status != 200 or follow.get("step") != STEP:
                return {"error": f"wait: {status} {str(follow)[:80]}"}
            choice = follow["choices"][n % len(follow["choices"])]
            await asyncio.sleep(THINK_S[0] + (THINK_S[1] - THINK_S[0]) * ((n * 37) % students) / students)
            status, answered = await request(url, "POST", "gradio_api/run/class_answer",
                                             {"data": [code, f"student-{n}", choice]})
            if status != 200 or not answered["data"][0]["accepted"]:
                return {"error": f"answer: {status} {str(answered)[:80]}"}
            return {"seen": seen, "answered": time.perf_counter(), "choice": choice}
        except Exception as e:  # anything a phone would see as a failure
            return {"error": f"{type(e).__name__}: {e}"[:120]}

    tasks = [asyncio.ensure_future(student(n)) for n in range(students)]
    await sent_all.wait()
    await asyncio.sleep(2.0)  # every request has reached the server and waits there
    server_cpu = cpu_seconds(server_pid) if server_pid else None
    start = time.perf_counter()
    await asyncio.to_thread(lecturer.predict, code=code, key=key, lesson=LESSON, step=STEP, api_name="/class_drive")
    moved["driven"] = time.perf_counter()
    outcomes = await asyncio.gather(*tasks)
    server_cpu = round(cpu_seconds(server_pid) - server_cpu, 2) if server_pid else None
    status, results = await request(url, "POST", "gradio_api/run/class_results", {"data": [code, key]})
    lecturer.close()
    good, errors, sent = class_pages.tally(outcomes)
    follow_s = sorted(o["seen"] - start for o in good)
    result = results["data"][0] if status == 200 else {}
    return {
        "students": students, "errors": len(errors), "error_examples": errors[:3],
        "answered": result.get("answered"), "count_exact": result.get("answered") == len(good) == students
        and all(result["answers"].get(c, 0) == n for c, n in sent.items()),
        "drive_s": round(moved["driven"] - start, 3),
        "first_seen_s": round(follow_s[0], 3) if follow_s else None,
        "follow_p50_s": round(follow_s[len(follow_s) // 2], 3) if follow_s else None,
        "follow_max_s": round(follow_s[-1], 3) if follow_s else None,
        "all_answered_s": round(max(o["answered"] for o in good) - start, 3) if good else None,
        "server_cpu_s": server_cpu, "think_s": list(THINK_S),
    }


def over_http(students: int = STUDENTS) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        env = {"ATTENTION_CLASSES": str(Path(folder) / "classes.sqlite3")}
        with live_app(ARTIFACTS / "logs" / "bench-classroom.log", env=env) as app:
            return asyncio.run(_class_of(app.url, students, app.process.pid))


def views_shared(students: int = STUDENTS) -> dict:
    """The page's redraw after class_step, run for `students` followers: the views computed, once each."""
    with tempfile.TemporaryDirectory() as folder:
        import app

        demo = app.build_demo(classes=Path(folder) / "classes.sqlite3")
        classes = demo.classes
        opened = classes.open(LESSON, "http://lecture-hall/")
        follow = classes.drive(opened["code"], opened["key"], LESSON, STEP)
        run, values = follower_redraw(demo, follow)
        computed_before = demo.classroom.views.computed

        def one(_):
            return run(values)

        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            sent = list(pool.map(one, range(students)))
        shared_s = time.perf_counter() - start
        views = demo.classroom.views.computed - computed_before
        start = time.perf_counter()
        demo.classroom.views.clear()
        one(0)  # one follower alone, nothing shared yet: what each would cost without sharing
        alone_s = time.perf_counter() - start
    return {"followers": students, "views_drawn_per_follower": sent[0], "views_computed": views,
            "computed_once": views == sent[0], "all_followers_s": round(shared_s, 3),
            "one_follower_unshared_s": round(alone_s, 3),
            "all_vs_unshared_ratio": round(shared_s / (alone_s * students), 3) if alone_s else None}


def run(students: int = STUDENTS) -> dict:
    http = over_http(students)
    views = views_shared(students)
    pages = class_pages.run(students)
    pages["met"] = class_pages.met(pages)
    met = (http["errors"] == 0 and http["count_exact"] and http["follow_max_s"] is not None
           and http["follow_max_s"] <= TARGETS["follow_s"] and http["all_answered_s"] <= TARGETS["within_s"]
           and views["computed_once"] and pages["met"])
    return {"http": http, "views": views, "pages": pages, "targets": TARGETS, "met": bool(met)}


if __name__ == "__main__":
    figures = run(int(sys.argv[1]) if len(sys.argv) > 1 else STUDENTS)
    print(json.dumps(figures, indent=2))
    sys.exit(0 if figures["met"] else 1)


def section(results: dict) -> list[str]:
    """The report's lines (bench/report.py), or none when the class was not measured."""
    figures = results.get("classroom")
    if not figures:
        return []
    http, views = figures["http"], figures["views"]
    verdict = "**met**" if figures["met"] else "**missed**"
    return [
        "", f"## A class of {http['students']} (bench/classroom.py)", "",
        f"{verdict}: {http['students']} simulated phones follow the lecturer's move to a step with a question and "
        f"answer it within {figures['targets']['within_s']:.0f} s, each seeing the new step within "
        f"{figures['targets']['follow_s']:.0f} s, with 0 errors, the count exact and the step's views computed once.",
        "",
        "| figure | measured |", "|---|---|",
        f"| errors | {http['errors']} |",
        f"| the lecturer's count | {http['answered']} ({'exact' if http['count_exact'] else 'NOT exact'}) |",
        f"| the move (/class_drive, through the queue) | {_s(http['drive_s'])} |",
        f"| a phone sees the new step: first, p50, last | {_s(http['first_seen_s'])}, {_s(http['follow_p50_s'])}, "
        f"{_s(http['follow_max_s'])} |",
        f"| the last answer in (each phone reads {http['think_s'][0]:.0f}–{http['think_s'][1]:.0f} s first) | "
        f"{_s(http['all_answered_s'])} |",
        f"| server CPU for the move, 300 replies and 300 answers | {http['server_cpu_s']} s |",
        f"| the page's redraw for {views['followers']} followers: views computed | {views['views_computed']} "
        f"(each follower draws {views['views_drawn_per_follower']}) |",
        f"| … its time for all, against one follower's unshared × {views['followers']} | "
        f"{_s(views['all_followers_s'])} vs {_s(views['one_follower_unshared_s'])} × {views['followers']}: "
        f"{views['all_vs_unshared_ratio']}× |",
        *_pages_lines(figures.get("pages")),
    ]


def _pages_lines(pages: dict | None) -> list[str]:
    """bench/class_pages.py's figures: the pages' own Gradio requests on the step change."""
    if not pages:
        return []
    return [
        "", f"{pages['pages']} following pages sending the page's own requests on the step change (bench/class_pages.py:"
        " /class/step shown by the page's script, the answer tapped there, the page's own class_step and queued "
        "redraw): " + ("**met**" if pages["met"] else "**missed**"), "",
        "| figure | measured |", "|---|---|",
        f"| errors | {pages['errors']} |",
        f"| the count | {pages['answered']} of {pages['students']} ({'exact' if pages['count_exact'] else 'NOT exact'}) |",
        f"| a page shows the new step (its text and answers, /class/step): p50, last | "
        f"{_s(pages['step_shown_p50_s'])}, {_s(pages['step_shown_max_s'])} |",
        f"| its own view follows (class_step answered): p50, last | {_s(pages.get('view_followed_p50_s'))}, "
        f"{_s(pages.get('view_followed_max_s'))} |",
        f"| its views drawn (the redraw through the queue): p50, last | {_s(pages['views_drawn_p50_s'])}, "
        f"{_s(pages['views_drawn_max_s'])} |",
        f"| the last answer in | {_s(pages['last_answer_s'])} |",
        f"| views computed (each page draws {pages['views_per_page']}) | {pages['views_computed']} |",
        f"| server CPU | {pages['server_cpu_s']} s |",
    ]


def _s(seconds) -> str:
    return "–" if seconds is None else f"{seconds:.2f} s"
