"""python -m bench.workarounds_more [--quick] [PART ...]: what the workarounds of ui/runtime whose cost is not
/analyze's server CPU save today, each measured with and without it in one run (bench/workarounds.py measures the
others). Parts (default: all):

    sent       in-process: /analyze's answer at 32 tokens written by wire.sent_all in the handler's thread, against
               Gradio's postprocess_data with postprocess=True (each output's postprocess in a worker thread), the
               two alternated, process CPU per answer
    sessions   two servers side by side, one without sessions.keep_no_output_values: plain-HTTP /analyze calls at
               128 tokens, each a new session, alternated; server RSS growth and server CPU per call
    memory     two servers side by side, one without memory.limit_allocator and trim_regularly: the soak's mixed
               requests (bench/soak.py) to both in turn; RSS after them, above each server's baseline
    assets     two servers side by side, one without assets.CompressedAssets: a first visit's requests (the page
               and every file Chromium fetched for it) replayed over HTTP with Chromium's Accept-Encoding, visits
               alternated; server CPU per visit, less what the idle server uses in as long
    draw_once  one Chromium, two servers, one without draw_once.DRAW_ONCE_JS: "Show attention" clicked on each in
               turn; Plotly draws (react and resize calls reaching Plotly) and click-to-drawn per click

Prints one JSON object: per part the figures with and without, their medians, lowest and highest, and the load.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
import urllib.request
from contextlib import ExitStack

from bench.load import cpu_seconds
from bench.measure import rss_mb
from bench.sentences import sentence
from bench.workarounds import LAUNCHER
from harness.live_app import ARTIFACTS, Endpoints, live_app

PARTS = ("sent", "sessions", "memory", "assets", "draw_once")
BR = "gzip, deflate, br, zstd"  # what Chromium sends


def spread(values: list[float], digits: int = 2) -> dict:
    return dict(median=round(statistics.median(values), digits), low=round(min(values), digits),
                high=round(max(values), digits), n=len(values))


def servers(stack: ExitStack, names: list[str]) -> dict:
    """name -> live app started by bench.workarounds' launcher with that workaround off ("with": none)."""
    return {name: stack.enter_context(live_app(ARTIFACTS / "logs" / f"bench_workarounds_{name}.log",
                                               command=[sys.executable, "-c", LAUNCHER, name])) for name in names}


def turns(apps: dict, i: int) -> list:
    order = list(apps.items())
    random.Random(i).shuffle(order)
    return order


def sent(calls: int) -> dict:
    """Process CPU (ms) per /analyze answer: wire.sent_all then Gradio's postprocess_data with postprocess=False
    (as the app runs), against Gradio's postprocess_data with postprocess=True (as Gradio would)."""
    import copy

    import gradio as gr
    from gradio.state_holder import SessionState

    import app
    from model import api
    from model.registry import assets_dir
    from ui.page.context import _plain
    from ui.runtime.wire import sent_all

    demo = app.build_demo()
    block_fn = next(fn for fn in demo.fns.values() if fn.api_name == "analyze")
    view = _plain(block_fn.fn.__wrapped__)
    gradios = copy.copy(block_fn)
    gradios.postprocess = True
    lm = api.load("lm", assets_dir())
    values = [component.value for component in block_fn.inputs]
    loop = asyncio.new_event_loop()
    ours, theirs = [], []
    for i in range(calls):
        values[0] = sentence(lm, 32, seed=9000 + i)
        raw = view(*values)  # the handler's answer, as both would start from it (its trace now cached)
        for way in random.Random(i).sample(("ours", "theirs"), 2):
            state = SessionState(demo)
            start = time.process_time()
            if way == "ours":
                loop.run_until_complete(gr.Blocks.postprocess_data(demo, block_fn, sent_all(block_fn.outputs, raw),
                                                                   state))
                ours.append(1000 * (time.process_time() - start))
            else:
                loop.run_until_complete(gr.Blocks.postprocess_data(demo, gradios, raw, state))
                theirs.append(1000 * (time.process_time() - start))
    loop.close()
    return dict(with_ms=spread(ours), without_ms=spread(theirs),
                saves_ms=spread([t - o for o, t in zip(ours, theirs)]), outputs=len(block_fn.outputs))


