"""The one YAML reader: every YAML file the project reads (recipes, rule bases, tenets, the schema,
instruction files, card front matter) goes through :func:`load_yaml` or :func:`load_yaml_file`.

PyYAML's safe loader is safe against code but not against mistakes or hostile sizes, so this one
also refuses, naming the file and the line:

- a duplicated mapping key (PyYAML keeps the last one silently: a second ``verdicts:`` block or a
  recipe's second ``threshold:`` would win without a word);
- an integer not written as plain decimal digits: YAML 1.1 reads ``010`` as 8, ``1:20`` as 80 and
  also takes ``0x4``, ``0b11`` and ``1_0``, none of which a user means as a setting or a rank;
- an integer of more digits than Python converts (a 5,000-digit number);
- nesting deeper than :data:`MAX_DEPTH`, and a text whose aliases (``*name``) expand it past
  :data:`MAX_TEXT` characters (checked from the event stream before anything is built, so a
  "billion laughs" file costs milliseconds);
- more than one document, bytes that are not UTF-8.

Errors are :class:`YamlError` (an :class:`~spl_hf.errors.SplHfError`) with a one-line message:
PyYAML's several-line messages are folded into one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

from spl_hf.errors import SplHfError

MAX_TEXT = 16 * 2**20  # characters (bytes for a file), counting what aliases repeat
MAX_DEPTH = 32
_PLAIN_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")

_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: 10x faster


class YamlError(SplHfError):
    """A YAML text that cannot be read as given; the message names the file and the line."""


class _Refused(yaml.YAMLError):
    """What this loader refuses beyond YAML syntax (a line number and the reason)."""

    def __init__(self, line: int, why: str) -> None:
        super().__init__(f"line {line}: {why}")


def line_of(node: yaml.Node | None) -> int:
    """1-based line of a composed node (0 when there is none)."""
    return node.start_mark.line + 1 if node is not None else 0


class _Loader(_BaseLoader):  # type: ignore[misc,valid-type]
    """Safe loader that refuses duplicate keys and integers other than plain decimal digits."""

    def construct_mapping(self, node, deep=False):  # type: ignore[no-untyped-def]
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # unhashable key: the base class reports it
                if first is not None:
                    raise _Refused(line_of(key_node), f"duplicate key {key!r} (first on line {first})")
                seen[key] = line_of(key_node)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node):  # type: ignore[no-untyped-def]
        text = str(node.value)
        if not _PLAIN_INT.fullmatch(text):
            raise _Refused(
                line_of(node),
                f"{text!r} is not a plain decimal integer (YAML 1.1 would read it as "
                f"{_yaml11_int(self, node)}); write the digits without a leading 0, '_', ':' or a "
                "base prefix, or quote it if it is text",
            )
        if len(text.lstrip("+-")) > sys.get_int_max_str_digits():
            raise _Refused(line_of(node), f"an integer of {len(text):,} digits (no setting is that long)")
        return int(text)


def _yaml11_int(loader: Any, node: yaml.Node) -> str:
    try:
        return repr(yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    except ValueError:
        return "a number past Python's int-str conversion limit"


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _check_events(text: str, max_chars: int, max_depth: int, aliases: bool = True) -> None:
    """Refuse deep nesting and alias-expanded size from the event stream, before anything is built.

    The size counts every scalar's characters, an alias as the text of the node it names: 2,000
    rules aliasing one 10k-character condition are 20M characters to parse, however small the file.
    """
    depth, total = 0, 0
    sizes: dict[str, int] = {}  # anchor -> expanded characters of its node
    open_anchors: list[tuple[str | None, int]] = []
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.ScalarEvent):
            total += len(event.value)
            if event.anchor:
                sizes[event.anchor] = len(event.value)
        elif isinstance(event, yaml.AliasEvent):
            if not aliases:
                raise _Refused(event.start_mark.line + 1, "uses a YAML alias (*name); write the value out")
            total += sizes.get(event.anchor, 0)
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise _Refused(event.start_mark.line + 1, f"nested deeper than {max_depth} levels")
            open_anchors.append((event.anchor, total))
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
            anchor, start = open_anchors.pop()
            if anchor:
                sizes[anchor] = total - start
        if total > max_chars:
            raise _Refused(
                event.start_mark.line + 1,
                f"YAML aliases (*name) expand the text past {max_chars} characters (the limit counts "
                "the text every alias repeats); write the shared part once",
            )


def _one_line(exc: yaml.YAMLError) -> str:
    """PyYAML's message in one line: the line, then what was being read and what went wrong."""
    if isinstance(exc, _Refused):
        return str(exc)
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        parts = [p for p in (exc.context, exc.problem) if p]
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"not valid YAML{where}: {'; '.join(parts) or type(exc).__name__}"
    return "not valid YAML: " + " ".join(str(exc).split())


def load_yaml_node(
    text: str, source: str, *, max_chars: int = MAX_TEXT, max_depth: int = MAX_DEPTH, aliases: bool = True
) -> tuple[Any, yaml.Node | None]:
    """The data of a one-document YAML text and its composed node (for line numbers).

    ``aliases=False`` refuses any alias outright (card metadata, which no writer needs to alias).
    """
    if len(text) > max_chars:
        raise YamlError(f"{source}: larger than {max_chars} characters")
    try:
        _check_events(text, max_chars, max_depth, aliases)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise YamlError(f"{source}: {_one_line(exc)}") from None
    except RecursionError:
        raise YamlError(f"{source}: nested too deeply to read") from None
    return data, node


def load_yaml(text: str, source: str, **limits: Any) -> Any:
    """The data of a one-document YAML text; ``source`` names it in errors."""
    return load_yaml_node(text, source, **limits)[0]


def read_yaml_text(path: str | Path, what: str = "YAML file") -> str:
    """A YAML file's text, refused (naming it) when missing, too large or not UTF-8."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such {what}")
    if path.stat().st_size > MAX_TEXT:
        raise YamlError(f"{path}: larger than {MAX_TEXT} bytes")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlError(f"{path}: not UTF-8 text (line {line}, byte {exc.start}): {exc.reason}") from None


def load_yaml_file(path: str | Path, what: str = "YAML file") -> Any:
    """The data of a YAML file (see the module doc for what is refused)."""
    return load_yaml(read_yaml_text(path, what), str(path))


__all__ = [
    "MAX_DEPTH",
    "MAX_TEXT",
    "YamlError",
    "line_of",
    "load_yaml",
    "load_yaml_file",
    "load_yaml_node",
    "read_yaml_text",
]
