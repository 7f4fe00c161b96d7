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
    return tuple(HfArgumentParser(recipe_classes(path)).parse_yaml_file(str(path), allow_extra_keys=False))
