"""One DPO + LoRA training run, shaped like TRL's ``trl/scripts/dpo.py``.

Order matters: the output folder is checked and the data are loaded and checked before any model
is loaded, so bad input fails in seconds with one clear error, not after minutes of model loading.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from trl import DPOConfig, ModelConfig

from spl_hf.errors import SplHfError
from spl_hf.outputs import guard_dir, mark_output, seal_output
from spl_hf.train.args import TrainScriptArguments
from spl_hf.train.checks import check_dataset_manifest, check_settings
from spl_hf.train.data import is_local, load_split
from spl_hf.train.group import keep_until_exit
from spl_hf.train.record import RunRecord, final_loss, resolved_config, safe_argv, write_run

EMBEDDED = "embedded"


def hub_model_revision(name: str, revision: str | None) -> str:
    """The commit a Hub model revision resolves to, or what was asked for when the Hub is unreachable."""
    from huggingface_hub import HfApi

    try:
        return f"hub:{HfApi().model_info(name, revision=revision).sha}"
    except Exception as exc:  # offline mode, HTTP errors, or the HTTP client's own connect errors
        # Recorded as unresolved rather than guessed: the run still names what it asked for.
        return f"unresolved:{revision or 'main'} ({type(exc).__name__})"


def resolve_base_model(name: str | None, revision: str | None = None) -> tuple[str, dict[str, str], str]:
    """(load path, identity, card base model) for a folder, a Hub id, or ``embedded``.

    ``embedded`` is the packaged SmolLM2-135M, converted once from its GGUF into a safetensors
    cache folder, which is what gets loaded.
    """
    if not name:
        raise SplHfError(
            "no model given: pass --model_name_or_path (a model folder, a Hub id, or `embedded`)"
        )
    from spl_hf.backends import EMBEDDED_NAME, prepare_embedded, resolve_model

    if name == EMBEDDED:
        path, info = prepare_embedded()
        return str(path), info.to_dict(), EMBEDDED_NAME
    if Path(name).expanduser().is_dir():
        path, info, _ = resolve_model(name)
        return str(path), info.to_dict(), info.model_id
    return name, {"model_id": name, "revision": hub_model_revision(name, revision), "path": name}, name


def count_adapter(model: Any) -> tuple[int, int, int]:
    """(adapted modules, trainable parameters, all parameters); ZeRO-3 shards report ``ds_numel``."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    adapted = sum(1 for m in model.modules() if isinstance(m, BaseTunerLayer))
    trainable = total = 0
    for p in model.parameters():
        n = int(getattr(p, "ds_numel", p.numel()))
        total += n
        trainable += n if p.requires_grad else 0
    return adapted, trainable, total


def settings(training_args: DPOConfig, model_args: ModelConfig) -> dict[str, Any]:
    loss = training_args.loss_type
    return {
        "loss_type": loss[0] if isinstance(loss, list) and len(loss) == 1 else loss,
        "beta": training_args.beta,
        "learning_rate": training_args.learning_rate,
        "lr_scheduler_type": str(
            getattr(training_args.lr_scheduler_type, "value", training_args.lr_scheduler_type)
        ),
        "warmup_steps": training_args.warmup_steps,
        "optim": str(getattr(training_args.optim, "value", training_args.optim)),
        "per_device_train_batch_size": training_args.per_device_train_batch_size,
        "gradient_accumulation_steps": training_args.gradient_accumulation_steps,
        "max_length": training_args.max_length,
        "bf16": training_args.bf16,
        "dtype": model_args.dtype,
        "lora_r": model_args.lora_r,
        "lora_alpha": model_args.lora_alpha,
        "lora_dropout": model_args.lora_dropout,
        "use_rslora": model_args.use_rslora,
        "lora_target_modules": model_args.lora_target_modules,
    }


