# Two commands do everything on a fresh machine (README):
#   make demo   creates .venv if needed and runs `sessionwatch demo` on the embedded SQLite default
#   make test   creates .venv if needed, then lint, type check, the docs build and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint typecheck docs pytest install bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The strict editable mode links the layer folders into one `sessionwatch` package tree that
# mypy and pytest both see (ADR-0001). Re-run on every call: it is quick and picks up new files.
install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict

demo: install
	$(BIN)/sessionwatch demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy -p sessionwatch
	$(BIN)/mypy tests bench

# The documentation site (mkdocs.yml, docs/): strict, so a broken link or docstring fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

pytest: install
	$(BIN)/python -m pytest -q

test: lint typecheck docs pytest

bench: install
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .hypothesis
