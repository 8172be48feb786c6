"""The head finder's numbers: every head of a model measured over a corpus, not one sentence.

Each corpus text is traced once and measured with analysis.head_stats (the numbers the single-sentence head
table shows); induction is measured as Olsson et al. do, on sequences of random words said twice
(experiments.copying), the score analysis.induction gives. Each score is the mean over the texts (the
sequences, for induction) with its standard deviation, the spread between texts.

    from model import api
    from experiments import head_finder
    lm = api.load("lm")
    scores = head_finder.measure(lm, head_finder.read_corpus())   # JSON-ready: "heads", "corpus", ...

A score that has no meaning for a head is left out (None in JSON, its reason in "not_applicable"), never 0:
induction in a bidirectional encoder (it reads the second copy's next word itself, so looking back is no
skill) and previous, self, mean_distance and induction in cross-attention (queries and keys are two texts).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import numpy as np

from analysis.head_stats import head_numbers
from analysis.heads import head_name
from analysis.induction import induction_scores
from experiments import copying

CORPUS = Path(__file__).resolve().parent.parent / "assets" / "head_corpus.txt"
CORPUS_NAME = "head_corpus.txt"
DATES_CORPUS = "written dates (training/dates.py, validation split, seed 0)"
FORMAT = 1
# the scores, in the order the API lists them; every one is a mean over the corpus with its spread
SCORES = ("previous", "induction", "first", "self", "entropy_bits", "mean_distance")
PER_TEXT = ("previous", "first", "self", "entropy_bits", "mean_distance")  # head_numbers' names
REPEATED = 32  # random-word sequences said twice, for induction
REPEATED_WORDS = 20  # words in each (as the Copying tab measures)
SAMPLE_TEXTS = 3  # the first texts' own numbers are kept too, so a test can recompute them
ENCODER_INDUCTION = ("a bidirectional encoder reads the second copy's next word itself: looking back at it is "
                     "no skill, so induction is measured on causal models only")
DATES_DECODER = ("the dates model's decoder only ever writes the ten characters of an ISO date: it has no words to "
                 "say twice")
CROSS = "cross-attention: its queries and keys are two different texts, so positions do not line up"


def read_corpus(path: Path = CORPUS) -> list[str]:
    """The shipped corpus: one text a line (made by `python -m training.head_finder corpus`)."""
    return [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def not_applicable(arch: str, kind: str) -> dict[str, str]:
    """score -> why it has no meaning for this model's heads of this kind (absent: it applies)."""
    if kind == "cross":
        return {name: CROSS for name in ("previous", "self", "mean_distance", "induction")}
    if kind == "decoder":  # the dates model's decoder: causal, but it only ever writes an ISO date
        return {"induction": DATES_DECODER}
    if arch != "decoder":
        return {"induction": ENCODER_INDUCTION}
    return {}


def _kinds(loaded) -> tuple[str, ...]:
    return ("encoder", "decoder", "cross") if loaded.arch == "encoder-decoder" else ("self",)


def per_text(loaded, text: str) -> tuple[dict[str, dict[str, np.ndarray]], int]:
    """({kind: {score: (L, H)}}, tokens) for one text: analysis.head_stats' numbers of each attention kind."""
    trace = loaded.trace(text, predictions=False, scores=False)
    numbers = {}
    for kind, att in trace.attention.items():
        values = head_numbers(att.probs, att.mask, aligned=kind != "cross")
        numbers[kind] = {name: values[name] for name in PER_TEXT}
    return numbers, len(trace.ids)


