# rlinf-bench: every environment comes from uv.lock (pyproject.toml declares them; docs/deploy.md, docs/performance.md).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
RL_VENV ?= .venv-rlinf
RT_VENV ?= .venv-robotwin
TOOLS_VENV ?= .venv-tools
CHECKOV_VENV ?= .venv-checkov
PY := $(VENV)/bin/python
# uv, pinned (pip-installed under ~/.cache unless on PATH). Venvs hard-link uv's cache: one copy of torch for three
# venvs; no pip cache. Their bytecode is compiled once at install (--compile-bytecode, ~0.5 GB a venv): every
# simulator worker, Job and CLI start reads it instead of compiling torch, MLflow... again, which Python does at
# every start where PYTHONDONTWRITEBYTECODE is set (it is on these dev machines): mlflow 3.2 -> 1.2 CPU-s,
# torch 2.9 -> 1.2 CPU-s, a tiny pipeline 35 -> 26 CPU-s.
UV_VERSION := 0.13.8
# Parsed without grep, cut or tr: a user's minimal PATH (make browser as nobody in the tests) must parse it quietly.
export UV := $(or $(and $(filter $(UV_VERSION),$(word 2,$(shell uv --version 2>/dev/null))),$(shell command -v uv)),\
  $(HOME)/.cache/rlinf-bench/uv-$(UV_VERSION)/bin/uv)
# torch 2.13.0: the CPU build where the wheel folder pyproject.toml's "torch-cpu" index names holds it (these
# machines, CI), else PyPI's build (CUDA 13, ~3 GB). TORCH=cpu or TORCH=pypi chooses by hand.
TORCH_CPU_WHEELS := /opt/wheels
TORCH ?= $(if $(wildcard $(TORCH_CPU_WHEELS)/torch-2.13.0+cpu-cp311-*.whl),cpu,pypi)
# A find-links folder would let the PyPI side of the lock pick the CPU wheel too: the lock names that folder itself.
unexport UV_FIND_LINKS
export UV_PYTHON ?= $(PYTHON)
export UV_LINK_MODE ?= hardlink
SYNC = UV_PROJECT_ENVIRONMENT=$(1) $(UV) sync --locked --quiet --compile-bytecode $(2)
TORCH_SYNC = $(call SYNC,$(1),$(2) --extra torch-$(TORCH))
help: ## this list
	@awk -F':.*## ' '/^[a-z-]+:.*## /{printf "  make %-18s %s\n",$$1,$$2}' $(MAKEFILE_LIST)
	@echo "  make build-<LogicalId>  what sam build runs: build-SharedLayer $(foreach f,$(FUNCTIONS),build-$(call field,$(f),1))"
.PHONY: $(shell awk -F: '/^[a-zA-Z-]+:/{print $$1}' $(MAKEFILE_LIST) 2>/dev/null)
$(UV):
	$(PYTHON) -m pip install --quiet --no-cache-dir --target $(dir $(@D)) uv==$(UV_VERSION)
setup: setup-main setup-rlinf setup-robotwin setup-tools browser ## every venv from uv.lock, asl-validator, Chromium
	@echo "set up; to put rlinf-bench and mlflow on PATH in this shell: source $(VENV)/bin/activate"
setup-main: | $(UV) torch-build ; $(call TORCH_SYNC,$(VENV),--extra all --extra dev) ## .venv: extras all,dev
setup-rlinf: | $(UV) torch-build ; $(call TORCH_SYNC,$(RL_VENV),--extra libero --extra aws --extra rlinf --extra test) ## .venv-rlinf: rlinf
setup-robotwin: | $(UV) torch-build ; $(call TORCH_SYNC,$(RT_VENV),--extra robotwin --extra test) ## .venv-robotwin: RoboTwin's runtime
torch-build: ## say which torch build set-up installs (TORCH=cpu|pypi)
	@$(if $(filter cpu,$(TORCH)),echo "torch: the CPU build from $(TORCH_CPU_WHEELS)",echo "torch: PyPI's 2.13.0, \
	  the CUDA 13 build (~3 GB with its nvidia-* wheels, downloaded once into uv's cache); no CPU wheel in $(TORCH_CPU_WHEELS)")
