"""Issue 39's CPU target alone: /analyze through the server for a new 512-token sentence against the plain
forward pass on the same ids (bench/long_inputs.forward_ratio, the figure `make bench` records), without the
rest of the long-input section. A few minutes instead of most of an hour:

    python -m bench.forward_ratio            # bert-base, 5 sentences
    python -m bench.forward_ratio -n 3 --model gpt2 --rounds 2

Each round is one forward_ratio call on its own sentences (seeds move on by round); the app is started
once, with both 12 x 12-head checkpoints (bench/checkpoints.py), as `make bench` starts it, and first
answers --warm distinct 512-token sentences: in `make bench` the sections before this one have filled the
server's trace cache, so that each new trace pushes an old one out (model/buffers.py reuses its memory).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from bench import long_inputs
from bench.checkpoints import build
from bench.sentences import sentence
from harness.live_app import ARTIFACTS, Endpoints, live_app


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=5, help="sentences per round (make bench: 5)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--model", choices=long_inputs.BIG, default="bert-base")
    parser.add_argument("--warm", type=int, default=6, help="/analyze calls before measuring (6 fill the 1 GiB cache)")
    args = parser.parse_args(argv)
    from model import api

    folders = build(long_inputs.MODELS_DIR)
    model = api.load_pretrained(folders[args.model], args.model, "cpu", context=long_inputs.LONG)
    env = {"ATTENTION_MODELS": ", ".join(f"{name}={folders[name]}" for name in long_inputs.BIG)}
    with live_app(ARTIFACTS / "logs" / "bench_forward_ratio.log", env=env) as app:
        client = app.client()
        endpoints = Endpoints(client)
        for s in range(args.warm):
            client.predict(*endpoints.args("/analyze", text=sentence(model, long_inputs.LONG, seed=90_000 + s),
                                           name=args.model, kind=None), api_name="/analyze")
        for r in range(args.rounds):
            result = long_inputs.forward_ratio(client, endpoints, args.model, model, args.n, pid=app.process.pid,
                                               seed=41_000 + 100 * r)
            print(json.dumps(dict(round=r + 1, model=args.model, load_average=[round(x, 2) for x in os.getloadavg()],
                                  **result)), flush=True)
    print("done", file=sys.stderr)


if __name__ == "__main__":
    main()
