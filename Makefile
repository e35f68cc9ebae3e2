# Arena: `make demo` runs the main job, `make test` runs every check CI runs.
# Both create .venv and install the project on first use; only Python 3.11+ is needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup demo up test lint typecheck check-protos protos pytest screenshots clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Arena needs Python 3.11+ (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $@

demo: $(STAMP)
	$(BIN)/python -m arena.clients demo

up: $(STAMP)
	$(BIN)/arena up

test: lint typecheck check-protos pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/protolint lint proto/

# Strict on the core (arena/); services/ and clients/ are checked under their import
# names through a folder of links, since mypy cannot follow the package-dir mapping.
typecheck: $(STAMP)
	$(BIN)/mypy --strict arena
	@rm -rf .typecheck && mkdir -p .typecheck/arena
	@for f in arena/*; do ln -s ../../$$f .typecheck/arena/; done
	@ln -s ../../services .typecheck/arena/services && ln -s ../../clients .typecheck/arena/clients
	cd .typecheck && ../$(BIN)/mypy --config-file ../pyproject.toml -p arena.services -p arena.clients

check-protos: $(STAMP)
	$(BIN)/python tools/protogen.py --check

protos: $(STAMP)
	$(BIN)/python tools/protogen.py

# Two processes (TEST_JOBS), each taking whole files (tests/conftest.py); the engines'
# kernels are compiled first, once, so that the two do not both compile them. The tests
# marked `alone` (they measure the CPU share an engine gets, or its wait for a CPU) run
# after the others, with the machine to themselves; the recipe fails if either run does.
TEST_JOBS ?= 2

pytest: $(STAMP)
	$(BIN)/python -m arena.services.worker.warm
	$(BIN)/python -m pytest -q --durations=15 -n $(TEST_JOBS) --dist loadfile -m 'not alone'; \
	others=$$?; $(BIN)/python -m pytest -q -m alone && exit $$others

# Every web page in light and dark mode, laptop and phone width, into screenshots/.
screenshots: $(STAMP)
	$(BIN)/python tools/screenshots.py --out screenshots

clean:
	rm -rf $(VENV) .typecheck .mypy_cache .ruff_cache .pytest_cache .arena
