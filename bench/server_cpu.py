"""python -m bench.server_cpu [--calls N] [--profile FILE] [--against CHECKOUT]: the server CPU per /analyze
against a /ping at 32 tokens on lm, alone (a minute or two instead of a whole `make bench`), measured as
`make bench` measures it.

Starts the app as app.py starts it (harness.live_app), warms it up, then calls /ping and /analyze one at a time
and alternating, each /analyze with a new 32-token sentence, reading the server's CPU seconds from /proc.

--against CHECKOUT also starts that checkout's app.py (another worktree: the code before a change) and takes
turns between the two servers, call by call, so that both ratios see the same machine: on a shared machine the
speed drifts by more than most changes save, and only ratios measured side by side compare.

--profile FILE runs the same server under yappi (CPU clock, every thread; yappi must be importable, e.g. from a
folder on PYTHONPATH: it is not one of the app's requirements), profiles only the measured calls and saves
pstats to FILE (`python -m pstats FILE`). The profiler slows every call: its ratio is not the one to report.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import time
from pathlib import Path

from bench import load, measure
from bench.sentences import sentence
from harness.live_app import ARTIFACTS, Endpoints, live_app

CALLS = 60  # what make bench makes of each

# app.py's main() under yappi, started and stopped by signals so that the start-up and warm-up stay out of it
PROFILED_APP = """
import signal, sys, yappi
import app

def start(*_):
    yappi.clear_stats()
    yappi.set_clock_type("cpu")
    yappi.start(builtins=True)

def stop(*_):
    yappi.stop()
    yappi.get_func_stats().save(sys.argv[1], type="pstat")
    print("profile saved", flush=True)

signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
app.main([])
"""


def server_cpu_per_call(client, pid: int, analyze_args, lm, n: int) -> dict:
    """CPU seconds the server spends on one /analyze at 32 tokens and on one /ping, calls one at a time
    and alternating (the machine's speed drifts), read from /proc: what a lecture hall costs per student."""
    analyze = ping = 0.0
    for i in range(n):
        args = analyze_args(sentence(lm, 32, seed=9000 + i))  # made first: the idle server's polling meanwhile is no call's
        before = load.cpu_seconds(pid)
        client.predict(api_name="/ping")
        middle = load.cpu_seconds(pid)
        client.predict(*args, api_name="/analyze")
        ping += middle - before
        analyze += load.cpu_seconds(pid) - middle
    return dict(calls=n, analyze_ms=round(1000 * analyze / n, 1), ping_ms=round(1000 * ping / n, 1))


def rounds(servers: dict, lm, n: int):
    """(round, name, ping CPU s, analyze CPU s) for each of several servers (name -> (client, pid, analyze_args)),
    taking turns call by call: each round gives every server a /ping and an /analyze of the same new sentence, in a
    shuffled order (the server called first in a round was measured ~5% cheaper or dearer than the other, run after
    run)."""
    for i in range(n):
        text = sentence(lm, 32, seed=9000 + i)
        turns = list(servers.items())
        random.Random(i).shuffle(turns)
        for name, (client, pid, analyze_args) in turns:
            before = load.cpu_seconds(pid)
            client.predict(api_name="/ping")
            middle = load.cpu_seconds(pid)
            client.predict(*analyze_args(text), api_name="/analyze")
            yield i, name, middle - before, load.cpu_seconds(pid) - middle


def side_by_side(servers: dict, lm, n: int) -> dict:
    """server_cpu_per_call for each of several servers, taking turns call by call (`rounds`)."""
    totals = {name: dict(analyze=0.0, ping=0.0) for name in servers}
    for _, name, ping, analyze in rounds(servers, lm, n):
        totals[name]["ping"] += ping
        totals[name]["analyze"] += analyze
    return {name: dict(calls=n, analyze_ms=round(1000 * t["analyze"] / n, 1), ping_ms=round(1000 * t["ping"] / n, 1),
                       ratio=round(t["analyze"] / t["ping"], 3)) for name, t in totals.items()}


def warm_up(client, analyze_args, lm) -> None:
    """The first calls pay for imports, caches and code paths not yet run: make bench measures after its
    latency section (a hundred calls); a handful of each is enough to reach the same figures."""
    measure.timed_calls(client, "/analyze", [analyze_args(sentence(lm, n, seed=s)) for s in range(4) for n in (16, 32)])
    measure.timed_calls(client, "/ping", [[] for _ in range(8)])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=CALLS, help=f"calls of each (default {CALLS})")
    parser.add_argument("--profile", type=Path, help="save a yappi profile (pstats) of the measured calls here")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="another checkout whose app.py is measured beside this one, calls taking turns")
    args = parser.parse_args(argv)
    if args.against:
        return compare(args.against.resolve(), args.calls)
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    command = [sys.executable, "-c", PROFILED_APP, str(args.profile.resolve())] if args.profile else None
    start_load = [round(x, 2) for x in os.getloadavg()]
    with live_app(ARTIFACTS / "logs" / "bench_server_cpu.log", command=command) as app:
        client = app.client()
        endpoints = Endpoints(client)
        analyze_args = lambda text: endpoints.args("/analyze", text=text, name="lm", kind=None)
        warm_up(client, analyze_args, lm)
        if args.profile:
            os.kill(app.process.pid, signal.SIGUSR1)
            time.sleep(0.5)
        cpu = server_cpu_per_call(client, app.process.pid, analyze_args, lm, args.calls)
        if args.profile:
            os.kill(app.process.pid, signal.SIGUSR2)
            deadline = time.monotonic() + 60
            while "profile saved" not in app.log_text() and time.monotonic() < deadline:
                time.sleep(0.2)
    cpu.update(ratio=round(cpu["analyze_ms"] / cpu["ping_ms"], 3), load_average_at_start=start_load,
               load_average_at_end=[round(x, 2) for x in os.getloadavg()],
               date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), profiled=bool(args.profile))
    print(json.dumps(cpu))


def compare(other: Path, calls: int) -> None:
    """This checkout's server and `other`'s side by side (side_by_side), both warmed up first."""
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    start_load = [round(x, 2) for x in os.getloadavg()]
    logs = ARTIFACTS / "logs"
    with live_app(logs / "bench_server_cpu.log") as here, \
            live_app(logs / "bench_server_cpu_against.log", command=[sys.executable, str(other / "app.py")]) as there:
        servers = {}
        for name, app in (("this checkout", here), (str(other), there)):
            client = app.client()
            endpoints = Endpoints(client)
            analyze_args = lambda text, endpoints=endpoints: endpoints.args("/analyze", text=text, name="lm", kind=None)
            warm_up(client, analyze_args, lm)
            servers[name] = (client, app.process.pid, analyze_args)
        results = side_by_side(servers, lm, calls)
    print(json.dumps(dict(results, load_average_at_start=start_load,
                          load_average_at_end=[round(x, 2) for x in os.getloadavg()],
                          date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))))


if __name__ == "__main__":
    main()
