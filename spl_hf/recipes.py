"""YAML recipes: ``recipes/<kind>/<name>.yaml``, each run by one command.

A recipe's keys are the fields of the config dataclasses of its kind; it is parsed exactly as the
command that runs it parses ``--config`` (:mod:`spl_hf.configs`: unknown keys fail, flags override).
Kinds that are not dataclass recipes (e.g. ``accelerate`` launcher configs) are not listed here.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import NamedTuple

from spl_hf.configs import parse_config
from spl_hf.errors import SplHfError

# No library module imports spl_hf.cli: the dataclasses named here live in their library packages,
# in modules that import no heavy library (``spl-hf release tenets --help`` reads them).


class RecipeKind(NamedTuple):
    classes: tuple[str, ...]  # "module:Class" config dataclasses that together take the recipe's keys
    command: str  # the command that runs a recipe of this kind


# The one registry of recipe kinds: release modules' recipe_classes() and `spl-hf release` read it.
RECIPE_KINDS: dict[str, RecipeKind] = {
    "spl": RecipeKind(
        (
            "spl_hf.release.config:SPLReleaseConfig",
            "spl_hf.backends.settings:GenerationConfig",
            "spl_hf.decontam.config:DecontamConfig",
            "spl_hf.backends.executor:ExecutorArgs",
            "spl_hf.sources.options:SourceOptions",
        ),
        "spl-hf release spl --config {path}",
    ),
    "assign": RecipeKind(
        (
            "spl_hf.assign.config:AssignFiles",
            "spl_hf.assign.config:AssignConfig",
            "spl_hf.configs:OutputArgs",
            "spl_hf.configs:JsonArgs",
        ),
        "spl-hf assign --config {path} --scores scores.parquet --output_dir assignment.parquet",
    ),
    "tenets": RecipeKind(
        (
            "spl_hf.release.config:TenetReleaseConfig",
            "spl_hf.assign.config:AssignConfig",
            "spl_hf.backends.settings:JudgeConfig",
            "spl_hf.decontam.config:DecontamConfig",
            "spl_hf.backends.executor:ExecutorArgs",
            "spl_hf.sources.options:SourceOptions",
        ),
        "spl-hf release tenets --config {path}",
    ),
}

RECIPES_DIR = Path(__file__).resolve().parents[1] / "recipes"  # a source checkout or editable install


def recipe_path(relative: str) -> Path:
    """A shipped recipe (``"tenets/demo.yaml"``): from ``recipes/`` of a checkout, else the installed copy."""
    local = RECIPES_DIR / relative
    if local.is_file():
        return local
    from importlib import resources

    packaged = resources.files("spl_hf.data").joinpath("recipes", *relative.split("/"))
    if packaged.is_file():
        return Path(str(packaged))
    raise FileNotFoundError(f"recipe {relative!r}: not in {RECIPES_DIR} nor in the installed package")


# Kinds that are not config-dataclass recipes of an spl-hf command, parsed by their own function
# ("module:function"): training recipes (TrlParser, train.py) and accelerate launch configs.
RECIPE_PARSERS: dict[str, str] = {
    "train": "spl_hf.train.args:parse_recipe",
    "accelerate": "spl_hf.train.launch:parse_accelerate_config",
}


def recipe_kind(path: str | Path) -> str:
    kind = Path(path).parent.name
    if kind not in RECIPE_KINDS:
        raise SplHfError(f"{path}: recipes live in recipes/<kind>/ with kind in {sorted(RECIPE_KINDS)}")
    return kind


def kind_classes(kind: str) -> tuple[type, ...]:
    """The config dataclasses of a recipe kind (imported on demand)."""
    out = []
    for ref in RECIPE_KINDS[kind].classes:
        module, name = ref.split(":")
        out.append(getattr(importlib.import_module(module), name))
    return tuple(out)


def recipe_classes(path: str | Path) -> tuple[type, ...]:
    return kind_classes(recipe_kind(path))


def recipe_command(path: str | Path) -> str:
    """How to run the recipe at ``path``."""
    return RECIPE_KINDS[recipe_kind(path)].command.format(path=path)


def parse_recipe(path: str | Path, *overrides: str) -> tuple:
    """The recipe's config objects (``overrides``: command-line flags); ``ValueError`` on unknown keys.

    Required settings that the recipe leaves to the command line (an assign recipe's ``scores``)
    must be given in ``overrides``.
    """
    kind = Path(path).parent.name
    if kind in RECIPE_PARSERS:
        if overrides:
            raise SplHfError(f"{path}: {kind} recipes take no overrides here")
        module, name = RECIPE_PARSERS[kind].split(":")
        parsed = getattr(importlib.import_module(module), name)(path)
        return parsed if isinstance(parsed, tuple) else (parsed,)
    return parse_config(recipe_classes(path), ["--config", str(path), *overrides])
