"""python -m bench [--quick] [--only SECTION]: every figure in docs/benchmarks.md and docs/page_load.md, measured on
this machine in one run (--only: one section, the others' figures kept from the last run).

Starts the real app (python app.py) once, then measures /analyze against /ping through
gradio_client, the response size over raw HTTP, click-to-drawn in headless Chromium, a class of 300
simultaneous clients (bench/load.py `crowd`), the queue limit, and bertviz on the same attention tensors. Then
long inputs: 12 x 12-head BERT and GPT-2 checkpoints built here, at 512 tokens (bench/long_inputs.py). Then
the soak: 5,000 mixed requests and the server's memory through them (bench/soak.py, about half an hour). Then
what the workarounds of ui/runtime save that is not /analyze's server CPU (bench/workarounds_more.py). Last, the
head finder: its precomputed answer against /ping, and a brought model's first computation (bench/head_finder.py).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from bench import browser, llama_family, load, measure, patching, report, smollm2_tabs
from bench.server_cpu import CALLS as SERVER_CPU_CALLS, server_cpu_per_call
from bench.bertviz_compare import bertviz_sizes
from bench.sentences import sentence
from harness.live_app import ARTIFACTS, ROOT, Endpoints, live_app
from training import dates

LENGTHS = (8, 32, 128, 256)
SIZE_LENGTHS = (8, 32, 64, 128, 256)
REPEATS = {8: 15, 32: 15, 128: 10, 256: 6}
CLICK_LENGTHS = (32, 128)
CLICKS = 10  # clicks per length in the browser
PAGE_LOADS = 6  # new visitors opening the link
LM_TABS = ("attention", "steps", "masking", "positions", "learning", "multihead")
CLIENTS = 300  # a large first-year lecture (issue 58)
SOAK_QUICK = 300  # requests in a --quick run's soak (its verdict needs 1,000 and more: bench/soak.py)
MINILM_REPEATS = 15  # /analyze calls on minilm at 32 tokens
# 256-token sentences: work the server cannot finish as fast as 30 requests arrive, so that some meet a full queue
QUEUE_DEMO = dict(max_size=8, clients=30, tokens=256)
# The app as app.py starts it, but with a small queue limit: shows what a visitor gets past it.
APP_WITH_QUEUE_LIMIT = [sys.executable, "-c",
                        "import app\n"
                        "app.build_demo().queue(default_concurrency_limit={concurrency}, max_size={max_size})"
                        ".launch(**app.launch_options())\n"]


def app_queue_setting() -> dict:
    """What app.main passes to queue()."""
    import app

    return app.queue_options()


def machine() -> dict:
    import gradio
    import plotly
    import torch

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return dict(cpu=cpu, cores=os.cpu_count(), load_average_at_start=[round(x, 2) for x in os.getloadavg()],
                python=platform.python_version(), torch=torch.__version__, gradio=gradio.__version__,
                plotly=plotly.__version__, torch_threads=torch.get_num_threads(),
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))


def minilm_figures(client, endpoints, url: str, scale, name: str = "minilm") -> dict:
    """minilm (a real pretrained BERT, 6 layers x 12 heads, 22 M parameters), or smollm2 (a real LLM, 30 x 9
    heads, 134.5 M parameters), beside lm: /analyze p50 at 32 tokens, a /ping before each call as for lm, and
    the size of the answer at 64 tokens."""
    from model import api

    minilm = api.load(name, device="cpu", context=512)
    args = lambda text: endpoints.args("/analyze", text=text, name=name, kind=None)
    measure.timed_calls(client, "/analyze", [args(sentence(minilm, 16, seed=s)) for s in range(2)])  # warm up
    seconds, pings = [], []
    for s in range(scale(MINILM_REPEATS)):
        pings += measure.timed_calls(client, "/ping", [[]])
        seconds += measure.timed_calls(client, "/analyze", [args(sentence(minilm, 32, seed=8000 + s))])
    return dict(analyze_32=measure.summary(seconds), ping=measure.summary(pings),
                size_64=measure.response_size(url, "analyze", args(sentence(minilm, 64, seed=7))))


def run(quick: bool) -> dict:
    from model import api
    from model.registry import assets_dir

    lm = api.load("lm", assets_dir())
    scale = (lambda n: max(3, n // 3)) if quick else (lambda n: n)
    results = dict(machine=machine(), queue_setting=app_queue_setting(), assets=str(assets_dir()))
    with live_app(ARTIFACTS / "logs" / "bench_app.log") as app:
        client = app.client()
        endpoints = Endpoints(client)
        analyze_args = lambda text: endpoints.args("/analyze", text=text, name="lm", kind=None)
        # warm up: first calls pay for imports and caches
        measure.timed_calls(client, "/analyze", [analyze_args(sentence(lm, 16, seed=s)) for s in range(2)])
        measure.timed_calls(client, "/ping", [[] for _ in range(3)])

        print("latency ...", file=sys.stderr)
        results["ping_raw_http"] = measure.summary([measure.response_size(app.url, "ping", [])["seconds"]
                                                    for _ in range(scale(30))])
        results["analyze"], pings = {}, []
        for n in LENGTHS:
            texts = [sentence(lm, n, seed=100 * n + s) for s in range(scale(REPEATS[n]))]  # distinct: no cache hits
            seconds = []
            for text in texts:  # /ping between the calls: the ratio holds however the machine's speed drifts
                pings += measure.timed_calls(client, "/ping", [[]])
                seconds += measure.timed_calls(client, "/analyze", [analyze_args(text)])
            results["analyze"][n] = measure.summary(seconds)
        results["ping"] = measure.summary(pings)

        print("server CPU per call ...", file=sys.stderr)
        results["server_cpu"] = server_cpu_per_call(client, app.process.pid, analyze_args, lm, scale(SERVER_CPU_CALLS))

        print("minilm beside lm ...", file=sys.stderr)
        results["minilm"] = minilm_figures(client, endpoints, app.url, scale)
        print("smollm2 beside lm ...", file=sys.stderr)
        results["smollm2"] = minilm_figures(client, endpoints, app.url, scale, "smollm2")

        print("response size ...", file=sys.stderr)
        results["size"] = {n: measure.response_size(app.url, "analyze", analyze_args(sentence(lm, n, seed=7)))
                           for n in SIZE_LENGTHS}

        print("click to drawn ...", file=sys.stderr)
        results["click_to_drawn"], results["click_server_cpu"] = {}, {}
        for n in CLICK_LENGTHS:
            seconds, cpu_ms = browser.click_to_drawn(app.url, [sentence(lm, n, seed=900 + s) for s in range(scale(CLICKS))],
                                                     server_pid=app.process.pid)
            results["click_to_drawn"][n] = measure.summary(seconds)
            results["click_server_cpu"][n] = dict(clicks=len(cpu_ms), median_ms=round(statistics.median(cpu_ms), 1),
                                                  mean_ms=round(statistics.mean(cpu_ms), 1))

        print("page loads ...", file=sys.stderr)
        seconds, cpu_ms = browser.page_loads(app.url, scale(PAGE_LOADS), app.process.pid)
        results["page_load"] = dict(measure.summary(seconds), cpu_median_ms=round(statistics.median(cpu_ms), 1),
                                    cpu_ms=[round(ms) for ms in cpu_ms])

        print("each tab ...", file=sys.stderr)
        date_texts = [source for source, _ in dates.pairs(scale(5), split="validation", seed=11)]
        cases = [(tab, "lm", [sentence(lm, 32, seed=1300 + 10 * i + s) for s in range(scale(5))])
                 for i, tab in enumerate(LM_TABS)] + [("encoder_decoder", "dates", date_texts)]
        results["tab_redrawn"] = {tab: measure.summary(seconds) for tab, seconds in browser.tab_redrawn(app.url, cases).items()}

        clients = 20 if quick else CLIENTS
        print(f"{clients} simultaneous clients ...", file=sys.stderr)
        crowd = load.crowd(app.url, "/analyze", [analyze_args(sentence(lm, 32, seed=5000 + i)) for i in range(clients)],
                           server_pid=app.process.pid)
        results["load"] = load.summarised(crowd)
        # the same crowd on /ping, which does nothing: what Gradio's queue alone costs under that load
        floor = load.crowd(app.url, "/ping", [[] for _ in range(clients)], server_pid=app.process.pid)
        results["load_ping"] = load.summarised(floor)

    print("queue limit ...", file=sys.stderr)
    concurrency = results["queue_setting"]["default_concurrency_limit"] or "1"
    command = [APP_WITH_QUEUE_LIMIT[0], APP_WITH_QUEUE_LIMIT[1],
               APP_WITH_QUEUE_LIMIT[2].format(max_size=QUEUE_DEMO["max_size"], concurrency=concurrency)]
    with live_app(ARTIFACTS / "logs" / "bench_queue_limit.log", command=command) as limited:
        endpoints = Endpoints(limited.client())
        burst = load.simultaneous(limited.url, "/analyze",
                                  [endpoints.args("/analyze", text=sentence(lm, QUEUE_DEMO["tokens"], seed=7000 + i), name="lm", kind=None)
                                   for i in range(QUEUE_DEMO["clients"])])
        refused = burst.pop("seconds_refused")
        burst.update(measure.summary(burst.pop("seconds_ok")) if burst["answered"] else {})
        burst["refused_within_s"] = round(max(refused), 3) if refused else None
        results["queue_limit"] = dict(QUEUE_DEMO, concurrency=concurrency, **burst)

    print("bertviz ...", file=sys.stderr)
    results["bertviz"] = {n: bertviz_sizes(lm, sentence(lm, n, seed=7)) for n in (64, 256)}

    print("Llama-family checkpoints at 512 tokens ...", file=sys.stderr)
    results["llama_family"] = llama_family.timings(ROOT / "runs" / "bench-models", repeats=1 if quick else 3)

    print("causal tracing ...", file=sys.stderr)
    results["patching"] = patching.timings(ROOT / "runs" / "bench-models", repeats=1 if quick else 3)

    print("smollm2 at 512 tokens: Every head, the Lens, Interventions ...", file=sys.stderr)
    results["smollm2_tabs"] = smollm2_tabs.run(1 if quick else smollm2_tabs.ROUNDS)

    print("a class of 300 ...", file=sys.stderr)
    from bench import classroom  # after the app's server has stopped: it starts its own

    results["classroom"] = classroom.run(classroom.STUDENTS)
    return results


# the shipped models' figures; the page a student opens against a minimal Gradio + Plotly page (bench/page_load.py,
# its own docs/page_load.md); long inputs on 12 x 12-head checkpoints (bench/long_inputs.py); a day of visitors in
# half an hour, the server's memory through it (bench/soak.py); the workarounds (bench/workarounds_more.py); the head
# finder's answer and first computation (bench/head_finder.py); tabs: smollm2's Lens and Interventions against Every
# head alone (bench/smollm2_tabs.py)
SECTIONS = ("main", "long", "soak", "workarounds", "head_finder", "tabs", "page")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run of the harness)")
    parser.add_argument("--only", choices=SECTIONS, help="measure one section and keep the other's figures from "
                        "the last run (docs/benchmarks.json)")
    parser.add_argument("--long-requests", type=int, default=None, metavar="N",
                        help="distinct 512-token requests for the long inputs' memory figure (default 200)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    saved = args.out.with_suffix(".json")
    kept = report.from_json(saved) if saved.is_file() else {}
    if args.only in (None, "main"):
        results = run(args.quick)
    elif args.only == "page":  # writes docs/page_load.md alone
        from bench import page_load

        page_load.main(["--loads", str(3 if args.quick else page_load.LOADS)])
        return
    else:
        results = dict(kept)
    if args.only == "tabs":  # bench/smollm2_tabs.py alone (run() measures it too)
        results["smollm2_tabs"] = smollm2_tabs.run(1 if args.quick else smollm2_tabs.ROUNDS)
    if args.only in (None, "long"):
        from bench import long_inputs

        results["long"] = dict(long_inputs.run(args.quick, args.long_requests), machine=machine())
    if args.only in (None, "page"):
        from bench import page_load

        page_load.main(["--loads", str(3 if args.quick else page_load.LOADS)])
    if args.only in (None, "soak"):
        from bench import soak

        results["soak"] = dict(soak.run(SOAK_QUICK if args.quick else soak.REQUESTS), machine=machine())
    if args.only in (None, "workarounds"):
        from bench import workarounds_more

        results["workarounds"] = workarounds_more.run(quick=args.quick)
    if args.only in (None, "head_finder"):
        from bench import head_finder

        results["head_finder"] = dict(head_finder.run(), machine=machine())
    for section in SECTIONS[1:]:  # one not measured this time keeps its figures from the last run
        if section not in results and section in kept:
            results[section] = kept[section]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    args.out.write_text(report.markdown(results))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
