"""The claims measured by running what a tab runs (the vocabulary: analysis/lesson_vocabulary.py): a knock-out as
Interventions measures it, a causal-tracing cell from the grid the Causal tracing view computes (the same cached
grid), the training step of the snapshot Learning shows, and the cache's bytes per token as Generation says them.

Each measure takes the registry, the step's settings (ui.page.links.ViewSettings), the claim's parts and the
snapshots, and returns the value (InputError: what could not be measured).
"""
from __future__ import annotations

import math

from analysis import generation as costs_of
from analysis.lesson_vocabulary import head_choice, plain_token, token_choices
from ui.page.messages import InputError
from ui.tabs import generation, interventions, patching_jobs
from ui.tabs.learning import snapshot_index


def _probability(top: list, token: str, when: str) -> float:
    found = [p for label, p in top if plain_token(label) == token] or [p for label, p in top
                                                                   if plain_token(label).strip() == token.strip()]
    if not found:
        raise InputError(f"“{token}” is not among the model's top guesses {when} the knock-out, where "
                         "Interventions shows its probability.")
    return float(found[0])


def knockout(registry, settings, parts, snapshots):
    """The change in the token's probability when the heads are knocked out (after - before), as the guesses
    figure on Interventions shows them."""
    heads = ", ".join(h.strip() for h in parts["heads"].split(","))
    result = interventions.ablate(registry, settings.text, settings.model, heads, "zero")
    if not result["before_top"]:
        raise InputError(f"{settings.model} has no next-token guesses to compare.")
    before = _probability(result["before_top"], parts["token"], "before")
    if plain_token(result["before_top"][0][0]).strip() == parts["token"].strip():
        # the intact answer: the view's "change" is the drop in its log-probability, wherever it falls after
        return before * math.exp(-result["change"]) - before
    return _probability(result["after_top"], parts["token"], "after") - before


def _grid(registry, settings, site: str) -> dict:
    """The exact grid Causal tracing computes for the step's prompts (the view's cache: the same request's)."""
    return patching_jobs.patch_numbers(registry, settings.clean, settings.corrupted, settings.model,
                                       settings.target, settings.contrast, site)


def clean_tokens(registry, settings) -> list[str]:
    """The clean prompt's tokens as Causal tracing's figures label them."""
    return list(_grid(registry, settings, "residual")["clean_tokens"])


def patching_cell(registry, settings, parts, snapshots):
    """One cell of a causal-tracing grid: the site after that layer (from 1) at the token's position."""
    found = _grid(registry, settings, parts["part"])
    words = [plain_token(t).strip() for t in found["clean_tokens"]]
    matches = [i for i, w in enumerate(words) if w == parts["token"].strip()]
    n = int(parts.get("token_n") or 1)
    if len(matches) < n:
        raise InputError(f"there is no “{parts['token']}” among the clean prompt's tokens ({', '.join(words)}).")
    layer = int(parts["at_layer"])
    if not 1 <= layer <= len(found["exact"]):
        raise InputError(f"the grid has layers 1 to {len(found['exact'])}.")
    return float(found["exact"][layer - 1][matches[n - 1]])


def patching_head(registry, settings, parts, snapshots):
    """One cell of the heads map: that head's output patched at the answer position."""
    found = _grid(registry, settings, "heads")
    layer, head = int(parts["layer"]), int(parts["head"])
    if not (1 <= layer <= len(found["exact"]) and 1 <= head <= len(found["exact"][0])):
        raise InputError(f"the heads map has layers 1 to {len(found['exact'])} and heads 1 to "
                         f"{len(found['exact'][0])}.")
    return float(found["exact"][layer - 1][head - 1])


def patching_top(registry, settings, parts, snapshots):
    """The token whose cell restores most in one layer's row of the grid, as a choice is written (a token answer)."""
    found = _grid(registry, settings, parts["part"])
    layer = int(parts["at_layer"])
    if not 1 <= layer <= len(found["exact"]):
        raise InputError(f"the grid has layers 1 to {len(found['exact'])}.")
    row = found["exact"][layer - 1]
    return token_choices(found["clean_tokens"])[max(range(len(row)), key=row.__getitem__)]


def patching_heads_top(registry, settings, parts, snapshots):
    """The head of one layer whose patch restores most (a head answer)."""
    found = _grid(registry, settings, "heads")
    layer = int(parts["in_layer"])
    if not 1 <= layer <= len(found["exact"]):
        raise InputError(f"the heads map has layers 1 to {len(found['exact'])}.")
    row = found["exact"][layer - 1]
    return head_choice(layer, max(range(len(row)), key=row.__getitem__) + 1)


def snapshot_step(registry, settings, parts, snapshots):
    """The training step of the snapshot the Learning view shows for the step's settings."""
    steps = snapshots.steps(settings.model)
    if not steps:
        raise InputError(f"{settings.model} has no training snapshots.")
    return steps[snapshot_index(steps, settings) - 1]


def cache_bytes(registry, settings, parts, snapshots):
    """The bytes each token adds to the key/value cache, as Generation's memory paragraph computes them."""
    loaded = registry.get(settings.model)
    if loaded.arch != "decoder":
        raise InputError(f"{settings.model} does not generate text (a causal language model does).")
    return costs_of.bytes_per_token(generation.sizes(loaded))


MEASURES = {"knockout": knockout, "patching": patching_cell, "patching head": patching_head,
            "patching top": patching_top, "patching heads top": patching_heads_top,
            "snapshot": snapshot_step, "cache bytes": cache_bytes}
