"""The Positions tab's rotary part begins with its figure: on a rotary model (smollm2) the part is moved first
(positions.ROTARY_FIRST), and in presenter mode its figure must then lie on a 1280 × 720 screen's first
screen, the words under it. A CSS rule meant to move the figure alone above the words never won over the
part's (Gradio's copy of every rule under its container outweighs it), so the order is the components' own."""
from ui.tabs import positions


def test_the_rotary_part_opens_with_its_figure(demo):
    components = demo.get_config_file()["components"]
    part = [c for c in components if positions.ROTARY_PART in (c["props"].get("elem_classes") or [])]
    assert [c["type"] for c in part][:3] == ["plot", "markdown", "markdown"]
    assert part[1]["props"]["value"].lstrip().startswith("### Rotary positions")
    assert "Above, the chosen head's query" in " ".join(part[1]["props"]["value"].split())
    # one order rule only: the part's (a second, for the figure alone, did not apply)
    assert positions.ROTARY_FIRST.count("order") == 1
