"""A Causal tracing request (ui/tabs/patching.py) checked, and what it computes, cached by the request: the pair's
tracing and preview, the exact grids (a site at a time, or a layer at a time for the tab's stream), and /patch's
numbers. No Gradio here: the tab draws and wires what this computes."""
from __future__ import annotations

import numpy as np

from analysis import patching as numbers
from experiments import patching
from experiments.patching import PatchingError
from model.registry import ModelRegistry
from ui.page.messages import InputError, clean_text
from ui.tabs.patching_summary import api_warnings

# lm: "Monday, Tuesday," predicts " T", "Friday, Saturday," predicts " S" (tests/app/handlers/test_patching_app.py)
CLEAN, CORRUPTED = "Monday, Tuesday,", "Friday, Saturday,"
MAX_TOKEN_CHARS = 100
# the order the exact grids stream in: where the answer is restored, then which heads carry it (cheaper: one
# position), then the two sublayers
STREAMED = ("residual", "heads", "attention", "mlp")


def checked_prompt(text, which: str, limit: int) -> str:
    """The clean or corrupted prompt, cleaned and cut to the model's limit; an empty one is a message."""
    if text is None or (isinstance(text, str) and not text.strip()):
        raise InputError(f"The {which} prompt is empty: type two prompts that differ in a word, such as "
                         f"“{CLEAN}” and “{CORRUPTED}”.")
    return clean_text(text, limit)


def _token(text, what: str) -> str | None:
    """A typed target or contrast token ("" or None: the default); spaces are kept (" Paris" is one token)."""
    if text is None or text == "":
        return None
    if not isinstance(text, str):
        raise InputError(f"The {what} must be text (one token, e.g. ' Paris'), not {type(text).__name__}.")
    if len(text) > MAX_TOKEN_CHARS or not text.isprintable():
        raise InputError(f"The {what} must be one token: at most {MAX_TOKEN_CHARS} printable characters.")
    return text


def job_of(registry: ModelRegistry, clean, corrupted, name, target, contrast) -> dict:
    """The request checked: model, both prompts cleaned, the tokens as typed."""
    loaded = registry.get(name)
    limit = registry.max_chars(name)
    return dict(model=name, clean=checked_prompt(clean, "clean", limit),
                corrupted=checked_prompt(corrupted, "corrupted", limit), target=_token(target, "target"), contrast=_token(contrast, "contrast"), arch=loaded.arch)


def cache_key(job: dict, what: str) -> tuple:
    """The registry cache's key for `what` ("patching", or "patching-<site>" for an exact grid) of this request."""
    return (what, job["model"], job["clean"], job["corrupted"], job["target"] or "", job["contrast"] or "")


def tracing(registry: ModelRegistry, job: dict) -> patching.Tracing:
    """The pair, both runs' numbers and the preview (cached by the request)."""
    loaded = registry.get(job["model"])

    def make():
        try:
            pair = patching.prepare(loaded, job["clean"], job["corrupted"], job["target"], job["contrast"])
            runs = patching.record(loaded, pair)
        except PatchingError as e:
            raise InputError(str(e)) from None
        return patching.Tracing.of(pair, runs, patching.preview(loaded, pair, runs))

    return registry.cached(cache_key(job, "patching"), make)


def exact_rows(registry: ModelRegistry, job: dict, found: patching.Tracing, sites=STREAMED):
    """(site, layer, row) for every site and layer, as experiments.patching.exact_rows computes them."""
    loaded = registry.get(job["model"])
    runs = patching.record(loaded, found.pair)
    for site in sites:
        for layer, row in patching.exact_rows(loaded, found.pair, site, runs):
            yield site, layer, row


def exact_grid(registry: ModelRegistry, job: dict, found: patching.Tracing, site: str) -> np.ndarray:
    """One site's exact grid (cached by the request and the site): what /patch returns."""
    return registry.cached(cache_key(job, f"patching-{site}"),
                           lambda: np.stack([row for _, _, row in exact_rows(registry, job, found, (site,))]))


def cached_grids(registry: ModelRegistry, job: dict) -> dict:
    """site -> the exact grids already computed for this request, or {} unless every site's is."""
    grids = {site: registry.cache.peek(cache_key(job, f"patching-{site}")) for site in patching.SITES}
    return grids if all(grid is not None for grid in grids.values()) else {}


def patch_numbers(registry: ModelRegistry, clean, corrupted, model, target, contrast, site) -> dict:
    """/patch: one site's exact grid and preview as numbers."""
    if site not in patching.SITES:
        raise InputError(f"site must be one of {', '.join(patching.SITES)}, not {site!r}.")
    try:
        patching.check_model(registry.get(model))
    except PatchingError as e:
        raise InputError(str(e)) from None
    job = job_of(registry, clean, corrupted, model, target, contrast)
    found = tracing(registry, job)
    exact = {site: exact_grid(registry, job, found, site)}
    pair = found.pair
    return {"clean_tokens": pair.clean_tokens, "corrupted_tokens": pair.corrupted_tokens,
            "position": pair.position + 1, "target": pair.target_label, "contrast": pair.contrast_label,
            "clean_logit_diff": found.clean_diff, "corrupted_logit_diff": found.corrupted_diff, "site": site,
            "rows": "layers", "columns": "heads" if site == "heads" else "positions",
            "exact": exact[site].astype(float).round(4).tolist(),
            "preview": found.preview[site].astype(float).round(4).tolist(),
            "agreement": round(numbers.agreement(found.preview[site], exact[site]), 4),
            "warnings": api_warnings(found, exact[site], site)}