def call_plain(url: str, api: str, data: list) -> None:
    """One call over plain HTTP (gradio_api/call): a new session each time, as curl or a script makes."""
    request = urllib.request.Request(f"{url}gradio_api/call{api}", data=json.dumps(dict(data=data)).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as response:
        event = json.load(response)["event_id"]
    with urllib.request.urlopen(f"{url}gradio_api/call{api}/{event}", timeout=300) as response:
        response.read()


def sessions(calls: int) -> dict:
    """Server RSS growth (MB per call) and server CPU (ms per call) of plain-HTTP /analyze calls at 128 tokens."""
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    with ExitStack() as stack:
        apps = servers(stack, ["with", "no_sessions"])
        args = {name: Endpoints(a.client()) for name, a in apps.items()}
        for name, a in apps.items():  # warm up
            for s in range(3):
                call_plain(a.url, "/analyze", args[name].args("/analyze", text=sentence(lm, 128, seed=s), name="lm"))
        rss0 = {name: rss_mb(a.process.pid) for name, a in apps.items()}
        cpu = {name: [] for name in apps}
        for i in range(calls):
            text = sentence(lm, 128, seed=8000 + i)
            for name, a in turns(apps, i):
                before = cpu_seconds(a.process.pid)
                call_plain(a.url, "/analyze", args[name].args("/analyze", text=text, name="lm"))
                cpu[name].append(1000 * (cpu_seconds(a.process.pid) - before))
        grown = {name: (rss_mb(a.process.pid) - rss0[name]) / calls for name, a in apps.items()}
    return dict(calls=calls, tokens=128, rss_growth_mb_per_call={k: round(v, 3) for k, v in grown.items()},
                cpu_ms=dict(with_=spread(cpu["with"]), without=spread(cpu["no_sessions"])),
                cpu_saves_ms=spread([b - a for a, b in zip(cpu["with"], cpu["no_sessions"])]))


def memory(requests: int) -> dict:
    """Server RSS (MB) above its baseline after the soak's mixed requests, sent to both servers in turn."""
    from bench import soak

    with ExitStack() as stack:
        apps = servers(stack, ["with", "no_memory"])
        clients = {name: a.client() for name, a in apps.items()}
        endpoints = Endpoints(clients["with"])
        lessons = soak.lesson_steps(clients["with"])
        for name, client in clients.items():  # every model and use once before the baseline, as the soak does
            for _, api, args in soak.requests_of(endpoints, lessons, len(soak.USES), start=10**6):
                client.predict(*args, api_name=api)
        time.sleep(11)  # one trim of the arenas on the server with it: its baseline is after a trim, as later ones
        base = {name: rss_mb(a.process.pid) for name, a in apps.items()}
        points = {name: [] for name in apps}
        for n, (i, api, args) in enumerate(soak.requests_of(endpoints, lessons, requests)):
            for name, _ in turns(apps, i):
                clients[name].predict(*args, api_name=api)
            if (n + 1) % 25 == 0:
                for name, a in apps.items():
                    points[name].append(round(rss_mb(a.process.pid) - base[name], 1))
        time.sleep(11)  # the last trim
        end = {name: round(rss_mb(a.process.pid) - base[name], 1) for name, a in apps.items()}
    return dict(requests=requests, baseline_mb=base, above_baseline_mb=end, every_25=points)


def visit_paths(url: str) -> list[str]:
    """The paths a new visitor's Chromium fetches from the server for the page (its GETs, events excepted)."""
    from playwright.sync_api import sync_playwright

    from harness.browser import DETAIL, wait_for_figures
    from harness.live_app import CHROMIUM_ARGS, require_chromium

    paths = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("request", lambda r: paths.append(r.url[len(url) - 1:]) if r.method == "GET" and r.url.startswith(url)
                and "/queue/" not in r.url and "heartbeat" not in r.url and "/call/" not in r.url else None)
        page.goto(url)
        wait_for_figures(page, DETAIL)
        browser.close()
    return sorted(set(paths))


def visit(url: str, paths: list[str]) -> int:
    """Every path fetched as a new visitor's browser asks (brotli accepted, nothing cached); bytes received."""
    received = 0
    for path in paths:
        request = urllib.request.Request(url.rstrip("/") + path, headers={"Accept-Encoding": BR})
        with urllib.request.urlopen(request, timeout=120) as response:
            received += len(response.read())
    return received


def assets(visits: int) -> dict:
    """Server CPU (ms) per replayed first visit, idle polling subtracted; the first visit apart (it compresses)."""
    from bench.browser import idle_rate

    with ExitStack() as stack:
        apps = servers(stack, ["with", "no_assets"])
        paths = visit_paths(apps["no_assets"].url)  # the server with it compresses at its first replayed visit
        cpu = {name: [] for name in apps}
        size = {}
        for i in range(visits + 1):
            for name, a in turns(apps, i):
                idle = idle_rate(a.process.pid)
                before, start = cpu_seconds(a.process.pid), time.perf_counter()
                size[name] = visit(a.url, paths)
                cpu[name].append(1000 * (cpu_seconds(a.process.pid) - before - idle * (time.perf_counter() - start)))
    later = {name: ms[1:] for name, ms in cpu.items()}
    return dict(paths=len(paths), bytes_on_the_wire=size, first_visit_ms={k: round(v[0], 1) for k, v in cpu.items()},
                later_visits_ms=dict(with_=spread(later["with"], 1), without=spread(later["no_assets"], 1)),
                saves_ms=spread([b - a for a, b in zip(later["with"], later["no_assets"])], 1))


# Closest to Plotly (installed before the page's scripts, which wrap the same object after it): every react and
# resize that reaches Plotly counted, and the milliseconds spent in them (their synchronous part)
COUNT_DRAWS = """(() => {
  window.__draws = {react: 0, resize: 0, ms: 0};
  const count = (plotly) => {
    if (!plotly || plotly.__counted) return plotly;
    const react = plotly.react, resize = plotly.Plots.resize;
    const timed = (kind, fn) => function (...args) {
      const start = performance.now(), result = fn.apply(this, args);
      window.__draws[kind] += 1; window.__draws.ms += performance.now() - start;
      return result;
    };
    plotly.react = timed("react", react);
    plotly.Plots.resize = timed("resize", resize);
    plotly.__counted = true;
    return plotly;
  };
  let value;
  Object.defineProperty(window, "Plotly", {configurable: true, get: () => value, set: (v) => { value = count(v); }});
})();"""


def draw_once(clicks: int) -> dict:
    """Plotly draws and click-to-drawn (s) per click on the core tab, the two servers' pages clicked in turn."""
    from playwright.sync_api import sync_playwright

    from harness.browser import DETAIL, expected_labels, press_analyze, sentence_box, wait_for_figures, wait_for_ticks
    from harness.live_app import CHROMIUM_ARGS, require_chromium
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    out = {}
    with ExitStack() as stack:
        apps = servers(stack, ["with", "no_draw_once"])
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        pages = {}
        for name, a in apps.items():
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(180_000)
            page.add_init_script(COUNT_DRAWS)
            page.goto(a.url)
            wait_for_figures(page, DETAIL)
            pages[name] = page
            out[name] = dict(react=[], resize=[], draw_ms=[], seconds=[])
        time.sleep(3)  # the first draws settle
        for i in range(clicks):
            text = sentence(lm, 32, seed=900 + i)
            for name, page in turns(pages, i):
                sentence_box(page).fill(text)
                time.sleep(0.3)
                page.evaluate("() => { window.__draws = {react: 0, resize: 0, ms: 0}; }")
                start = time.perf_counter()
                press_analyze(page)
                wait_for_ticks(page, expected_labels(text))
                out[name]["seconds"].append(time.perf_counter() - start)
                time.sleep(2)  # the tab's other views drawn
                draws = page.evaluate("() => window.__draws")
                for key in ("react", "resize"):
                    out[name][key].append(draws[key])
                out[name]["draw_ms"].append(draws["ms"])
        browser.close()
    return {name: {key: spread(values, 3 if key == "seconds" else 1) for key, values in figures.items()}
            for name, figures in out.items()}


QUICK = dict(sent=20, sessions=20, memory=50, assets=4, draw_once=5)
FULL = dict(sent=60, sessions=60, memory=150, assets=10, draw_once=12)


def run(parts=PARTS, quick: bool = False) -> dict:
    sizes = QUICK if quick else FULL
    result = dict(load_average_at_start=[round(x, 2) for x in os.getloadavg()])
    for part in parts:
        print(f"workarounds: {part} ...", file=sys.stderr)
        started = time.monotonic()
        result[part] = dict(globals()[part](sizes[part]), minutes=round((time.monotonic() - started) / 60, 1))
    result.update(load_average_at_end=[round(x, 2) for x in os.getloadavg()],
                  date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    return result


def section(r: dict) -> list[str]:
    """docs/benchmarks.md's section (bench/report.py): the figures of the last run, each with and without."""
    w = r.get("workarounds")
    if not w:
        return []
    lines = ["## What the workarounds of ui/runtime save", "",
             f"`python -m bench.workarounds_more` ({w['date']}, load average {w['load_average_at_start']} at the start, "
             f"{w['load_average_at_end']} at the end): each workaround with and without it in one run, alternated "
             "(ui/runtime/README.md gives each row's figure; bench/workarounds.py measures those that cost /analyze).", ""]
    if "sent" in w:
        s = w["sent"]
        lines.append(f"- `wire.sent_all` (outputs written in the handler's thread): /analyze's {s['outputs']} outputs at "
                     f"32 tokens, {s['with_ms']['median']} ms of process CPU against {s['without_ms']['median']} ms with "
                     f"Gradio's postprocess in worker threads; saves {s['saves_ms']['median']} ms "
                     f"({s['saves_ms']['low']} to {s['saves_ms']['high']}), {s['with_ms']['n']} answers")
    if "sessions" in w:
        s = w["sessions"]
        grown = s["rss_growth_mb_per_call"]
        lines.append(f"- `sessions.keep_no_output_values`: {s['calls']} plain-HTTP /analyze calls at {s['tokens']} tokens "
                     f"(each a new session): the server grew {grown['with']} MB a call with it, {grown['no_sessions']} "
                     f"MB without; server CPU a call {s['cpu_ms']['with_']['median']} ms against "
                     f"{s['cpu_ms']['without']['median']} ms (saves {s['cpu_saves_ms']['median']} ms)")
    if "memory" in w:
        s = w["memory"]
        lines.append(f"- `memory.limit_allocator`, `trim_regularly`: after {s['requests']} of the soak's mixed requests "
                     f"the server was {s['above_baseline_mb']['with']} MB above its baseline with them, "
                     f"{s['above_baseline_mb']['no_memory']} MB without")
    if "assets" in w:
        s = w["assets"]
        lines.append(f"- `assets.CompressedAssets`: a new visitor's {s['paths']} requests replayed, server CPU a visit "
                     f"{s['later_visits_ms']['with_']['median']} ms against {s['later_visits_ms']['without']['median']} "
                     f"ms (saves {s['saves_ms']['median']} ms; the first visit {s['first_visit_ms']['with']} ms against "
                     f"{s['first_visit_ms']['no_assets']} ms); {s['bytes_on_the_wire']['with']:,} bytes on the wire "
                     f"against {s['bytes_on_the_wire']['no_assets']:,}")
    if "draw_once" in w:
        a, b = w["draw_once"]["with"], w["draw_once"]["no_draw_once"]
        lines.append(f"- `draw_once.DRAW_ONCE_JS`: a click on the core tab made {a['react']['median']:.0f} Plotly.react "
                     f"and {a['resize']['median']:.0f} resize calls with it, {b['react']['median']:.0f} and "
                     f"{b['resize']['median']:.0f} without; {a['draw_ms']['median']:.0f} ms against "
                     f"{b['draw_ms']['median']:.0f} ms in them, click to drawn {a['seconds']['median']} s against "
                     f"{b['seconds']['median']} s ({a['seconds']['n']} clicks each)")
    return lines + [""]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="*", choices=PARTS, default=list(PARTS))
    parser.add_argument("--quick", action="store_true", help="fewer calls, visits and clicks")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.parts, args.quick), indent=1))


if __name__ == "__main__":
    main()
