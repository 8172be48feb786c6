"""python -m bench.server_parts [--calls N] [CHECKOUT ...]: where the server's CPU goes in one /analyze at 32 tokens,
part by part, for this checkout and any others side by side (calls taking turns in a shuffled order).

Each server is app.py's, started with thread-CPU timers (time.thread_time_ns) around the parts of a call: the trace,
each view, writing the outputs, Gradio's reading and writing of them, the streams' compression. A timer counts the
thread it runs in: /analyze's handler runs on the event loop (ui.runtime.events.on_event_loop), so its parts are all
counted there. Timers add ~2 us each; the profile is of the code as it runs, not as a profiler slows it.
bench.server_cpu gives the whole figures without timers.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import time
from pathlib import Path

from bench import load
from bench.sentences import sentence
from bench.server_cpu import warm_up
from harness.live_app import ARTIFACTS, ROOT, Endpoints, live_app

# app.main() with the timers; SIGUSR1 zeroes them, SIGUSR2 writes them to argv[1] (name -> [ns, calls])
TIMED_APP = r"""
import functools, json, os, signal, sys, time
sys.path.insert(0, sys.argv[2])
os.chdir(sys.argv[2])
import app
import gradio.blocks, gradio.processing_utils
import ui.page.context as context, ui.runtime.streams as streams, ui.runtime.wire as wire, ui.tabs.attention as tab
import viz.tiles
from analysis.overview import HostViews
from model.cache import ByteLRU
from model.registry import ModelRegistry

spent = {}
def add(name, ns):
    total, calls = spent.get(name, (0, 0))
    spent[name] = (total + ns, calls + 1)
def timed(name, f, is_async=False):
    if is_async:
        async def run(*a, **k):
            start = time.thread_time_ns()
            try:
                return await f(*a, **k)
            finally:
                add(name, time.thread_time_ns() - start)
    else:
        def run(*a, **k):
            start = time.thread_time_ns()
            try:
                return f(*a, **k)
            finally:
                add(name, time.thread_time_ns() - start)
    return functools.wraps(f)(run)
compute = ModelRegistry.__dict__["_compute_trace"]
wrapped = timed("trace (forward pass, every step kept)", getattr(compute, "__func__", compute))
ModelRegistry._compute_trace = staticmethod(wrapped) if isinstance(compute, staticmethod) else wrapped
ByteLRU.put = timed("caches: sizing a new entry (nbytes)", ByteLRU.put)
tab.quick = timed("is it small work (tokenizes the text)", tab.quick)
tab.heads_grid = timed("every-head grid: pooled, figure, text alternative", tab.heads_grid)
HostViews.averages = timed("layer averages: pooled", HostViews.averages)
viz.tiles.layer_average_overview = timed("layer averages: figure, text alternative", viz.tiles.layer_average_overview)
tab.trace_stats = timed("head statistics", tab.trace_stats)
tab.analyze = timed("analyze(), all", tab.analyze)
context.sent_all = timed("outputs as sent (figures to JSON)", context.sent_all)
event_loop = context.on_event_loop
context.on_event_loop = lambda *a, **k: timed("handler, all", event_loop(*a, **k), is_async=True)
wire.Blocks.preprocess_data = timed("Gradio: reading the inputs", wire.Blocks.preprocess_data, is_async=True)
wire.Blocks.postprocess_data = timed("Gradio: writing the outputs", wire.Blocks.postprocess_data, is_async=True)
gradio.blocks.Blocks.process_api = timed("Gradio: process_api, all", gradio.blocks.Blocks.process_api, is_async=True)
gradio.processing_utils.add_root_url = timed("Gradio: add_root_url", gradio.processing_utils.add_root_url)
gradio.blocks.special_args = timed("Gradio: special_args", gradio.blocks.special_args)

class Compressor:
    def __init__(self, *a, **k):
        self.compressor = made(*a, **k)
    def __getattr__(self, name):
        return timed("compressing the stream (brotli)", getattr(self.compressor, name))
