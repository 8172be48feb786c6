"""Shared fixtures: a synthetic WordNet folder and tiny models trained once per session."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch
from hypothesis import settings

# Property tests draw the same examples every run (derived from each test's name): a suite that fails one run in
# two at random teaches everyone to rerun instead of read. A new example to try is added to the test by hand.
settings.register_profile("suite", derandomize=True)
settings.load_profile("suite")

# Two cores are shared with a background training job: one thread avoids oversubscription
# (several times faster for these tiny models).
torch.set_num_threads(1)

_WORDS = ["cat", "dog", "river", "stone", "garden", "lamp", "music", "cloud", "bread", "window",
          "letter", "forest", "engine", "mirror", "candle", "island", "harbor", "ladder", "pencil", "violin"]
_ADJECTIVES = ["small", "quiet", "bright", "heavy", "old", "warm", "green", "narrow", "gentle", "round"]
_VERBS = ["holds", "carries", "covers", "follows", "lights", "opens", "feeds", "crosses", "keeps", "shows"]


def wordnet_data_line(offset: int, word: str, gloss: str) -> str:
    """One line in the format of WordNet's data.noun: header fields, then '| gloss'."""
    return f"{offset:08d} 05 n 01 {word} 0 000 | {gloss}  "


def synthetic_gloss_lines(n: int, seed: int = 0) -> list[str]:
    """n data.noun lines, each a definition and a quoted example of a few words."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        word = f"{rng.choice(_ADJECTIVES)}_{rng.choice(_WORDS)}"
        definition = f"a {rng.choice(_ADJECTIVES)} {rng.choice(_WORDS)} that {rng.choice(_VERBS)} the {rng.choice(_WORDS)}"
        example = f"the {rng.choice(_WORDS)} {rng.choice(_VERBS)} a {rng.choice(_ADJECTIVES)} {rng.choice(_WORDS)} number {i}"
        lines.append(wordnet_data_line(1000 + i, word, f'{definition}; "{example}"'))
    return lines


@pytest.fixture(scope="session")
def fixture_wordnet_dir(tmp_path_factory) -> Path:
    """A WordNet-like folder: a licence header line plus ~300 synthetic synsets in data.noun."""
    folder = tmp_path_factory.mktemp("wordnet")
    header = "  1 This software and database is being provided to you, the LICENSEE ...  "
    (folder / "data.noun").write_text("\n".join([header] + synthetic_gloss_lines(300)) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def empty_fortunes_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("no_fortunes")


@pytest.fixture(scope="session")
def tiny_trained_models(tmp_path_factory, fixture_wordnet_dir, empty_fortunes_dir) -> dict[str, Path]:
    """tiny-lm, tiny-mlm and tiny-dates trained for their few preset steps; name -> output folder.

    The two text models share one BPE tokenizer, kept one folder up from each model
    (where the loader looks), trained on the fixture corpus."""
    from training.train import train

    root = tmp_path_factory.mktemp("tiny_models")
    folders = {}
    for name in ("tiny-lm", "tiny-mlm", "tiny-dates", "tiny-classifier"):  # the classifier reads the lm's tokenizer
        out = root / name
        train(name, out=out, tokenizer_path=root / "tokenizer.json", wordnet_dir=fixture_wordnet_dir,
              fortunes_dir=empty_fortunes_dir, runs=root / "runs" / name)
        folders[name] = out
    return folders


SHIPPED_ASSETS = Path(__file__).resolve().parent.parent / "assets"


@pytest.fixture(scope="session")
def model_assets(request, tmp_path_factory) -> Path:
    """A folder holding lm/, mlm/ and dates/: the shipped assets when all three are trained,
    else the tiny models (linked under the shipped names) so the app tests still run."""
    import shutil

    from model.api import SHIPPED

    if all((SHIPPED_ASSETS / name / "model.safetensors").is_file() for name in SHIPPED):
        return SHIPPED_ASSETS
    tiny = request.getfixturevalue("tiny_trained_models")
    folder = tmp_path_factory.mktemp("assets")
    for name in SHIPPED:
        (folder / name).symlink_to(tiny[f"tiny-{name}"], target_is_directory=True)
    shutil.copy(tiny["tiny-lm"].parent / "tokenizer.json", folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="session")
def smollm2():
    """smollm2 (SmolLM2-135M-Instruct's 4-bit GGUF) as the app loads it, read once for the whole session: 8 s and
    540 MB. Context 512, the app's cap (model.registry.MAX_TOKENS): model.api shares this one copy with every registry."""
    from model import api
    return api.load("smollm2", device="cpu", context=512)


def pytest_collection_modifyitems(items):
    """The browser tests (tests/e2e) run last, in each process. Their session-long Playwright keeps an asyncio
    loop running in the process's thread, and a later test that calls asyncio.run (tests/app/api) fails there.
    Stable: the order within each part is kept."""
    e2e = Path(__file__).parent / "e2e"
    items.sort(key=lambda item: Path(item.path).is_relative_to(e2e))


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which would answer first
def pytest_xdist_make_scheduler(config, log):
    """`make test`'s two workers share the suite by parts (tests/suite_parts.py)."""
    from suite_parts import scheduler

    return scheduler(config, log)


def pytest_configure(config):
    config.addinivalue_line("markers", "trains: the test starts toy trainings on a live app; afterwards every slot "
                                       "of that app must be free (tests/trainings_left.py)")


# ---- one of each per session: the tests that use these only read them --------------------------------
# A test that needs other models (tiny checkpoints, extra folders) or changes what it is given (a cache's size,
# a monkeypatched decorator, the server's environment) builds its own and says why beside it.
@pytest.fixture(scope="session")
def shipped_registry(model_assets):
    """Every shipped model and minilm, loaded once for the handler and in-process API tests."""
    from model.registry import ModelRegistry

    loaded = ModelRegistry.load(model_assets, device="cpu", extra={})
    assert not loaded.errors, loaded.errors
    return loaded


@pytest.fixture(scope="session")
def registry(shipped_registry):
    """The session's registry. A module that needs other models defines its own `registry`, which wins there
    (`demo` reads shipped_registry, so it stays the shipped app's in such a module too)."""
    return shipped_registry


@pytest.fixture(scope="session")
def demo(shipped_registry, tmp_path_factory):
    """The app's Blocks, built once on the session's registry (building one takes seconds of the 2 cores); its
    classes in a file of the session's own (docs/classes.md)."""
    import app

    return app.build_demo(registry=shipped_registry, classes=tmp_path_factory.mktemp("classes") / "classes.sqlite3")


# One training at a time, as on a 2-core Space, whatever the machine: a test that holds the slot holds the only one
TRAINING_SLOTS = 1


@pytest.fixture(scope="session")
def live(model_assets, tmp_path_factory):
    """The real app (`python app.py`) started once on the session's assets: the API, hostile-input and browser
    tests all call this one server. Tests that change a server's environment start their own (tests/app/server)."""
    from harness.live_app import ARTIFACTS, live_app

    env = {"ATTENTION_ASSETS": str(model_assets), "ATTENTION_TOY_TRAININGS": str(TRAINING_SLOTS),
           "ATTENTION_CLASSES": str(tmp_path_factory.mktemp("classes") / "classes.sqlite3")}
    with live_app(ARTIFACTS / "logs" / "app.log", env=env) as running:
        yield running
