"""Generation step by step: a causal model writes one token at a time, reading its key/value cache.

    from model import api
    from experiments import generation
    lm = api.load("lm")
    written = generation.generate_steps(lm, lm.encode("The cat").ids, 8)    # greedy
    step = written.steps[0]     # step.token, step.probability, step.cache_bytes
    step.attention.shape        # (layers, heads, 3): the last prompt token's row over <s>, The, ▁cat

Step 0 reads the whole prompt in one pass (filling the cache with its keys and values) and writes the first
token; every later step reads only the token written before it: one new query per layer and head, attending
over the cache. Each step keeps that query's attention row in every layer and head, the token chosen, its
probability and the cache's size after the step. `choose` picks the token from the step's logits (greedy by
default; analysis/sampling.py's `chooser` draws as the Sampling panel and /generate do).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from model import tokenizer as tok
from model.kv_cache import KVCache, bytes_per_token

MAX_NEW_TOKENS = 64  # the most tokens one generation writes
Choose = Callable[[np.ndarray], tuple[int, float]]  # float64 logits (v,) -> (token id, its probability when drawn)


def greedy(logits: np.ndarray) -> tuple[int, float]:
    """The likeliest token (the first, on a tie); it is taken for certain."""
    return int(np.argmax(logits)), 1.0


@dataclass
class GenerationStep:
    """One token written.

    id, token      the token chosen and its readable label
    probability    the model's own probability for it (softmax of its scores, before any sampling setting)
    drawn          its probability under the distribution it was chosen from (1 for greedy)
    attention      (layers, heads, n) float32: the new query's row over key positions 0 … n − 1 (n = the prompt's
                   length + this step's number), zero where a sliding window has dropped the key
    cache_bytes    what the cache holds after the step (its tensors' bytes)
    kept_from      the oldest position still in the cache after the step (0 without a sliding window)
    seconds        the wall time of the step's forward pass (the choice and the recording's copy left out)
    """

    id: int
    token: str
    probability: float
    drawn: float
    attention: np.ndarray
    cache_bytes: int
    kept_from: int
    seconds: float


@dataclass
class Generation:
    """A prompt and the steps that continued it, with the sizes that fix the cache's cost per token."""

    prompt_ids: list[int]
    prompt_tokens: list[str]
    steps: list[GenerationStep] = field(default_factory=list)
    finished: bool = False  # a step wrote the end-of-text token
    n_layers: int = 0
    n_heads: int = 0
    kv_heads: int = 0
    d_head: int = 0
    window: int = 0  # a sliding window's width; 0: none
    bytes_per_number: int = 4

    @property
    def bytes_per_token(self) -> int:
        return bytes_per_token(self.n_layers, self.kv_heads, self.d_head, self.bytes_per_number)

    @property
    def ids(self) -> list[int]:
        return self.prompt_ids + [s.id for s in self.steps]


def can_generate(loaded) -> bool:
    """A causal model with a word-prediction head (lm, GPT-2 and Llama-family folders)."""
    return loaded.arch == "decoder" and loaded.has_lm_head


def _rows(recording, seen: int) -> np.ndarray:
    """(layers, heads, seen): the last query's row in every layer, placed at its keys' positions (the last ones
    read; a window's dropped keys stay 0)."""
    probs = torch.stack([layer.probs[0, :, -1] for layer in recording.layers["self"]])  # (layers, h, s)
    rows = np.zeros((probs.size(0), probs.size(1), seen), dtype=np.float32)
    rows[:, :, seen - probs.size(-1):] = probs.float().cpu().numpy()
    return rows


@torch.inference_mode()
def generate_steps(loaded, ids: list[int], n: int, choose: Choose = greedy, stop_at_end: bool = True) -> Generation:
    """Up to n tokens after `ids` (at least one token), one step at a time with a key/value cache; stops when
    the model's context is full, and with stop_at_end after writing the end-of-text token (else the model goes
    on, starting a new text). loaded: a model/api.LoadedModel."""
    if not can_generate(loaded):
        raise ValueError(f"{loaded.name} does not write text token by token: generation needs a causal model "
                         "with a word-prediction head")
    if not ids:
        raise ValueError("nothing to continue: the prompt has no tokens")
    model, config = loaded.model, loaded.config
    n = max(0, min(n, config.max_len - len(ids)))
    attention = model.stack.blocks[0].self_attention
    cache: KVCache = model.new_cache()
    out = Generation(list(ids), [loaded.label(i) for i in ids], n_layers=config.n_layers, n_heads=attention.heads,
                     kv_heads=attention.kv_heads, d_head=attention.d, window=config.sliding_window,
                     bytes_per_number=next(model.parameters()).element_size())
    feed = list(ids)  # step 0 reads the prompt; each later step the token written before it
    for _ in range(n):
        fed = torch.tensor([feed], device=loaded.device)
        began = time.perf_counter()
        logits, recording = model.step(fed, cache, record=True)
        seconds = _finished(loaded, began)
        scores = loaded._no_specials(logits[0, -1], keep=(tok.EOS,)).double()  # as next_logits gives them
        token, drawn = choose(scores.cpu().numpy())
        probability = float(torch.softmax(scores, -1)[token])
        out.steps.append(GenerationStep(token, loaded.label(token), probability, float(drawn),
                                        _rows(recording, cache.seen), cache.nbytes, cache.start, seconds))
        if token == loaded.end_id:
            out.finished = True
            if stop_at_end:
                break
        feed = [token]
    return out


@torch.inference_mode()
def recompute_seconds(loaded, ids: list[int]) -> float:
    """The wall time of one full forward pass over `ids`, recording every head's attention as a step does:
    what writing the next token costs without a cache."""
    fed = torch.tensor([list(ids)], device=loaded.device)
    began = time.perf_counter()
    loaded.model(fed, record=True)
    return _finished(loaded, began)


def _finished(loaded, began: float) -> float:
    """Seconds since `began`, once the device has done what it was given (a GPU runs ahead of Python)."""
    if loaded.device.type == "cuda":
        torch.cuda.synchronize(loaded.device)
    return time.perf_counter() - began