def main(
    script_args: TrainScriptArguments,
    training_args: DPOConfig,
    model_args: ModelConfig,
    argv: list[str] | None = None,
) -> Path:
    """Train, save adapter + tokenizer + records into ``output_dir``; returns that folder."""
    t0 = time.perf_counter()
    from accelerate import PartialState

    state = PartialState()
    _check_supported(script_args, model_args)
    check_settings(training_args, model_args, script_args)
    name = script_args.dataset_name
    check_dataset_manifest(name, script_args.check_manifest)
    out = guard_dir(
        training_args.output_dir,
        overwrite=script_args.overwrite,
        inputs=[name] if name and is_local(name) else [],
    )
    weight_column = script_args.weight_column if script_args.score_weighting else None
    train_ds, eval_ds, data = _load_data(script_args, training_args, weight_column)
    # Every rank has checked the folder before any rank writes into it.
    state.wait_for_everyone()
    if state.is_main_process:
        # A resumed run keeps its checkpoints; otherwise what an earlier run wrote here goes.
        mark_output(out, "train-run", replace=not training_args.resume_from_checkpoint)
    training_args.output_dir = str(out)

    # Models from here on.
    with state.main_process_first():  # the embedded model is converted once, by one process
        model_path, model_info, base_model = resolve_base_model(
            model_args.model_name_or_path, model_args.model_revision
        )
    trainer = _trainer(model_path, training_args, model_args, script_args, train_ds, eval_ds, weight_column)
    if state.is_main_process:
        trainer.add_callback(_sealing_callback(out))
    adapted, trainable, total = count_adapter(trainer.model)
    t_train = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    train_s = time.perf_counter() - t_train
    trainer.save_model(str(out))
    if state.is_main_process:
        record = RunRecord(
            model_name_or_path=str(model_args.model_name_or_path),
            model=model_info,
            seed=training_args.seed,
            data=data,
            weight_column=weight_column,
            world_size=trainer.accelerator.num_processes,
            global_steps=trainer.state.global_step,
            wall_s=time.perf_counter() - t0,
            train_s=train_s,
            final_loss=final_loss(trainer.state.log_history),
            train_loss=float(result.training_loss) if result.training_loss is not None else None,
            adapted_modules=adapted,
            trainable_params=trainable,
            total_params=total,
            settings=settings(training_args, model_args),
            argv=safe_argv(sys.argv[1:] if argv is None else argv),
        )
        write_run(out, record, resolved_config(script_args, training_args, model_args), base_model)
        seal_output(out)
        trainer.accelerator.print(
            f"final loss {record.final_loss} after {record.global_steps} steps; adapter in {out}"
        )
    state.wait_for_everyone()
    if hasattr(trainer, "end"):  # transformers >= 5.18: finish trackers, destroy the process group
        trainer.end()
    keep_until_exit(trainer)  # a launched rank never frees its gloo group (spl_hf.train.group)
    return out


def _sealing_callback(out: Path) -> Any:
    """Record the files written so far at every checkpoint, so a killed run's folder is still provably ours."""
    from transformers import TrainerCallback

    class SealOnSave(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            seal_output(out)

    return SealOnSave()


def _check_supported(script_args: TrainScriptArguments, model_args: ModelConfig) -> None:
    if not model_args.use_peft:
        raise SplHfError(
            "train.py trains LoRA adapters: set use_peft: true (the reference is the base model "
            "with the adapter disabled)"
        )
    if script_args.dataset_streaming:
        raise SplHfError(
            "dataset_streaming is not supported: the rows are counted and checked before training"
        )


def _load_data(script_args: TrainScriptArguments, training_args: DPOConfig, weight_column: str | None):
    """The train split, the test split when evaluation is on (else None), and what was loaded."""
    name = script_args.dataset_name
    train_ds, data = load_split(
        name,
        script_args.dataset_config,
        script_args.dataset_train_split,
        script_args.dataset_revision,
        script_args.sources,
        weight_column,
    )
    eval_ds = None
    if str(getattr(training_args.eval_strategy, "value", training_args.eval_strategy)) != "no":
        eval_ds, _ = load_split(
            name,
            data.dataset_config,
            script_args.dataset_test_split,
            script_args.dataset_revision,
            script_args.sources,
            weight_column,
        )
    return train_ds, eval_ds, data


def _trainer(model_path, training_args, model_args, script_args, train_ds, eval_ds, weight_column):
    """TRL's DPOTrainer (or the score-weighted one) on the base model, never with remote code."""
    from trl import DPOTrainer, get_peft_config, get_quantization_config

    model_init_kwargs = {
        "revision": model_args.model_revision,
        "trust_remote_code": False,
        "attn_implementation": model_args.attn_implementation,
        "dtype": model_args.dtype,
    }
    if training_args.model_init_kwargs is not None:
        model_init_kwargs.update(training_args.model_init_kwargs)
    if model_init_kwargs.get("trust_remote_code"):
        raise SplHfError("trust_remote_code is never enabled by spl_hf")
    training_args.model_init_kwargs = model_init_kwargs
    kwargs: dict[str, Any] = {}
    trainer_cls: type = DPOTrainer
    if weight_column is not None:
        from spl_hf.train.weighted import WeightedDPOTrainer

        trainer_cls, kwargs = WeightedDPOTrainer, {"weight_column": weight_column}
    trainer = trainer_cls(
        model=model_path,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        quantization_config=get_quantization_config(model_args),
        peft_config=get_peft_config(model_args),
        **kwargs,
    )
    if script_args.ignore_bias_buffers:  # as TRL's dpo.py: DDP must not broadcast boolean mask buffers
        import torch

        trainer.model._ddp_params_and_buffers_to_ignore = [
            n for n, b in trainer.model.named_buffers() if b.dtype == torch.bool
        ]
    return trainer
