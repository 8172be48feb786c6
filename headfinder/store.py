"""Where each model's head-finder scores come from, and the answer /head_finder gives.

    finder = HeadFinder(registry)        # one per server, beside the registry
    scores = finder.scores("smollm2")    # Scores, or InputError while they are being computed (it says how far)
    scores.ranked("induction")[:10]      # the ten strongest induction heads
    finder.answer("lm", "induction")     # /head_finder's JSON

The shipped models' scores are precomputed (`python -m training.head_finder scores ...`): beside the weights for
the models trained here (assets/<name>/head_finder.json), in assets/head_finder/<name>.json for the pip-installed
ones. Any other model (a GGUF file or a folder in ATTENTION_MODELS) is measured on first use over COMPUTE_TEXTS texts
of the corpus in a worker process (the server answers others meanwhile), and the result is kept in a cache folder
keyed by the weights' sha256: $ATTENTION_HEAD_SCORES, else ~/.cache/attention-made-visible/head_scores, never the
lecturer's model folder.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from experiments import head_finder
from model import api, gguf, pretrained
from model.inputs import InputError, shown

log = logging.getLogger(__name__)

CACHE_ENV = "ATTENTION_HEAD_SCORES"
COMPUTE_TEXTS = 100  # texts of the corpus a model brought by the lecturer is measured on
SCORES = head_finder.SCORES
KEYS = ("head", "layer", "index", "previous", "induction", "first", "self", "entropy_bits", "mean_distance")
SCORE_NAMES = {"previous": "previous-token", "induction": "induction", "first": "first-token (sink)",
               "self": "self", "entropy_bits": "entropy (bits)", "mean_distance": "mean look-back distance"}


def cache_dir() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "attention-made-visible" / "head_scores"


def precomputed_path(name: str, assets: Path = api.ASSETS) -> Path:
    """Beside the weights for the models trained here; in assets/head_finder/ for the pip-installed ones."""
    return Path(assets) / name / "head_finder.json" if name in api.SHIPPED else \
        Path(api.ASSETS) / "head_finder" / f"{name}.json"


def check_score(score) -> str:
    if not isinstance(score, str) or score not in SCORES:
        raise InputError(f"Unknown score {shown(score)}: choose one of {', '.join(SCORES)}.")
    return score


@dataclass
class Scores:
    """One model's scores (experiments.head_finder.measure's dict), read-only."""

    data: dict
    _by_name: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._by_name = {h["head"]: h for h in self.data["heads"]}

    @property
    def heads(self) -> list[dict]:
        return self.data["heads"]

    @property
    def names(self):
        return self._by_name.keys()

    @property
    def corpus(self) -> dict:
        return self.data["corpus"]

    def head(self, name: str) -> dict:
        if name not in self._by_name:
            raise InputError(f"The model has no head {shown(name)}.")
        return self._by_name[name]

    def why_not(self, score: str, kind: str = "self") -> str | None:
        """Why `score` has no meaning for this model's heads of this kind (None: it has)."""
        return self.data["not_applicable"].get(kind, {}).get(score)

    def ranked(self, score: str) -> list[str]:
        """Head names by `score`, strongest first (heads where it does not apply are left out)."""
        check_score(score)
        measured = [h for h in self.heads if h[score] is not None]
        return [h["head"] for h in sorted(measured, key=lambda h: -h[score])]

    def rank(self, name: str, score: str) -> int | None:
        """1-based rank of one head by `score` (None where it does not apply)."""
        ranked = self.ranked(score)
        return ranked.index(name) + 1 if name in ranked else None

    def example(self, name: str, score: str) -> str:
        """The text that shows a head's score: the corpus text where it was highest (for induction, the random
        words said twice that it was measured on)."""
        return self.data["examples"][self.head(name)["example"][check_score(score)]]


def read_scores(path: Path) -> Scores:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") != head_finder.FORMAT:
        raise ValueError(f"{path.name} is of format {data.get('format')}; this version reads {head_finder.FORMAT}")
    return Scores(data)


ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Job:
    process: subprocess.Popen
    total: int  # steps: the texts, then the repeated words
    out: Path

    def done(self) -> int:
        try:
            return int(self.out.with_suffix(".progress").read_text() or 0)
        except (OSError, ValueError):  # not written yet, or being written
            return 0


