"""Each room imports only from the rooms below it (README, "Layout"), read from the source with `ast`: every
import, also those inside a function, without importing anything.

    model/        torch; never experiments/, analysis/, viz/, ui/, training/
    experiments/  runs a model under switches: model/ and analysis/; never viz/, ui/, training/
    analysis/     numpy: no torch, no experiments/, and only the modules of model/ that need no torch
    viz/          figures: no torch, no Gradio, no model/ or experiments/
    training/     data and optimisation: never ui/
    headfinder/   the head finder's scores (a room below ui/): never ui/, viz/ or Gradio
    ui/, app.py   Gradio: no torch of their own
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {  # room -> the top-level packages its modules must not import
    "model": {"experiments", "analysis", "viz", "ui", "training", "gradio", "app"},
    "experiments": {"viz", "ui", "training", "gradio", "app"},
    "analysis": {"torch", "experiments", "viz", "ui", "training", "gradio", "app"},
    "viz": {"torch", "gradio", "model", "experiments", "ui", "training", "app"},
    "training": {"ui", "gradio", "app"},
    "headfinder": {"ui", "viz", "gradio", "app"},
    "ui": {"torch"},
    "app.py": {"torch"},
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in the file, at any depth (a function's own import too); a
    `from package import name` also counts as `package.name`, which may be a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def sources(room: str) -> list[Path]:
    path = ROOT / room
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def module_path(dotted: str) -> Path | None:
    """The file of one of our modules (model.trace -> model/trace.py), or None for a package's name or another's."""
    path = ROOT.joinpath(*dotted.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def needs_torch(dotted: str, seen: set[str] | None = None) -> bool:
    """Whether importing our module `dotted` imports torch, itself or through our modules it imports."""
    seen = set() if seen is None else seen
    path = module_path(dotted)
    if path is None or dotted in seen:
        return False
    seen.add(dotted)
    return any(name.split(".")[0] == "torch" or needs_torch(name, seen) for _, name in imported_modules(path))


def broken_rules(room: str) -> list[str]:
    found = []
    for path in sources(room):
        for line, name in imported_modules(path):
            top = name.split(".")[0]
            where = f"{path.relative_to(ROOT)}:{line} imports {name}"
            if top in FORBIDDEN[room]:
                found.append(where)
            elif room == "analysis" and top == "model" and needs_torch(name):
                found.append(where + " (torch)")
    return sorted(set(found))


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_each_room_imports_only_from_the_rooms_below_it(room):
    assert sources(room), f"{room} holds no module: is the layout still this one?"
    assert broken_rules(room) == [], f"{room} imports what its room must not (README, Layout)"


def test_the_scan_finds_an_import_inside_a_function_and_one_through_our_own_modules(tmp_path, monkeypatch):
    module = tmp_path / "analysis" / "late.py"
    module.parent.mkdir()
    module.write_text("import numpy as np\n\ndef f():\n    from model import trace\n    import torch.nn\n")
    assert imported_modules(module) == [(1, "numpy"), (4, "model"), (4, "model.trace"), (5, "torch.nn")]
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "trace.py").write_text("from model import maths\n")
    (tmp_path / "model" / "maths.py").write_text("import torch\n")
    (tmp_path / "model" / "config.py").write_text("import json\n")
    assert needs_torch("model.trace") and not needs_torch("model.config")
    assert broken_rules("analysis") == ["analysis/late.py:4 imports model.trace (torch)",
                                        "analysis/late.py:5 imports torch.nn"]


# ui/'s own rooms (ui/*/__init__.py): the page's parts and the runtime are below the tabs, and the lessons above them
UI_FORBIDDEN = {"runtime": {"ui.tabs", "ui.lessons.library"}, "page": {"ui.tabs", "ui.lessons.library"},
                "tabs": {"ui.lessons.library"}, "lessons": set()}
# the sections that live inside a tab (ui/tabs/__init__.py): the one tab that holds each may import it
SECTIONS = {"qk": "steps", "sampling": "attention", "predictions": "attention", "flow": "interventions", "routes": "patching"}


def broken_ui_rules(root: Path = ROOT) -> list[str]:
    found = []
    for room, forbidden in UI_FORBIDDEN.items():
        for path in sorted((root / "ui" / room).glob("*.py")):
            for line, name in imported_modules(path):
                where = f"{path.relative_to(root)}:{line} imports {name}"
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    found.append(where)
                elif room == "tabs" and name.startswith("ui.tabs."):
                    other = name.split(".")[2]
                    if other != path.stem and SECTIONS.get(other) != path.stem:
                        found.append(where + " (another tab)")
    return sorted(set(found))


def test_a_tab_imports_no_other_tab_and_the_page_imports_no_tab():
    assert len(list((ROOT / "ui" / "tabs").glob("*.py"))) >= 15, "is ui/tabs/ still where the tabs live?"
    assert broken_ui_rules() == [], "what two tabs share belongs in ui/page/ (README, Layout)"


def test_the_ui_scan_finds_a_tab_importing_another_and_the_page_importing_a_tab(tmp_path):
    for room in UI_FORBIDDEN:
        (tmp_path / "ui" / room).mkdir(parents=True)
    (tmp_path / "ui" / "tabs" / "steps.py").write_text("from ui.tabs import qk\n")  # its own section: allowed
    (tmp_path / "ui" / "tabs" / "lens.py").write_text("from ui.tabs import steps\nfrom ui.page import links\n")
    (tmp_path / "ui" / "page" / "controls.py").write_text("def f():\n    from ui.tabs.steps import x\n")
    assert broken_ui_rules(tmp_path) == ["ui/page/controls.py:2 imports ui.tabs.steps",
                                         "ui/page/controls.py:2 imports ui.tabs.steps.x",
                                         "ui/tabs/lens.py:1 imports ui.tabs.steps (another tab)"]
