# One entry point for users, developers and CI (.ci/run calls `make test` and `make lint`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## the main job on examples/, offline backend: no key, no network
	env -u OPENAI_API_KEY -u OPENAI_BASE_URL $(BIN)/digest newsletter examples/ --week 2026-W47 --out outputs/ --backend offline --state outputs/.state.sqlite --report outputs/report.json

test: $(STAMP) browser  ## the whole test suite
	$(BIN)/python -m pytest -q

browser:  ## headless Chromium for tests/test_html_browser.py (Debian: chromium, chromium-driver)
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; \
	else \
		echo "make browser: chromium is not installed and this is not a root Debian shell." >&2; \
		echo "  Install it with: sudo apt-get install -y chromium chromium-driver" >&2; \
		echo "  (tests/test_html_browser.py fails until it is there)" >&2; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check digest tests benchmarks
	$(BIN)/mypy digest

bench: $(STAMP)  ## speed and memory targets (not part of `make test`)
	$(BIN)/python benchmarks/run.py

clean:  ## the venv, build files, caches and what `make demo` wrote (outputs/ keeps its .gitkeep)
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find outputs -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
