"""train.py's path against a bare TRL DPOTrainer: optimizer steps/s and peak memory, same data and settings.

Both runs parse the same recipe (recipes/train/demo_cpu.yaml with the flags below), train the same
model on the same published split for the same number of steps and save the adapter. "ours" is
``spl_hf.train.run.main`` (output guard, data checks, dataset fingerprint, run record, card);
"bare" is what a user would write: ``load_dataset`` + ``DPOTrainer(peft_config=...)`` + ``save_model``.
Each run is a fresh subprocess (so peak RSS is its own), in ABBA order to cancel drift; the
printed figures are medians, and the overhead is ours/bare - 1 in end-to-end seconds per step. On a
shared machine run-to-run noise can exceed the overhead, so the time spent around
``trainer.train()`` (loading, checks, saving, records) is also printed for both: the training loop
itself is TRL's in both paths.

Usage: python benchmarks/bench_train.py [--model tiny|embedded|PATH] [--steps 20] [--repeats 2]
       [--split ultrachat] [--device cpu|gpu]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "recipes" / "train" / "demo_cpu.yaml"


def _flags(model: str, data: str, split: str, steps: int, out: str, device: str) -> list[str]:
    flags = [
        "--config",
        str(RECIPE),
        "--model_name_or_path",
        model,
        "--dataset_name",
        data,
        "--dataset_config",
        "preferences",
        "--dataset_train_split",
        split,
        "--max_steps",
        str(steps),
        "--output_dir",
        out,
        "--logging_steps",
        "5",
        "--disable_tqdm",
        "true",
    ]
    if device == "gpu":
        flags += ["--use_cpu", "false", "--bf16", "true", "--dtype", "bfloat16"]
    return flags


def _peak() -> dict[str, float]:
    out = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    import torch

    if torch.cuda.is_available():
        out["cuda_peak_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def child(mode: str, flags: list[str]) -> dict[str, float]:
    from spl_hf.train.args import parse_args

    script, train_args, model_args = parse_args(flags)
    t0 = time.perf_counter()
    if mode == "ours":
        from spl_hf.train.run import main

        out = main(script, train_args, model_args, argv=flags)
        rec = json.loads((out / "run.json").read_text())
        steps, train_s = rec["global_steps"], rec["train_s"]
    else:
        from datasets import load_dataset
        from trl import DPOTrainer, get_peft_config

        from spl_hf.train.run import resolve_base_model

        path, _, _ = resolve_base_model(model_args.model_name_or_path)
        train_args.model_init_kwargs = {"dtype": model_args.dtype}
        ds = load_dataset(script.dataset_name, script.dataset_config, split=script.dataset_train_split)
        trainer = DPOTrainer(
            model=path, args=train_args, train_dataset=ds, peft_config=get_peft_config(model_args)
        )
        t_train = time.perf_counter()
        trainer.train()
        train_s = time.perf_counter() - t_train
        trainer.save_model(train_args.output_dir)
        steps = trainer.state.global_step
    wall = time.perf_counter() - t0
    return {"steps": steps, "wall_s": wall, "train_s": train_s, "outside_s": wall - train_s, **_peak()}


def _run_child(mode: str, flags: list[str]) -> dict[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--", *flags],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--model", default="tiny", help="tiny (random 2-layer Llama), embedded, or a model folder"
    )
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2, help="ABBA pairs of runs")
    ap.add_argument("--split", default="ultrachat", help="split of the SPL sample's preferences config")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--child", choices=["ours", "bare"], help=argparse.SUPPRESS)
    ap.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run (the test suite runs it)")
    ap.add_argument("flags", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tiny:
        args.steps, args.repeats = 2, 1
    if args.child:
        flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
        print(json.dumps(child(args.child, flags)))
        return 0

    from spl_hf.build.spl import SPLBuildConfig, build_spl

    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        tmp_path = Path(tmp)
        data = build_spl(SPLBuildConfig(output_dir=str(tmp_path / "spl"))).path
        model = args.model
        if model == "tiny":
            sys.path.insert(0, str(REPO))
            from tests.backends_fixtures import build_tiny_llama, smollm_tokenizer_to

            model = str(build_tiny_llama(tmp_path / "tiny", smollm_tokenizer_to(tmp_path / "tok")))
        results: dict[str, list[dict[str, float]]] = {"ours": [], "bare": []}
        order = ["ours", "bare", "bare", "ours"] * args.repeats
        for i, mode in enumerate(order[: 2 * args.repeats]):
            out = str(tmp_path / f"{mode}{i}")
            results[mode].append(
                _run_child(mode, _flags(model, str(data), args.split, args.steps, out, args.device))
            )
            r = results[mode][-1]
            print(
                f"  {mode:<4} run {i}: {r['steps']} steps in {r['wall_s']:.2f} s ({r['train_s']:.2f} s in "
                f"trainer.train, {r['outside_s']:.2f} s around it), peak RSS {r['peak_rss_mb']:.0f} MB"
                + (f", CUDA peak {r['cuda_peak_mb']:.0f} MB" if "cuda_peak_mb" in r else ""),
                flush=True,
            )

    def med(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in results[mode])

    steps = {m: results[m][0]["steps"] for m in results}
    assert steps["ours"] == steps["bare"], steps
    sps = {m: steps[m] / med(m, "wall_s") for m in results}
    print(
        f"model {args.model}, {steps['ours']} optimizer steps, device {args.device}, "
        f"{args.repeats * 2} runs (ABBA, medians)"
    )
    for m in ("bare", "ours"):
        print(
            f"{m:<4}: {sps[m]:.3f} steps/s end to end, peak RSS {med(m, 'peak_rss_mb'):.0f} MB"
            + (f", CUDA peak {med(m, 'cuda_peak_mb'):.0f} MB" if "cuda_peak_mb" in results[m][0] else "")
        )
    print(
        f"overhead of train.py's path: {sps['bare'] / sps['ours'] - 1:+.1%} time per step "
        f"(ratio ours/bare steps/s = {sps['ours'] / sps['bare']:.3f}); "
        f"peak RSS ratio {med('ours', 'peak_rss_mb') / med('bare', 'peak_rss_mb'):.3f}"
    )
    print(f"ratio: train.py's path / bare DPOTrainer steps/s = {sps['ours'] / sps['bare']:.3f}x")
    print(
        f"time around trainer.train (loading, checks, saving, records): ours {med('ours', 'outside_s'):.2f} s, "
        f"bare {med('bare', 'outside_s'):.2f} s; added by train.py "
        f"{med('ours', 'outside_s') - med('bare', 'outside_s'):+.2f} s per run "
        f"= {(med('ours', 'outside_s') - med('bare', 'outside_s')) / med('bare', 'wall_s'):+.1%} of a bare run"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