def repeated_induction(loaded, n: int = REPEATED, words: int = REPEATED_WORDS, seed: int = 0):
    """((n, L, H) induction scores, the first sequence's text) on n sequences of random words said twice."""
    words = min(words, (loaded.config.max_len - 1) // 2, len(copying.word_ids(loaded.tokenizer)))  # a tiny vocabulary
    ids = copying.repeated_ids(loaded, n, words, seed)
    scores = []
    for row in ids:
        att = loaded.trace_ids(row.tolist(), predictions=False, scores=False).attention["self"]
        scores.append(induction_scores(att.probs, row))
    text = loaded.tokenizer.decode(ids[0, 1:].tolist()).strip()  # the words, twice: a text the app can trace
    return np.stack(scores), text


def _finite(value) -> float | None:
    return round(float(value), 4) if np.isfinite(value) else None


def measure(loaded, texts: list[str], corpus_name: str = CORPUS_NAME, repeated: int = REPEATED,
            progress: Callable[[int, int], None] | None = None) -> dict:
    """Every head's scores over `texts` as a JSON-ready dict (docs/head_finder.md describes it).
    progress(done, total) is called after each text (and the repeated sequences, counted as one step)."""
    kinds = _kinds(loaded)
    values: dict[str, dict[str, list]] = {kind: {name: [] for name in PER_TEXT} for kind in kinds}
    tokens, total = 0, len(texts) + (loaded.arch == "decoder")
    for i, text in enumerate(texts):
        numbers, count = per_text(loaded, text)
        tokens += count
        for kind in kinds:
            for name in PER_TEXT:
                values[kind][name].append(numbers[kind][name])
        if progress is not None:
            progress(i + 1, total)
    stacked = {kind: {name: np.stack(v) for name, v in values[kind].items()} for kind in kinds}  # (T, L, H)
    induction, induction_text = None, None
    if loaded.arch == "decoder":
        induction, induction_text = repeated_induction(loaded, repeated)
        stacked["self"]["induction"] = induction
        if progress is not None:
            progress(total, total)
    examples: list[str] = []  # the texts heads are opened on, each once
    heads = []
    for kind in kinds:
        skip = not_applicable(loaded.arch, kind)
        n_layers, n_heads = stacked[kind]["first"].shape[1:]
        for layer in range(n_layers):
            for index in range(n_heads):
                head = {"head": head_name(layer, index) if kind == "self" else f"{kind} {head_name(layer, index)}",
                        "layer": layer + 1, "index": index + 1, "kind": kind, "spread": {}, "example": {}}
                for name in SCORES:
                    if name in skip or name not in stacked[kind]:
                        head[name] = None
                        continue
                    column = stacked[kind][name][:, layer, index]
                    with np.errstate(invalid="ignore"):
                        head[name] = _finite(np.nanmean(column)) if np.isfinite(column).any() else None
                        head["spread"][name] = _finite(np.nanstd(column)) if np.isfinite(column).any() else None
                    text = induction_text if name == "induction" else texts[int(np.nanargmax(
                        np.nan_to_num(column, nan=-np.inf)))]
                    if text not in examples:
                        examples.append(text)
                    head["example"][name] = examples.index(text)
                heads.append(head)
    sample = {kind: {name: np.round(stacked[kind][name][:SAMPLE_TEXTS], 5).tolist() for name in PER_TEXT}
              for kind in kinds}
    return {"format": FORMAT, "model": loaded.name, "arch": loaded.arch,
            "corpus": {"name": corpus_name, "texts": len(texts), "tokens": tokens,
                       "sha256": hashlib.sha256("\n".join(texts).encode()).hexdigest()},
            "repeated": None if induction is None else {
                "sequences": int(induction.shape[0]), "words": len(induction_text.split()) // 2, "seed": 0,
                "text": induction_text},
            "scores": list(SCORES), "not_applicable": {kind: not_applicable(loaded.arch, kind) for kind in kinds},
            "examples": examples, "sample": sample, "heads": heads}


def work(source: str, name: str, texts: int, out: str) -> None:
    """A worker process's whole job (`python -m experiments.head_finder SOURCE NAME TEXTS OUT`, started by
    headfinder/store.py): load the model from `source` (a GGUF file or a model folder), measure it over the corpus's
    first `texts` texts, and write the JSON to `out` (atomically). Progress goes to OUT with the suffix .progress,
    one number: the steps done."""
    import json
    import os
    import time

    import torch

    from model import api

    torch.set_num_threads(max(1, (os.cpu_count() or 2) - 1))  # a core stays free for the server
    out = Path(out)
    steps = out.with_suffix(".progress")

    def progress(count, _total):
        steps.write_text(str(count))

    start, cpu = time.perf_counter(), time.process_time()
    loaded = api.load_pretrained(source, name, device="cpu")
    result = measure(loaded, read_corpus()[:texts], CORPUS_NAME, progress=progress)
    # what it cost, for docs/head_finder.md: wall time moves with the machine's load, CPU time much less
    result["computed"] = {"wall_s": round(time.perf_counter() - start, 1), "cpu_s": round(time.process_time() - cpu, 1)}
    partial = out.with_suffix(".partial")
    partial.write_text(json.dumps(result, separators=(",", ":")), encoding="utf-8")
    os.replace(partial, out)
    steps.unlink(missing_ok=True)


if __name__ == "__main__":
    import sys

    work(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
