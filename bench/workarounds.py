"""python -m bench.workarounds [--rounds N] [--block B] [--fill N] VARIANT ...: what a workaround of ui/runtime saves
today, in server CPU per /analyze at 32 tokens on lm, measured with and without it in one run.

Starts app.py's server once as it ships ("with") and once per VARIANT with one workaround switched off before the app
is built (a launcher that patches the module, so the code measured is today's and nothing is copied), then takes
turns: each round gives every server a /ping and an /analyze of the same new sentence, in a shuffled order, reading
each server's CPU from /proc (bench.load.cpu_seconds). Rounds are grouped in blocks of B; a block's mean per server
is one sample, and a variant's cost is its difference from "with" block by block (paired: both saw the machine at
the same speed). Prints, per server, the median /analyze and /ping CPU over blocks with the spread (the lowest and
highest block), and per variant the median paired difference with its spread, in ms and in % of "with"'s /analyze.

--fill N first sends N /ping calls over plain HTTP to every server (Gradio's queue analytics grow with the events
served: the env variant is only fair on a server that has served a lecture's worth).

Variants (see ui/runtime/README.md):
    no_read_here      wire.Blocks._read_here off: each input's preprocess in a worker thread of its own
    no_event_loop     events.on_event_loop never runs a call on the event loop: every handler in a worker thread
    no_env            Gradio's own queue analytics settings (10,000 events, summarised after every event)

The launcher also switches off, for bench/workarounds_more.py, whose measures are not /analyze's server CPU:
no_memory (memory.limit_allocator, trim_regularly), no_assets (assets.CompressedAssets), no_draw_once
(draw_once.DRAW_ONCE_JS) and no_sessions (sessions.keep_no_output_values).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request

from bench import server_cpu
from bench.server_cpu import warm_up
from harness.live_app import ARTIFACTS, Endpoints, live_app

# app.py's main() with one workaround off; argv[1] names it ("with": none)
LAUNCHER = r"""
import os, sys
variant = sys.argv[1]
OTHER = ("no_memory", "no_assets", "no_draw_once", "no_sessions")  # measured by bench.workarounds_more
if variant == "no_env":  # Gradio's defaults, which env.apply() (setdefault) then leaves alone
    os.environ.update(GRADIO_ANALYTICS_MAX_EVENTS="10000", GRADIO_ANALYTICS_CACHE_FREQUENCY="1")
from ui.runtime import env
env.apply()
from ui.runtime import memory
if variant == "no_memory":  # glibc's own arenas and threshold, never trimmed (app.py calls both)
    memory.limit_allocator = lambda: False
    memory.trim_regularly = lambda *args, **kwargs: None
memory.limit_allocator()
from ui.runtime import assets, draw_once, events, sessions, wire
if variant == "no_assets":  # Gradio compresses every file for every request, and never the page
    class Passing:
        def __init__(self, app):
            self.app = app
        async def __call__(self, scope, receive, send):
            await self.app(scope, receive, send)
    assets.CompressedAssets = Passing
elif variant == "no_draw_once":
    draw_once.DRAW_ONCE_JS = "() => {}"
elif variant == "no_sessions":  # Gradio's sessions: every component's configuration and last value kept
    sessions.keep_no_output_values = lambda: None
elif variant == "no_read_here":
    wire.read_here = lambda block_fn: False
elif variant == "no_event_loop":
    original = events.on_event_loop
    events.on_event_loop = lambda answer, quick, name, read=(lambda values: values): original(
        answer, lambda *values: False, name, read)
elif variant not in ("with", "no_env", *OTHER):
    raise SystemExit(f"unknown variant {variant}")
import app
app.main([])
"""
VARIANTS = ("no_read_here", "no_event_loop", "no_env")


def fill(url: str, n: int) -> None:
    """n /ping calls over plain HTTP (gradio_client would add its own cost): events for the queue's analytics."""
    for _ in range(n):
        request = urllib.request.Request(url + "gradio_api/call/ping", data=b'{"data": []}',
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            event = json.load(response)["event_id"]
        with urllib.request.urlopen(f"{url}gradio_api/call/ping/{event}", timeout=60) as response:
            response.read()


def spread(values: list[float]) -> dict:
    return dict(median=round(statistics.median(values), 2), low=round(min(values), 2), high=round(max(values), 2))


def measure(servers: dict, lm, rounds: int, block: int) -> dict:
    """Per server, block means of /analyze and /ping CPU (ms), rounds taking turns in a shuffled order."""
    samples = {name: dict(analyze=[], ping=[]) for name in servers}
    per_round = {name: [(0.0, 0.0)] * rounds for name in servers}
    for i, name, ping, analyze in server_cpu.rounds(servers, lm, rounds):
        per_round[name][i] = (analyze, ping)
    for name, calls in per_round.items():
        for start in range(0, rounds - block + 1, block):  # whole blocks only
            chunk = calls[start:start + block]
            samples[name]["analyze"].append(1000 * sum(a for a, _ in chunk) / block)
            samples[name]["ping"].append(1000 * sum(p for _, p in chunk) / block)
    return samples


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("variants", nargs="+", choices=VARIANTS)
    parser.add_argument("--rounds", type=int, default=120, help="rounds (default 120)")
    parser.add_argument("--block", type=int, default=10, help="rounds per sample (default 10)")
    parser.add_argument("--fill", type=int, default=0, help="/ping calls sent to every server first (default 0)")
    args = parser.parse_args(argv)
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    start_load = [round(x, 2) for x in os.getloadavg()]
    started = time.monotonic()
    names = ["with", *args.variants]
    apps, servers = {}, {}
    try:
        for name in names:
            apps[name] = live_app(ARTIFACTS / "logs" / f"bench_workarounds_{name}.log",
                                  command=[sys.executable, "-c", LAUNCHER, name])
            app = apps[name].__enter__()
            client = app.client()
            endpoints = Endpoints(client)
            analyze_args = lambda text, endpoints=endpoints: endpoints.args("/analyze", text=text, name="lm", kind=None)
            fill(app.url, args.fill)
            warm_up(client, analyze_args, lm)
            servers[name] = (client, app.process.pid, analyze_args)
        samples = measure(servers, lm, args.rounds, args.block)
    finally:
        for context in apps.values():
            context.__exit__(None, None, None)
    base = samples["with"]["analyze"]
    result = {name: dict(analyze_ms=spread(s["analyze"]), ping_ms=spread(s["ping"]),
                         ratio=spread([a / p for a, p in zip(s["analyze"], s["ping"])])) for name, s in samples.items()}
    for name in args.variants:
        paired = [v - b for v, b in zip(samples[name]["analyze"], base)]
        result[name]["saves_ms"] = spread(paired)
        result[name]["saves_percent"] = spread([100 * d / b for d, b in zip(paired, base)])
    print(json.dumps(dict(result, rounds=args.rounds, block=args.block, fill=args.fill,
                          load_average_at_start=start_load, load_average_at_end=[round(x, 2) for x in os.getloadavg()],
                          minutes=round((time.monotonic() - started) / 60, 1),
                          date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())), indent=1))


if __name__ == "__main__":
    main()
