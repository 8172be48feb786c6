"""Train a preset: `python -m training.train lm|mlm|dates|classifier [--out DIR] [--steps N] [--resume]`.

Writes into the output folder (assets/<preset> by default): model.safetensors,
config.json, metrics.json, loss.csv and snapshots/step_*.safetensors (int8 matrices,
log-spaced steps, so the app can show attention patterns emerging).
Resumable: state is kept in runs/<preset>/ and --resume continues from it.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from model import checkpoint
from model.config import TransformerConfig
from model.device import default_device
from model.transformer import build
from training import corpus
from training.presets import PRESETS, Preset
from training.tasks import ClassifyTask, DatesTask, TextTask

ASSETS = Path(__file__).resolve().parent.parent / "assets"
RUNS = Path(__file__).resolve().parent.parent / "runs"


def snapshot_steps(steps: int, n: int) -> list[int]:
    """n steps spaced evenly on a log scale from 10 to the last step (fewer if steps is small)."""
    first = min(10, steps)
    return sorted({int(round(s)) for s in np.geomspace(first, steps, n)})


def jump_steps(probes: list[dict], n: int) -> list[int]:
    """n probe steps that show the induction score's rise: the last step before it passes 10% of the way
    from its first value to its highest, then the first steps past evenly spaced levels up to 90%."""
    if n <= 0 or len(probes) < 2:
        return []
    steps = [p["step"] for p in probes]
    scores = np.array([p["induction"] for p in probes])
    low, high = scores[0], scores.max()
    chosen = []
    for level in np.linspace(0.1, 0.9, max(1, n - 1)):
        first = int(np.argmax(scores >= low + level * (high - low)))
        if not chosen:
            chosen.append(steps[max(0, first - 1)])
        chosen.append(steps[first])
    return sorted(set(chosen))


def learning_rate(step: int, settings) -> float:
    """Linear warm-up, then cosine decay to a tenth."""
    if step < settings.warmup:
        return settings.lr * (step + 1) / settings.warmup
    progress = (step - settings.warmup) / max(1, settings.steps - settings.warmup)
    return settings.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


@torch.no_grad()
def validation_loss(model, task, device, step: int = 0) -> float:
    model.eval()
    losses = [task.loss(model, b, device)[0].item() for b in task.validation_batches(step)]
    model.train()
    return float(np.mean(losses))


def save_resume(directory: Path, model, optimizer, step: int, history: list, task, probes: list | None = None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()
               if not (k == "to_vocab.weight" and model.config.tie_embeddings)}  # tied: stored once, as the embedding
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for i, p in enumerate(params):
        state = optimizer.state.get(p, {})
        for key, value in state.items():
            tensors[f"opt.{i}.{key}"] = value.detach().cpu().reshape(-1) if value.dim() == 0 else value.detach().cpu().contiguous()
    tensors["torch_rng"] = torch.get_rng_state()
    save_file(tensors, str(directory / "state.safetensors"))
    (directory / "state.json").write_text(json.dumps({"step": step, "history": history, "rng": task.rng_state(),
                                                      "probes": probes or []}))


def load_resume(directory: Path, model, optimizer, task):
    meta = json.loads((directory / "state.json").read_text())
    tensors = load_file(str(directory / "state.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")}, strict=False)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for i, p in enumerate(params):
        state = {k.split(".", 2)[2]: v for k, v in tensors.items() if k.startswith(f"opt.{i}.")}
        if state:
            state["step"] = state["step"].reshape(())
            optimizer.state[p] = {k: v.to(p.device) for k, v in state.items()}
    torch.set_rng_state(tensors["torch_rng"])
    task.set_rng_state(meta["rng"])
    return meta["step"], meta["history"], meta.get("probes", [])


def train(name: str, out: Path | None = None, steps: int | None = None, resume: bool = False, seed: int = 0,
          tokenizer_path: Path | None = None, wordnet_dir: Path = corpus.WORDNET_DIR,
          fortunes_dir: Path = corpus.FORTUNES_DIR, runs: Path | None = None, bar_line: int = 0,
          overrides: dict | None = None) -> dict:
    """overrides: TrainSettings fields to change for this run (experiments: `--set repeat_rate=0.5`)."""
    preset = PRESETS[name]
    changes = {**(overrides or {}), **({} if steps is None else {"steps": steps})}
    settings = type(preset.train)(**{**preset.train.__dict__, **changes})
    preset = Preset(preset.task, preset.model, settings)
    out = Path(out or ASSETS / name)
    out.mkdir(parents=True, exist_ok=True)
    runs = Path(runs or RUNS / name)
    random.seed(seed), np.random.seed(seed), torch.manual_seed(seed)
    device = default_device()

    if preset.task == "text":
        task = TextTask(preset, out, Path(tokenizer_path or ASSETS / "tokenizer.json"), wordnet_dir, fortunes_dir, seed)
    elif preset.task == "classify":
        task = ClassifyTask(preset, out, Path(tokenizer_path or ASSETS / "tokenizer.json"), wordnet_dir, seed)
    else:
        task = DatesTask(preset, out, seed)
    config = TransformerConfig(vocab_size=task.vocab_size, **preset.model)
    model = build(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, betas=(0.9, 0.98), weight_decay=settings.weight_decay)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else torch.autocast("cpu", enabled=False)

    start, history, probes = 0, [], []
    probing = settings.probe_every > 0 and getattr(task, "probe_ids", None) is not None
    dense = runs / "dense"  # every probe's weights (as snapshots are kept), so snapshots around the jump can be kept
    if resume and (runs / "state.json").is_file():
        start, history, probes = load_resume(runs, model, optimizer, task)
        print(f"resuming {name} from step {start}", file=sys.stderr)
    keep = snapshot_steps(settings.steps, settings.snapshots)
    (out / "snapshots").mkdir(exist_ok=True)
    if start == 0:  # a fresh run: an earlier run's snapshots would show up in the Learning tab
        for old in [*(out / "snapshots").glob("step_*.safetensors"), *dense.glob("step_*.safetensors")]:
            old.unlink()

    t0, tokens_seen = time.time(), 0
    bar = tqdm(total=settings.steps, initial=start, desc=name, unit="step", dynamic_ncols=True, mininterval=2.0,
               position=bar_line)
    for step in range(start, settings.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, settings)
        with amp:
            loss, n_tokens = task.loss(model, task.batch(step), device)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        tokens_seen += n_tokens
        done = step + 1
        rate = tokens_seen / max(1e-9, time.time() - t0)
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{rate:,.0f}",
                        **({"induction": probes[-1]["induction"]} if probes else {}))
        row = None
        if done % settings.eval_every == 0 or done in keep or done == settings.steps:
            with amp:
                row = {"step": done, "train_loss": round(loss.item(), 4),
                       "val_loss": round(validation_loss(model, task, device, step), 4),
                       "lr": learning_rate(step, settings), "tokens_per_s": round(rate)}
                if task.window(step) is not None:  # text models: the window length both losses are over
                    row["window"] = task.window(step)
                if probing:  # the best head's induction score on repeated random words
                    row["induction"] = task.probe(model, device)["induction"]
            history.append(row)
        if probing and done % settings.probe_every == 0:
            probes.append({"step": done, **task.probe(model, device)})
            checkpoint.save(model, dense, f"step_{done:06d}.safetensors", int8=True)
        if done in keep:
            # int8 matrices, a scale per row: snapshots are drawn, never trained from (a quarter of float32)
            checkpoint.save(model, out / "snapshots", f"step_{done:06d}.safetensors", int8=True)
        if row is not None:
            save_resume(runs, model, optimizer, done, history, task, probes)
    bar.close()
    jump = [s for s in jump_steps(probes, settings.jump_snapshots) if s not in keep]
    for step in jump:  # the weights kept at the probe steps that show the induction head forming
        shutil.copy(dense / f"step_{step:06d}.safetensors", out / "snapshots" / f"step_{step:06d}.safetensors")

    elapsed = time.time() - t0
    checkpoint.save(model, out)
    with open(out / "loss.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(history[0]))
        writer.writeheader()
        writer.writerows(history)
    metrics = {
        "preset": name,
        "steps": settings.steps,
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_seconds_this_run": round(elapsed, 1),
        "device": str(device) + (f" ({torch.cuda.get_device_name()})" if device.type == "cuda" else f" ({torch.get_num_threads()} threads)"),
        "tokens_per_s": round(tokens_seen / max(elapsed, 1e-9)),
        "final": history[-1],
        "snapshots": [r for r in history if r["step"] in keep],
    }
    if probes:
        metrics["induction_probe"] = probes  # best head's induction score every probe_every steps
        metrics["jump_snapshots"] = jump
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", choices=sorted(PRESETS))
    parser.add_argument("--out", type=Path, help="output folder (default assets/<preset>)")
    parser.add_argument("--steps", type=int, help="override the preset's number of steps")
    parser.add_argument("--resume", action="store_true", help="continue from runs/<preset>/ if a saved state exists")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tokenizer", type=Path, help="BPE tokenizer file (trained here if missing)")
    parser.add_argument("--wordnet-dir", type=Path, default=corpus.WORDNET_DIR)
    parser.add_argument("--runs", type=Path, help="where resumable state is kept (default runs/<preset>)")
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's choice; 1 lets two runs share 2 cores)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="change a TrainSettings field for this run, e.g. --set repeat_rate=0.5 (repeatable)")
    parser.add_argument("--bar-line", type=int, default=0, help="terminal line of the progress bar (two runs side by side)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    overrides = {}
    for item in args.set:
        field_name, _, value = item.partition("=")
        default = getattr(PRESETS[args.preset].train, field_name, None)
        if default is None or not value or isinstance(default, tuple):
            parser.error(f"--set takes FIELD=VALUE with a number field of TrainSettings, got {item!r}")
        overrides[field_name] = type(default)(value)
    try:
        metrics = train(args.preset, args.out, args.steps, args.resume, args.seed, args.tokenizer, args.wordnet_dir,
                        runs=args.runs, bar_line=args.bar_line, overrides=overrides)
    except FileNotFoundError as e:
        sys.exit(f"error: {e}")
    print(json.dumps(metrics["final"]))


if __name__ == "__main__":
    main()
