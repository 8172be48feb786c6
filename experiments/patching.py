"""Causal tracing between two prompts: run a corrupted prompt with one activation copied in from a clean one,
and measure how much of the clean answer comes back (Meng et al. 2022; per head, Wang et al. 2022).

    from model import api
    from experiments import patching
    lm = api.load("lm")
    pair = patching.prepare(lm, "The cat sat on the", "The dog sat on the")   # target/contrast: each run's top token
    runs = patching.record(lm, pair)
    patching.preview(lm, pair, runs)["residual"]     # (L, t) attribution patching: one backward pass
    patching.exact(lm, pair, "residual", runs)       # (L, t) one patched forward pass per cell

The measure is the logit difference d = logit(target) − logit(contrast) at the answer position (the last token;
a masked model's <mask>), normalised: (d_patched − d_corrupted) / (d_clean − d_corrupted), so 0 is the
corrupted run and 1 the clean run. Sites, at (layer, position):
    residual    the residual stream after the layer
    attention   what the layer's attention adds to it;  mlp  what its feed-forward adds
    heads       one head's output (its weighted sum of values, before W_O) at the answer position: (layer, head)
Every run is the model's one forward pass with a Hooks object in its switches (model/switches.py); the exact
grid restarts each layer's batch from the corrupted run's residual stream entering that layer (model.resume);
a causal model's runs each cell on the positions from the patch on only (experiments/patch_suffixes.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import torch

from experiments import patch_suffixes
from experiments.patch_cells import BATCH_BYTES, Hooks, answer_diff, differing, final_head
from model import tokenizer as tok
from model.switches import Switches

SITES = ("residual", "attention", "mlp", "heads")
GRID_SITES = SITES[:3]  # layers × positions; heads is layers × heads at the answer position
MAX_TOKENS = 48  # a pair longer than this is refused: the exact grid is layers × tokens forward passes


class PatchingError(ValueError):
    """Input causal tracing cannot use; the message says what to change."""


@dataclass
class Pair:
    """Two prompts of the same token count and the answer they are compared on.

    clean_ids, corrupted_ids   the token ids;  clean_tokens, corrupted_tokens  their readable labels
    position    the answer position (0-based): the last token, or a masked model's <mask>
    target, contrast   token ids; target_label, contrast_label their labels
    """

    clean_ids: list[int]
    corrupted_ids: list[int]
    clean_tokens: list[str]
    corrupted_tokens: list[str]
    position: int
    target: int
    contrast: int
    target_label: str
    contrast_label: str

    @property
    def changed(self) -> list[int]:
        """The positions where the two prompts differ (0-based)."""
        return [i for i, (a, b) in enumerate(zip(self.clean_ids, self.corrupted_ids)) if a != b]


def tokens_in_words(tokens: list[str]) -> str:
    return " | ".join(tokens)


def _keep(loaded) -> tuple[str, ...]:
    return (tok.EOS,) if loaded.arch == "decoder" else ()


def check_model(loaded) -> None:
    """PatchingError unless the model predicts a token at some position (a causal lm, or a masked lm)."""
    if loaded.arch == "classifier":
        raise PatchingError(f"{loaded.name} names a category for the whole text, not a next token: there is no "
                            "target token whose logit a patch could restore. Choose lm or a GPT-2/Llama model.")
    if loaded.arch == "encoder-decoder":
        raise PatchingError(f"{loaded.name} writes a whole ISO date through an encoder and a decoder; causal "
                            "tracing here patches one stack's next-token prediction. Choose lm or mlm.")
    if getattr(loaded.model, "to_vocab", None) is None:
        raise PatchingError(f"{loaded.name} has no word-prediction head (it was published to turn a sentence into "
                            "one vector), so there is no token logit to restore. Choose lm, mlm or a GPT-2/Llama model.")


def answer_position(loaded, ids: list[int], which: str) -> int:
    """The last position (causal model), or the first <mask> (masked model)."""
    if loaded.arch == "decoder":
        return len(ids) - 1
    mask = loaded._template[2] if loaded.config.tokenizer == "template" else loaded.special(tok.MASK)
    where = [i for i, t in enumerate(ids) if t == mask]
    if not where:
        raise PatchingError(f"{loaded.name} is a masked model: put <mask> in the {which} prompt where the answer "
                            "goes, at the same place in both, e.g. 'The capital of France is <mask>.'")
    return where[0]


def token_id(loaded, text: str, what: str) -> int:
    """A target or contrast typed as text (" Paris") or as its label ("▁Paris", "ĠParis"): exactly one token."""
    if not isinstance(text, str) or not text.strip(" "):
        raise PatchingError(f"The {what} token is empty: type one token (with its leading space, e.g. ' Paris'), "
                            "or leave it out to use the prompt's own top next token.")
    known = loaded.tokenizer.token_to_id(text)
    if known is not None:
        return known
    for spelling in dict.fromkeys((text, text.replace(tok.SPACE_MARK, " "))):  # a label's ▁ is a space
        ids = loaded.tokenizer.encode(spelling, add_special_tokens=False).ids
        if len(ids) == 1:
            return ids[0]
    ids = loaded.tokenizer.encode(text.replace(tok.SPACE_MARK, " "), add_special_tokens=False).ids
    pieces = " | ".join(loaded.label(i) for i in ids) or "nothing"
    first = f"try its first piece ({loaded.label(ids[0])!r}), or " if ids else ""
    raise PatchingError(f"The {what} {text!r} is not one token of {loaded.name}: it reads as {len(ids)} "
                        f"({pieces}). The measure compares two single tokens; {first}leave it out to use the "
                        "prompt's own top next token.")


@torch.inference_mode()
def _top_token(loaded, ids: list[int], position: int) -> int:
    logits, _ = loaded.model(torch.tensor([ids], device=loaded.device))
    return int(loaded._no_specials(logits[0, position], keep=_keep(loaded)).argmax())


def prepare(loaded, clean: str, corrupted: str, target: str | None = None, contrast: str | None = None) -> Pair:
    """The pair as the model reads it, or PatchingError saying what to change. target/contrast None or "":
    the clean and the corrupted prompt's own top next tokens."""
    check_model(loaded)
    encoded = {}
    for which, text in (("clean", clean), ("corrupted", corrupted)):
        if not isinstance(text, str) or not text.strip():
            raise PatchingError(f"The {which} prompt is empty: type two prompts that differ in one word, e.g. "
                                "'The Eiffel Tower is in the city of' and 'The Colosseum is in the city of'.")
        encoded[which] = loaded.encode(text)
    a, b = encoded["clean"], encoded["corrupted"]
    if len(a.ids) != len(b.ids):
        raise PatchingError(
            f"The prompts must have the same number of tokens, since a patch copies position i of one run into "
            f"position i of the other. The clean prompt is {len(a.ids)} tokens ({tokens_in_words(a.tokens)}); the "
            f"corrupted one is {len(b.ids)} ({tokens_in_words(b.tokens)}). Change a word for one of the same "
            "token count (a name for a name that splits the same way), or add or drop a word in one of them.")
    if len(a.ids) > MAX_TOKENS:
        raise PatchingError(f"The prompts are {len(a.ids)} tokens; causal tracing runs one forward pass per layer "
                            f"and token, so it takes at most {MAX_TOKENS}. Shorten both.")
    position = answer_position(loaded, a.ids, "clean")
    if answer_position(loaded, b.ids, "corrupted") != position:
        raise PatchingError("Put the <mask> at the same place in both prompts.")
    goal = token_id(loaded, target, "target") if target else _top_token(loaded, a.ids, position)
    other = token_id(loaded, contrast, "contrast") if contrast else _top_token(loaded, b.ids, position)
    if goal == other:
        raise PatchingError(
            f"The target and the contrast are the same token ({loaded.label(goal)!r}): "
            + ("both prompts predict it, so the corrupted prompt does not change the answer. Type a contrast "
               "token (the answer you expect from the corrupted prompt), or make the prompts differ more."
               if not (target or contrast) else "choose two different tokens."))
    return Pair(list(a.ids), list(b.ids), list(a.tokens), list(b.tokens), position, goal, other,
                loaded.label(goal), loaded.label(other))


