"""python -m bench.soak [--requests N]: a day of visitors in half an hour, and the server's memory through it.

Starts the real app (python app.py), asks once of every model it serves (so that each is loaded before the
baseline), then sends N mixed requests (default 5,000): the views' ordinary use through their public endpoints
(/analyze on every model, the one-head views, Multi-head, Positions, the Lens, generation, explanations, knocking
heads out, causal tracing, the classifier, translation, lesson steps, and now and then a toy training), each with
a text no earlier request used, a tenth of them long (200-250 words). CLIENTS threads send them, each a visitor
of its own who leaves after VISIT requests (a new Gradio session: a class of visitors, not one long one). The
server's RSS is read every EVERY requests. After the first FILLED requests the trace cache is full; from there on
RSS must stay within LIMIT_MB of its level at that point (issue 58).

One reading is not a level: readings at rest swing by up to +-40 MB from one to the next, mostly with the trace
cache's bytes (bounded at 1 GiB, it holds 940-1,024 MB as traces of different sizes come and go), and they alternate:
the mix's long texts repeat every 200 requests (is_long), and a reading at an odd hundred found the cache at
1,010-1,024 MB, at an even one at 938-1,009 MB (2026-11-28, 4,000 requests). So a level is the median of WINDOW readings in a row (600 requests: three
of those periods, as many readings of each kind): the level at FILLED is the median of the WINDOW readings from
there on, and RSS stays within LIMIT_MB of it when every later window's median does (the highest of them is the
growth judged). A rise that lasts shows in the windows' medians as in single readings; one high reading does not.
The report also gives the single readings' largest rise and their least-squares trend.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REQUESTS = 5000
EVERY = 100  # requests between two RSS readings
FILLED = 1000  # requests after which the trace cache is full: the level RSS is held to
LIMIT_MB = 50
WINDOW = 6  # readings whose median is one level: an even number (see above)
CLIENTS = 3  # visitors at a time (two cores: more only queue)
VISIT = 20  # requests a visitor makes before leaving (their Gradio session stays behind, as a browser tab's would)
LONG_EVERY = 10  # a tenth of the requests are long
TRAIN_EVERY = 250  # a toy training (one second) every so many requests

WORDS = ("the cat sat on a warm mat while an old dog watched from the garden and a small bird sang in a tree by "
         "the river where children played with a red ball after school every quiet evening before the bright "
         "moon rose over green hills and the town fell asleep under heavy clouds near one narrow bridge").split()
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
REVIEWS = ("a wonderful film", "a dull and tiring story", "great acting", "the worst plot", "a gentle comedy")


def text_of(i: int, long: bool) -> str:
    """Request i's own text: its number spelled into it, so no two requests share a trace."""
    rng = random.Random(i)
    words = [rng.choice(WORDS) for _ in range(rng.randint(200, 250) if long else rng.randint(8, 40))]
    words.insert(rng.randrange(len(words)), f"number {i}")
    return " ".join(words)


def prefix_of(i: int) -> str:
    """A few words of request i's own, then the number."""
    rng = random.Random(i)
    return " ".join([rng.choice(WORDS) for _ in range(4)] + [str(i)])


def date_of(i: int) -> str:
    rng = random.Random(i)
    return f"{rng.randint(1, 28)} {MONTHS[rng.randrange(12)]} {1900 + i % 200}"


# (api name, its arguments for request i: text, long) in the order the mix repeats; lm is the default model,
# and every model the app serves is asked of
USES = (
    ("/analyze", lambda t, i: dict(text=t, name="lm", kind=None)),
    ("/analyze", lambda t, i: dict(text=t, name="minilm", kind=None)),
    ("/steps", lambda t, i: dict(text=t, model="lm")),
    ("/analyze", lambda t, i: dict(text=t, name="mlm", kind=None)),
    ("/multihead", lambda t, i: dict(text=t, model="lm")),
    ("/analyze", lambda t, i: dict(text=t, name="smollm2", kind=None)),
    ("/head", lambda t, i: dict(text=t, name="lm", layer=2, head=1, kind=None)),
    ("/positions", lambda t, i: dict(text=t, model="lm")),
    ("/logit_lens", lambda t, i: dict(text=t, model="lm")),
    ("/analyze", lambda t, i: dict(text=date_of(i), name="dates", kind="cross")),
    ("/generate", lambda t, i: dict(text=t, model="lm", seed=i, tokens=8)),
    ("/explanations", lambda t, i: dict(text=t, name="lm")),
    ("/interventions", lambda t, i: dict(text=t, name="lm", chosen=["L1 H1"])),
    ("/classify", lambda t, i: dict(text=f"{REVIEWS[i % len(REVIEWS)]}, {t}")),
    ("/translate", lambda t, i: dict(text=date_of(i))),
    ("/patch", lambda t, i: dict(clean=f"{prefix_of(i)}, Monday, Tuesday,",
                                 corrupted=f"{prefix_of(i)}, Friday, Saturday,", model="lm",
                                 target=" the", contrast=" and")),  # at most 48 tokens; two tokens lm has
    ("/multihead", lambda t, i: dict(text=t, model="minilm")),
    ("/lesson_step", None),  # filled in from /lessons
    ("/qk_space", lambda t, i: dict(text=t, model="lm")),
    ("/steps", lambda t, i: dict(text=t, model="minilm")),
)


