# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BYTECODE := $(VENV)/.bytecode
PACKAGES := acel acea compiler reference spark_backend

.PHONY: setup graphviz demo test test-slow test-external sanitize lint bench clean

# Graphviz's dot draws automata (optional: without it they are written as DOT).
# Installed with apt-get when root or password-less sudo allows, else one line
# says what to run; first, before any other work.
graphviz:
	@$(PYTHON) tools/ensure_graphviz.py

$(STAMP): pyproject.toml setup.py $(wildcard acea/engine/native/*.c acel/io/native/*.c) | graphviz
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,data,bench]'
	$(BIN)/python -m compileall -q $(PACKAGES)
	touch $(STAMP)

# The editable install writes no bytecode and this machine kind sets
# PYTHONDONTWRITEBYTECODE=1, so without this every `acel` start would compile ~45
# modules from source (+70 ms of CPU; papers/engine.md "Start-up"). py_compile
# writes the .pyc files anyway; each records its source's mtime, so an edited module
# is recompiled (never run stale); __pycache__/ is git-ignored.
$(BYTECODE): $(STAMP) $(shell find $(PACKAGES) -name '*.py' 2>/dev/null)
	$(BIN)/python -m compileall -q $(PACKAGES)
	touch $(BYTECODE)

setup: graphviz $(STAMP) $(BYTECODE)

demo: graphviz $(STAMP) $(BYTECODE)
	$(BIN)/acel demo

# The suite (native paths built and on), then its Hypothesis properties that reach a
# native path again in pure Python (tests/conftest.py, papers/engine.md).  Issue 37:
# the default suite fits a small shared machine.  It runs Hypothesis's `ci` profile
# (the same examples as CI, every run; HYPOTHESIS_PROFILE=dev or thorough for more),
# and the `slow` properties on their first examples only; test-slow runs those in
# full, test-external the tests that install outside engines or start a Spark
# cluster: CI's own stages, after `make test` (papers/testing.md).
#
# Both use every core (pytest-xdist, `-n auto`: tests/conftest.py counts the workers,
# at most 4, each with its own Spark session; one core runs a single process);
# PYTEST_WORKERS=1 make test runs in one process, PYTEST_WORKERS=3 on three.
test test-slow test-external: export HYPOTHESIS_PROFILE ?= ci
PARALLEL := -n auto --dist worksteal
test: graphviz $(STAMP)
	$(BIN)/pytest $(PARALLEL) -m "not external and not cluster"
	ACEL_NATIVE=0 $(BIN)/pytest $(PARALLEL) -m native_paths

test-slow: graphviz $(STAMP)
	$(BIN)/pytest $(PARALLEL) --slow -m "slow and not external and not cluster"

test-external: graphviz $(STAMP)
	$(BIN)/pytest -m "external or cluster"

# The four C extensions built once with AddressSanitizer and UBSan into build/sanitize
# (the .venv's build untouched), the native tests and a short fuzz of the native paths
# run against them; any sanitizer report fails it (tools/sanitize.py, papers/engine.md).
# Order-only on the install: it compiles the C sources itself, so an edited .c file
# does not make it reinstall the .venv.
sanitize: | $(STAMP)
	HYPOTHESIS_PROFILE=ci $(BIN)/python tools/sanitize.py

lint: $(STAMP)
	$(BIN)/ruff check acel acea compiler reference spark_backend tests bench tools examples setup.py
	$(BIN)/mypy acel acea compiler reference spark_backend tools

bench: $(STAMP)
	$(BIN)/acel bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis demo-out
