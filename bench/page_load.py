"""python -m bench.page_load [--loads N] [--profile]: the page a student opens, against the smallest Gradio + Plotly
page (bench/minimal_page.py), in one run.

Both servers run side by side; their pages are loaded in turn (app, minimal, app, ...), each by a new visitor (a
fresh browser context: nothing cached) in headless Chromium at 1280 x 720, unthrottled and with the CPU throttled
4x (CDP Emulation.setCPUThrottlingRate, a phone's pace). For each load: the time from navigation to the first
figure drawn (a heatmap in an SVG, read in the page on every animation frame), the main thread's busy time until
then (CDP Performance.getMetrics TaskDuration), the JS heap then, and the bytes received. --profile adds a CDP
CPU profile of one app load and one minimal load: self time by script and by phase. Writes docs/page_load.md
and docs/page_load.json (figures with the date and the machine's load).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from harness.live_app import ARTIFACTS, CHROMIUM_ARGS, ROOT, live_app, require_chromium

LOADS = 5  # loads of each page at each throttling
THROTTLES = (1, 4)
VIEWPORT = {"width": 1280, "height": 720}
PAGES = {"app": "#head-detail", "minimal": "#plot", "app_before": "#head-detail"}  # each page's first figure
TARGET = 1.3  # the app's first figure within 1.3x the minimal page's (issue 57)
SAMPLING_US = 500  # the profiler's sampling interval

# Marks the first figure drawn: a visible plot with an SVG and data marks (as harness.browser.wait_for_figures)
FIRST_FIGURE_JS = """(selector) => {
  const drawn = () => {
    const plot = document.querySelector(selector);
    // the marks first: reading a box's size forces a layout, which on a large page costs more than the check
    return plot && plot.querySelector('svg.main-svg')
      && plot.querySelector('.heatmaplayer image, canvas, .scatterlayer path, .barlayer path, .trace path')
      && plot.getBoundingClientRect().width > 0;
  };
  // the phases' ends (bench/page_load.py by_phase): the page's first component, its plot's SVG, the figure drawn
  window.__marks = {};
  const look = () => {
    const marks = window.__marks;
    if (marks.mounted === undefined && document.querySelector('.gradio-container .block'))
      marks.mounted = performance.now();
    if (marks.svg === undefined && document.querySelector(selector + ' svg.main-svg')) marks.svg = performance.now();
    if (drawn()) window.__firstFigure = performance.now(); else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""


def _uptime() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__repr__()


def one_load(browser, url: str, selector: str, throttle: int, profile: bool = False) -> dict:
    """One new visitor: seconds to the first figure, main-thread seconds and JS heap then, bytes received."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(300_000)
    page.add_init_script(f"({FIRST_FIGURE_JS})({json.dumps(selector)})")
    cdp = context.new_cdp_session(page)
    received: dict[str, int] = defaultdict(int)
    finished: dict[str, int] = {}
    cdp.on("Network.dataReceived", lambda e: received.__setitem__(e["requestId"],
                                                                   received[e["requestId"]] + e["encodedDataLength"]))
    cdp.on("Network.loadingFinished", lambda e: finished.__setitem__(e["requestId"], e["encodedDataLength"]))
    cdp.send("Network.enable")
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    if profile:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLING_US})
        cdp.send("Profiler.start")
    page.goto(url, wait_until="load")
    page.wait_for_function("() => window.__firstFigure !== undefined", polling=100)
    first_ms = page.evaluate("window.__firstFigure")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    result = dict(first_s=first_ms / 1000, task_s=metrics["TaskDuration"], heap_mb=metrics["JSHeapUsedSize"] / 1e6,
                  bytes=sum(max(received.get(r, 0), finished.get(r, 0)) for r in set(received) | set(finished)))
    if profile:
        now_ms = page.evaluate("performance.now()")  # the profile's end, on the page's clock
        result["profile"] = cdp.send("Profiler.stop")["profile"]
        result["profile"]["page_end_ms"] = now_ms
        result["marks"] = page.evaluate("""() => ({first: window.__firstFigure, ...window.__marks,
            resources: performance.getEntriesByType('resource').map(e => [e.name, e.startTime, e.responseEnd])})""")
    context.close()
    return result


HASH = re.compile(r"-[A-Za-z0-9_-]{8}\.js$")


def script_name(url: str) -> str:
    """A script's file name without its build hash ('' for code with no file: eval'd page scripts, inline)."""
    if not url:
        return "(no file: eval'd page scripts, native calls)"
    name = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
    return HASH.sub(".js", name) or url


def by_script(profile: dict) -> dict[str, float]:
    """Self time in ms per script, from a CDP CPU profile (samples x their time deltas)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    self_ms: dict[str, float] = defaultdict(float)
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] if frame["functionName"] in ("(idle)", "(program)", "(garbage collector)") else \
            script_name(frame["url"])
        self_ms[name] += delta / 1000
    return dict(sorted(self_ms.items(), key=lambda kv: -kv[1]))


