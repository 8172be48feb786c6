"""Copying from context on a causal lm, the whole experiment: the inputs (random words repeated twice), the
model's losses and attention on them under model/switches.py's switches (knock the induction head out and
the second copy gets hard again), and what they measure: induction and previous-token scores per head, and
the loss on the first copy of the words against the second (the numbers themselves: analysis.induction).

    from model import api
    from experiments import copying
    lm = api.load("lm")
    ids = copying.repeated_ids(lm, n=16, length=20)   # (16, 41): <s>, 20 random words, the same again
    losses, probs = copying.token_losses(lm, ids)     # (16, 40), (16, L, H, 41, 41)
    result = copying.measure(lm)                      # induction and previous-token score per head, copy losses
    result.induction.max(), result.first_loss, result.second_loss
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from analysis import induction
from model.switches import PLAIN, Switches

WORDS = Path(__file__).resolve().parent.parent / "assets" / "words.txt"  # analysis.induction.common_words
_WORD = re.compile(r"^Ġ[a-z]{3,}$")  # a byte-level BPE piece holding a whole lower-case word after a space


def whole_word_ids(vocab: dict[str, int]) -> np.ndarray:
    """Sorted ids of the tokens that are a whole word of 3+ lower-case letters with a leading space
    (byte-level BPE writes the space as "Ġ"), so each random word is exactly one token."""
    ids = sorted(i for piece, i in vocab.items() if _WORD.match(piece))
    if len(ids) < 2:
        raise ValueError("the tokenizer has fewer than 2 whole-word tokens; induction needs a word vocabulary")
    return np.array(ids, dtype=np.int64)


def repeated_sequences(words, n: int, length: int, seed: int = 0, bos: int | None = None) -> np.ndarray:
    """(n, [1 +] 2 * length) token ids: `length` distinct random words, then the same words again;
    <s> first if `bos` is given. The same seed gives the same sequences."""
    words = np.asarray(words)
    if length < 2 or length > len(words):
        raise ValueError(f"length must be between 2 and the number of words ({len(words)}), got {length}")
    gen = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        first = gen.choice(words, size=length, replace=False)
        rows.append(np.concatenate([[bos] if bos is not None else [], first, first]))
    return np.array(rows, dtype=np.int64)


def word_ids(tokenizer, path: Path = WORDS) -> np.ndarray:
    """Ids of whole-word tokens: the common words listed in assets/words.txt that are one token,
    else every whole-word token of the vocabulary."""
    vocab = tokenizer.get_vocab()
    if Path(path).is_file():
        ids = [vocab[f"Ġ{w}"] for w in Path(path).read_text().split() if f"Ġ{w}" in vocab]
        if len(ids) >= 64:
            return np.array(ids, dtype=np.int64)
    return whole_word_ids(vocab)


def repeated_ids(loaded, n: int, length: int, seed: int = 0) -> np.ndarray:
    """(n, 1 + 2 * length) ids: a start token, `length` random words, the same words again."""
    if loaded.arch != "decoder":
        raise ValueError(f"copying from context is measured on a causal lm; {loaded.name} is an {loaded.arch}")
    longest = (loaded.config.max_len - 1) // 2
    if not 2 <= length <= longest:
        raise ValueError(f"a sentence of 2 to {longest} words fits the model's context twice, got {length}")
    # every sequence starts with one token (analysis.induction.copy_losses counts from 1): the model's own start
    # token, or for a model without one (GPT-2, Qwen2) its end-of-text token, which also begins their documents
    start = loaded.start_id if loaded.start_id is not None else loaded.end_id
    return repeated_sequences(word_ids(loaded.tokenizer), n, length, seed, bos=start)


@torch.no_grad()
def token_losses(loaded, ids, switches: Switches = PLAIN) -> tuple[np.ndarray, np.ndarray]:
    """For ids (b, t): (losses (b, t - 1), probs (b, L, H, t, t)); losses[:, i] is the loss (nats) of
    predicting token i + 1 from tokens 0..i."""
    x = torch.as_tensor(np.asarray(ids), dtype=torch.long, device=loaded.device)
    logits, rec = loaded.model(x, record=True, switches=switches)
    logp = torch.log_softmax(logits[:, :-1].float(), -1)  # (b, t - 1, v)
    losses = -logp.gather(-1, x[:, 1:, None])[..., 0]
    probs = torch.stack([r.probs.float() for r in rec.layers["self"]], 1)  # (b, L, H, t, t)
    return losses.cpu().numpy(), probs.cpu().numpy()


@dataclass
class CopyResult:
    """induction, previous_token  (L, H) mean scores over the sequences
    first_loss, second_loss      mean loss (nats) on words 2..n of the first and of the second copy
    ids                          (n, t) the sequences measured"""

    induction: np.ndarray
    previous_token: np.ndarray
    first_loss: float
    second_loss: float
    ids: np.ndarray


def measure(loaded, n: int = 16, length: int = 20, seed: int = 0, switches: Switches = PLAIN,
            ids: np.ndarray | None = None) -> CopyResult:
    """Scores and copy losses on n sequences of `length` random words repeated (or on `ids` given)."""
    ids = repeated_ids(loaded, n, length, seed) if ids is None else np.atleast_2d(np.asarray(ids))
    length = (ids.shape[1] - 1) // 2
    losses, probs = token_losses(loaded, ids, switches)
    induction_scores, previous = induction.batch_scores(probs, ids)
    pairs = np.array([induction.copy_losses(row, length) for row in losses])
    return CopyResult(induction_scores, previous, float(pairs[:, 0].mean()), float(pairs[:, 1].mean()), ids)
