"""The head finder's shipped files, made once by command (experiments/head_finder.py measures):

    python -m training.head_finder corpus               # assets/head_corpus.txt from the training sources
    python -m training.head_finder scores lm mlm ...    # their precomputed scores (headfinder/store.py reads them)

The corpus: sentences from the project's own training text (training/corpus.py: WordNet's glosses and examples,
and fortunes), the validation split only (the trained models never learned from it), 6 to 30 words each, picked by
a stable hash so the same command always writes the same file. The dates model reads written dates, so its corpus
is the dates generator's validation split instead (experiments.head_finder.DATES_CORPUS).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import torch

from experiments import head_finder
from headfinder.store import precomputed_path
from model import api
from training import corpus, dates

CORPUS_TEXTS = 300
MAX_WORDS, MIN_WORDS, MAX_CHARS = 30, 6, 200
MAX_BYTES = 100_000
DATES_TEXTS = 200


def corpus_lines(lines: list[str], n: int = CORPUS_TEXTS) -> list[str]:
    """n validation lines of MIN_WORDS..MAX_WORDS words, ordered by a stable hash (a fixed, mixed pick)."""
    chosen = [line for line in lines if corpus.is_validation(line) and MIN_WORDS <= len(line.split()) <= MAX_WORDS
              and len(line) <= MAX_CHARS and line.isprintable()]
    return sorted(chosen, key=lambda line: (zlib.adler32(line.encode()), line))[:n]


def write_corpus(path: Path = head_finder.CORPUS) -> Path:
    text = "\n".join(corpus_lines(corpus.read_lines())) + "\n"
    if len(text.encode()) > MAX_BYTES:
        raise SystemExit(f"the corpus would be {len(text.encode())} bytes, more than {MAX_BYTES}")
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)


def dates_corpus(n: int = DATES_TEXTS) -> list[str]:
    return [source for source, _ in dates.pairs(n, "validation", seed=0)]


def texts_for(name: str) -> tuple[list[str], str]:
    """(texts, corpus name) a shipped model is measured on."""
    return (dates_corpus(), head_finder.DATES_CORPUS) if name == "dates" else \
        (head_finder.read_corpus(), head_finder.CORPUS_NAME)


def write_scores(name: str, limit: int | None = None) -> Path:
    loaded = api.load(name, device="cpu")
    texts, corpus_name = texts_for(name)
    texts = texts[:limit] if limit else texts
    start = time.perf_counter()
    result = head_finder.measure(loaded, texts, corpus_name, progress=lambda done, total: (
        print(f"{name}: {done}/{total}", flush=True) if done % 50 == 0 else None))
    print(f"{name}: {len(texts)} texts, {result['corpus']['tokens']} tokens in {time.perf_counter() - start:.0f} s")
    path = precomputed_path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("corpus", help="write assets/head_corpus.txt")
    scores = commands.add_parser("scores", help="measure shipped models over the corpus")
    scores.add_argument("models", nargs="+", choices=api.SHIPPED + api.PRETRAINED)
    scores.add_argument("--limit", type=int, default=None, help="the first N texts only")
    args = parser.parse_args(argv)
    if args.command == "corpus":
        path = write_corpus()
        print(f"{path}: {len(head_finder.read_corpus(path))} texts, {path.stat().st_size} bytes")
        return
    torch.set_num_threads(1)  # a shared machine: one core, and the numbers do not depend on it
    for name in args.models:
        size = write_scores(name, args.limit).stat().st_size
        print(precomputed_path(name).relative_to(api.ASSETS.parent), size, "bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
