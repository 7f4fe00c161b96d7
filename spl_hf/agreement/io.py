"""Reading a rater panel and model labels (JSON Lines or parquet), validated against the schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spl_hf.errors import SplHfError
from spl_hf.jsonl import read_rows
from spl_hf.schema import Attribute, AttributeSchema

LINE = "__line__"


@dataclass(frozen=True)
class PanelLabel:
    item_id: str
    rater_id: str
    attribute: str
    label: str


@dataclass(frozen=True)
class ModelLabel:
    item_id: str
    attribute: str
    label: str | None  # None: the labeler's output could not be parsed


def _where(path: Path, row: Mapping[str, Any], i: int) -> str:
    return f"{path}:{row[LINE]}" if LINE in row else f"{path}: row {i}"


def schema_attribute(schema: AttributeSchema, attribute: str, where: str) -> Attribute:
    if attribute not in schema.names():
        raise SplHfError(f"{where}: unknown attribute {attribute!r} (schema has {list(schema.names())})")
    return schema.attribute(attribute)


def normalise_label(value: Any, attribute: str, schema: AttributeSchema, where: str) -> str:
    """A label as the schema spells its options (booleans as ``"true"``/``"false"``)."""
    attr = schema_attribute(schema, attribute, where)
    if attr.kind == "bool" and isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, str) or value not in attr.options:
        raise SplHfError(f"{where}: label {value!r} is not one of {list(attr.options)} for {attribute!r}")
    return value


def _text(row: Mapping[str, Any], key: str, where: str) -> str:
    v = row.get(key)
    if isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or not v:
        raise SplHfError(f"{where}: {key!r} must be a non-empty string, got {v!r}")
    return v


def _rows(path: str | Path, columns: tuple[str, ...]) -> tuple[Path, list[dict[str, Any]]]:
    path = Path(path)
    rows = read_rows(path, line_key=LINE)
    if not rows:
        raise SplHfError(f"{path}: no rows")
    for i, row in enumerate(rows):
        missing = [c for c in columns if c not in row]
        if missing:
            raise SplHfError(f"{_where(path, row, i)}: missing field(s) {', '.join(missing)}")
    return path, rows


def read_panel(path: str | Path, schema: AttributeSchema) -> list[PanelLabel]:
    path, rows = _rows(path, ("item_id", "rater_id", "attribute", "label"))
    out, seen = [], {}
    for i, row in enumerate(rows):
        where = _where(path, row, i)
        item, rater, attr = (
            _text(row, "item_id", where),
            _text(row, "rater_id", where),
            _text(row, "attribute", where),
        )
        if row["label"] is None:
            raise SplHfError(f"{where}: a rater label may not be null")
        key = (item, rater, attr)
        if key in seen:
            raise SplHfError(
                f"{where}: rater {rater!r} labels {attr!r} of item {item!r} twice (first at {seen[key]})"
            )
        seen[key] = where
        out.append(PanelLabel(item, rater, attr, normalise_label(row["label"], attr, schema, where)))
    return out


def read_model_labels(path: str | Path, schema: AttributeSchema) -> list[ModelLabel]:
    path, rows = _rows(path, ("item_id", "attribute", "label"))
    out, seen = [], {}
    for i, row in enumerate(rows):
        where = _where(path, row, i)
        item, attr = _text(row, "item_id", where), _text(row, "attribute", where)
        if (item, attr) in seen:
            raise SplHfError(
                f"{where}: item {item!r} has a second {attr!r} label (first at {seen[(item, attr)]})"
            )
        seen[(item, attr)] = where
        schema_attribute(schema, attr, where)
        label = None if row["label"] is None else normalise_label(row["label"], attr, schema, where)
        out.append(ModelLabel(item, attr, label))
    return out
