# One command per chore. `make run` and `make test` set everything up first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ADDR   ?= 127.0.0.1:50051
RULES  ?= rules

.PHONY: setup run test check lint typecheck proto bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)  ## create .venv and install the package with its dev tools

run: $(STAMP)  ## serve the bundled rules on $(ADDR)
	$(BIN)/classifier serve --rules $(RULES) --addr $(ADDR)

test: check  ## lint, type-check, then every test
	$(BIN)/pytest

check: lint typecheck  ## ruff, mypy and buf lint

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/buf lint proto

typecheck: $(STAMP)
	$(BIN)/mypy

proto: $(STAMP)  ## regenerate classifier/_proto from proto/
	$(BIN)/python tools/gen_proto.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
