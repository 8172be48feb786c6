"""The figures a lesson's step may name (`figure: head`): by tab, a short name -> the CSS selector of its block.
In presenter mode the named figure comes first (ui/lessons/player.py), so the step's text sits beside it."""
from __future__ import annotations

FIGURES = {
    "attention": {"head": "#head-detail", "grid": "#overview"},
    "steps": {"head": "#steps-scores"},
    "patching": {"residual": "#patching-residual", "attention": "#patching-attention", "mlp": "#patching-mlp",
                 "heads": "#patching-heads"},
    "interventions": {"guesses": "#ablate-guesses", "importance": "#importance"},
    "generation": {"row": "#generation-row", "strip": "#generation-strip", "cache": "#generation-cache"},
    "lens": {"top": "#lens-top", "final": "#lens-final"},
    "learning": {"head": "#learning-heat"},
}


def names(tab: str) -> list[str]:
    return list(FIGURES.get(tab, {}))


def selector(tab: str, name: str) -> str:
    """The named figure's selector on that tab ("" for a name the tab lacks)."""
    return FIGURES.get(tab, {}).get(str(name).strip(), "")
