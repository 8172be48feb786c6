"""The lecture examples docs/models.md states for smollm2 (SmolLM2-135M-Instruct, 4-bit), each measured here with the
app's own functions on the same weights: the logit lens on a recalled fact, induction heads on repeated random
words, the heads that copy a name and what knocking them out does, and the heads that park their weight on the
first token. A change of model, loader or analysis that moves a number docs/models.md quotes fails here."""
from __future__ import annotations

import numpy as np
import pytest

from analysis import flow
from model.switches import Switches
from ui.tabs import induction as ui_induction, lens as ui_lens
from model.registry import ModelRegistry

EIFFEL = "The Eiffel Tower is in the city of"
NAMES = "When Mary and John went to the store, John gave a drink to"


@pytest.fixture(scope="module")
def registry(smollm2):
    registry = ModelRegistry.load(names=(), extra={}, device="cpu")
    registry.models["smollm2"] = smollm2  # the session's one copy, as ModelRegistry.load would share it
    return registry


def test_the_lens_finds_paris_only_in_the_last_two_layers(registry):
    found = ui_lens.reading(registry, "smollm2", EIFFEL)
    last = len(found.tokens) - 1
    assert found.top_tokens[-1][last] == "▁Paris" and int(found.settled()[last]) == 28  # top from layer 29 on
    assert found.top_tokens[27][last] == "▁T"  # after layer 28, still " T"
    assert [round(float(p), 2) for p in found.final_probs[-3:, last]] == [0.04, 0.07, 0.66]
    assert (found.final_probs[:27, last] < 0.005).all()
    assert "from layer 29 on it is **▁Paris**" in ui_lens.summary(registry, "smollm2", found)


def test_induction_heads_nobody_planted(registry):
    m = ui_induction.measure(registry, "smollm2", 0, None)
    assert m["induction_head"] == (18, 6) and m["induction"][18, 6] == pytest.approx(0.87, abs=0.006)  # L19 H7
    assert m["previous_head"] == (16, 0) and m["previous"][16, 0] == pytest.approx(0.88, abs=0.006)  # L17 H1
    strongest = sorted(((float(m["induction"][l, h]), (l + 1, h + 1)) for l in range(30) for h in range(9)))[::-1]
    assert [head for _, head in strongest[:4]] == [(19, 7), (18, 6), (18, 5), (18, 4)]
    intact, knocked = m["table"].iloc[0], m["table"].iloc[1]
    assert (intact["loss on the first copy"], intact["loss on the second copy"]) == (10.97, 2.22)
    assert knocked["loss on the second copy"] == 3.56  # without L19 H7


def test_the_name_copied_and_the_heads_that_look_at_it(registry):
    trace = registry.trace("smollm2", NAMES)
    att = trace.attention["self"]
    mary, last = trace.tokens.index("▁Mary"), len(trace.tokens) - 1
    to_mary = att.probs[:, :, last, mary]  # (30, 9): from " to" to " Mary"
    order = [tuple(int(x) for x in np.unravel_index(i, to_mary.shape)) for i in np.argsort(-to_mary.ravel())]
    assert [(l + 1, h + 1) for l, h in order[:3]] == [(25, 5), (24, 1), (24, 2)]
    assert [round(float(to_mary[h]), 2) for h in order[:3]] == [0.81, 0.69, 0.56]
    loaded = registry.get("smollm2")

    def mary_probability(heads):
        switches = Switches(ablate={("self", l, h) for l, h in heads})
        return dict(loaded.next_tokens(NAMES, 20, switches))["▁Mary"]

    assert mary_probability([]) == pytest.approx(0.92, abs=0.006)
    assert mary_probability(order[:1]) == pytest.approx(0.98, abs=0.006)  # without L25 H5 alone: more sure
    assert mary_probability(order[:3]) == pytest.approx(0.87, abs=0.006)
    assert mary_probability(order[:6]) == pytest.approx(0.78, abs=0.006)  # still the top token
    assert loaded.next_tokens(NAMES, 1, Switches(ablate={("self", l, h) for l, h in order[:6]}))[0][0] == "▁Mary"


def test_most_heads_park_their_weight_on_the_first_token(registry):
    att = registry.detailed("smollm2", NAMES).attention["self"]
    sinks = flow.sink_shares(att, [0])  # the first token, "When": smollm2 adds no start token
    assert len(sinks.heads) == 166 and att.probs.shape[:2] == (30, 9)
    assert round(sinks.weight, 2) == 0.70 and round(sinks.norm, 2) == 0.51


def test_every_head_grid_says_which_heads_share_keys_and_values(registry):
    from ui.tabs import attention

    _, tokens, grid, average, _, _ = attention.analyze(registry, EIFFEL, "smollm2", layer=19, head=7)
    assert len(grid.layout.annotations) == 270 and len(tokens) == 9
    assert "H1–H3, H4–H6 and H7–H9 each share one key/value head (3 for 9 query heads)" in grid.layout.title.text
    assert len([s for s in grid.layout.shapes if s.line.dash == "dot"]) == 3
    redrawn, picked = attention.grid_view(registry, EIFFEL, "smollm2", 19, 7)
    assert picked == "L19 H7" and len([s for s in redrawn.layout.shapes if s.line.dash == "dot"]) == 3
