# rlinf-bench: every install step lives here or in pyproject.toml.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.setup-stamp
EXTRAS ?= all,dev
PYTEST_ARGS ?=

# Disk: CI's machine holds three venvs (~11 GB, 7 GB after dedupe) on a disk whose free space varies. There pip
# keeps no download cache and compiles no .pyc ahead (Python writes those it imports), and on every machine
# identical files across the venvs (torch, robosuite, the LIBERO assets) become hard links (DEDUPE_VENVS=0: off).
# docs/performance.md has the figures.
VENV_PIP_FLAGS := $(if $(filter true,$(CI)),--no-cache-dir --no-compile)
DEDUPE_VENVS ?= 1
define dedupe_venvs
	@if [ "$(DEDUPE_VENVS)" = 1 ] && command -v hardlink >/dev/null; then \
	  dirs=$$(for d in $(VENV) $(RL_VENV) $(RT_VENV); do [ -d "$$d" ] && echo "$$d"; done); \
	  echo "dedupe-venvs:" $$dirs "-" $$(hardlink --ignore-time --minimum-size 4K $$dirs | grep -i '^saved'); \
	fi
endef

.PHONY: setup demo test lint typecheck unit bench schemas clean help browser setup-robotwin test-robotwin setup-tools check-deploy images dedupe-venvs

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
	$(PIP) install --quiet $(VENV_PIP_FLAGS) -e '.[$(EXTRAS)]'
	$(dedupe_venvs)
	touch $(STAMP)

setup: $(STAMP) setup-rlinf

# Hard-link identical files across the venvs that exist (setup does this after each venv it builds).
dedupe-venvs:
	$(dedupe_venvs)

# The embedded default (docs/embedded.md): template.yaml's stack in moto (samtranslator from .venv-tools),
# two demo checkpoints through the whole flow. DEMO_OUT holds MLflow, the report and the outbox.
DEMO_OUT ?= demo-out
demo: setup setup-sam
	$(VENV)/bin/rlinf-bench demo --out $(DEMO_OUT)

