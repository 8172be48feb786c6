"""What training left beside a model: the loss curve, the snapshot steps, evaluation results.

Reads assets/<name>/metrics.json, loss.csv and snapshots/ (written by training/train.py and
training/evaluate.py). Missing files give empty values, never an exception: a model copied
without its history still loads.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class MeasuredHead:
    """A head `python -m training.evaluate` singled out (0-based), with its score and how many
    examples it was measured on (None if not recorded)."""

    layer: int
    head: int
    score: float
    examples: int | None = None

    @classmethod
    def parse(cls, block) -> "MeasuredHead | None":
        """From metrics.json's {"layer": .., "head": .., "score": ..}; None when absent or malformed."""
        try:
            examples = block.get("examples")
            return cls(int(block["layer"]), int(block["head"]), float(block["score"]),
                       int(examples) if examples is not None else None)
        except (AttributeError, KeyError, TypeError, ValueError):
            return None


@dataclass
class TrainingHistory:
    """steps, train_loss, val_loss  (n,) float32 arrays from loss.csv (NaN where a value is missing)
    windows     (n,) int: the window length in tokens the losses were measured on (0 = not recorded)
    snapshots   training steps that have saved weights, ascending
    evaluation  metrics.json's "evaluation" block ({} if none)
    heads       the evaluation's named heads ("previous_token_head", "best_cross_head", ...), parsed
    induction   (steps, scores) of the best head's induction score during training (lm's probe; empty if none)"""

    steps: np.ndarray
    train_loss: np.ndarray
    val_loss: np.ndarray
    windows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    snapshots: list[int] = field(default_factory=list)
    evaluation: dict = field(default_factory=dict)
    heads: dict[str, MeasuredHead] = field(default_factory=dict)
    induction: tuple[np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)))

    def head(self, key: str) -> MeasuredHead | None:
        return self.heads.get(key)

    def loss_at(self, step: int) -> tuple[float, float] | None:
        """(train, validation) loss logged at `step`, or None if that step was not logged."""
        hits = np.flatnonzero(self.steps == step)
        if not hits.size:
            return None
        return float(self.train_loss[hits[0]]), float(self.val_loss[hits[0]])

    def window_at(self, step: int) -> int | None:
        """The window length (tokens) the losses at `step` were measured on, if recorded."""
        hits = np.flatnonzero(self.steps == step)
        if not hits.size or hits[0] >= len(self.windows) or self.windows[hits[0]] <= 0:
            return None
        return int(self.windows[hits[0]])


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def read_history(directory: Path) -> TrainingHistory:
    directory = Path(directory)
    rows = []
    loss_csv = directory / "loss.csv"
    if loss_csv.is_file():
        with open(loss_csv, newline="") as f:
            rows = list(csv.DictReader(f))
    metrics = {}
    if (directory / "metrics.json").is_file():
        try:
            metrics = json.loads((directory / "metrics.json").read_text())
        except json.JSONDecodeError:
            metrics = {}
    if not rows:  # fall back on the rows metrics.json keeps for the snapshots
        rows = metrics.get("snapshots", [])
    folder = directory / "snapshots"
    snapshots = sorted(int(f.stem.split("_")[1]) for f in folder.glob("step_*.safetensors")) if folder.is_dir() else []
    evaluation = metrics.get("evaluation", {}) if isinstance(metrics.get("evaluation"), dict) else {}
    heads = {key: MeasuredHead.parse(block) for key, block in evaluation.items() if key.endswith("_head")}
    probe = [p for p in metrics.get("induction_probe", []) if isinstance(p, dict)]
    return TrainingHistory(
        steps=np.array([int(_number(r.get("step"))) for r in rows], dtype=np.int64),
        train_loss=np.array([_number(r.get("train_loss")) for r in rows], dtype=np.float32),
        val_loss=np.array([_number(r.get("val_loss")) for r in rows], dtype=np.float32),
        windows=np.array([int(np.nan_to_num(_number(r.get("window")))) for r in rows], dtype=np.int64),
        snapshots=snapshots,
        evaluation=evaluation,
        heads={key: head for key, head in heads.items() if head is not None},
        induction=(np.array([int(_number(p.get("step"))) for p in probe], dtype=np.int64),
                   np.array([_number(p.get("induction")) for p in probe], dtype=np.float32)),
    )