@dataclass
class Runs:
    """The clean and the corrupted run, recorded at every site.

    clean, corrupted   site -> (L, ...) tensors: "residual_in", "residual", "attention", "mlp" (L, t, k),
                       "heads" (L, h, t, d)
    clean_diff, corrupted_diff   the logit difference target − contrast of each run
    clean_probs, corrupted_probs  (target, contrast) probabilities of each run
    """

    clean: dict[str, torch.Tensor]
    corrupted: dict[str, torch.Tensor]
    clean_diff: float
    corrupted_diff: float
    clean_probs: tuple[float, float] = (0.0, 0.0)
    corrupted_probs: tuple[float, float] = (0.0, 0.0)
    n_layers: int = 0
    n_heads: int = 0

    def normalise(self, diff):
        return (diff - self.corrupted_diff) / (self.clean_diff - self.corrupted_diff)


RECORDED = ("residual_in", "residual", "attention", "mlp", "heads")


def logit_diff(loaded, pair: Pair, features: torch.Tensor) -> torch.Tensor:
    """(b,) target − contrast logits at the answer position from the final vectors (b, t, k): only the two
    rows of the unembedding are read, not the whole vocabulary."""
    return answer_diff(loaded, pair, features[:, pair.position])


def _run(loaded, ids: list[int], hooks: Hooks) -> torch.Tensor:
    """The features (1, t, k) of one plain forward pass with hooks."""
    features, _ = loaded.model.features(torch.tensor([ids], device=loaded.device), switches=Switches(hooks=hooks))
    return features


