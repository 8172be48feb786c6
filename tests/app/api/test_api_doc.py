"""docs/api.md lists every public endpoint of the app, from the app's own API description (harness/api_doc.py writes
the list: `python -m harness.api_doc`), so the documentation cannot drift from the endpoints."""
from __future__ import annotations

import re

from harness import api_doc


def public_endpoints(demo) -> dict[str, list[str]]:
    return {name.lstrip("/"): [p["parameter_name"] for p in info["parameters"]]
            for name, info in demo.get_api_info()["named_endpoints"].items()}


def test_every_public_endpoint_is_in_the_api_doc_with_its_parameters(demo):
    published, listed = public_endpoints(demo), api_doc.documented(api_doc.API_MD.read_text(encoding="utf-8"))
    missing = sorted(set(published) - set(listed))
    assert not missing, f"public endpoints missing from docs/api.md: {missing} (run python -m harness.api_doc)"
    assert not sorted(set(listed) - set(published)), "docs/api.md lists endpoints the app no longer has"
    differ = sorted(n for n in published if listed[n] != published[n])
    assert not differ, f"parameters differ from the app's for {differ} (run python -m harness.api_doc)"
    for name in ("analyze", "head", "predict", "translate", "ablate", "classify", "train_toy", "ping", "lessons"):
        assert name in listed


def test_the_api_doc_is_what_the_generator_writes_now(demo):
    text = api_doc.API_MD.read_text(encoding="utf-8")
    assert api_doc.replaced(text, api_doc.render(demo.get_api_info())) == text, (
        "docs/api.md is not what python -m harness.api_doc writes: run it and commit the result")


def test_the_generated_list_leaves_out_what_depends_on_the_models_loaded(demo):
    """The same list on every machine: no model picker's names, no range of a model-fitted slider, no numbered
    label of Gradio's (those change with the models a server loads and with any component added to the page)."""
    info = demo.get_api_info()
    generated = api_doc.render(info)
    assert "'smollm2'" not in generated and "'minilm'" not in generated
    assert not re.search(r"value_\d", generated) and "numeric value between" not in generated
    analyze = generated.split("### `/analyze(", 1)[1].split("\n### ", 1)[0]
    assert "- `layer` (float: from 1, fitted to the model; default `1`): Layer" in analyze
    assert "- `name` (str: a model's name; default `'lm'`): Model" in analyze
