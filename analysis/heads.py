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


def head_choices(shapes: dict[str, tuple[int, int]]) -> list[str]:
    """Every head of a model as the app writes it, from attention kind -> (layers, heads): 'L2 H3' for a
    model with one kind; with several (the encoder-decoder), the kind first ('cross L2 H3') and, per kind,
    'cross all' for all of its heads."""
    if len(shapes) == 1:
        return head_names(*next(iter(shapes.values())))
    names = []
    for kind, (layers, heads) in shapes.items():
        names += [f"{kind} all"] + [f"{kind} {head}" for head in head_names(layers, heads)]
    return names


def parse_heads(spec, shapes: dict[str, tuple[int, int]], model: str = "this model",
                kind_labels: dict[str, str] | None = None) -> frozenset[tuple[str, int, int]]:
    """0-based (kind, layer, head) from head names as head_choices writes them: a comma-separated text
    ('L2 H3, L1 H1'; 'cross L2 H3, encoder all') or a list of names. ValueError says what is wrong, for
    the person who wrote it."""
    if spec is None:
        return frozenset()
    if isinstance(spec, str):
        items = [item.strip() for item in spec.split(",")]
    elif isinstance(spec, (list, tuple)) and all(isinstance(item, str) for item in spec):
        items = [item.strip() for item in spec]
    else:
        raise ValueError("Heads must be a comma-separated text such as 'L2 H3, L1 H1'.")
    single = len(shapes) == 1
    only = next(iter(shapes)) if single else None
    example = "'L2 H3'" if single else "'cross L2 H3', 'encoder L1 H1', 'decoder L1 H2' or 'cross all'"
    chosen = set()
    for item in filter(None, items):
        quoted = repr(item if len(item) <= 40 else item[:39] + "…")
        words = item.split(maxsplit=1)
        named = words[0].lower() if words[0].lower() in shapes and len(words) > 1 else None
        kind, rest = (named, words[1]) if named else (only, item)
        if kind is None:
            raise ValueError(f"Unknown head {quoted}: for {model} name the kind first, e.g. {example}.")
        layers, heads = shapes[kind]
        if rest.strip().lower() == "all":
            chosen |= {(kind, layer, head) for layer in range(layers) for head in range(heads)}
            continue
        try:
            layer, head = parse_head_name(rest)
        except ValueError:
            raise ValueError(f"Unknown head {quoted}: write heads like {example}.") from None
        if not (0 <= layer < layers and 0 <= head < heads):
            label = (kind_labels or {}).get(kind, f"{kind} attention")
            raise ValueError(f"{quoted} does not exist: {model}'s {label} has {layers} layers × {heads} heads.")
        chosen.add((kind, layer, head))
    return frozenset(chosen)


def sharing_sentence(groups: list[list[int]], n_heads: int) -> str:
    """Which query heads share keys and values, as the every-head grid's title says it (groups: 0-based)."""
    if len(groups) == 1:
        return (f"Multi-query attention: all {n_heads} query heads share one key/value head "
                "(one set of keys and values per layer)")
    spans = [f"H{group[0] + 1}–H{group[-1] + 1}" for group in groups]
    listed = ", ".join(spans[:-1]) + " and " + spans[-1]
    return (f"Grouped-query attention: {listed} each share one key/value head ({len(groups)} for {n_heads} query "
            "heads); a dotted box marks each group")