# Is this machine ready? Every check with what it measured and the fix (docs/doctor.md). DOCTOR_ARGS: e.g. --for eval.
DOCTOR_ARGS ?=
.PHONY: doctor
doctor: setup
	$(VENV)/bin/rlinf-bench doctor $(DOCTOR_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache  # import rules in .importlinter

typecheck: setup
	$(VENV)/bin/mypy

schemas: setup
	$(PY) -m rlinf_cli.main schemas --check

# Headless Chromium for the HTML report's browser tests. A Chromium already here is used (CHROMIUM=PATH, or
# chromium / chromium-browser / google-chrome on PATH). As root (CI) Debian's package is installed, apt's
# output shown only when it fails. Without root, Debian's package is unpacked into CHROMIUM_DIR (apt-get
# download + dpkg-deb, no root needed) when this machine has its libraries; otherwise the browser tests
# skip, saying how to enable them.
CHROMIUM ?=
CHROMIUM_DIR ?= $(HOME)/.cache/rlinf-bench/chromium
export CHROMIUM CHROMIUM_DIR
SKIP_HINT := the browser tests will be skipped (enable: sudo make browser, or CHROMIUM=/path/to/chromium)
browser:
	@found="$(CHROMIUM)"; unpacked="$(CHROMIUM_DIR)/usr/lib/chromium/chromium"; \
	for b in chromium chromium-browser google-chrome google-chrome-stable; do \
	  [ -n "$$found" ] || found=$$(command -v $$b || true); \
	done; \
	if [ -n "$$found" ] || [ -x "$$unpacked" ]; then \
	  :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  log=$$(mktemp); \
	  if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$$log" 2>&1; then \
	    rm -f "$$log"; echo "make browser: installed $$(command -v chromium)"; \
	  else \
	    cat "$$log"; rm -f "$$log"; echo "make browser: apt-get install chromium failed (output above)"; exit 1; \
	  fi; \
	else \
	  why="no Chromium and not root"; \
	  if command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then \
	    tmp=$$(mktemp -d); \
	    if (cd "$$tmp" && apt-get download chromium chromium-common) >"$$tmp/log" 2>&1; then \
	      mkdir -p "$(CHROMIUM_DIR)" && for deb in "$$tmp"/*.deb; do dpkg-deb -x "$$deb" "$(CHROMIUM_DIR)"; done; \
	      missing=$$(ldd "$$unpacked" 2>&1 | awk '/not found/ {printf "%s ", $$1}'); \
	      if [ -x "$$unpacked" ] && [ -z "$$missing" ]; then \
	        why=""; echo "make browser: unpacked Debian's chromium without root into $(CHROMIUM_DIR)"; \
	      else \
	        rm -rf "$(CHROMIUM_DIR)"; why="Debian's chromium needs libraries this machine lacks ($${missing:-no binary})"; \
	      fi; \
	    else \
	      why="no Chromium, not root, and apt-get download chromium failed ($$(tail -n 1 "$$tmp/log"))"; \
	    fi; \
	    rm -rf "$$tmp"; \
	  fi; \
	  [ -z "$$why" ] || echo "make browser: $$why: $(SKIP_HINT)"; \
	fi

test: setup lint typecheck schemas browser check-deploy
	$(VENV)/bin/pytest $(PYTEST_ARGS)
	$(MAKE) test-robotwin
	$(MAKE) test-rlinf

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
	$(RT_PY) -m pip install --quiet $(VENV_PIP_FLAGS) -r eval_runner/robotwin/requirements.txt
	$(RT_PY) -m pip install --quiet $(VENV_PIP_FLAGS) --no-deps -r eval_runner/robotwin/runtime.txt
	$(RT_PY) -m pip install --quiet $(VENV_PIP_FLAGS) -e .
	$(dedupe_venvs)
	touch $(RT_STAMP)

setup-robotwin: $(RT_STAMP)

test-robotwin: setup-robotwin
	$(RT_VENV)/bin/pytest tests/robotwin $(PYTEST_ARGS)

# The rlinf: policy gets a venv of its own: rlinf needs hydra-core, which pins antlr4-python3-runtime 4.9,
# and moto's Step Functions engine in .venv needs 4.13 (docs/evaluate-rlinf.md). Its tests skip in .venv.
RL_VENV ?= .venv-rlinf
RL_PY := $(RL_VENV)/bin/python
RL_STAMP := $(RL_VENV)/.setup-stamp
RL_TESTS := tests/unit/eval_runner/policies/test_rlinf_policy.py tests/unit/eval_runner/policies/test_rlinf_cli_errors.py \
  tests/integration/policy_server/test_serve_rlinf_policy.py tests/sim/test_rlinf_rollout.py
.PHONY: setup-rlinf test-rlinf

$(RL_STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(RL_PY) || $(PYTHON) -m venv $(RL_VENV)
	$(RL_PY) -m pip install --quiet --upgrade pip
	$(RL_PY) -m pip install --quiet $(VENV_PIP_FLAGS) -e '.[libero,aws,rlinf,test]'
	$(dedupe_venvs)
	touch $(RL_STAMP)

setup-rlinf: $(RL_STAMP)

test-rlinf: setup-rlinf
	$(RL_PY) -m pytest $(RL_TESTS) -p no:cacheprovider $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; py=$(PY); [ $$b != bench/rlinf_policy.py ] || py=$(RL_PY); $$py $$b || exit 1; done

clean:
	rm -rf $(VENV) $(RT_VENV) $(RL_VENV) $(TOOLS_VENV) $(CHECKOV_VENV) $(TOOLS_DIR)/node_modules .mypy_cache .ruff_cache .pytest_cache *.egg-info

# ---- SAM application (template.yaml; docs/deploy.md) ------------------------------------------------
# `sam build` runs build-<LogicalId> (Metadata: BuildMethod: makefile) in a scratch copy of the resource's
# CodeUri, so every repo path here goes through ROOT, this Makefile's own folder. Wheels are fetched for
# Lambda's python3.12 on x86_64: neither Docker nor a local python3.12 is needed.
ROOT := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
SAM_PYTHON ?= $(or $(shell command -v $(PYTHON) 2>/dev/null),python3)
LAMBDA_PIP = $(SAM_PYTHON) -m pip install --quiet --disable-pip-version-check --platform manylinux2014_x86_64 \
  --platform manylinux_2_28_x86_64 --implementation cp --python-version 3.12 --only-binary=:all: --no-compile
LAYER_REQS := $(ROOT)layers/shared/requirements.txt
SLIM := $(SAM_PYTHON) $(ROOT)deploy/tools/slim_artifact.py

# rlinf_bench and the dependencies every function shares: one copy per deployment.
build-SharedLayer:
	$(LAMBDA_PIP) --target "$(ARTIFACTS_DIR)/python" -r "$(LAYER_REQS)"
	cp -r "$(ROOT)rlinf_bench" "$(ARTIFACTS_DIR)/python/"
	$(SLIM) "$(ARTIFACTS_DIR)/python"

# A function: its own requirements minus what the layer holds, then its code.
define lambda_function
	$(LAMBDA_PIP) --target "$(ARTIFACTS_DIR)" -r "$(ROOT)functions/$(1)/requirements.txt"
	$(SLIM) "$(ARTIFACTS_DIR)" --without-layer "$(LAYER_REQS)"
	cp "$(ROOT)functions/$(1)/"*.py "$(ARTIFACTS_DIR)/"
endef

build-CheckpointRouterFunction:
	$(call lambda_function,checkpoint_router)
build-RequestPlannerFunction:
	$(call lambda_function,request_planner)
build-JobSubmitterFunction:
	$(call lambda_function,job_submitter)
build-ResultsAggregatorFunction:
	$(call lambda_function,results_aggregator)
build-ResultsPublisherFunction:
	$(call lambda_function,results_publisher)
build-FailureNotifierFunction:
	$(call lambda_function,failure_notifier)
build-SlackNotifierFunction:
	$(call lambda_function,slack_notifier)

# The Jobs' images, pushed and printed by digest for the stack's EvalImage/ProbeImage (docs/deploy.md).
REGISTRY ?=
IMAGE_TAG ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
images:
	@command -v docker >/dev/null || { echo "make images needs Docker (docs/deploy.md lists the commands)"; exit 1; }
	@test -n "$(REGISTRY)" || { echo "set REGISTRY=<account>.dkr.ecr.<region>.amazonaws.com"; exit 1; }
	docker build -f docker/Dockerfile.eval -t $(REGISTRY)/rlinf-eval:$(IMAGE_TAG) .
	docker build -f docker/Dockerfile.probe -t $(REGISTRY)/rlinf-probe:$(IMAGE_TAG) .
	docker push $(REGISTRY)/rlinf-eval:$(IMAGE_TAG)
	docker push $(REGISTRY)/rlinf-probe:$(IMAGE_TAG)
	@echo "EvalImage=$$(docker inspect --format '{{index .RepoDigests 0}}' $(REGISTRY)/rlinf-eval:$(IMAGE_TAG))"
	@echo "ProbeImage=$$(docker inspect --format '{{index .RepoDigests 0}}' $(REGISTRY)/rlinf-probe:$(IMAGE_TAG))"

# Deployment checks (part of `make test`). aws-sam-cli and checkov each get a venv of their own: aws-sam-cli
# pins click and pydantic older than .venv's, and checkov's pins conflict with aws-sam-cli's.
TOOLS_VENV ?= .venv-tools
CHECKOV_VENV ?= .venv-checkov
TOOLS_DIR := deploy/tools
TOOLS_STAMP := $(TOOLS_VENV)/.setup-stamp
CHECKOV_STAMP := $(CHECKOV_VENV)/.setup-stamp
NODE_STAMP := $(TOOLS_DIR)/node_modules/.setup-stamp
DEPLOY_CHECK_DIR ?= build/deploy-check
ASL := statemachine/evaluate_checkpoint.asl.json

.PHONY: setup-sam
setup-sam: $(TOOLS_STAMP)  # samtranslator: the embedded default deploys template.yaml as CloudFormation

$(TOOLS_STAMP): $(TOOLS_DIR)/sam-requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(TOOLS_VENV)/bin/python || $(PYTHON) -m venv $(TOOLS_VENV)
	$(TOOLS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(TOOLS_VENV)/bin/python -m pip install --quiet -r $(TOOLS_DIR)/sam-requirements.txt
	touch $@

$(CHECKOV_STAMP): $(TOOLS_DIR)/checkov-requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/python -m pip install --quiet -r $(TOOLS_DIR)/checkov-requirements.txt
	touch $@

# asl-validator from the npm registry, pinned by package-lock.json, into deploy/tools/node_modules.
$(NODE_STAMP): $(TOOLS_DIR)/package.json $(TOOLS_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "need node and npm on PATH (apt-get install nodejs npm)"; exit 1; }
	npm ci --prefix $(TOOLS_DIR) --no-audit --no-fund --silent
	touch $@

setup-tools: $(TOOLS_STAMP) $(CHECKOV_STAMP) $(NODE_STAMP)

check-deploy: setup setup-tools
	$(TOOLS_VENV)/bin/cfn-lint template.yaml
	SAM_CLI_TELEMETRY=0 $(TOOLS_VENV)/bin/sam validate --lint --region us-east-1
	$(TOOLS_DIR)/node_modules/.bin/asl-validator --json-path $(ASL) --no-arn-check
	$(PY) $(TOOLS_DIR)/asl_targets.py $(ASL)
	@# checkov links pods to NetworkPolicies only within one folder: the rendered Jobs join deploy/k8s there.
	rm -rf $(DEPLOY_CHECK_DIR) && mkdir -p $(DEPLOY_CHECK_DIR)/k8s
	$(PY) -m rlinf_cli.main render-jobs --request $(TOOLS_DIR)/checkov-request.yaml --out $(DEPLOY_CHECK_DIR)/k8s
	cp deploy/k8s/*.yaml $(DEPLOY_CHECK_DIR)/k8s/
	skips=$$($(PY) $(TOOLS_DIR)/checkov_skips.py $(TOOLS_DIR)/checkov-skips.yaml) && \
	  $(CHECKOV_VENV)/bin/checkov --skip-download --quiet --compact --framework cloudformation -f template.yaml \
	    --skip-check "$$skips" && \
	  $(CHECKOV_VENV)/bin/checkov --skip-download --quiet --compact --framework kubernetes -d $(DEPLOY_CHECK_DIR)/k8s \
	    --skip-check "$$skips"
