"""Checks of ``train.py``'s settings and dataset that run before any model is loaded.

TRL and transformers accept a negative ``beta``, a NaN learning rate, ``lora_r: 0`` or zero epochs
and fail (or silently train nothing) only once the model is loaded, minutes later. Each check here
raises one :class:`~spl_hf.errors.SplHfError` naming the setting or the dataset file.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(objs: tuple[Any, ...]) -> None:
    """Every numeric setting of the parsed dataclasses is a finite number (no nan, no inf)."""
    for obj in objs:
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name, None)
            if isinstance(value, float) and not math.isfinite(value):
                raise SplHfError(f"--{f.name} must be a finite number, got {value}")


def _at_least(name: str, value: Any, low: float, *, strict: bool = False, optional: bool = False) -> None:
    if value is None and optional:
        return
    bad = not _number(value) or (value <= low if strict else value < low)
    if bad:
        bound = f"above {low:g}" if strict else f"at least {low:g}"
        raise SplHfError(f"--{name} must be a number {bound}, got {value!r}")


def known_loss_types() -> set[str]:
    """The DPO loss types this TRL version documents (read from ``DPOConfig.loss_type``'s help)."""
    from trl import DPOConfig

    help_text = next(f for f in dataclasses.fields(DPOConfig) if f.name == "loss_type").metadata["help"]
    return set(re.findall(r"`'([a-z_]+)'`", help_text))


def _steps(training_args: Any) -> None:
    epochs, steps = training_args.num_train_epochs, training_args.max_steps
    _at_least("num_train_epochs", epochs, 0)
    if not _number(steps) or (steps < 0 and steps != -1):
        raise SplHfError(f"--max_steps must be a positive whole number or -1 (off), got {steps!r}")
    if steps <= 0 and epochs == 0:
        raise SplHfError("--num_train_epochs is 0 and --max_steps is not set: nothing would be trained")


def check_settings(training_args: Any, model_args: Any, script_args: Any = None) -> None:
    """The numeric and fixed-choice settings of a run, checked before data or model are loaded."""
    _finite(tuple(o for o in (script_args, training_args, model_args) if o is not None))
    _at_least("beta", training_args.beta, 0, strict=True)
    _at_least("learning_rate", training_args.learning_rate, 0, strict=True)
    _steps(training_args)
    _at_least("per_device_train_batch_size", training_args.per_device_train_batch_size, 1)
    _at_least("gradient_accumulation_steps", training_args.gradient_accumulation_steps, 1)
    _at_least("max_length", training_args.max_length, 1, optional=True)
    _at_least("warmup_steps", training_args.warmup_steps, 0)
    if model_args.use_peft:
        _at_least("lora_r", model_args.lora_r, 1)
        _at_least("lora_alpha", model_args.lora_alpha, 0, strict=True)
        if not _number(model_args.lora_dropout) or not 0 <= model_args.lora_dropout < 1:
            raise SplHfError(f"--lora_dropout must be in [0, 1), got {model_args.lora_dropout!r}")
    losses = training_args.loss_type
    losses = [losses] if isinstance(losses, str) else list(losses or [])
    unknown = sorted(set(losses) - known_loss_types())
    if unknown:
        raise SplHfError(
            f"--loss_type {', '.join(unknown)} is not a DPO loss type; known: {', '.join(sorted(known_loss_types()))}"
        )


def check_dataset_manifest(name: str | None, check: bool) -> None:
    """A local dataset folder with a MANIFEST.sha256 (an spl_hf build) must match it, unless ``check`` is
    off; a folder without one, or a Hub id, is not checked here."""
    from spl_hf.manifest import MANIFEST, check_manifest

    if not check or not name or not Path(name).expanduser().is_dir():
        return
    folder = Path(name).expanduser()
    if not (folder / MANIFEST).is_file():
        return
    result = check_manifest(folder)
    if not result.ok:
        shown = "; ".join(result.failures()[:3])
        raise SplHfError(
            f"{folder}: the dataset does not match its {MANIFEST} ({shown}); run `spl-hf audit {folder}`, "
            "or pass --check_manifest false to train on it anyway"
        )