def by_function(profile: dict, top: int = 25) -> list[tuple[str, float]]:
    nodes = {node["id"]: node for node in profile["nodes"]}
    self_ms: dict[str, float] = defaultdict(float)
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = nodes[node_id]["callFrame"]
        self_ms[f"{frame['functionName'] or '(anonymous)'} {script_name(frame['url'])}:{frame['lineNumber']}"] += delta / 1000
    return sorted(self_ms.items(), key=lambda kv: -kv[1])[:top]


def by_phase(profile: dict, cuts: list[tuple[str, float]]) -> list[tuple[str, dict[str, float]]]:
    """Busy ms per script in each phase; cuts: (phase name, its end in ms since navigation), in order. The profile's
    clock is another origin: its end is aligned with performance.now() read just before it stopped."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    end_us = profile["endTime"]
    first_ms = profile["page_end_ms"]
    phases = [(name, defaultdict(float)) for name, _ in cuts]
    t = profile["startTime"]
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"]):
        t += delta
        frame = nodes[node_id]["callFrame"]
        if frame["functionName"] == "(idle)":
            continue
        at_ms = first_ms - (end_us - t) / 1000
        index = next((i for i, (_, end) in enumerate(cuts) if at_ms <= end), None)
        if index is None:  # after the first figure: not part of the load
            continue
        name = "(program)" if frame["functionName"] in ("(program)", "(garbage collector)") else script_name(frame["url"])
        phases[index][1][name] += delta / 1000
    return [(name, dict(sorted(ms.items(), key=lambda kv: -kv[1]))) for name, ms in phases]


def phase_cuts(marks: dict) -> list[tuple[str, float]]:
    """The load's phases from the marks and resource timings one_load read: (name, its end in ms since
    navigation), in order. The configuration comes inline in the page (Gradio 6), so its parse ends where the
    page's first script is asked for."""
    resources = sorted(marks["resources"], key=lambda r: r[1])
    scripts = [r for r in resources if "/assets/" in r[0] and r[0].endswith(".js")]
    api = [r for r in resources if "/gradio_api/" in r[0]]
    plotly = [r for r in scripts if "PlotlyPlot" in r[0]]
    first_api = api[0][1] if api else marks["first"]
    cuts = [("the page and its inline configuration read", scripts[0][1] if scripts else 0.0),
            ("Gradio's scripts loaded", max((r[2] for r in scripts if r[1] < first_api and r not in plotly),
                                            default=0.0)),
            ("the components mounted, to the first request", first_api),
            ("the load's events answered, to Plotly's script asked for",
             plotly[0][1] if plotly else marks["first"]),
            ("Plotly's script received", plotly[0][2] if plotly else marks["first"]),
            ("Plotly run, the figures drawn, to the first figure", marks["first"])]
    return [(f"{name} ({end:,.0f} ms)", end) for name, end in cuts]


