"""What the Causal tracing tab (ui/tabs/patching.py) says in words: the warnings a lecturer reads first (a target
the clean run does not prefer, a typed token the run hardly gives), the two runs and the measure, where the preview
was wrong, and the exact grids' strongest cells and heads. Every number here is one the figures draw
(tests/app/handlers/test_patching_app.py, test_patching_smollm2.py)."""
from __future__ import annotations

import numpy as np

from analysis import patching as numbers
from analysis.heads import head_name, parse_head_name
from experiments import patching
from viz.labels import markdown_label

SITE_TITLES = {"residual": "Patching the residual stream after each layer",
               "attention": "Patching the attention's output", "mlp": "Patching the feed-forward's output",
               "heads": "Patching one head's output at the answer position"}
SITE_WORDS = {"residual": "the residual stream", "attention": "the attention's output",
              "mlp": "the feed-forward's output", "heads": "the heads"}
LOW_P = 0.01  # a token a run gives less probability than this is one the run hardly considers
PLACES = 3  # the wrong places a sentence names; the rest are counted
WHY_WRONG = ("attribution patching is a first-order estimate, a straight line from the corrupted run, and copying a "
             "whole activation in from the clean run is too large a step for it")


def quoted(token) -> str:
    return f"“{markdown_label(token)}”"


def _minus(value: float) -> str:
    """"− 1.70" or "+ 1.70": subtracting a negative number, written as people write it."""
    return f"− {value:.2f}" if value >= 0 else f"+ {-value:.2f}"


def target_warnings(found: patching.Tracing) -> list[str]:
    """The sentences that say when the measure does not mean what the tab says it means: the clean run does not
    prefer the target (logit difference <= 0), the corrupted run does not prefer the contrast (>= 0), and what a
    value above 1 or below 0 then means; a target (contrast) the clean (corrupted) run gives almost no
    probability, with its likelier spelling or the run's own top token."""
    pair = found.pair
    t, c = quoted(pair.target_label), quoted(pair.contrast_label)
    said = []
    if found.clean_diff <= 0:
        said.append(f"The clean run does not prefer {t} to {c}: its logit difference {t} − {c} is "
                    f"{found.clean_diff:.2f}, not above 0.")
    if found.corrupted_diff >= 0:
        said.append(f"The corrupted run does not prefer {c} to {t}: its logit difference {t} − {c} is "
                    f"{found.corrupted_diff:.2f}, not below 0.")
    if said:
        more, less = ("more", "less") if found.clean_diff > found.corrupted_diff else ("less", "more")
        said.append(f"So 1 is only the clean run's logit difference, not the clean answer coming back, and 0 the "
                    f"corrupted run's: a cell above 1 makes the patched run prefer {t} to {c} {more} than the clean "
                    f"run does, and a cell below 0 {less} than the corrupted run does.")
    for which, run, p, label in (("target", "clean", found.clean_probs[0], pair.target_label),
                                 ("contrast", "corrupted", found.corrupted_probs[1], pair.contrast_label)):
        if p >= LOW_P:
            continue
        better = [s for s in found.likelier.get(which, []) if s.p > p and s.label != label]
        top = found.likelier.get(run, [None])[0]
        if better:
            instead = (f"the same word spelt {better[0].typed} is likelier (p = {better[0].p:.3f}): type that "
                       f"as the {which}")
        elif top is not None:
            instead = f"the {run} run's own top token is {quoted(top.label)} (p = {top.p:.3f})"
        else:
            continue
        said.append(f"The {run} run gives the {which} {quoted(label)} almost no probability (p = {p:.3f}); "
                    f"{instead}.")
    return said


def column_names(found: patching.Tracing, site: str) -> list[str]:
    """How a sentence names each column of a site's grid: a quoted clean token, or a head's number."""
    if site == "heads":
        return [f"H{h + 1}" for h in range(found.preview["heads"].shape[1])]
    return [quoted(token) for token in found.pair.clean_tokens]


def _places(found: patching.Tracing, site: str, mask) -> str:
    """"layers 1–3 at “iffel” and layer 30 at “▁of”" (heads: "L13 H9 and L24 H4"), at most PLACES named."""
    places = numbers.wrong_places(mask)
    if site == "heads":
        named = [head_name(l, h) for h, ls in places for l in ls]
        shown = named[:PLACES]
        rest = len(named) - len(shown)
    else:
        names = column_names(found, site)
        shown = [f"layer{'s' if len(ls) > 1 else ''} {numbers.layer_runs(ls)} at {names[c]}"
                 for c, ls in places[:PLACES]]
        rest = sum(len(ls) for _, ls in places[PLACES:])
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return listed + (f" (and {rest} more cell{'s' if rest > 1 else ''})" if rest else "")


def preview_wrong(found: patching.Tracing, exact: dict, site: str, why: bool = True) -> str:
    """One sentence: where the site's preview was wrong against its exact grid (analysis.patching.wrong_cells),
    and (why) why a preview can be; "" where it was not wrong."""
    backwards, off = numbers.wrong_cells(found.preview[site], exact[site])
    count = int(backwards.sum() + off.sum())
    if not count:
        return ""
    parts = []
    if backwards.any():
        parts.append(f"got {_places(found, site, backwards)} backwards")
    if off.any():
        parts.append(f"was off by more than {numbers.OFF_BY:g} at {_places(found, site, off)}")
    return (f"The preview of {SITE_WORDS[site]} {' and '.join(parts)} ({count} of {backwards.size} cells, "
            f"marked × on the preview)" + (f": {WHY_WRONG}." if why else "."))


