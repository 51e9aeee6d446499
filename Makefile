# rlinf-bench: every install step lives here or in pyproject.toml.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
EXTRAS ?= all,dev
PYTEST_ARGS ?=

.PHONY: setup demo test lint typecheck unit bench schemas clean help

help:
	@echo "make demo   - set up, then evaluate a demo checkpoint end to end on the embedded default"
	@echo "make test   - set up, then lint, type-check and run the whole test suite"
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

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

schemas: setup
	$(PY) -m rlinf_bench.cli.main schemas --check

test: setup lint typecheck schemas
	$(VENV)/bin/pytest $(PYTEST_ARGS)

unit: setup
	$(VENV)/bin/pytest -m "not sim and not slow" $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info