def rss_mb(pid: int) -> float:
    from bench.measure import rss_mb as read

    return read(pid)


class Visitors:
    """CLIENTS gradio_clients, each a new session (a new visitor) every VISIT requests."""

    def __init__(self, url: str):
        from gradio_client import Client

        self.local = threading.local()
        self.url, self.Client = url, Client

    def client(self, i: int):
        local = self.local
        if getattr(local, "client", None) is None:
            local.client, local.calls = self.Client(self.url, verbose=False), 0
        elif local.calls % VISIT == 0:
            local.client.reset_session()
        local.calls += 1
        return local.client


def is_long(i: int) -> bool:
    """Whether request i is long: every use in turn, one round of USES in LONG_EVERY (i % LONG_EVERY alone would
    pick the same two uses every time, USES being 20 long)."""
    return (i // len(USES)) % LONG_EVERY == (i % len(USES)) % LONG_EVERY


def requests_of(endpoints, lessons: list[tuple[str, int]], n: int, start: int = 0):
    """(index, api name, arguments) of n mixed requests from `start` on."""
    for i in range(start, start + n):
        api, make = USES[i % len(USES)]
        if i % TRAIN_EVERY == TRAIN_EVERY - 1:
            yield i, "/train_toy", endpoints.args("/train_toy", task="reverse", positions=True, seconds=1)
        elif make is None:
            lesson, steps = lessons[(i // len(USES)) % len(lessons)]
            yield i, api, endpoints.args(api, lesson=lesson, step=(i // len(USES)) % steps + 1)
        else:
            yield i, api, endpoints.args(api, **make(text_of(i, is_long(i)), i))


def lesson_steps(client) -> list[tuple[str, int]]:
    """Every lesson's id and number of steps, as /lessons lists them ({"id", "title", "steps"})."""
    return [(item["id"], int(item["steps"])) for item in client.predict(api_name="/lessons")]


def run(requests: int = REQUESTS, log: Path | None = None, holders: Path | None = None) -> dict:
    """The soak; with `holders`, the server started through bench/holders.py, which appends what holds its memory
    to that file at each RSS reading (docs/memory.md, "What grew")."""
    import os
    import signal

    from bench.holders import OUT_ENV
    from ui.runtime.memory import TRIM_EVERY_S
    from harness.live_app import ARTIFACTS, Endpoints, live_app

    command = env = None
    if holders is not None:
        holders.unlink(missing_ok=True)
        command, env = [sys.executable, "-m", "bench.holders"], {OUT_ENV: str(holders.resolve())}

    def reading() -> float:
        """The server's RSS at rest: read once its allocator's free pages have gone back (ui/runtime/memory.py trims
        every TRIM_EVERY_S): read at once, it swung by the last requests' freed arrays (up to 150 MB)."""
        time.sleep(TRIM_EVERY_S + 1)
        if holders is not None:
            os.kill(pid, signal.SIGUSR1)
            time.sleep(2)  # the report is written between two of the server's own steps
        return rss_mb(pid)

    with live_app(log or ARTIFACTS / "logs" / "bench_soak.log", env=env, command=command) as app:
        pid, client = app.process.pid, app.client()
        endpoints = Endpoints(client)
        lessons = lesson_steps(client)
        visitors = Visitors(app.url)
        # every model and every use once, before the baseline (their weights, caches and code paths in memory)
        for i, api, args in requests_of(endpoints, lessons, len(USES), start=10**6):
            client.predict(*args, api_name=api)
        client.predict(*endpoints.args("/train_toy", task="reverse", positions=True, seconds=1), api_name="/train_toy")
        points, errors, seconds = [(0, reading())], {}, {}
        print(f"soak: baseline RSS {points[0][1]} MB", file=sys.stderr)
        started = time.perf_counter()
        lock = threading.Lock()

        def one(request):
            i, api, args = request
            t0 = time.perf_counter()
            try:
                visitors.client(i).predict(*args, api_name=api)
                outcome = None
            except Exception as e:  # counted and named, not raised: one refusal must not end the soak
                outcome = f"{api}: {type(e).__name__}: {str(e)[:120]}"
            with lock:
                seconds.setdefault(api, []).append(time.perf_counter() - t0)
                if outcome:
                    errors[outcome] = errors.get(outcome, 0) + 1

        with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
            batch = []
            for request in requests_of(endpoints, lessons, requests):
                batch.append(request)
                if len(batch) == EVERY:
                    list(pool.map(one, batch))
                    batch = []
                    points.append((request[0] + 1, reading()))
                    print(f"soak: {points[-1][0]} requests, RSS {points[-1][1]} MB, "
                          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
            list(pool.map(one, batch))
    return summarise(points, errors, seconds, requests, time.perf_counter() - started)


def levels(points, filled_at: int) -> tuple[float, float, float | None]:
    """(the level at `filled_at`, the highest level after it, the trend in MB per 1,000 requests) from the readings
    (requests, MB): a level is the median of WINDOW readings in a row, the one at `filled_at` of the WINDOW from
    there on; the trend is the least-squares slope of the readings from `filled_at` on (None under two readings)."""
    import statistics

    ns = [n for n, _ in points if n >= filled_at]
    after = [mb for n, mb in points if n >= filled_at] or [points[-1][1]]
    window = min(WINDOW, len(after))
    medians = [statistics.median(after[i:i + window]) for i in range(len(after) - window + 1)]
    trend = None
    if len(ns) >= 2:
        mean_n, mean_mb = statistics.fmean(ns), statistics.fmean(after)
        trend = 1000 * sum((n - mean_n) * (mb - mean_mb) for n, mb in zip(ns, after)) / sum(
            (n - mean_n) ** 2 for n in ns)
    return medians[0], max(medians), trend


def summarise(points, errors, seconds, requests, total_s) -> dict:
    from bench import measure

    filled_at = min(FILLED, requests)  # a shorter run (a trial, --quick) is read at its end
    filled = [mb for n, mb in points if n >= filled_at]
    reading = filled[0] if filled else points[-1][1]
    after = [mb for n, mb in points if n > filled_at]
    level, highest, trend = levels(points, filled_at)
    return dict(requests=requests, clients=CLIENTS, visit=VISIT, every=EVERY, filled_at=filled_at, limit_mb=LIMIT_MB,
                baseline_mb=points[0][1], filled_mb=reading, end_mb=points[-1][1],
                growth_after_filled_mb=round(max(after) - reading, 1) if after else None,
                window=WINDOW, filled_level_mb=round(level, 1),
                growth_of_levels_mb=round(highest - level, 1) if after else None,
                trend_mb_per_1000=round(trend, 1) if trend is not None and after else None,
                points=points, errors=errors, total_s=round(total_s, 1),
                seconds={api: measure.summary(s) for api, s in sorted(seconds.items())})


def report_lines(r: dict) -> list[str]:
    """The soak's section of docs/benchmarks.md (bench/report.py)."""
    s = r["soak"]
    level, highest, trend = levels(s["points"], s["filled_at"])  # from the readings: older runs' JSON has no levels
    judged = s["growth_after_filled_mb"] is not None and s["filled_at"] >= FILLED
    growth = round(highest - level, 1)
    verdict = ("not judged: too few requests" if not judged else
               f"not judged: {s['requests']:,} requests, the target is {REQUESTS:,}" if s["requests"] < REQUESTS else
               "**met**" if growth <= s["limit_mb"] and not s["errors"] else "**missed**")
    curve = ", ".join(f"{n:,}: {mb:.0f}" for n, mb in s["points"][::max(1, len(s["points"]) // 12)])
    window = s.get("window", WINDOW)
    first = [n for n, _ in s["points"] if n >= s["filled_at"]][:window]  # the requests of the first level's readings
    return [
        "## A day of visitors (soak)",
        "",
        f"`python -m bench.soak` (bench/soak.py): {s['requests']:,} mixed requests through the views' public endpoints "
        f"(every model, a text no earlier request used, a tenth of them 200-250 words, a one-second toy training "
        f"every {TRAIN_EVERY}), {s['clients']} at a time, each visitor a new Gradio session every {s['visit']} "
        f"requests; {s['total_s'] / 60:.1f} min. Every model was asked of before the baseline. RSS is read at rest "
        f"every {s['every']} requests; a level is the median of {window} readings in a row "
        f"({window * s['every']:,} requests), as single readings swing by up to ±40 MB (docs/memory.md).",
        "",
        f"- RSS: {s['baseline_mb']:.0f} MB at the baseline, {level:.0f} MB its level at {s['filled_at']:,} requests "
        f"(the trace cache full; the median of the readings at {first[0]:,} to {first[-1]:,}), "
        f"{s['end_mb']:.0f} MB at the end; the highest level after: "
        f"{growth} MB above it (target: within {s['limit_mb']} MB): {verdict}",
        f"- single readings: {s['filled_mb']:.0f} MB at {s['filled_at']:,}, the highest after it "
        f"{'none' if s['growth_after_filled_mb'] is None else str(s['growth_after_filled_mb']) + ' MB'} above that; their trend from {s['filled_at']:,} on (least squares): "
        + (f"{trend:+.1f} MB per 1,000 requests" if trend is not None else "none"),
        f"- RSS in MB after so many requests: {curve}",
        f"- errors: {s['errors'] or 'none'}",
        *([f"- stopped early: {s['stopped_early']}"] if s.get("stopped_early") else []),
        *([f"- {s['note']}"] if s.get("note") else []),  # how and when a run was made, when not by `make bench`
        "",
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=REQUESTS)
    parser.add_argument("--out", type=Path, help="write the result as JSON here")
    parser.add_argument("--holders", type=Path, help="a probe: append what holds the server's memory to this file "
                        "(JSON lines, bench/holders.py) at each reading")
    args = parser.parse_args(argv)
    result = run(args.requests, holders=args.holders)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