made, streams.brotli = streams.brotli.Compressor, type("brotli", (), {"Compressor": Compressor})

import gc
collecting = {}
def on_gc(phase, info):
    if phase == "start":
        collecting["start"] = time.thread_time_ns()
    elif "start" in collecting:
        add(f"garbage collection, generation {info['generation']}", time.thread_time_ns() - collecting.pop("start"))
gc.callbacks.append(on_gc)

def save(*_):
    with open(sys.argv[1], "w") as f:
        json.dump(spent, f)
    print("timers saved", flush=True)
signal.signal(signal.SIGUSR1, lambda *_: spent.clear())
signal.signal(signal.SIGUSR2, save)
app.main([])
"""


def measure(checkouts: list[Path], calls: int, lm) -> dict:
    """checkout -> {part: ms per /analyze (a part Gradio runs for both calls counts the /ping's share too), and the
    whole /analyze and /ping from /proc}."""
    with contextlib.ExitStack() as stack:
        servers = {}
        for i, checkout in enumerate(checkouts):
            out = ARTIFACTS / "logs" / f"server_parts_{i}.json"
            app = stack.enter_context(live_app(ARTIFACTS / "logs" / f"server_parts_{i}.log",
                                               command=[sys.executable, "-c", TIMED_APP, str(out), str(checkout)]))
            client = app.client()
            endpoints = Endpoints(client)
            analyze_args = lambda text, endpoints=endpoints: endpoints.args("/analyze", text=text, name="lm", kind=None)
            warm_up(client, analyze_args, lm)
            os.kill(app.process.pid, signal.SIGUSR1)
            servers[str(checkout)] = dict(client=client, app=app, args=analyze_args, out=out, ping=[], analyze=[])
        time.sleep(0.5)
        for i in range(calls):
            text = sentence(lm, 32, seed=9000 + i)
            turns = list(servers.values())
            random.Random(i).shuffle(turns)
            for s in turns:
                pid = s["app"].process.pid
                before = load.cpu_seconds(pid)
                s["client"].predict(api_name="/ping")
                middle = load.cpu_seconds(pid)
                s["client"].predict(*s["args"](text), api_name="/analyze")
                s["ping"].append(middle - before)
                s["analyze"].append(load.cpu_seconds(pid) - middle)
        results = {}
        for name, s in servers.items():
            os.kill(s["app"].process.pid, signal.SIGUSR2)
            deadline = time.monotonic() + 60
            while "timers saved" not in s["app"].log_text() and time.monotonic() < deadline:
                time.sleep(0.2)
            parts = {part: round(ns / 1e6 / calls, 3) for part, (ns, _) in json.loads(s["out"].read_text()).items()}
            analyze, ping = statistics.fmean(s["analyze"]), statistics.fmean(s["ping"])
            results[name] = dict(parts, analyze_ms=round(1000 * analyze, 2), ping_ms=round(1000 * ping, 2),
                                 ratio=round(analyze / ping, 3))
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs="*", type=Path, help="other checkouts to measure beside this one")
    parser.add_argument("--calls", type=int, default=80, help="calls of each, per server (default 80)")
    args = parser.parse_args(argv)
    from model import api
    from model.registry import assets_dir

    start_load = [round(x, 2) for x in os.getloadavg()]
    results = measure([ROOT] + [c.resolve() for c in args.checkouts], args.calls, api.load("lm", assets_dir()))
    parts = sorted({p for r in results.values() for p in r}, key=lambda p: -max(r.get(p, 0) for r in results.values()))
    print(f"{'ms per /analyze':48s}" + "".join(f"{Path(name).name[:16]:>18s}" for name in results))
    for part in parts:
        print(f"{part:48s}" + "".join(f"{r.get(part, float('nan')):18.3f}" for r in results.values()))
    print(json.dumps(dict(load_average_at_start=start_load, load_average_at_end=[round(x, 2) for x in os.getloadavg()],
                          date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))))


if __name__ == "__main__":
    main()