def previews_wrong(found: patching.Tracing, exact: dict) -> list[str]:
    """preview_wrong for every site where it was wrong, the first saying why."""
    said = []
    for site in patching.SITES:
        said += [s for s in [preview_wrong(found, exact, site, why=not said)] if s]
    return said


def warned(sentences: list[str], text: str) -> str:
    """The text with the warnings first."""
    return f"⚠️ **{' '.join(sentences)}**\n\n{text}" if sentences else text


def pair_summary(found: patching.Tracing) -> str:
    """The two runs and the measure, in numbers."""
    pair = found.pair
    t, c = quoted(pair.target_label), quoted(pair.contrast_label)
    changed = [i + 1 for i in pair.changed]
    where = ", ".join(str(i) for i in changed) if changed else "no position"
    return (f"**Clean run:** p({t}) = {found.clean_probs[0]:.3f}, p({c}) = {found.clean_probs[1]:.3f}. "
            f"**Corrupted run:** p({t}) = {found.corrupted_probs[0]:.3f}, p({c}) = {found.corrupted_probs[1]:.3f}. "
            f"The logit difference {t} − {c} is {found.clean_diff:.2f} on the clean run and "
            f"{found.corrupted_diff:.2f} on the corrupted run; each cell shows "
            f"(d {_minus(found.corrupted_diff)}) / ({found.clean_diff:.2f} {_minus(found.corrupted_diff)}). "
            f"The prompts differ at position{'s' if len(changed) != 1 else ''} {where} (marked *), both "
            f"{len(pair.clean_ids)} tokens; the answer is read at position {pair.position + 1}.")


def estimating(found: patching.Tracing, progress: str = "") -> str:
    """The summary while the exact grids compute: the preview is an estimate."""
    return warned(target_warnings(found), pair_summary(found) + "\n\n*The preview (left) is an estimate from one "
                  "backward pass; each exact grid (right) replaces it with one patched run per cell. "
                  + (progress or "Computing the exact grids…") + "*")


def strongest_head(found: patching.Tracing, exact: dict) -> str:
    """The head the exact heads grid (else the preview's) restores most."""
    layer, head, _ = numbers.strongest(exact.get("heads", found.preview["heads"]), 1)[0]
    return head_name(layer, head)


def head_sentence(found: patching.Tracing, exact: dict, shown: str) -> str:
    """What the head figure shows once the exact grid is in: the preview's favourite replaced by the exact grid's,
    said, or the head the visitor opened kept."""
    first, best = strongest_head(found, {}), strongest_head(found, exact)
    value = numbers.strongest(exact["heads"], 1)[0][2]
    if best == first:
        found_it = f"The exact grid's strongest head is {best} ({value:.2f}), as the preview's."
    else:
        layer, head = parse_head_name(first)
        found_it = (f"The exact grid's strongest head is {best} ({value:.2f}), not the preview's {first} (exact "
                    f"{exact['heads'][layer, head]:.2f}).")
    if shown == best:
        return found_it + (f" The head picker, its outlined cell and the attention below show {best}."
                           if best != first else "")
    return found_it + f" The attention below keeps {shown}, the head you opened: pick {best} to see it."


def exact_summary(found: patching.Tracing, exact: dict, shown: str | None = None) -> str:
    """Where each exact grid restores the most, where and how far the preview was wrong, and the strongest heads;
    shown: the head the figure below draws (None: the exact grid's strongest)."""
    pair = found.pair
    lines = []
    for site in patching.GRID_SITES:
        (layer, position, value), = numbers.strongest(exact[site], 1)
        r = numbers.agreement(found.preview[site], exact[site])
        lines.append(f"- **{SITE_TITLES[site]}** restores the most at layer {layer + 1}, "
                     f"{quoted(pair.clean_tokens[position])} (position {position + 1}): {value:.2f}. "
                     f"Preview against exact: r = {r:.2f}.")
    restored = [(i, numbers.restoring_layers(exact["residual"], i)) for i in pair.changed]
    said = [f"{quoted(pair.clean_tokens[i])} (position {i + 1}) at layer{'s' if len(ls) > 1 else ''} "
            f"{numbers.layer_runs(ls)}" for i, ls in restored if ls]
    if said:
        lines[0] += (f" At the changed tokens, patching the residual stream restores at least {numbers.RESTORES:g} "
                     f"of the answer: {'; '.join(said)}.")
    heads = numbers.strongest(exact["heads"], 3)
    r = numbers.agreement(found.preview["heads"], exact["heads"])
    listed = ", ".join(f"{head_name(l, h)} {v:.2f}" for l, h, v in heads)
    lines.append(f"- **Heads** (each head's output at position {pair.position + 1}): the most restoring are "
                 f"{listed}. Preview against exact: r = {r:.2f}. "
                 + head_sentence(found, exact, shown or strongest_head(found, exact)))
    wrong = previews_wrong(found, exact)
    text = pair_summary(found) + ("\n\n**Where the preview was wrong.** " + " ".join(wrong) if wrong else
                                  "\n\nThe preview agrees with every exact grid (no cell backwards or off by more "
                                  f"than {numbers.OFF_BY:g}).")
    return warned(target_warnings(found), text + "\n\n" + "\n".join(lines))


def api_warnings(found: patching.Tracing, exact: np.ndarray, site: str) -> list[str]:
    """/patch's warnings for one site: the target's, then where the preview was wrong."""
    wrong = preview_wrong(found, {site: exact}, site)
    return target_warnings(found) + ([wrong] if wrong else [])
