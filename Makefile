# One entry point for users, developers and CI (.ci/run calls `make test`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## the main job on examples/, offline backend: no key, no network
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL $(BIN)/digest newsletter examples/ --out outputs/ --backend offline --state outputs/.state.sqlite --report outputs/report.json

test: $(STAMP)  ## the whole test suite
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check digest tests benchmarks
	$(BIN)/mypy digest

bench: $(STAMP)  ## speed and memory targets (not part of `make test`)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
