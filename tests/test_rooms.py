"""Each room imports only from the rooms below it (README, "Layout"), read from the source with `ast`: every
import, also those inside a function, without importing anything.

    model/        torch; never experiments/, analysis/, viz/, ui/, training/
    experiments/  runs a model under switches: model/ and analysis/; never viz/, ui/, training/
    analysis/     numpy: no torch, no experiments/, and only the modules of model/ that need no torch
    viz/          figures: no torch, no Gradio, no model/ or experiments/
    training/     data and optimisation: never ui/
    classroom/    a class's store and its followers: no Gradio, no ui/, only the torch-free modules of model/
    headfinder/   the head finder's scores (a room below ui/): never ui/, viz/ or Gradio
    ui/, app.py   Gradio: no torch of their own

and no module imports itself through others (a cycle), not even through an import inside a function, which would
only hide the cycle: the graph below holds every import at any depth, and `importlib.import_module("...")` too.
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
    "classroom": {"torch", "gradio", "ui", "viz", "experiments", "training", "app"},  # a class's store: no page
    "headfinder": {"ui", "viz", "gradio", "app"},
    "ui": {"torch"},
    "app.py": {"torch"},
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in the file, at any depth (a function's own import too), and every
    importlib.import_module("...") of a name written out; a `from package import name` also counts as
    `package.name`, which may be a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif by_name := imported_by_name(node):
            found.append((node.lineno, by_name))
    return found


def imported_by_name(node: ast.AST) -> str | None:
    """The module an `importlib.import_module("a.b")` (or `__import__("a.b")`) call imports, else None."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and (getattr(node.func, "attr", None) == "import_module"
                                                        or getattr(node.func, "id", None) in ("import_module",
                                                                                             "__import__")):
        return node.args[0].value
    return None


def sources(room: str, root: Path | None = None) -> list[Path]:
    path = (ROOT if root is None else root) / room
    return ([path] if path.is_file() else []) if path.suffix == ".py" else sorted(path.rglob("*.py"))


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
            elif room in ("analysis", "classroom") and top == "model" and needs_torch(name):
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


# ui/'s own rooms (ui/*/__init__.py), from the bottom: the leaves at ui/'s top (ui/toasts.py) import nothing of ui/;
# the runtime (Gradio's workarounds) nothing of the page, which uses it; the page's parts no tab; the lessons read
# the tabs, which never read the lessons
UI_FORBIDDEN = {"": {"ui.runtime", "ui.page", "ui.tabs", "ui.lessons"},
                "runtime": {"ui.page", "ui.tabs", "ui.lessons"}, "page": {"ui.tabs", "ui.lessons"},
                "tabs": {"ui.lessons"}, "lessons": set()}
# the sections and parts that live inside a tab (ui/tabs/__init__.py): the one tab that holds each, and its other
# parts, may import it
SECTIONS = {"qk": "steps", "sampling": "attention", "predictions": "attention", "flow": "interventions", "routes": "patching",
            "patching_summary": "patching", "patching_jobs": "patching"}


def broken_ui_rules(root: Path = ROOT) -> list[str]:
    found = []
    for room, forbidden in UI_FORBIDDEN.items():
        for path in sorted((root / "ui" / room).glob("*.py")):
            for line, name in imported_modules(path):
                where = f"{path.relative_to(root)}:{line} imports {name}"
                if any(name == f or name.startswith(f + ".") for f in forbidden):
                    found.append(where)
                elif room == "tabs" and name.startswith("ui.tabs.") and path.stem != "__init__":  # TABS lists them
                    other = name.split(".")[2]
                    holder = SECTIONS.get(other)
                    if other != path.stem and holder not in (path.stem, SECTIONS.get(path.stem, path.stem)):
                        found.append(where + " (another tab)")
    return sorted(set(found))


def test_each_ui_room_imports_only_below_it_and_a_tab_no_other_tab():
    assert len(list((ROOT / "ui" / "tabs").glob("*.py"))) >= 15, "is ui/tabs/ still where the tabs live?"
    assert broken_ui_rules() == [], "an arrow back up inside ui/ (leaves < runtime < page < tabs < lessons), or " \
                                    "one tab importing another: what two tabs share belongs in ui/page/"


def test_the_ui_scan_finds_a_tab_importing_another_and_the_page_importing_a_tab(tmp_path):
    for room in UI_FORBIDDEN:
        (tmp_path / "ui" / room).mkdir(parents=True)
    (tmp_path / "ui" / "tabs" / "steps.py").write_text("from ui.tabs import qk\n")  # its own section: allowed
    (tmp_path / "ui" / "tabs" / "lens.py").write_text("from ui.tabs import steps\nfrom ui.page import links\n")
    (tmp_path / "ui" / "tabs" / "__init__.py").write_text("from ui.tabs import lens, steps\n")  # the tab list
    (tmp_path / "ui" / "page" / "controls.py").write_text("def f():\n    from ui.tabs.steps import x\n")
    (tmp_path / "ui" / "runtime" / "wire.py").write_text("from ui.page.messages import refusal\n")
    (tmp_path / "ui" / "toasts.py").write_text("import ui.runtime.env\n")
    assert broken_ui_rules(tmp_path) == ["ui/page/controls.py:2 imports ui.tabs.steps",
                                         "ui/page/controls.py:2 imports ui.tabs.steps.x",
                                         "ui/runtime/wire.py:1 imports ui.page.messages",
                                         "ui/runtime/wire.py:1 imports ui.page.messages.refusal",
                                         "ui/tabs/lens.py:1 imports ui.tabs.steps (another tab)",
                                         "ui/toasts.py:1 imports ui.runtime.env"]