def measure(urls: dict[str, str], loads: int, throttles: tuple = THROTTLES) -> dict:
    """Each page `loads` times at each throttling, alternating; one warm-up load of each first (a server's first
    visit compresses its script files: ui/runtime/assets.py)."""
    from playwright.sync_api import sync_playwright

    results: dict = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        for name, url in urls.items():
            one_load(browser, url, PAGES[name], 1)
        for throttle in throttles:
            runs = {name: [] for name in urls}
            for i in range(loads):
                for name, url in urls.items():
                    runs[name].append(one_load(browser, url, PAGES[name], throttle))
                    print(f"  {throttle}x {name} {i + 1}: {runs[name][-1]['first_s']:.2f} s", file=sys.stderr)
            results[f"{throttle}x"] = runs
        browser.close()
    return results


def profiles(urls: dict[str, str]) -> dict:
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        for name, url in urls.items():
            one_load(browser, url, PAGES[name], 1)  # warm the server
            out[name] = one_load(browser, url, PAGES[name], 1, profile=True)
        browser.close()
    return out


def medians(runs: list[dict]) -> dict:
    return {key: statistics.median(run[key] for run in runs) for key in ("first_s", "task_s", "heap_mb", "bytes")}


def summary(results: dict) -> dict:
    table = {}
    for throttle, runs in results.items():
        app, minimal = medians(runs["app"]), medians(runs["minimal"])
        table[throttle] = dict(app=app, minimal=minimal, ratio={k: app[k] / minimal[k] for k in app},
                               **({"app_before": medians(runs["app_before"]),
                                   "app_before_first_s": [round(r["first_s"], 2) for r in runs["app_before"]]}
                                  if "app_before" in runs else {}),
                               n=len(runs["app"]), app_first_s=[round(r["first_s"], 2) for r in runs["app"]],
                               minimal_first_s=[round(r["first_s"], 2) for r in runs["minimal"]])
    return table


def markdown(s: dict, meta: dict) -> str:
    lines = ["# The page a student opens", "",
             f"Measured by `python -m bench.page_load` (in `make bench`) on {meta['date']}: {meta['cpu']}, "
             f"{meta['cores']} cores, gradio {meta['gradio']}, plotly {meta['plotly']}, Debian Chromium headless at "
             f"1280 × 720. Load average at the start {meta['load_start']}, at the end {meta['load_end']}: the machine "
             "is shared, so the seconds move with it; the ratios are taken within one run, the two pages loaded in "
             "turn.", "",
             "Each load is a new visitor (a fresh browser context). *First figure*: navigation to the first heatmap "
             "drawn (the app's one-head view; the minimal page's only plot). *Main thread*: CDP "
             "`Performance.getMetrics` TaskDuration at that moment. *Heap*: JSHeapUsedSize then. *Bytes*: received, "
             "as encoded on the wire. The minimal page is `bench/minimal_page.py`: one text box and one `gr.Plot` "
             "heatmap drawn on load. Where the time goes, and what was cut: [page_profile.md](page_profile.md).", "",
             "| CPU | measure | minimal Gradio + Plotly | this app | ratio | target |",
             "|---|---|---|---|---|---|"]
    for throttle, t in s.items():
        label = "unthrottled" if throttle == "1x" else f"throttled {throttle[:-1]}×"
        for key, what, fmt in (("first_s", "first figure", "{:.2f} s"), ("task_s", "main thread busy", "{:.2f} s"),
                               ("heap_mb", "JS heap", "{:.1f} MB"), ("bytes", "bytes", "{:,.0f} KB")):
            scale = 1 / 1000 if key == "bytes" else 1
            target = "" if key != "first_s" else (
                f"≤ {TARGET}×: **{'met' if t['ratio'][key] <= TARGET else 'missed'}**")
            lines.append(f"| {label} | {what} (median of {t['n']}) | {fmt.format(t['minimal'][key] * scale)} | "
                         f"{fmt.format(t['app'][key] * scale)} | {t['ratio'][key]:.2f}× | {target} |")
    for throttle, t in s.items():
        if "app_before" in t:  # --against: the same measures for the code before a change, and after ÷ before
            label = "unthrottled" if throttle == "1x" else f"throttled {throttle[:-1]}×"
            before = t["app_before"]
            lines.append(f"| {label} | the app before the change (`--against`), after ÷ before | | "
                         f"{before['first_s']:.2f} s, {before['task_s']:.2f} s, {before['heap_mb']:.1f} MB | "
                         + ", ".join(f"{t['app'][k] / before[k]:.2f}×" for k in ("first_s", "task_s", "heap_mb"))
                         + " | |")
    lines += ["", "Every load's first figure, in seconds:", ""]
    for throttle, t in s.items():
        lines.append(f"- {throttle}: app {t['app_first_s']}, minimal {t['minimal_first_s']}"
                     + (f", the app before the change {t['app_before_first_s']}" if "app_before_first_s" in t else ""))
    return "\n".join(lines) + "\n"


