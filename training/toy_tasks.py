"""The toy tasks of the live-training tab: data, answers and the held-out split (numpy only).

Every task turns a short string into an answer of the same length, one symbol per position, so a
bidirectional encoder's per-position output reads the answer directly. A stable hash of each input
keeps a tenth of all inputs for the held-out set: no held-out input is ever trained on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np

from model.inputs import InputError  # torch-free: this module stays numpy only


class SettingsError(InputError):
    """A setting or a typed input out of bounds; the message says what is allowed. An InputError, so the page
    answers it as any bad input: one message, written for the person who typed it."""


LETTERS = "abcdefghijklmnopqrst"  # 20 letters: guessing a letter is right 5% of the time
DIGITS = "0123456789"


def ascii_codes(rows) -> np.ndarray:
    """Strings of equal length -> (n, length) uint8 character codes."""
    return np.frombuffer("".join(rows).encode("ascii"), np.uint8).reshape(len(rows), -1).copy()


def _letters(alphabet: str, length: int, distinct: bool) -> Callable:
    codes = np.frombuffer(alphabet.encode("ascii"), np.uint8)

    def sample(rng: np.random.Generator, n: int) -> np.ndarray:
        if distinct:  # each letter at most once: a random ordering of the alphabet, cut short
            picks = np.argsort(rng.random((n, len(codes))), axis=1)[:, :length]
        else:
            picks = rng.integers(0, len(codes), (n, length))
        return codes[picks]
    return sample


def _counts(x: np.ndarray) -> np.ndarray:
    """How often each position's letter occurs in its row, as a digit."""
    return (x[:, :, None] == x[:, None, :]).sum(-1).astype(np.uint8) + ord("0")


def bracket_partners(text: str) -> str | None:
    """For each '(' or ')' the position (0-9) of its partner, '.' elsewhere; None if unbalanced."""
    out, open_at = ["."] * len(text), []
    for i, c in enumerate(text):
        if c == "(":
            open_at.append(i)
        elif c == ")":
            if not open_at:
                return None
            j = open_at.pop()
            out[i], out[j] = DIGITS[j], DIGITS[i]
    return None if open_at else "".join(out)


@lru_cache(maxsize=None)
def _balanced(length: int) -> np.ndarray:
    """Every string of '(', ')' and '.' of this length whose brackets balance (2,188 for 10)."""
    rows = [""]
    for _ in range(length):
        rows = [r + c for r in rows for c in "()." if r.count("(") >= r.count(")") + (c == ")")]
    return ascii_codes([r for r in rows if r.count("(") == r.count(")")])


def _bracket_answers(x: np.ndarray) -> np.ndarray:
    return ascii_codes([bracket_partners(bytes(row).decode("ascii")) for row in x])


@dataclass(frozen=True)
class Task:
    """One toy task: inputs of `length` symbols from `inputs`, answers of as many from `outputs`."""

    name: str
    summary: str  # one sentence for the page
    length: int
    inputs: str
    outputs: str
    example: str  # the fixed input whose attention is shown while training
    sample: Callable = field(repr=False)  # (rng, n) -> (n, length) uint8 codes
    answer: Callable = field(repr=False)  # (n, length) codes -> (n, length) codes of the answers
    needs_positions: bool = True
    blind_best: float | None = None  # the best any model without positions can score (tasks that need them)
    hint: str = ""  # what to type

    @property
    def vocab(self) -> str:
        return self.inputs + "".join(c for c in self.outputs if c not in self.inputs)

    @property
    def chance(self) -> float:
        """Accuracy of guessing one of the possible answer symbols."""
        return 1.0 / len(self.outputs)

    def ids(self, codes: np.ndarray) -> np.ndarray:
        """(n, length) character codes -> token ids."""
        table = np.full(256, -1, np.int64)
        table[np.frombuffer(self.vocab.encode("ascii"), np.uint8)] = np.arange(len(self.vocab))
        return table[codes]

    def check(self, text) -> str:
        """A typed input, cleaned, or a SettingsError saying what to type."""
        if not isinstance(text, str):
            raise SettingsError(f"Type the input as text: {self.hint}.")
        text = "".join(text.split()).lower() if self.name != "brackets" else "".join(text.split())
        wrong = sorted(set(text) - set(self.inputs))
        if wrong:
            shown = ", ".join(repr(c) for c in wrong[:5])
            raise SettingsError(f"{shown} cannot appear in a {self.name} input: {self.hint}.")
        if len(text) != self.length:
            raise SettingsError(f"The model reads exactly {self.length} symbols, you typed {len(text)}: {self.hint}.")
        return text


TASKS: dict[str, Task] = {t.name: t for t in [
    Task("reverse", "Write the letters in reverse order.", 10, LETTERS, LETTERS, "abcdefghij",
         _letters(LETTERS, 10, distinct=True), lambda x: x[:, ::-1].copy(), blind_best=1 / 9,
         hint="10 letters from a to t (trained on 10 different ones)"),
    Task("sort", "Write the letters in alphabetical order.", 10, LETTERS, LETTERS, "hebjadgcif",
         _letters(LETTERS, 10, distinct=False), lambda x: np.sort(x, axis=1), hint="10 letters from a to t"),
    Task("copy", "Write the letters unchanged (the warm-up: no attention needed).", 10, LETTERS, LETTERS, "hebjadgcif",
         _letters(LETTERS, 10, distinct=False), lambda x: x.copy(), needs_positions=False,
         hint="10 letters from a to t"),
    Task("count", "Under each letter, write how often it occurs.", 9, "abcde", "123456789", "abacabade",
         _letters("abcde", 9, distinct=False), _counts, needs_positions=False, hint="9 letters from a to e"),
    Task("brackets", "Under each bracket, write the position (0-9) of its partner.", 10, "().", DIGITS + ".",
         "(()(.)).()", lambda rng, n: _balanced(10)[rng.integers(0, len(_balanced(10)), n)], _bracket_answers,
         hint="10 symbols of ( ) and . whose brackets balance, e.g. (()(.)).()"),
]}


def held_out(codes: np.ndarray) -> np.ndarray:
    """(n, length) codes -> bool (n,): True for the tenth of all inputs kept for testing only.
    A stable hash of the whole input, so the split is the same in every run and every process."""
    h = np.zeros(len(codes), np.uint64)
    with np.errstate(over="ignore"):
        for column in codes.T.astype(np.uint64):
            h = (h ^ column) * np.uint64(0x100000001B3)  # FNV-1a, wrapping at 2**64
    return (h >> np.uint64(33)) % np.uint64(10) == 0


def training_batch(task: Task, rng: np.random.Generator, n: int) -> np.ndarray:
    """n random inputs, none from the held-out tenth."""
    rows = task.sample(rng, 2 * n)
    rows = rows[~held_out(rows)]
    while len(rows) < n:
        more = task.sample(rng, 2 * n)
        rows = np.concatenate([rows, more[~held_out(more)]])
    return rows[:n]


@lru_cache(maxsize=None)
def evaluation_set(name: str, n: int = 256) -> np.ndarray:
    """Up to n distinct held-out inputs, the same in every run (read-only)."""
    task, rng = TASKS[name], np.random.default_rng(12345)
    if name == "brackets":  # few enough to take every held-out one
        rows = _balanced(task.length)
        rows = rows[held_out(rows)][:n]
    else:
        rows = task.sample(rng, 40 * n)
        rows = np.unique(rows[held_out(rows)], axis=0)
        rows = rows[rng.permutation(len(rows))[:n]]
    rows.setflags(write=False)
    return rows