setup-sam: | $(UV) ; $(call SYNC,$(TOOLS_VENV),--only-group sam --no-install-project) ## .venv-tools: SAM CLI, cfn-lint
setup-tools: setup-sam deploy/tools/node_modules/.package-lock.json | $(UV) ## + .venv-checkov, asl-validator (npm)
	$(call SYNC,$(CHECKOV_VENV),--only-group checkov --no-install-project)
deploy/tools/node_modules/.package-lock.json: deploy/tools/package-lock.json
	@command -v npm >/dev/null || { echo "need node and npm on PATH (apt-get install nodejs npm)"; exit 1; }; \
	  npm ci --prefix deploy/tools --no-audit --no-fund --silent
DEMO_OUT ?= demo-out
demo: setup-main setup-sam ; $(VENV)/bin/rlinf-bench demo --out $(DEMO_OUT) $(DEMO_ARGS) ## the demo checkpoints through the flow in moto (DEMO_ARGS=--paper: the verdict against the paper)
doctor: setup-main ; $(VENV)/bin/rlinf-bench doctor $(DOCTOR_ARGS) ## check this machine, print each fix (DOCTOR_ARGS=...)
lint: setup-main ; $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/lint-imports --no-cache ## ruff, imports
typecheck: setup-main ; $(VENV)/bin/mypy ## mypy
schemas: setup-main ; $(PY) -m rlinf_cli.main schemas --check ## the committed JSON schemas match the contracts
lock-check: | $(UV) ; $(UV) lock --check ## uv.lock matches pyproject.toml
lock: | $(UV) ; $(UV) lock $(LOCK_ARGS) && $(MAKE) --no-print-directory requirements ## re-lock after a change to pyproject.toml (LOCK_ARGS=--upgrade-package X), re-export
# The Lambda layer's and functions' requirements and RoboTwin's image requirements, exported from the lock.
uvexport = mkdir -p $(dir $(1)) && { echo "\# Exported from uv.lock by make requirements (pyproject.toml declares it): edit \
  there, not here."; $(UV) export --frozen --quiet --no-emit-project --no-header $(2); } >$(1)
define requirements
	$(call uvexport,$(1)/layers/shared/requirements.txt,--no-hashes --only-group lambda-layer)
	$(foreach f,$(FUNCTIONS),$(call uvexport,$(1)/functions/$(call field,$(f),2)/requirements.txt,--no-hashes --only-group $(call field,$(f),3));)
	$(call uvexport,$(1)/eval_runner/robotwin/requirements.txt,--extra robotwin --extra aws --extra torch-cpu --no-emit-package torch --no-emit-package rlinf-robotwin-runtime)
	$(call uvexport,$(1)/eval_runner/robotwin/runtime.txt,--extra robotwin --no-hashes | grep '^rlinf-robotwin-runtime==')
endef
# template.yaml's functions as LogicalId:folder:dependency group (tests/unit/deploy keeps it equal to the template).
FUNCTIONS := CheckpointRouterFunction:checkpoint_router:lambda-layer RequestPlannerFunction:request_planner:lambda-layer \
  SlackNotifierFunction:slack_notifier:lambda-layer JobSubmitterFunction:job_submitter:lambda-k8s \
  FailureNotifierFunction:failure_notifier:lambda-k8s ResultsPublisherFunction:results_publisher:lambda-mlflow \
  ResultsAggregatorFunction:results_aggregator:lambda-plot QueueSentinelFunction:queue_sentinel:lambda-k8s
field = $(word $(2),$(subst :, ,$(1)))
requirements: | $(UV) ; $(call requirements,.) ## re-export the requirements files above from uv.lock
check-requirements: | $(UV) ## the committed requirements files match uv.lock
	@rm -rf build/requirements-check && $(call requirements,build/requirements-check)
	@cd build/requirements-check && for f in $$(find . -name '*.txt'); do \
	  cmp -s $$f $(CURDIR)/$$f || { echo "$$f differs from uv.lock: run make requirements"; exit 1; }; done