class HeadFinder:
    """Every model's scores, read once and kept (a few tens of KB each); the computations running in workers."""

    def __init__(self, registry, sources: dict[str, str] | None = None, cache: Path | None = None,
                 texts: int = COMPUTE_TEXTS):
        self.registry = registry
        self.sources = pretrained.configured() if sources is None else dict(sources)  # name -> GGUF file or folder
        self.cache = cache
        self.texts = texts
        self._scores: dict[str, Scores] = {}
        self._answers: dict[tuple, dict] = {}
        self._jobs: dict[str, Job] = {}
        self._failed: dict[str, str] = {}
        self._hashes: dict[tuple, str] = {}
        self._lock = threading.Lock()

    # ---- where the scores are ----------------------------------------------------------------------------
    def weights_file(self, name: str) -> Path | None:
        """The file whose sha256 keys a computed model's scores: its GGUF file, or its folder's weights."""
        source = self.sources.get(name)
        if source is None:
            return None
        path = Path(source).expanduser()
        if gguf.is_gguf(source):
            return path
        return path / "model.safetensors" if path.is_dir() else None

    def _sha256(self, path: Path) -> str:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if key not in self._hashes:
            self._hashes[key] = pretrained.sha256(path)
        return self._hashes[key]

    def cached_path(self, name: str) -> Path | None:
        weights = self.weights_file(name)
        if weights is None or not weights.is_file():
            return None
        return (self.cache or cache_dir()) / f"{self._sha256(weights)}.json"

    def status(self, name: str) -> str:
        """"ready", "computing" (a worker is measuring it), "failed" or "missing" (nothing asked yet)."""
        with self._lock:
            return self._status(name)

    def _status(self, name: str) -> str:
        if name in self._scores:
            return "ready"
        if name in self._failed:
            return "failed"
        job = self._jobs.get(name)
        if job is not None:
            if job.process.poll() is None:
                return "computing"
            del self._jobs[name]
            if job.process.returncode == 0 and job.out.is_file():
                self._scores[name] = read_scores(job.out)
                return "ready"
            code = job.process.returncode
            log.warning("measuring %s's heads failed: see %s", name, job.out.with_suffix(".log"))
            self._failed[name] = f"Measuring {name}'s heads failed (the worker stopped with code {code})."
            return "failed"
        for path in (precomputed_path(name, self.registry.assets), self.cached_path(name)):
            if path is not None and path.is_file():
                self._scores[name] = read_scores(path)
                return "ready"
        return "missing"

    def progress(self, name: str) -> tuple[int, int]:
        """(texts measured, texts to measure) of a computation under way; (0, 0) when none is."""
        job = self._jobs.get(name)
        return (job.done(), job.total) if job is not None else (0, 0)

    def scores(self, name, start: bool = True) -> Scores:
        """The model's scores; InputError for an unknown model, one that cannot be measured, or one being measured
        (started here when `start`): its message says how far the computation is."""
        self.registry.get(name)  # an unknown or broken model: its own message
        with self._lock:
            state = self._status(name)
            if state == "missing":
                if not start or self.cached_path(name) is None:
                    raise InputError(f"No head-finder scores for {name}: it is neither shipped with them nor a GGUF "
                                     f"file or model folder listed in {pretrained.MODELS_ENV}.")
                self._start(name)
                state = "computing"
            if state == "failed":
                raise InputError(self._failed[name])
            if state == "computing":
                done, total = self.progress(name)
                raise InputError(f"Measuring every head of {name} over {total} texts ({done} done): this takes a "
                                 "minute or two, once. Ask again shortly.")
            return self._scores[name]

    def _start(self, name: str) -> None:
        out = self.cached_path(name)
        out.parent.mkdir(parents=True, exist_ok=True)
        texts = min(self.texts, len(head_finder.read_corpus()))
        # a fresh interpreter that imports only what measuring needs (multiprocessing's spawn re-imported app.py,
        # Gradio and all, first): the server's threads and its GIL stay its own
        with open(out.with_suffix(".log"), "w") as errors:
            process = subprocess.Popen([sys.executable, "-m", "experiments.head_finder", str(self.sources[name]), name,
                                        str(texts), str(out)], cwd=ROOT, stdout=errors, stderr=subprocess.STDOUT)
        log.info("measuring %s's heads over %d texts in process %s", name, texts, process.pid)
        self._jobs[name] = Job(process, texts + 1, out)

    def wait(self, name: str, timeout: float | None = None) -> Scores:
        """Block until a computation under way ends (tests, the CLI); then scores(name)."""
        job = self._jobs.get(name)
        if job is not None:
            job.process.wait(timeout)
        return self.scores(name, start=False)

    # ---- /head_finder -----------------------------------------------------------------------------------
    def answer(self, model, score) -> dict:
        """/head_finder's answer: {"model", "corpus": {"name", "texts", "tokens"}, "heads": [...], "ranked": [...]},
        kept per (model, score): the precomputed answer costs a dictionary lookup."""
        score = check_score(score)
        scores = self.scores(model)
        key = (model, score)
        if key not in self._answers:
            why = scores.why_not(score)
            if why is not None and not scores.ranked(score):
                raise InputError(f"{model} has no {SCORE_NAMES[score]} score: {why}.")
            corpus = scores.corpus
            self._answers[key] = {
                "model": model, "corpus": {key: corpus[key] for key in ("name", "texts", "tokens")},
                "heads": [{**{k: h[k] for k in KEYS}, "kind": h["kind"], "spread": h["spread"]} for h in scores.heads],
                "ranked": scores.ranked(score), "not_applicable": scores.data["not_applicable"]}
        return self._answers[key]


_FINDERS: dict[int, tuple] = {}  # id(registry) -> (registry, its HeadFinder): one per server, shared by the tabs


def finder_for(registry) -> HeadFinder:
    """The registry's HeadFinder, made on first use (the Head finder tab and Every head's table read the same one)."""
    entry = _FINDERS.get(id(registry))
    if entry is None or entry[0] is not registry:
        entry = _FINDERS[id(registry)] = (registry, HeadFinder(registry))
    return entry[1]
