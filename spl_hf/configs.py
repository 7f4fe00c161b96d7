"""One way to configure: config dataclasses parsed with ``HfArgumentParser``.

The dataclass fields (with ``metadata={"help": ...}``) are the only declaration of a setting: they
become the command-line flags (``--field_name`` and ``--field-name``), the keys a ``--config``
YAML recipe may hold, and the constructor arguments checked by the dataclass's ``__post_init__``.
A recipe's values replace the defaults, flags given on the command line override the recipe, and
a key that no dataclass field takes is an error. The CLI subcommands, ``builders/`` scripts and
:func:`spl_hf.recipes.parse_recipe` all go through :func:`parse_config` / :func:`apply_config`.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transformers import HfArgumentParser

CONFIG_HELP = (
    "YAML recipe whose keys are this command's settings (the flags below, with underscores); "
    "flags given on the command line override it; unknown keys are an error"
)


def field_names(classes: Sequence[type]) -> list[str]:
    return [f.name for cls in classes for f in dataclasses.fields(cls) if f.init]


def read_recipe(path: str | Path) -> dict[str, Any]:
    """The YAML mapping of a recipe; a clear ``ValueError`` naming the file otherwise."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such recipe file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a recipe must be a YAML mapping of setting: value")
    return data


def make_parser(
    classes: Sequence[type], parser: argparse.ArgumentParser | None = None, **kwargs: Any
) -> argparse.ArgumentParser:
    """A parser taking the fields of ``classes`` as flags plus ``--config``.

    With ``parser`` (an ``HfArgumentParser`` made by ``add_subparsers(parser_class=HfArgumentParser)``)
    the fields are added to it; otherwise a standalone parser is made with ``kwargs``.
    """
    if parser is None:
        parser = HfArgumentParser(list(classes), **kwargs)
    else:
        for cls in classes:
            parser._add_dataclass_arguments(cls)  # type: ignore[attr-defined]
    # Required fields are checked after the recipe is applied (configs_from_args): argparse would
    # otherwise reject a command whose recipe gives them.
    names = set(field_names(classes))
    for action in parser._actions:
        if action.dest in names and action.required:
            action.required = False
            action.default = argparse.SUPPRESS  # absent unless given; the help shows no default
            action.help = f"{action.help or ''} (required)".strip()
    parser.add_argument("--config", default=None, metavar="YAML", help=CONFIG_HELP)
    parser.set_defaults(_config_classes=tuple(classes), _config_parser=parser)
    return parser


def add_config_parser(
    sub: argparse._SubParsersAction, name: str, classes: Sequence[type], **kwargs: Any
) -> argparse.ArgumentParser:
    """A subcommand whose settings are the fields of ``classes`` (plus ``--config``)."""
    return make_parser(classes, sub.add_parser(name, **kwargs))


def apply_config(args: argparse.Namespace) -> bool:
    """Make the ``--config`` recipe named in ``args`` the defaults of its parser; True when there was one.

    Parse again afterwards, so that flags given on the command line override the recipe.
    """
    path = getattr(args, "config", None)
    parser = getattr(args, "_config_parser", None)
    if not path or parser is None:
        return False
    data = read_recipe(path)
    known = field_names(args._config_classes)
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ValueError(f"{path}: unknown setting(s) {unknown}; this command takes {sorted(known)}")
    for action in parser._actions:
        if action.dest in data:
            action.default = data[action.dest]
            action.required = False
    return True


def configs_from_args(args: argparse.Namespace, classes: Sequence[type] | None = None) -> tuple[Any, ...]:
    """One instance per config dataclass of the parsed subcommand (``__post_init__`` validates).

    ``classes`` picks some of the subcommand's dataclasses (default: all of them).
    """
    values = vars(args)
    out = []
    for cls in args._config_classes if classes is None else classes:
        kwargs = {}
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            value = values.get(f.name)
            no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if value is None and no_default:
                raise ValueError(f"--{f.name} is required (as a flag or a key of the --config recipe)")
            if f.name in values:
                kwargs[f.name] = value
        out.append(cls(**kwargs))
    return tuple(out)


def parse_config(
    classes: type | Sequence[type], argv: Sequence[str] | None = None, **kwargs: Any
) -> tuple[Any, ...]:
    """Parse ``argv`` (flags and ``--config``) into instances of ``classes``; for scripts."""
    import sys

    classes = [classes] if isinstance(classes, type) else list(classes)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = make_parser(classes, **kwargs)
    args = parser.parse_args(argv)
    if apply_config(args):
        args = parser.parse_args(argv)
    return configs_from_args(args)
