"""Many simultaneous clients, each with its own sentence; and what happens past a queue limit."""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from gradio_client import Client
from gradio_client.utils import QueueError

from bench import measure


_THREADS: dict[tuple[int, int], int] = {}  # (pid, thread id) -> its CPU ns when last read
_ENDED: dict[int, int] = {}  # pid -> CPU ns of its threads that have ended since the first read


def cpu_seconds(pid: int) -> float:
    """CPU time a process (Linux) has used so far, all its threads together, in nanoseconds from the
    scheduler (/proc/PID/task/*/schedstat). /proc/PID/stat counts in clock ticks (10 ms), as long as a
    /ping: read before and after each call, its rounding swung the per-call figures by a tenth from run to
    run. A thread that has ended keeps counting with what it had used when last read: Gradio's worker
    threads end after 10 s idle, and their time must not vanish from a sum taken across their end."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tasks = []
    now = {}
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                now[int(task)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            continue
    if not now:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # no schedstat: ticks
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    for (owner, tid), ns in list(_THREADS.items()):
        if owner == pid and (tid not in now or now[tid] < ns):  # ended (or its id reused by a new thread)
            _ENDED[pid] = _ENDED.get(pid, 0) + ns
            del _THREADS[(owner, tid)]
    _THREADS.update({(pid, tid): ns for tid, ns in now.items()})
    return (sum(now.values()) + _ENDED.get(pid, 0)) / 1e9


def simultaneous(url: str, api_name: str, argument_lists: list[list], timeout: float = 600,
                 server_pid: int | None = None) -> dict:
    """One gradio_client per caller, all released at once by a barrier; each call's wall time,
    the errors by type, and how many never answered within `timeout`. With server_pid, also the
    CPU seconds the server used from the release until the last answer (connecting excluded)."""
    clients = [Client(url, verbose=False) for _ in argument_lists]  # connecting is not timed
    barrier = threading.Barrier(len(clients))

    def one(index: int):
        barrier.wait()
        start = time.perf_counter()
        try:
            job = clients[index].submit(*argument_lists[index], api_name=api_name)
            job.result(timeout=timeout)
            return "ok", time.perf_counter() - start, ""
        except QueueError as e:
            return "QueueError", time.perf_counter() - start, str(e)
        except TimeoutError as e:
            return "no answer", time.perf_counter() - start, str(e)
        except Exception as e:  # anything else is an error the visitor would see
            return type(e).__name__, time.perf_counter() - start, str(e)[:200]

    cpu_start = cpu_seconds(server_pid) if server_pid else None
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(clients)) as pool:
        outcomes = list(pool.map(one, range(len(clients))))
    total = time.perf_counter() - start
    server_cpu = round(cpu_seconds(server_pid) - cpu_start, 2) if server_pid else None
    for client in clients:
        client.close()
    errors: dict[str, int] = {}
    for kind, _, _ in outcomes:
        if kind != "ok":
            errors[kind] = errors.get(kind, 0) + 1
    return dict(clients=len(clients), answered=sum(k == "ok" for k, _, _ in outcomes), errors=errors,
                seconds_ok=[s for k, s, _ in outcomes if k == "ok"],
                seconds_refused=[s for k, s, _ in outcomes if k != "ok"],
                messages=sorted({m for k, _, m in outcomes if k != "ok"})[:3], total_s=round(total, 2),
                server_cpu_s=server_cpu)


def summarised(crowd: dict) -> dict:
    """simultaneous()'s result with the answered calls' times as p50/p95/max (measure.summary)."""
    crowd = dict(crowd)
    crowd.pop("seconds_refused")
    seconds = crowd.pop("seconds_ok")
    return {**crowd, **(measure.summary(seconds) if seconds else {})}


def crowd(url: str, api_name: str, argument_lists: list[list], timeout: float = 600,
          server_pid: int | None = None) -> dict:
    """A class at once: one call per argument list, all sent together over plain HTTP (POST
    /gradio_api/call/<api>, then its event stream: the queue and session each browser gets), from one
    asyncio loop, so that 300 clients cost this process little of the two cores the server runs on
    (300 gradio_clients, a thread each, took more CPU than the server did). Each call's wall time, the
    errors by kind, and the server's RSS before, at its highest during the crowd (read every 50 ms), and
    after; with server_pid, its CPU seconds from the first call to the last answer."""
    import asyncio

    import httpx

    from bench.measure import rss_mb

    api = api_name.lstrip("/")

    async def one(http: httpx.AsyncClient, data: list, start: asyncio.Event):
        await start.wait()
        began = time.perf_counter()
        try:
            posted = await http.post(f"gradio_api/call/{api}", json={"data": data})
            if posted.status_code != 200:
                return f"HTTP {posted.status_code}", time.perf_counter() - began, posted.text[:200]
            event_id = posted.json()["event_id"]
            async with http.stream("GET", f"gradio_api/call/{api}/{event_id}") as stream:
                body = (await stream.aread()).decode("utf-8", errors="replace")
            if "event: complete" in body:
                return "ok", time.perf_counter() - began, ""
            kind = "QueueError" if "Queue is full" in body else "error"
            return kind, time.perf_counter() - began, body[-200:]
        except httpx.TimeoutException as e:
            return "no answer", time.perf_counter() - began, str(e)[:200]
        except Exception as e:  # anything else is an error the visitor would see
            return type(e).__name__, time.perf_counter() - began, str(e)[:200]

    async def everyone():
        limits = httpx.Limits(max_connections=len(argument_lists) * 2, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as http:
            start = asyncio.Event()
            calls = [asyncio.create_task(one(http, data, start)) for data in argument_lists]
            await asyncio.sleep(0.2)  # every task waiting at the gate
            start.set()
            return await asyncio.gather(*calls)

    highest, done = [rss_mb(server_pid) if server_pid else None], threading.Event()

    def watch():
        while server_pid and not done.wait(0.05):
            highest.append(rss_mb(server_pid))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    cpu_start = cpu_seconds(server_pid) if server_pid else None
    began = time.perf_counter()
    outcomes = asyncio.run(everyone())
    total = time.perf_counter() - began
    server_cpu = round(cpu_seconds(server_pid) - cpu_start, 2) if server_pid else None
    done.set()
    watcher.join()
    errors: dict[str, int] = {}
    for kind, _, _ in outcomes:
        if kind != "ok":
            errors[kind] = errors.get(kind, 0) + 1
    rss = dict(rss_before_mb=highest[0], rss_highest_mb=max(highest), rss_after_mb=rss_mb(server_pid)) \
        if server_pid else {}
    return dict(clients=len(outcomes), answered=sum(k == "ok" for k, _, _ in outcomes), errors=errors,
                seconds_ok=[s for k, s, _ in outcomes if k == "ok"],
                seconds_refused=[s for k, s, _ in outcomes if k != "ok"],
                messages=sorted({m for k, _, m in outcomes if k != "ok"})[:3], total_s=round(total, 2),
                server_cpu_s=server_cpu, **rss)


def class_of(clients: int = 300) -> dict:
    """`python -m bench.load [CLIENTS]`: the app started as app.py starts it, and `clients` students at once, each
    asking /analyze (lm) for a 32-token sentence of their own, then as many asking /ping (which does nothing);
    what `make bench` measures in its section on simultaneous clients, on its own."""
    from bench.sentences import sentence
    from harness.live_app import ARTIFACTS, Endpoints, live_app
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    with live_app(ARTIFACTS / "logs" / "bench_class.log") as app:
        client = app.client()
        endpoints = Endpoints(client)
        args = lambda text: endpoints.args("/analyze", text=text, name="lm", kind=None)
        measure.timed_calls(client, "/analyze", [args(sentence(lm, 16, seed=s)) for s in range(2)])  # warm up
        analyze = summarised(crowd(app.url, "/analyze", [args(sentence(lm, 32, seed=5000 + i)) for i in range(clients)],
                                   server_pid=app.process.pid))
        ping = summarised(crowd(app.url, "/ping", [[] for _ in range(clients)], server_pid=app.process.pid))
    return dict(load=analyze, load_ping=ping)


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(class_of(int(sys.argv[1]) if len(sys.argv) > 1 else 300), indent=1))
