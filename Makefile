# One-command set-up: `make demo` and `make test` create .venv and install everything they need.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYPAIMON_STAMP := .venv-pypaimon/.installed
PYTEST_ARGS ?=

.PHONY: demo test lint bench install pypaimon clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# pypaimon 2.1.0 (the official Paimon Python SDK) in its own venv: it pins pyarrow<20 (interop tests, benchmark)
pypaimon: $(PYPAIMON_STAMP)

$(PYPAIMON_STAMP): $(STAMP) tests/interop/pypaimon_env.py
	$(BIN)/python tests/interop/pypaimon_env.py
	touch $(PYPAIMON_STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

test: $(STAMP) $(PYPAIMON_STAMP)
	PYPAIMON_PYTHON=$(CURDIR)/.venv-pypaimon/bin/python $(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy table_engine

bench: $(STAMP) $(PYPAIMON_STAMP)
	PYPAIMON_PYTHON=$(CURDIR)/.venv-pypaimon/bin/python $(BIN)/python benchmarks/bench_write_read.py --out .bench/latest.json

clean:
	rm -rf $(VENV) .venv-pypaimon .pytest_cache .mypy_cache .ruff_cache .hypothesis demo-warehouse .bench
