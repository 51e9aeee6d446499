# rlinf-bench: every install step lives here or in pyproject.toml.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
EXTRAS ?= all,dev
PYTEST_ARGS ?=

.PHONY: setup demo test lint typecheck unit bench schemas clean help browser setup-robotwin test-robotwin

help:
	@echo "make demo   - set up, then evaluate a demo checkpoint end to end on the embedded default"
	@echo "make test   - set up, then lint, type-check and run the whole test suite"
	@echo "make doctor - check this environment (LIBERO, rendering, GPU, cluster, MLflow) and print each fix"
	@echo "make bench  - run the benchmarks in bench/ (figures go to bench/results/)"

$(PY):
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	$(PYTHON) -m venv $(VENV)

# Re-install only when the dependency list changes.
$(STAMP): pyproject.toml | $(PY)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(PY) -m rlinf_bench.demo

# Is this machine ready? Every check with what it measured and the fix (docs/doctor.md). DOCTOR_ARGS: e.g. --for eval.
DOCTOR_ARGS ?=
.PHONY: doctor
doctor: setup
	$(VENV)/bin/rlinf-bench doctor $(DOCTOR_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

schemas: setup
	$(PY) -m rlinf_bench.cli.main schemas --check

# Headless Chromium for the HTML report's browser tests. A Chromium already here is used (CHROMIUM=PATH, or
# chromium / chromium-browser / google-chrome on PATH). As root (CI) it is installed from Debian's package, with
# apt's output shown only when it fails. Without root the browser tests skip, saying how to enable them.
CHROMIUM ?=
export CHROMIUM
browser:
	@found="$(CHROMIUM)"; \
	for b in chromium chromium-browser google-chrome google-chrome-stable; do \
	  [ -n "$$found" ] || found=$$(command -v $$b || true); \
	done; \
	if [ -n "$$found" ]; then \
	  :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  log=$$(mktemp); \
	  if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$$log" 2>&1; then \
	    rm -f "$$log"; echo "make browser: installed $$(command -v chromium)"; \
	  else \
	    cat "$$log"; rm -f "$$log"; echo "make browser: apt-get install chromium failed (output above)"; exit 1; \
	  fi; \
	else \
	  echo "make browser: no Chromium and not root: the browser tests will be skipped (enable: sudo make browser, or CHROMIUM=/path/to/chromium)"; \
	fi

test: setup lint typecheck schemas browser
	$(VENV)/bin/pytest $(PYTEST_ARGS)
	$(MAKE) test-robotwin

unit: setup
	$(VENV)/bin/pytest -m "not sim and not slow" $(PYTEST_ARGS)

# RoboTwin 2.0 gets a venv of its own: its runtime pins numpy/sapien/scipy and Python<3.12 apart from .venv.
# The runtime's torch==2.8.0 pin is lifted (requirements.txt says why); the runtime goes in with --no-deps.
RT_VENV ?= .venv-robotwin
RT_PY := $(RT_VENV)/bin/python
RT_STAMP := $(RT_VENV)/.setup-stamp
RT_REQS := eval_runner/robotwin/requirements.txt eval_runner/robotwin/runtime.txt

$(RT_STAMP): pyproject.toml $(RT_REQS)
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(RT_PY) || $(PYTHON) -m venv $(RT_VENV)
	$(RT_PY) -m pip install --quiet --upgrade pip
	$(RT_PY) -m pip install --quiet -r eval_runner/robotwin/requirements.txt
	$(RT_PY) -m pip install --quiet --no-deps -r eval_runner/robotwin/runtime.txt
	$(RT_PY) -m pip install --quiet -e .
	touch $(RT_STAMP)

setup-robotwin: $(RT_STAMP)

test-robotwin: setup-robotwin
	$(RT_VENV)/bin/pytest tests/robotwin $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) $(RT_VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info

# `sam build` runs this for CheckpointRouterFunction (Metadata: BuildMethod: makefile): Lambda's
# python3.12 wheels are fetched for the target platform, so no local python3.12 is needed.
build-CheckpointRouterFunction:
	$(PYTHON) -m pip install --quiet --target "$(ARTIFACTS_DIR)" --platform manylinux2014_x86_64 \
	  --platform manylinux_2_28_x86_64 --implementation cp --python-version 3.12 --only-binary=:all: \
	  --no-compile -r functions/checkpoint_router/requirements.txt
	cp functions/checkpoint_router/app.py "$(ARTIFACTS_DIR)/"
	cp -r rlinf_bench "$(ARTIFACTS_DIR)/"
	find "$(ARTIFACTS_DIR)/rlinf_bench" -name __pycache__ -prune -exec rm -rf {} +
