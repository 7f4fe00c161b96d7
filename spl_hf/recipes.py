"""YAML recipes: ``recipes/<kind>/<name>.yaml`` parsed into the config dataclasses of that kind.

Parsing goes through ``HfArgumentParser`` with unknown keys rejected, exactly as the
scripts and subcommands that take ``--config`` do.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from transformers import HfArgumentParser

# kind -> dataclasses ("module:Class") that together take the recipe's keys.
RECIPE_KINDS: dict[str, tuple[str, ...]] = {
    "spl": ("spl_hf.build.spl:SPLBuildConfig",),
    "assign": ("spl_hf.assign.config:AssignConfig",),
    "tenets": ("spl_hf.build.tenets:TenetBuildConfig",),
}

# kinds parsed by their own function ("module:function"), for recipes that are not one
# HfArgumentParser YAML: training (TrlParser) and accelerate launch configs.
RECIPE_PARSERS: dict[str, str] = {
    "train": "spl_hf.train.args:parse_recipe",
    "accelerate": "spl_hf.train.launch:parse_accelerate_config",
}


def recipe_classes(path: str | Path) -> tuple[type, ...]:
    kind = Path(path).parent.name
    if kind not in RECIPE_KINDS:
        raise ValueError(f"{path}: recipes live in recipes/<kind>/ with kind in {sorted(RECIPE_KINDS)}")
    out = []
    for ref in RECIPE_KINDS[kind]:
        module, name = ref.split(":")
        out.append(getattr(importlib.import_module(module), name))
    return tuple(out)


def parse_recipe(path: str | Path) -> tuple:
    """The recipe's config objects; raises ``ValueError`` on keys no dataclass takes."""
    kind = Path(path).parent.name
    if kind in RECIPE_PARSERS:
        module, name = RECIPE_PARSERS[kind].split(":")
        parsed = getattr(importlib.import_module(module), name)(path)
        return parsed if isinstance(parsed, tuple) else (parsed,)
    return tuple(HfArgumentParser(recipe_classes(path)).parse_yaml_file(str(path), allow_extra_keys=False))
