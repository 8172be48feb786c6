"""How heads are named: people count layers and heads from 1, so layer 0's head 1 is 'L1 H2'.

The numbers (analysis/), the figures (viz/) and the controls (ui/) all name heads this way.
"""
from __future__ import annotations


def head_name(layer: int, head: int) -> str:
    """'L1 H2' from 0-based indices: people count layers and heads from 1."""
    return f"L{layer + 1} H{head + 1}"


def head_names(n_layers: int, n_heads: int) -> list[str]:
    """Every head of a stack, layer by layer: ['L1 H1', 'L1 H2', ...]."""
    return [head_name(layer, head) for layer in range(n_layers) for head in range(n_heads)]


def parse_head_name(name: str) -> tuple[int, int]:
    """0-based (layer, head) from 'L1 H2'; ValueError if the text is not in that form."""
    try:
        layer, head = str(name).upper().split()
        if layer[0] != "L" or head[0] != "H":
            raise ValueError
        return int(layer[1:]) - 1, int(head[1:]) - 1
    except (ValueError, IndexError):
        raise ValueError(f"expected a head name like 'L1 H2', got {name!r}") from None
