"""Random 12-layer Llama and Qwen2 checkpoints (the shape of SmolLM2-135M's attention and larger: d = 768,
12 query heads sharing 4 (Llama) or 2 (Qwen2) key/value heads, SwiGLU of 2,048), built on this machine with
transformers' config classes and this project's byte-level BPE tokenizer: no download. How fast a model runs
does not depend on what its weights learned.

    python -m bench.llama_family /tmp/models     # builds them (kept for the next run) and prints the timings

Timed in this process, at 512 tokens: the trace every view reads (record=True: every step of every head
kept), the plain forward pass without it, and transformers' own eager forward on the same weights.
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

from model.api import ASSETS

SEED = 0
TOKENS = 512
REPEATS = 3
SHAPE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=2048,
             max_position_embeddings=2048, vocab_size=4096, bos_token_id=1, eos_token_id=2)
FAMILIES = {"llama-12x12": ("LlamaConfig", "LlamaForCausalLM", dict(num_key_value_heads=4, tie_word_embeddings=True)),
            "qwen2-12x12": ("Qwen2Config", "Qwen2ForCausalLM", dict(num_key_value_heads=2, rope_theta=1000000.0))}


def build(root: Path) -> dict[str, Path]:
    """Both checkpoints under `root`, name -> folder (a second run reuses them)."""
    import torch
    import transformers as t

    folders = {}
    for name, (config_class, model_class, fields) in FAMILIES.items():
        folder = Path(root) / name
        if not (folder / "model.safetensors").is_file():
            torch.manual_seed(SEED)
            model = getattr(t, model_class)(getattr(t, config_class)(**SHAPE, **fields))
            folder.mkdir(parents=True, exist_ok=True)
            model.eval().save_pretrained(folder, safe_serialization=True)
            shutil.copy(ASSETS / "tokenizer.json", folder / "tokenizer.json")
        folders[name] = folder
    return folders


def _median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up: first calls pay for allocations
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def timings(root: Path, tokens: int = TOKENS, repeats: int = REPEATS) -> dict[str, dict]:
    """name -> {parameters, tokens, trace_s, forward_s, transformers_s}: medians of `repeats` runs."""
    import torch
    import transformers as t

    from model import api
    from model.switches import PLAIN

    results = {}
    for name, folder in build(root).items():
        loaded = api.load_pretrained(folder, name, device="cpu")
        ids = torch.randint(3, SHAPE["vocab_size"], (1, tokens), generator=torch.Generator().manual_seed(SEED))
        oracle = getattr(t, FAMILIES[name][1]).from_pretrained(str(folder), attn_implementation="eager").eval()
        with torch.inference_mode():
            trace = lambda: loaded.trace_ids(ids[0].tolist())  # noqa: E731
            forward = lambda: loaded.model(ids, switches=PLAIN)  # noqa: E731
            theirs = lambda: oracle(ids)  # noqa: E731
            results[name] = dict(parameters=sum(p.numel() for p in loaded.model.parameters()), tokens=tokens,
                                 repeats=repeats,
                                 query_heads=loaded.config.n_heads, kv_heads=loaded.config.kv_heads,
                                 trace_s=round(_median_seconds(trace, repeats), 3),
                                 forward_s=round(_median_seconds(forward, repeats), 3),
                                 transformers_s=round(_median_seconds(theirs, repeats), 3))
    return results


def section(results: dict) -> list[str]:
    """The report's lines for these figures (bench/report.py), or none when they were not measured."""
    figures = results.get("llama_family")
    if not figures:
        return []
    lines = ["", "## Llama-family checkpoints at 512 tokens", "",
             "Random 12-layer checkpoints built here (`bench/llama_family.py`), timed in the bench process on the CPU "
             f"(medians of {next(iter(figures.values())).get('repeats', 3)}): the trace every view reads (every step of every head kept), the forward pass without "
             "it, and `transformers`' eager forward on the same weights.", "",
             "| checkpoint | parameters | query / key-value heads | trace | forward | transformers (eager) |",
             "|---|---|---|---|---|---|"]
    for name, f in figures.items():
        lines.append(f"| {name} | {f['parameters'] / 1e6:.1f} M | {f['query_heads']} / {f['kv_heads']} | "
                     f"{f['trace_s'] * 1000:,.0f} ms | {f['forward_s'] * 1000:,.0f} ms | "
                     f"{f['transformers_s'] * 1000:,.0f} ms |")
    return lines


if __name__ == "__main__":
    print(json.dumps(timings(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/bench-models")), indent=2))
