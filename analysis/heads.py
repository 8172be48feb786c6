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


def kv_group(head: int, n_heads: int, n_kv_heads: int) -> list[int]:
    """The query heads (0-based, `head` included) that share `head`'s keys and values. With grouped-query
    attention key/value head j serves query heads j·g … j·g + g − 1 (g = n_heads / n_kv_heads), as
    model/multi_head.py repeats them; with one key/value head per query head, only `head` itself."""
    if not n_kv_heads or n_kv_heads >= n_heads:
        return [head]
    group = n_heads // n_kv_heads
    first = head // group * group
    return list(range(first, first + group))


def sharing_note(head: int, n_heads: int, n_kv_heads: int) -> str:
    """'H1–H4 share one set of keys and values (grouped-query attention: 2 key/value heads for 8 query
    heads)', or '' when every head has its own."""
    heads = kv_group(head, n_heads, n_kv_heads)
    if len(heads) == 1:
        return ""
    return (f"H{heads[0] + 1}–H{heads[-1] + 1} share one set of keys and values (grouped-query attention: "
            f"{n_kv_heads} key/value head{'s' if n_kv_heads > 1 else ''} for {n_heads} query heads)")