def _stacked(hooks: Hooks) -> dict[str, torch.Tensor]:
    return {site: torch.cat([by_layer[l] for l in sorted(by_layer)]) for site, by_layer in hooks.recorded.items()}


@torch.inference_mode()
def record(loaded, pair: Pair) -> Runs:
    """Both runs, every site recorded."""
    out = {}
    for which, ids in (("clean", pair.clean_ids), ("corrupted", pair.corrupted_ids)):
        hooks = Hooks(RECORDED)
        features = _run(loaded, ids, hooks)
        transform, weight, bias = final_head(loaded)
        logits = torch.nn.functional.linear(transform(features[0, pair.position]), weight, bias)
        probs = torch.softmax(loaded._no_specials(logits, keep=_keep(loaded)), -1)
        out[which] = (_stacked(hooks), float(logit_diff(loaded, pair, features)[0]),
                      (float(probs[pair.target]), float(probs[pair.contrast])))
    (clean, d_clean, p_clean), (corrupted, d_corrupted, p_corrupted) = out["clean"], out["corrupted"]
    if abs(d_clean - d_corrupted) < 1e-6:
        raise PatchingError(f"Both prompts give the same logit difference {pair.target_label!r} − "
                            f"{pair.contrast_label!r} ({d_clean:.3f}), so there is nothing to restore: choose "
                            "prompts (or tokens) on which the model's answers differ.")
    layers, heads = clean["heads"].shape[:2]
    return Runs(clean, corrupted, d_clean, d_corrupted, p_clean, p_corrupted, layers, heads)


@torch.inference_mode()
def patched(loaded, pair: Pair, runs: Runs, cells: list[tuple]) -> float:
    """The normalised measure of one plain corrupted forward pass, every block run, with each cell patched in
    from the clean run: cells are (site, layer, position) or ("heads", layer, head[, position]). The direct,
    unoptimised path (the tests hold the exact grid to it); no cells gives 0."""
    patches: dict[tuple, list] = {}
    for site, layer, *where in cells:
        patches.setdefault((site, layer), []).append(where)
    hooks_patches = {}
    for (site, layer), places in patches.items():
        if site == "heads":
            heads = [p[0] for p in places]
            positions = [p[1] if len(p) > 1 else pair.position for p in places]
            index = (torch.zeros(len(heads), dtype=torch.long), torch.tensor(heads), torch.tensor(positions))
            values = runs.clean["heads"][layer, heads, positions]  # (n, d)
        else:
            positions = [p[0] for p in places]
            index = (torch.zeros(len(positions), dtype=torch.long), torch.tensor(positions))
            values = runs.clean[site][layer, positions]  # (n, k)
        hooks_patches[(site, layer)] = tuple(i.to(loaded.device) for i in index), values
    features = _run(loaded, pair.corrupted_ids, Hooks(patches=hooks_patches))
    return float(runs.normalise(logit_diff(loaded, pair, features)[0]))