# CHROMIUM=PATH or one on PATH; as root Debian's package; else it unpacked into CHROMIUM_DIR if its libraries are here.
CHROMIUM_DIR ?= $(HOME)/.cache/rlinf-bench/chromium
export CHROMIUM CHROMIUM_DIR
browser: ## headless Chromium for the HTML report's browser tests
	@found="$(CHROMIUM)"; unpacked="$(CHROMIUM_DIR)/usr/lib/chromium/chromium"; why=""; log=$$(mktemp); tmp=$$(mktemp -d); \
	for b in chromium chromium-browser google-chrome google-chrome-stable; do [ -n "$$found" ] || found=$$(command -v $$b || true); done; \
	if [ -n "$$found" ] || [ -x "$$unpacked" ]; then :; \
	elif [ "$$(id -u)" = 0 ]; then { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$$log" 2>&1 \
	  && echo "make browser: installed $$(command -v chromium)" || { cat "$$log"; echo "make browser: apt-get install chromium failed (output above)"; exit 1; }; \
	elif ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then why="no Chromium and not root"; \
	elif ! (cd "$$tmp" && apt-get download chromium chromium-common) >"$$log" 2>&1; then \
	  why="no Chromium, not root, and apt-get download chromium failed ($$(tail -n 1 "$$log"))"; \
	else \
	  mkdir -p "$(CHROMIUM_DIR)" && for deb in "$$tmp"/*.deb; do dpkg-deb -x "$$deb" "$(CHROMIUM_DIR)"; done; \
	  missing=$$(ldd "$$unpacked" 2>&1 | awk '/not found/ {printf "%s ", $$1}'); \
	  if [ -x "$$unpacked" ] && [ -z "$$missing" ]; then echo "make browser: unpacked Debian's chromium without root into $(CHROMIUM_DIR)"; \
	  else rm -rf "$(CHROMIUM_DIR)"; why="Debian's chromium needs libraries this machine lacks ($${missing:-no binary})"; fi; \
	fi; rm -rf "$$log" "$$tmp"; [ -z "$$why" ] || echo "make browser: $$why: the browser tests will be skipped \
	  (enable: sudo make browser, or CHROMIUM=/path/to/chromium)"
RL_TESTS := $(addprefix tests/,unit/eval_runner/policies/test_rlinf_policy.py unit/eval_runner/policies/test_rlinf_cli_errors.py \
  integration/policy_server/test_serve_rlinf_policy.py sim/test_rlinf_rollout.py)
checks: lint typecheck schemas check-deploy lock-check check-requirements ## every check make test runs (no tests)
# The checks (mostly one core: mypy, checkov) run as one more part beside the test parts, not before them. Named
# through a variable: a recipe line that names $(MAKE) itself runs even under make -n.
CHECKS_CMD = $(MAKE) --no-print-directory checks
test: setup ## every check and every test part, side by side (scripts/test_tiers.py)
	$(PY) scripts/test_tiers.py --checks "$(CHECKS_CMD)" --rlinf-python $(RL_VENV)/bin/python \
	  --robotwin-python $(RT_VENV)/bin/python $(PYTEST_ARGS)
unit: setup-main ; $(VENV)/bin/pytest -m "not sim and not slow" $(PYTEST_ARGS) ## the fast tests (not sim, not slow)
test-robotwin: setup-robotwin ; $(RT_VENV)/bin/pytest tests/robotwin $(PYTEST_ARGS) ## tests/robotwin in .venv-robotwin
test-rlinf: setup-rlinf ; $(RL_VENV)/bin/python -m pytest $(RL_TESTS) -p no:cacheprovider $(PYTEST_ARGS) ## in .venv-rlinf
bench: setup-main setup-rlinf ## the benchmarks in bench/ (figures go to bench/results/)
	@for b in bench/*.py; do echo "== $$b"; py=$(PY); [ $$b != bench/rlinf_policy.py ] || py=$(RL_VENV)/bin/python; $$py $$b || exit 1; done
clean: ## remove the venvs and caches (uv's cache stays)
	rm -rf $(VENV) $(RT_VENV) $(RL_VENV) $(TOOLS_VENV) $(CHECKOV_VENV) deploy/tools/node_modules .mypy_cache .ruff_cache .pytest_cache *.egg-info
# sam build runs build-<LogicalId> in a scratch copy (paths via ROOT): wheels for Lambda's 3.12 x86_64, whole closures.
ROOT := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
LAMBDA_PACKAGES := $(wildcard $(addprefix $(ROOT),rlinf_bench rlinf_aws rlinf_k8s rlinf_tracking))
SAM_PYTHON ?= $(or $(shell command -v $(PYTHON) 2>/dev/null),python3)
LAMBDA_PIP = $(UV) pip install --quiet --python-platform x86_64-manylinux_2_28 --python-version 3.12 --only-binary :all: --no-deps
SLIM := $(SAM_PYTHON) $(ROOT)deploy/tools/slim_artifact.py
build-SharedLayer: | $(UV)
	$(LAMBDA_PIP) --target "$(ARTIFACTS_DIR)/python" -r "$(ROOT)layers/shared/requirements.txt"
	cp -r $(LAMBDA_PACKAGES) "$(ARTIFACTS_DIR)/python/" && $(SLIM) "$(ARTIFACTS_DIR)/python"
lambda_function = $(LAMBDA_PIP) --target "$(ARTIFACTS_DIR)" -r "$(ROOT)functions/$(1)/requirements.txt" && $(SLIM) "$(ARTIFACTS_DIR)" \
  --without-layer "$(ROOT)layers/shared/requirements.txt" && cp "$(ROOT)functions/$(1)/"*.py "$(ARTIFACTS_DIR)/"
$(foreach f,$(FUNCTIONS),$(eval build-$(call field,$(f),1): ; $$(call lambda_function,$(call field,$(f),2))))
IMAGE_TAG ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
images: ## build and push the Jobs' images, print their digests (REGISTRY=..., IMAGE_TAG=...; docs/deploy.md)
	@command -v docker >/dev/null || { echo "make images needs Docker (docs/deploy.md lists the commands)"; exit 1; }; \
	  test -n "$(REGISTRY)" || { echo "set REGISTRY=<account>.dkr.ecr.<region>.amazonaws.com"; exit 1; }
	for i in eval probe; do t=$(REGISTRY)/rlinf-$$i:$(IMAGE_TAG); docker build -f docker/Dockerfile.$$i -t $$t . && docker push $$t && \
	  echo "$${i^}Image=$$(docker inspect --format '{{index .RepoDigests 0}}' $$t)" || exit 1; done
# Deployment checks (part of make test). checkov links pods to NetworkPolicies only within one folder.
DEPLOY_CHECK_DIR ?= build/deploy-check
check-deploy: setup-main setup-tools ## cfn-lint, sam validate, asl-validator, checkov on template.yaml and the Jobs
	$(TOOLS_VENV)/bin/cfn-lint template.yaml && SAM_CLI_TELEMETRY=0 $(TOOLS_VENV)/bin/sam validate --lint --region us-east-1
	a=statemachine/evaluate_checkpoint.asl.json; deploy/tools/node_modules/.bin/asl-validator --json-path $$a --no-arn-check && $(PY) deploy/tools/asl_targets.py $$a
	rm -rf $(DEPLOY_CHECK_DIR) && mkdir -p $(DEPLOY_CHECK_DIR)/k8s && $(PY) -m rlinf_cli.main render-jobs \
	  --request deploy/tools/checkov-request.yaml --out $(DEPLOY_CHECK_DIR)/k8s && cp deploy/k8s/*.yaml $(DEPLOY_CHECK_DIR)/k8s/
	skips=$$($(PY) deploy/tools/checkov_skips.py deploy/tools/checkov-skips.yaml) && for f in "cloudformation -f template.yaml" \
	  "kubernetes -d $(DEPLOY_CHECK_DIR)/k8s"; do $(CHECKOV_VENV)/bin/checkov --skip-download --quiet --compact --framework $$f --skip-check "$$skips" || exit 1; done
