# Two commands do everything on a fresh machine (README):
#   make demo   creates .venv if needed, installs the runtime package (only when something changed)
#               and runs `sessionwatch demo` on the embedded SQLite default
#   make test   creates .venv if needed, then lint, type check, the docs build and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test lint typecheck docs pytest install bench clean hosts hosts-report hosts-capture generate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The strict editable mode links the layer folders into one `sessionwatch` package tree that
# mypy and pytest both see (ADR-0001). A stamp file records each install: pip runs again only when
# pyproject.toml or a package source changed (a new module needs the link tree rebuilt), never when
# nothing did. The demo needs the runtime package only; the tests need the `dev` extra, which
# includes it, so a dev install also satisfies the demo.
PACKAGE_SOURCES := pyproject.toml $(wildcard *.py) $(wildcard tools/*.py) \
	$(shell find domain projections adapters testing integrations cli -name '*.py' 2>/dev/null)
RUNTIME_STAMP := $(VENV)/.installed-runtime
DEV_STAMP     := $(VENV)/.installed-dev

$(RUNTIME_STAMP): $(PACKAGE_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e . --config-settings editable_mode=strict
	touch $@

$(DEV_STAMP): $(PACKAGE_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $(RUNTIME_STAMP) $@

install: $(DEV_STAMP)

demo: $(RUNTIME_STAMP)
	$(BIN)/sessionwatch demo

# The sync façade (adapters/entry/watch*.py) is generated from the asyncio one (aio*.py) by every
# build, `make install` included (tools/build_backend.py, ADR-0073); git ignores it. After editing
# aio.py, aio_upstream.py or aio_open.py, `make generate` (or any make target) writes it again; the
# test suite fails until then.
generate: install
	$(BIN)/python tools/async_to_sync.py --write

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy -p sessionwatch
	$(BIN)/mypy tests bench

# The documentation site (mkdocs.yml, docs/): strict, so a broken link or docstring fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Spread over every core (pytest-xdist); each test uses its own store, folder and schema.
# The suite includes tests/hosts, which drives the real Claude Code and Codex CLIs (installed once
# from the npm registry into ~/.cache/sessionwatch-hosts); without node, npm or tmux it skips,
# unless SESSIONWATCH_REQUIRE_HOSTS=1 (CI), where it fails.
pytest: install
	$(BIN)/python -m pytest -q -n auto

# The real-host suite alone; its results table is printed at the end.
hosts: install
	$(BIN)/python -m pytest -q -n auto tests/hosts

# Every real-host scenario once, and the results table (no pytest).
hosts-report: install
	$(BIN)/python tests/hosts/report.py

# The same, writing the regression fixtures of tests/data/hosts/ from the run.
hosts-capture: install
	$(BIN)/python tests/hosts/report.py --capture

test: lint typecheck docs pytest

bench: install
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .hypothesis