def _chunks(n: int, t: int, k: int) -> int:
    """How many batch rows one pass may hold within BATCH_BYTES."""
    return max(1, BATCH_BYTES // max(1, t * k * 4 * 24))


@torch.inference_mode()
def exact_rows(loaded, pair: Pair, site: str, runs: Runs) -> Iterator[tuple[int, np.ndarray]]:
    """(layer, row) for each layer in turn, layer 0 first: row (t,) is the normalised measure with the site
    patched at each position (site "heads": (h,), each head patched at the answer position). One batched
    forward pass a layer (a batch row per cell), started from the corrupted run's stream entering the layer:
    the blocks below a patch compute what they computed before, so they are not run again."""
    if site not in SITES:
        raise PatchingError(f"site must be one of {', '.join(SITES)}, not {site!r}.")
    model = loaded.model
    t, k = len(pair.corrupted_ids), runs.corrupted["residual"].shape[-1]
    device = loaded.device
    if patch_suffixes.applies(loaded, t):
        yield from patch_suffixes.exact_rows(loaded, pair, site, runs)
        return
    for layer in range(runs.n_layers):
        clean, differs = differing(pair, site, runs, layer)
        row = torch.zeros(len(clean), dtype=torch.float32)
        step = _chunks(len(differs), t, k)
        for first in range(0, len(differs), step):
            cells = differs[first:first + step]
            n = len(cells)
            rows = torch.arange(n, device=device)
            if site == "residual":  # the stream after this layer, patched, enters the next layer
                x = runs.corrupted["residual"][layer].expand(n, t, k).clone()
                x[rows, cells] = clean[cells]
                features = model.resume(x, layer + 1)
            else:
                x = runs.corrupted["residual_in"][layer].expand(n, t, k)
                where = (rows, cells, torch.full_like(cells, pair.position)) if site == "heads" else (rows, cells)
                hooks = Hooks(patches={(site, layer): (where, clean[cells])})
                features = model.resume(x, layer, Switches(hooks=hooks))
            row[cells.cpu()] = runs.normalise(logit_diff(loaded, pair, features)).float().cpu()
        yield layer, row.numpy()


def exact(loaded, pair: Pair, site: str, runs: Runs | None = None) -> np.ndarray:
    """The whole exact grid: (L, t), or (L, h) for heads."""
    runs = runs or record(loaded, pair)
    return np.stack([row for _, row in exact_rows(loaded, pair, site, runs)])


def preview(loaded, pair: Pair, runs: Runs | None = None) -> dict[str, np.ndarray]:
    """Attribution patching (Nanda 2023; Syed et al. 2023): every site's grid at once from one forward and one
    backward pass of the corrupted run, d(measure)/d(activation) · (clean − corrupted activation), the first-order
    estimate of patching that activation. Exact where the measure is linear in it. site -> (L, t) or (L, h)."""
    runs = runs or record(loaded, pair)
    hooks = Hooks(SITES, track=True)
    with torch.enable_grad():
        features = _run(loaded, pair.corrupted_ids, hooks)
        diff = runs.normalise(logit_diff(loaded, pair, features)[0])
        order = [(site, layer) for site in SITES for layer in sorted(hooks.recorded[site])]
        grads = torch.autograd.grad(diff, [hooks.recorded[s][l] for s, l in order], allow_unused=True)
    grid = {site: [] for site in SITES}
    for (site, layer), grad in zip(order, grads):
        if grad is None:  # the answer does not read this site (a masked model's last layer elsewhere)
            grad = torch.zeros_like(hooks.recorded[site][layer])
        change = (runs.clean[site][layer] - runs.corrupted[site][layer]).float()  # (t, k) or (h, t, d)
        effect = (grad[0].float() * change).sum(-1)  # (t,) or (h, t)
        grid[site].append(effect[:, pair.position] if site == "heads" else effect)
    return {site: torch.stack(rows).detach().cpu().numpy() for site, rows in grid.items()}


@dataclass
class Tracing:
    """Everything a causal-tracing view shows, as numpy (for analysis/ and viz/).

    pair         the prompts and tokens;  clean_diff, corrupted_diff  the raw logit differences
    preview      site -> (L, t) (heads: (L, h)) attribution-patching estimate
    exact        site -> the exact grid, where computed
    """

    pair: Pair
    clean_diff: float
    corrupted_diff: float
    clean_probs: tuple[float, float]
    corrupted_probs: tuple[float, float]
    preview: dict[str, np.ndarray]
    exact: dict[str, np.ndarray] = field(default_factory=dict)


def trace(loaded, clean: str, corrupted: str, target: str | None = None, contrast: str | None = None,
          sites=SITES) -> Tracing:
    """The preview and the exact grids of `sites` for one pair."""
    pair = prepare(loaded, clean, corrupted, target, contrast)
    runs = record(loaded, pair)
    found = Tracing(pair, runs.clean_diff, runs.corrupted_diff, runs.clean_probs, runs.corrupted_probs,
                    preview(loaded, pair, runs))
    for site in sites:
        found.exact[site] = exact(loaded, pair, site, runs)
    return found
