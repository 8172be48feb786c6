"""A tiny transformer trained live on a toy task (training/toy_tasks.py), in under a minute on a CPU.

The model is the project's own bidirectional encoder (model.transformer.build, arch "encoder"): its
per-position output (to_vocab) writes one answer symbol under each input symbol. Training is
time-boxed and yields snapshots (loss curve, held-out accuracy, every head on a fixed example).

    trainers = [Trainer(ToySettings(task="reverse"))]
    for (snapshot,) in train(trainers):      # snapshots about every half second, then a final one
        print(snapshot.step, snapshot.accuracy)
    model = TrainedToy(snapshot.settings, snapshot.weights)   # weights travel as safetensors bytes
    model.predict("abcdefghij").output                        # 'jihgfedcba'

Nothing here touches the disk, and nothing is shared between trainers: each has its own model,
optimiser and random generator (ui/tabs/live.py runs each training in a process of its own).
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, fields
from typing import Callable, Iterator

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from model.config import TransformerConfig
from model.transformer import build
from training.toy_tasks import TASKS, SettingsError, ascii_codes, bracket_partners, evaluation_set, training_batch

# ---- settings and caps -----------------------------------------------------------------------------
MAX_SECONDS = 60
MIN_SECONDS = 1
MAX_STEPS = 20_000
MAX_LAYERS = 4
HEAD_CHOICES = (1, 2, 4)
WIDTH_CHOICES = (16, 32, 64, 128)
BATCH_SIZE = 64
LEARNING_RATE = 1e-3
WARMUP_STEPS = 50
SNAPSHOT_EVERY_S = 0.5
LEARNED_FOR_S = 5.0  # stop early once every held-out answer has been right for this long



def _number(value, name: str, low, high, integer: bool):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise SettingsError(f"{name} must be a number from {low} to {high}, not {str(value)[:40]!r}.")
    if integer and value != int(value):
        raise SettingsError(f"{name} must be a whole number from {low} to {high}, not {value}.")
    if not low <= value <= high:
        raise SettingsError(f"{name} must be from {low} to {high}; {value:g} is out of range.")
    return int(value) if integer else float(value)


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise SettingsError(f"{name} must be true or false, not {str(value)[:40]!r}.")
    return bool(value)


@dataclass(frozen=True)
class ToySettings:
    """What one training run uses; every value is checked against the caps when it is made."""

    task: str = "reverse"
    positions: bool = True
    layers: int = 2
    heads: int = 2
    width: int = 32
    wide: bool = False
    seconds: float = 30.0
    seed: int = 0

    def __post_init__(self):
        if not isinstance(self.task, str) or self.task not in TASKS:
            raise SettingsError(f"task must be one of {', '.join(TASKS)}; got {str(self.task)[:40]!r}.")
        checked = dict(
            positions=_flag(self.positions, "positions"), wide=_flag(self.wide, "wide"),
            layers=_number(self.layers, "layers", 1, MAX_LAYERS, True),
            heads=_number(self.heads, "heads", 1, max(HEAD_CHOICES), True),
            width=_number(self.width, "width", min(WIDTH_CHOICES), max(WIDTH_CHOICES), True),
            seconds=_number(self.seconds, "seconds", MIN_SECONDS, MAX_SECONDS, False),
            seed=_number(self.seed, "seed", 0, 2**31 - 1, True))
        if checked["heads"] not in HEAD_CHOICES:
            raise SettingsError(f"heads must be one of {HEAD_CHOICES}, not {checked['heads']}.")
        if checked["width"] not in WIDTH_CHOICES:
            raise SettingsError(f"width must be one of {WIDTH_CHOICES}, not {checked['width']}.")
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def config(self) -> TransformerConfig:
        task = TASKS[self.task]
        return TransformerConfig(arch="encoder", vocab_size=len(task.vocab), max_len=task.length,
                                 d_model=self.width, n_heads=self.heads, n_layers=self.layers, d_ff=4 * self.width,
                                 dropout=0.0, positions="learned" if self.positions else "none", wide=self.wide,
                                 norm="post", tie_embeddings=False)


# ---- training ------------------------------------------------------------------------------------
@dataclass
class Snapshot:
    """One moment of one training run (plain numbers and numpy arrays, cheap to send between processes).

    loss_steps, losses          the training loss, averaged over each stretch of steps
    eval_steps, accuracies      held-out accuracy (share of answer symbols right) at each evaluation;
    eval_seconds                the seconds this run had used by then
    attention (L, H, t, t)      every head on the task's example; example_output: what the model writes
    seconds                     time this run has used; done/reason: the final snapshot and why it ended
    weights                     the final snapshot's trained weights as safetensors bytes (else None)
    """

    settings: dict
    step: int
    seconds: float
    loss_steps: list
    losses: list
    eval_steps: list
    eval_seconds: list
    accuracies: list
    sequence_accuracy: float
    attention: np.ndarray
    example_output: str
    parameters: int
    done: bool = False
    reason: str = ""
    weights: bytes | None = None

    @property
    def accuracy(self) -> float:
        return self.accuracies[-1] if self.accuracies else 0.0

    @property
    def steps_per_second(self) -> float:
        return self.step / self.seconds if self.seconds > 0 else 0.0


_BUILD_LOCK = threading.Lock()  # seeding the global generator to build a model must not interleave


def _attention(model, ids: torch.Tensor) -> np.ndarray:
    _, recording = model(ids, record=True)
    return np.stack([r.probs[0].float().numpy() for r in recording.layers["self"]])  # (L, H, t, t)


class Trainer:
    """One tiny transformer learning one task, one optimisation step at a time."""

    def __init__(self, settings: ToySettings):
        self.settings, self.task = settings, TASKS[settings.task]
        self.rng = np.random.default_rng(settings.seed)
        with _BUILD_LOCK, torch.random.fork_rng(devices=[]):
            torch.manual_seed(settings.seed)
            self.model = build(settings.config())
        self.optimizer = None  # made at the first step: a model that is only looked at needs none
        held = evaluation_set(settings.task)
        self.eval_inputs = torch.from_numpy(self.task.ids(held))
        self.eval_targets = torch.from_numpy(self.task.ids(self.task.answer(held)))
        self.example = torch.from_numpy(self.task.ids(ascii_codes([self.task.example])))
        self.steps, self.seconds, self.perfect_since = 0, 0.0, None
        self.loss_steps, self.losses, self.eval_steps, self.eval_seconds, self.accuracies = [], [], [], [], []
        self.sequence_accuracy, self._pending = 0.0, []

    def prepare(self) -> None:
        """Make the optimiser (its first use imports torch._dynamo, seconds on a busy CPU: keep it off the clock)."""
        if self.optimizer is None:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.98),
                                               weight_decay=0.01)

    def step(self) -> None:
        self.prepare()
        start = time.perf_counter()
        rows = training_batch(self.task, self.rng, BATCH_SIZE)
        inputs = torch.from_numpy(self.task.ids(rows))
        targets = torch.from_numpy(self.task.ids(self.task.answer(rows)))
        for group in self.optimizer.param_groups:
            group["lr"] = LEARNING_RATE * min(1.0, (self.steps + 1) / WARMUP_STEPS)
        logits, _ = self.model(inputs)  # (b, t, v)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        self._pending.append(loss.item())
        self.seconds += time.perf_counter() - start

    def evaluate(self) -> float:
        """Held-out accuracy now; the training losses since the last call become one point of the curve."""
        start = time.perf_counter()
        if self._pending:
            self.loss_steps.append(self.steps)
            self.losses.append(float(np.mean(self._pending)))
            self._pending = []
        self.model.eval()
        with torch.no_grad():
            right = self.model(self.eval_inputs)[0].argmax(-1) == self.eval_targets  # (n, t)
        self.model.train()
        accuracy = right.float().mean().item()
        self.sequence_accuracy = right.all(-1).float().mean().item()
        self.seconds += time.perf_counter() - start
        self.eval_steps.append(self.steps)
        self.eval_seconds.append(round(self.seconds, 3))
        self.accuracies.append(accuracy)
        if accuracy < 1.0:
            self.perfect_since = None
        elif self.perfect_since is None:
            self.perfect_since = self.seconds
        return accuracy

    @property
    def learned(self) -> bool:
        return self.perfect_since is not None and self.seconds - self.perfect_since >= LEARNED_FOR_S

    def snapshot(self, done: bool = False, reason: str = "") -> Snapshot:
        self.model.eval()
        with torch.no_grad():
            attention = _attention(self.model, self.example)
            written = self.model(self.example)[0].argmax(-1)[0].numpy()
        self.model.train()
        weights = None
        if done:
            weights = save_safetensors({k: v.detach().contiguous() for k, v in self.model.state_dict().items()})
        return Snapshot(settings=self.settings.to_dict(), step=self.steps, seconds=round(self.seconds, 3),
                        loss_steps=list(self.loss_steps), losses=list(self.losses), eval_steps=list(self.eval_steps),
                        eval_seconds=list(self.eval_seconds), accuracies=list(self.accuracies), sequence_accuracy=self.sequence_accuracy,
                        attention=attention, example_output="".join(self.task.vocab[i] for i in written),
                        parameters=sum(p.numel() for p in self.model.parameters()), done=done, reason=reason,
                        weights=weights)


def untrained(settings: ToySettings) -> Snapshot:
    """The model before its first step (what the page shows before Train is pressed)."""
    trainer = Trainer(settings)
    trainer.evaluate()
    return trainer.snapshot()


def train(trainers: list[Trainer], stop: Callable[[], bool] = lambda: False,
          every: float = SNAPSHOT_EVERY_S, max_steps: int = MAX_STEPS) -> Iterator[tuple[Snapshot, ...]]:
    """Train side by side (one step each in turn) for the first trainer's settings.seconds; yield a snapshot
    of each at the start, about every `every` seconds, and at the end (done=True, with the weights).

    Ends when the time is up, max_steps are done, stop() returns True, or every run has answered
    every held-out input right for LEARNED_FOR_S seconds."""
    budget = trainers[0].settings.seconds
    max_steps = min(int(max_steps), MAX_STEPS)
    for trainer in trainers:
        trainer.evaluate()
    yield tuple(t.snapshot() for t in trainers)
    for trainer in trainers:
        trainer.prepare()
    start = last = time.monotonic()
    interval, reason = every, "time"
    while True:
        if stop():
            reason = "stopped"
            break
        if time.monotonic() - start >= budget:
            break
        if trainers[0].steps >= max_steps:
            reason = "steps"
            break
        for trainer in trainers:
            trainer.step()
        if time.monotonic() - last >= interval:
            last = time.monotonic()
            for trainer in trainers:
                trainer.evaluate()
            if all(t.learned for t in trainers):
                reason = "learned"
                break
            snapshots = tuple(t.snapshot() for t in trainers)
            # a big model's evaluation is slow: keep it to a quarter of the time, so it still trains
            interval = max(every, 3 * (time.monotonic() - last))
            yield snapshots
    for trainer in trainers:
        if trainer._pending or trainer.eval_steps[-1] != trainer.steps:
            trainer.evaluate()
    yield tuple(t.snapshot(done=True, reason=reason) for t in trainers)


# ---- the trained model ---------------------------------------------------------------------------
@dataclass
class Prediction:
    text: str
    output: str
    expected: str | None  # None when the input has no right answer (unbalanced brackets)
    attention: np.ndarray  # (L, H, t, t)

    @property
    def right(self) -> list[bool] | None:
        return None if self.expected is None else [a == b for a, b in zip(self.output, self.expected)]


class TrainedToy:
    """A finished run rebuilt from its settings and safetensors weights, for trying typed inputs."""

    def __init__(self, settings: dict, weights: bytes):
        self.settings = ToySettings(**settings)
        self.task = TASKS[self.settings.task]
        self.model = build(self.settings.config())
        self.model.load_state_dict(load_safetensors(weights))
        self.model.eval()

    def predict(self, text) -> Prediction:
        text = self.task.check(text)
        codes = ascii_codes([text])
        if self.task.name == "brackets":
            partners = bracket_partners(text)
            expected = partners
        else:
            expected = bytes(self.task.answer(codes)[0]).decode("ascii")
        ids = torch.from_numpy(self.task.ids(codes))
        with torch.no_grad():
            written = self.model(ids)[0].argmax(-1)[0].numpy()
            attention = _attention(self.model, ids)
        return Prediction(text, "".join(self.task.vocab[i] for i in written), expected, attention)


# ---- the worker process --------------------------------------------------------------------------
def work(conn, settings: list[dict], max_steps: int = MAX_STEPS) -> None:
    """Entry point of a training process (training/toy_session.py starts it): train, send each tuple of
    snapshots to the parent, stop at the first message from it. One thread, and a lower priority than
    the app's own process, so pages keep being served while it trains."""
    torch.set_num_threads(1)
    try:
        os.nice(10)
    except OSError:  # not allowed here: train at normal priority
        pass
    try:
        trainers = [Trainer(ToySettings(**s)) for s in settings]
        for snapshots in train(trainers, stop=conn.poll, max_steps=max_steps):
            conn.send(snapshots)
    except (BrokenPipeError, EOFError, ConnectionResetError):  # the app is gone: nobody to train for
        pass
    except Exception as e:  # a bug: tell the app, which logs it and tells the viewer
        try:
            conn.send(f"{type(e).__name__}: {e}")
        except OSError:
            pass
    finally:
        conn.close()