# ---- cycles ---------------------------------------------------------------------------------------------------------
# our modules: every room's, the CLIs' and harnesses' (bench/, harness/), and app.py
PACKAGES = ("model", "experiments", "analysis", "viz", "training", "ui", "bench", "harness", "app.py")


def our_modules(root: Path = ROOT) -> dict[str, Path]:
    """dotted name -> file, for every module of PACKAGES (a package is its __init__.py)."""
    found = {}
    for package in PACKAGES:
        for path in sources(package, root):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_arrows(path: Path, modules: dict[str, Path]) -> list[tuple[int, str, bool]]:
    """(line, our module imported, inside a function?) for every import in the file, at any depth, and every
    importlib.import_module("...") of a name written out. `from package import name` is an arrow to the module
    package.name where there is one (as Python imports it, the package's __init__ already running), else to the
    package itself."""
    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    arrows = []

    def visit(node, inside: bool):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module != "__future__":
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                     for alias in node.names]
        elif by_name := imported_by_name(node):
            names = [by_name]
        arrows.extend((node.lineno, target, inside) for target in map(ours, names) if target is not None)
        for child in ast.iter_child_nodes(node):
            visit(child, inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(), str(path)), False)
    return arrows


def import_cycles(root: Path = ROOT) -> list[list[str]]:
    """Each set of our modules that import one another round in a circle (a strongly connected component of the
    import graph, every import at any depth), as its arrows "a.py:12 -> b (inside a function)"; [] for none."""
    modules = our_modules(root)
    graph = {name: {} for name in modules}  # module -> {module it imports: [(line, inside a function)]}
    for name, path in modules.items():
        for line, target, inside in import_arrows(path, modules):
            if target != name:
                graph[name].setdefault(target, []).append((line, inside))
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def connect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while not component or v not in component:
                component.add(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                cycles.append(sorted({
                    f"{modules[a].relative_to(root)}:{line} -> {b}" + (" (inside a function)" if inside else "")
                    for a in component for b, lines in graph[a].items() if b in component for line, inside in lines}))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return sorted(cycles)


def test_no_module_imports_itself_through_others():
    assert len(our_modules()) > 100, "is the layout still this one?"
    assert import_cycles() == [], "an import cycle: move what both need below both (an import inside a " \
                                  "function only hides it)"


def test_the_cycle_scan_sees_an_import_inside_a_function_and_one_by_importlib(tmp_path):
    (tmp_path / "ui" / "page").mkdir(parents=True)
    (tmp_path / "ui" / "tabs").mkdir()
    (tmp_path / "ui" / "__init__.py").write_text("")
    (tmp_path / "ui" / "page" / "context.py").write_text("def link():\n    from ui.page.page_link import wire\n")
    (tmp_path / "ui" / "page" / "page_link.py").write_text("from ui.page import context\n\ndef wire():\n    pass\n")
    (tmp_path / "ui" / "page" / "links.py").write_text("import importlib\n\n\ndef every():\n"
                                                        "    importlib.import_module('ui.tabs')\n")
    (tmp_path / "ui" / "tabs" / "__init__.py").write_text("from ui.tabs import steps\n")  # the tab list: no cycle
    (tmp_path / "ui" / "tabs" / "steps.py").write_text("from ui.tabs import qk\nfrom ui.page import links\n")
    (tmp_path / "ui" / "tabs" / "qk.py").write_text("def f():\n    import ui.page.context\n")  # closes no cycle
    assert import_cycles(tmp_path) == [
        ["ui/page/context.py:2 -> ui.page.page_link (inside a function)", "ui/page/page_link.py:1 -> ui.page.context"],
        ["ui/page/links.py:5 -> ui.tabs (inside a function)", "ui/tabs/__init__.py:1 -> ui.tabs.steps",
         "ui/tabs/steps.py:2 -> ui.page.links"]]


def test_test_files_have_unique_names():
    """The test folders are not packages, so pytest imports each test file by its bare name: two `test_store.py` in
    two folders collide when one worker collects both ("import file mismatch"), which depends on how xdist splits
    the files, so a clean run can pass and CI fail."""
    seen: dict[str, Path] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        assert path.name not in seen, f"{path.relative_to(ROOT)} and {seen[path.name].relative_to(ROOT)} share a name"
        seen[path.name] = path
