"""DPO with LoRA on a published preference split, shaped like TRL's ``trl/scripts/dpo.py``.

    accelerate launch train.py --config recipes/train/spl_dpo_gemma.yaml \\
        --dataset_name spl-hf/spl --dataset_config preferences --seed 1 --output_dir runs/spl/seed1
    accelerate launch --cpu --num_processes 1 train.py --config recipes/train/demo_cpu.yaml \\
        --dataset_name out/spl_sample/dataset --dataset_train_split xstest

Arguments: TRL's ``ScriptArguments`` (extended: ``dataset_revision``, ``sources``,
``score_weighting``, ``weight_column``, ``overwrite``), ``DPOConfig`` and ``ModelConfig``;
``--config`` YAML values are defaults that flags override, and unknown keys fail. The data are
checked before any model is loaded. The output folder receives the adapter, tokenizer,
``train_config.yaml``, ``run.json`` and a model card (``README.md``).
"""

import sys

from spl_hf.train.entry import cli

if __name__ == "__main__":
    sys.exit(cli())
