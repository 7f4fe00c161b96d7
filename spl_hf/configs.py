"""One way to configure: config dataclasses turned into command-line flags by one small parser.

The dataclass fields (with ``metadata={"help": ...}``) are the only declaration of a setting: they
become the command-line flags (``--field_name``, one spelling), the keys a ``--config`` YAML recipe
may hold, and the constructor arguments checked by the dataclass's ``__post_init__``. A recipe's
values replace the defaults, flags given on the command line override the recipe, and a key that no
dataclass field takes is an error naming the key and the file. The CLI subcommands, ``builders/``
scripts and :func:`spl_hf.recipes.parse_recipe` all go through :func:`parse_config` /
:func:`apply_config`.

This follows ``transformers.HfArgumentParser``'s rules (``Optional``, ``Literal`` choices, lists
via ``nargs``) but is its own code: importing ``transformers`` costs seconds, and ``spl-hf --help``
must answer at once. Where it differs: a bool is a switch (``--dry_run`` sets it; one that defaults
to true has only ``--no_<field>``, with its own help from ``metadata["negated_help"]``; no
``--flag false``, whose optional value would swallow a following positional argument), flags are
never abbreviated, options are grouped in ``--help`` by the dataclass declaring them (titled by its
docstring's first line), a default is shown once, fields may be positional
(``metadata["positional"]``), and a repeated list flag extends the list.

Metadata keys a field may carry: ``help`` (required), ``negated_help``, ``positional``, ``nargs``
(for a positional: e.g. ``argparse.REMAINDER``), ``metavar``, and ``setting: False`` for a field the
program sets per call (no flag, no recipe key; e.g. ``SourceOptions.revision``, from a pool's '@sha').
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import inspect
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from spl_hf.errors import SplHfError

CONFIG_HELP = (
    "YAML recipe whose keys are this command's settings (the flags below, without the dashes); "
    "flags given on the command line override it; unknown keys are an error"
)


# --- settings many commands share: declared once, reused -------------------------------------


@dataclasses.dataclass
class GlobalArgs:
    """Options of spl-hf itself (before the command)"""

    debug: bool = dataclasses.field(
        default=False, metadata={"help": "Show the traceback of an error instead of one line."}
    )


@dataclasses.dataclass
class JsonArgs:
    """Output format"""

    json: bool = dataclasses.field(
        default=False, metadata={"help": "Print the result as JSON on stdout instead of text."}
    )


@dataclasses.dataclass
class OutputDirArgs:
    """Output"""

    output_dir: str | None = dataclasses.field(
        default=None,
        metadata={
            "help": "Where the command writes: a folder, or a file for commands that write one table "
            "(see the command's description)."
        },
    )


@dataclasses.dataclass
class OutputArgs(OutputDirArgs):
    """Output"""

    overwrite: bool = dataclasses.field(
        default=False,
        metadata={
            "help": "Replace an earlier output of this command at output_dir (never an input, never "
            "files spl_hf did not write)."
        },
    )


@dataclasses.dataclass
class RevisionArgs:
    """Hub revision"""

    revision: str | None = dataclasses.field(
        default=None,
        metadata={
            "help": "Hub revision: the branch, tag or commit to read from, or the branch to publish to "
            "(default: main; a branch to publish to is created if missing)."
        },
    )


@dataclasses.dataclass
class PublishArgs(RevisionArgs):
    """Publishing to the Hub (endpoint and token from HF_ENDPOINT and HF_TOKEN)"""

    repo_id: str | None = dataclasses.field(
        default=None, metadata={"help": "ORG/NAME of the Hub dataset repo to publish to."}
    )
    private: bool = dataclasses.field(
        default=False,
        metadata={
            "help": "The repo must be private: created private, or an existing public repo made private "
            "through its settings (refused when that is not possible); a private repo is never made public."
        },
    )
    create_pr: bool = dataclasses.field(
        default=False, metadata={"help": "Open a pull request instead of committing to the branch."}
    )


# --- the parser -------------------------------------------------------------------------------


def is_setting(f: dataclasses.Field) -> bool:
    """A field a user sets (a flag, a recipe key); ``metadata={"setting": False}`` marks one the program sets."""
    return f.init and f.metadata.get("setting", True) is not False


def field_names(classes: Sequence[type]) -> list[str]:
    return [f.name for cls in classes for f in dataclasses.fields(cls) if is_setting(f)]


def read_recipe(path: str | Path) -> dict[str, Any]:
    """The YAML mapping of a recipe; a clear ``ValueError`` naming the file otherwise."""
    from spl_hf.yamlio import load_yaml_file

    path = Path(path)
    data = load_yaml_file(path, "recipe file")  # duplicate keys, depth, sizes refused, line named
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SplHfError(f"{path}: a recipe must be a YAML mapping of setting: value")
    return data


class _ListAction(argparse.Action):
    """``--x a b --x c`` gives ``[a, b, c]``; the first use replaces the default (or the recipe's list)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
        seen = namespace.__dict__.setdefault("_lists_given", set())
        current = list(getattr(namespace, self.dest, None) or []) if self.dest in seen else []
        seen.add(self.dest)
        setattr(namespace, self.dest, current + list(values))


def _group_title(cls: type) -> str:
    doc = cls.__dict__.get("__doc__") or ""
    if not doc or doc.startswith(f"{cls.__name__}("):  # the signature dataclass() writes
        return cls.__name__
    return doc.strip().splitlines()[0].rstrip(".")


def _unwrap(tp: Any) -> tuple[Any, bool]:
    """``(type, optional)``: ``X | None`` and ``Optional[X]`` give ``(X, True)``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
        mappings = [a for a in args if a is dict or typing.get_origin(a) is dict]
        if len(mappings) == 1 and set(args) - set(mappings) == {str}:
            # ``dict | str``: a mapping in a recipe, its JSON text on the command line (parsed there)
            return mappings[0], True
        raise TypeError(f"unsupported union type {tp!r}")
    return tp, False


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _shown_default(value: Any) -> str | None:
    """The default as the help shows it, or None when there is nothing worth saying."""
    if value is dataclasses.MISSING or value is None or value is False or value in ("", [], ()):
        return None
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def _help(f: dataclasses.Field, default: Any) -> str:
    text = str(f.metadata.get("help", "")).strip()
    if not text:
        raise TypeError(f"field {f.name!r} has no metadata help")
    if default is dataclasses.MISSING:
        return f"{text} (required)"
    shown = _shown_default(default)
    # A help that already says its default keeps it: the default is written once.
    if shown is not None and "default" not in text.lower() and not isinstance(default, bool):
        text = f"{text} (default: {shown})"
    return text.replace("%", "%%")  # argparse formats help with %: a help's "95%" is text, not a format


def _json_object(text: str) -> dict[str, Any]:
    """A mapping field's command-line form: a JSON object."""
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"not a JSON object ({exc.msg} at char {exc.pos}): {text!r}"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value


def _value_kwargs(tp: Any) -> dict[str, Any]:
    """argparse ``type``/``choices``/``nargs`` for a field's (unwrapped) annotation."""
    origin = typing.get_origin(tp)
    if origin is Literal:
        choices = list(typing.get_args(tp))
        return {"type": type(choices[0]), "choices": choices}
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        item = _value_kwargs(args[0]) if args else {"type": str}
        return {**item, "nargs": "+", "action": _ListAction}
    if tp is dict or origin is dict:
        return {"type": _json_object, "metavar": "JSON"}
    if tp in (int, float, str):
        return {"type": tp}
    if tp is Path:
        return {"type": str}
    raise TypeError(f"unsupported field type {tp!r}")


def _add_field(group: argparse._ActionsContainer, f: dataclasses.Field, tp: Any, default: Any) -> None:
    tp, _ = _unwrap(tp)
    meta = f.metadata
    if meta.get("positional"):  # a positional argument is plainly required: no "(required)"
        kwargs: dict[str, Any] = {"help": _help(f, None if default is dataclasses.MISSING else default)}
        if "nargs" in meta:
            kwargs["nargs"] = meta["nargs"]
        elif default is not dataclasses.MISSING:
            kwargs["nargs"] = "?"
        if default is not dataclasses.MISSING:
            kwargs["default"] = default
        value = _value_kwargs(tp) if tp is not bool else {}
        value.pop("action", None)
        value.pop("nargs", None)
        group.add_argument(f.name, metavar=meta.get("metavar", f.name.upper()), **value, **kwargs)
        return
    flag = f"--{f.name}"
    if tp is bool:
        if default is True:
            negated = meta.get("negated_help")
            if not negated:
                raise TypeError(
                    f"field {f.name!r} defaults to true: give metadata negated_help for --no_{f.name}"
                )
            group.add_argument(
                f"--no_{f.name}", dest=f.name, action="store_false", default=True, help=negated
            )
        else:
            group.add_argument(flag, action="store_true", default=False, help=_help(f, default))
        return
    kwargs = {**_value_kwargs(tp), "help": _help(f, default)}
    if "metavar" in meta:
        kwargs["metavar"] = meta["metavar"]
    # Required fields are checked after the recipe is applied (configs_from_args): argparse would
    # otherwise reject a command whose recipe gives them.
    kwargs["default"] = argparse.SUPPRESS if default is dataclasses.MISSING else default
    group.add_argument(flag, **kwargs)


def _declaring_class(cls: type, name: str) -> type:
    """The class of ``cls``'s MRO that documents field ``name`` (its group in ``--help``).

    A subclass may redeclare a shared field only to give it its own default (``output_dir: str =
    "out/spl"``); the field keeps the help, and the group, of the base class that declares it with help.
    """
    owners = [k for k in cls.__mro__ if name in inspect.get_annotations(k)]
    for klass in owners:
        fields = getattr(klass, "__dataclass_fields__", {})
        if name in fields and fields[name].metadata.get("help"):
            return klass
    return owners[0] if owners else cls


def _documented(cls: type, f: dataclasses.Field) -> dataclasses.Field:
    """``f``, or where ``cls`` redeclares it without help only for a default, the base's documented field."""
    if f.metadata.get("help"):
        return f
    base = _declaring_class(cls, f.name).__dataclass_fields__.get(f.name)
    return f if base is None else base


def add_dataclass_arguments(
    parser: argparse.ArgumentParser, cls: type, defaults: Mapping[str, Any] | None = None
) -> None:
    """The fields of ``cls`` as options of ``parser``, grouped by the (base) class declaring each."""
    hints = typing.get_type_hints(cls)
    taken = {a.dest for a in parser._actions}
    groups: dict[str, argparse._ArgumentGroup] = {}  # by title: OutputDirArgs and OutputArgs are one group
    for f in dataclasses.fields(cls):
        if not is_setting(f):
            continue
        if f.name in taken:
            raise TypeError(f"{cls.__name__}.{f.name}: another config dataclass of this command declares it")
        title = _group_title(_declaring_class(cls, f.name))
        if title not in groups:
            groups[title] = parser.add_argument_group(title)
        default = (defaults or {}).get(f.name, _default(f))
        _add_field(groups[title], _documented(cls, f), hints[f.name], default)
        taken.add(f.name)


def make_parser(
    classes: Sequence[type],
    parser: argparse.ArgumentParser | None = None,
    *,
    defaults: Mapping[str, Any] | None = None,
    recipe: bool = True,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """A parser taking the fields of ``classes`` as options plus ``--config``.

    ``parser``: add to this one (e.g. a subcommand's) instead of a new one made with ``kwargs``.
    ``defaults``: this command's defaults for shared fields (e.g. its own ``output_dir``).
    """
    if parser is None:
        parser = argparse.ArgumentParser(allow_abbrev=False, **kwargs)
    for cls in classes:
        add_dataclass_arguments(parser, cls, defaults)
    if recipe:
        parser.add_argument("--config", default=None, metavar="YAML", help=CONFIG_HELP)
    parser.set_defaults(
        _config_classes=tuple(classes), _config_parser=parser, _config_defaults=defaults or {}
    )
    return parser


def add_config_parser(
    sub: argparse._SubParsersAction,
    name: str,
    classes: Sequence[type],
    *,
    defaults: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> argparse.ArgumentParser:
    """A subcommand whose settings are the fields of ``classes`` (plus ``--config``)."""
    # allow_abbrev=False: a prefix of a flag (``--out`` for ``--output_dir``) would be a hidden alias.
    return make_parser(classes, sub.add_parser(name, allow_abbrev=False, **kwargs), defaults=defaults)


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
        from spl_hf.errors import did_you_mean

        named = ", ".join(f"{k!r}{did_you_mean(k, known)}" for k in unknown)
        raise SplHfError(f"{path}: unknown setting(s) {named}; this command takes {sorted(known)}")
    for action in parser._actions:
        if action.dest in data:
            action.default = data[action.dest]
            action.required = False
    return True


def _coerce(cls: type, name: str, value: Any) -> Any:
    """A list given on the command line for a tuple field becomes a tuple (the dataclass's type)."""
    tp, _ = _unwrap(typing.get_type_hints(cls)[name])
    if typing.get_origin(tp) is tuple and isinstance(value, list):
        return tuple(value)
    return value


def configs_from_args(args: argparse.Namespace, classes: Sequence[type] | None = None) -> tuple[Any, ...]:
    """One instance per config dataclass of the parsed subcommand (``__post_init__`` validates).

    ``classes`` picks some of the subcommand's dataclasses (default: all of them).
    """
    values = vars(args)
    out = []
    for cls in args._config_classes if classes is None else classes:
        kwargs = {}
        for f in dataclasses.fields(cls):
            if not is_setting(f):
                continue
            value = values.get(f.name)
            no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if value is None and no_default:
                raise SplHfError(f"--{f.name} is required (as a flag or a key of the --config recipe)")
            if f.name in values:
                kwargs[f.name] = _coerce(cls, f.name, value)
        out.append(cls(**kwargs))
    return tuple(out)


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """``parser.parse_args``, but a flag no command takes is refused by the command's own parser (its
    usage, not the top level's), with the flag it resembles: ``--dry-run`` is ``--dry_run``."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        leaf = getattr(args, "_config_parser", None) or parser
        flags = [o for a in leaf._actions for o in a.option_strings if o.startswith("--")]
        hints = []
        for word in (w for w in extra if w.startswith("--")):
            name = word.split("=", 1)[0]
            snake = name[:2] + name[2:].replace("-", "_")
            if snake in flags and snake != name:
                hints.append(f"{name} is spelled {snake}")
            elif close := difflib.get_close_matches(name, flags, n=1, cutoff=0.7):
                hints.append(f"did you mean {close[0]}?")
        leaf.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(hints)})" if hints else ""))
    return args


def parse_config(
    classes: type | Sequence[type], argv: Sequence[str] | None = None, **kwargs: Any
) -> tuple[Any, ...]:
    """Parse ``argv`` (flags and ``--config``) into instances of ``classes``; for scripts."""
    import sys

    classes = [classes] if isinstance(classes, type) else list(classes)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = make_parser(classes, **kwargs)
    args = parse_args(parser, argv)
    if apply_config(args):
        args = parse_args(parser, argv)
    return configs_from_args(args)