def profile_markdown(p: dict) -> str:
    lines = []
    for name, load in p.items():
        scripts = by_script(load["profile"])
        busy = sum(ms for key, ms in scripts.items() if key != "(idle)")
        lines += [f"### {name}: one load, unthrottled, first figure at {load['first_s']:.2f} s, {busy:,.0f} ms sampled "
                  "busy", "", "| script | self ms |", "|---|---|"]
        lines += [f"| {key} | {ms:,.0f} |" for key, ms in scripts.items() if ms >= 5]
        lines += ["", "By phase (busy ms, idle left out; the phase ends at the time given, ms since navigation):", ""]
        for phase, ms in by_phase(load["profile"], phase_cuts(load["marks"])):
            top = ", ".join(f"{key} {v:,.0f}" for key, v in list(ms.items())[:5] if v >= 5)
            lines.append(f"- **{phase}**: {sum(ms.values()):,.0f} ms busy ({top})")
        lines += ["", "| function (top 25 by self time) | self ms |", "|---|---|"]
        lines += [f"| `{key}` | {ms:,.0f} |" for key, ms in by_function(load["profile"])]
        lines.append("")
    return "\n".join(lines) + "\n"


def machine_meta() -> dict:
    import platform

    import gradio
    import plotly

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return dict(cpu=cpu, cores=os.cpu_count(), gradio=gradio.__version__, plotly=plotly.__version__,
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                load_start=[round(x, 2) for x in os.getloadavg()])


MINIMAL = [sys.executable, "-m", "bench.minimal_page"]


def run(loads: int = LOADS, profile: bool = False, against: Path | None = None,
        throttles: tuple = THROTTLES) -> dict:
    """against: another checkout of the app (the code before a change), loaded in turn with the two pages."""
    meta = machine_meta()
    with contextlib.ExitStack() as stack:
        app = stack.enter_context(live_app(ARTIFACTS / "logs" / "bench_page_app.log"))
        minimal = stack.enter_context(live_app(ARTIFACTS / "logs" / "bench_page_minimal.log", command=MINIMAL))
        urls = {"app": app.url, "minimal": minimal.url}
        if against is not None:
            before = stack.enter_context(live_app(ARTIFACTS / "logs" / "bench_page_before.log",
                                                  command=[sys.executable, str(Path(against) / "app.py")]))
            urls["app_before"] = before.url
        out = dict(meta=meta)
        if profile:
            out["profile"] = profiles(urls)
        if loads:
            out["summary"] = summary(measure(urls, loads, throttles))
    meta["load_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=LOADS, help="loads of each page at each throttling")
    parser.add_argument("--profile", action="store_true", help="a CPU profile of one load of each page")
    parser.add_argument("--against", type=Path, help="another checkout of the app (the code before a change), "
                        "loaded in turn with the two pages")
    parser.add_argument("--throttles", default="1,4", help="CPU throttling rates, comma-separated")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "page_load.md")
    args = parser.parse_args(argv)
    out = run(args.loads, args.profile, args.against, tuple(int(t) for t in args.throttles.split(",")))
    text = ""
    if "summary" in out:
        text = markdown(out["summary"], out["meta"])
        args.out.with_suffix(".json").write_text(json.dumps(dict(meta=out["meta"], summary=out["summary"]), indent=2) + "\n")
    if "profile" in out:
        (ARTIFACTS / "page_profile.json").write_text(json.dumps(out["profile"]))
        text += "\n" + profile_markdown(out["profile"])
    if "summary" in out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
