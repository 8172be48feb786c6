"""The head finder's two speeds, on the real app (python app.py), as ratios within one run:

1. /head_finder answered from precomputed scores (smollm2, 270 heads) against /ping, side by side;
2. the first computation of a brought model: smollm2's own GGUF file listed in ATTENTION_MODELS under another
   name ("brought"), so nothing precomputed answers; measured from the first call until /head_finder answers, with
   /ping and /analyze (lm) timed meanwhile against the same calls before it began.

    python -m bench.head_finder        # prints JSON
    python -m bench --only head_finder # the same, into docs/benchmarks.md (make bench runs it with the rest)
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from bench import measure
from harness.live_app import ARTIFACTS, live_app
from model import gguf

CALLS = 30


def p50(seconds: list[float]) -> float:
    return round(statistics.median(seconds), 4)


def run() -> dict:
    from gradio_client import Client

    source = gguf.smollm2_file()
    if source is None:
        raise SystemExit("smollm2's GGUF file is not installed (make run installs it)")
    with tempfile.TemporaryDirectory() as cache, live_app(
            ARTIFACTS / "logs" / "bench-head-finder.log",
            env={"ATTENTION_MODELS": f"brought={source}", "ATTENTION_HEAD_SCORES": cache}) as app:
        client = Client(app.url, verbose=False)
        ping, finder = [], []
        for _ in range(CALLS):
            ping += measure.timed_calls(client, "/ping", [[]])
            finder += measure.timed_calls(client, "/head_finder", [["smollm2", "induction"]])
        analyze_args = [["The cat sat on the mat.", "lm", "self", False, 1, 1]]
        before = {"ping": [], "analyze": []}
        for _ in range(5):
            before["ping"] += measure.timed_calls(client, "/ping", [[]])
            before["analyze"] += measure.timed_calls(client, "/analyze", analyze_args)
        start = time.perf_counter()
        during = {"ping": [], "analyze": []}
        answer = None
        while answer is None and time.perf_counter() - start < 600:
            try:
                answer = client.predict("brought", "induction", api_name="/head_finder")
            except Exception:  # "Measuring every head of brought ... (n done)"
                during["ping"] += measure.timed_calls(client, "/ping", [[]])
                during["analyze"] += measure.timed_calls(client, "/analyze", analyze_args)
                time.sleep(1)
        first = time.perf_counter() - start
        kept = sorted(p.name for p in Path(cache).iterdir())
        worker = json.loads(next(Path(cache).glob("*.json")).read_text()).get("computed") if kept else None
    result = {
        "precomputed": {"ping_p50_s": p50(ping), "head_finder_p50_s": p50(finder),
                        "ratio": round(p50(finder) / p50(ping), 2), "calls": CALLS},
        "first_computation": {"seconds": round(first, 1), "texts": answer["corpus"]["texts"] if answer else None,
                              "heads": len(answer["heads"]) if answer else None, "cached": kept,
                              "worker": worker, "load_average": open("/proc/loadavg").read().split()[:3],
                              "ping_p50_s_before": p50(before["ping"]), "ping_p50_s_during": p50(during["ping"]),
                              "analyze_p50_s_before": p50(before["analyze"]),
                              "analyze_p50_s_during": p50(during["analyze"]), "calls_during": len(during["ping"])}}
    return result


def report_lines(r: dict) -> list[str]:
    """The head finder's section of docs/benchmarks.md (bench/report.py)."""
    pre, first = r["head_finder"]["precomputed"], r["head_finder"]["first_computation"]
    done = first["heads"] is not None
    return [
        "## The head finder",
        "",
        "`python -m bench.head_finder` (bench/head_finder.py), on the real app: the precomputed scores against `/ping`, "
        "and the first computation of a brought model (smollm2's GGUF listed in `ATTENTION_MODELS` as another name), "
        f"load average {', '.join(first['load_average'])} at its end.",
        "",
        f"- `/head_finder(\"smollm2\", \"induction\")`, {pre['calls']} calls alternating with `/ping`: p50 "
        f"{pre['head_finder_p50_s']:.3f} s against {pre['ping_p50_s']:.3f} s, {pre['ratio']:.2f}× `/ping`'s time",
        f"- the first computation, {first['texts']} texts, {first['heads']} heads: {first['seconds']:.0f} s from the "
        f"first call to the answer (target: 120 s): {'**met**' if done and first['seconds'] <= 120 else '**missed**'}",
        f"- meanwhile ({first['calls_during']} calls each): `/ping` p50 {first['ping_p50_s_during']:.3f} s against "
        f"{first['ping_p50_s_before']:.3f} s before; `/analyze` {first['analyze_p50_s_during']:.3f} s against "
        f"{first['analyze_p50_s_before']:.3f} s before",
        "",
    ]


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
