"""Whether a release's tables still have the shape the audit reads, and a boundary for damaged data.

The row and claim checks join and compare columns that a build always writes; an edited release may
lack one, hold another type, or a null where the build never writes one. Those are failures of the
release, named by file, row and field, never a traceback. :func:`shape_failures` compares each data
file's columns and types with the features its card declares for its config (``dataset_info``);
:func:`checked` runs one audit phase and turns a data error that the shape check did not foresee
(a join that no longer matches, a null the code did not expect) into a failure that names the phase,
the exception and the nulls the tables hold, so the user sees which file and row to look at.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from spl_hf.audit.load import BuiltFolder

T = TypeVar("T")
# What damaged data raises inside the checks (a missing key or column, a None where a value was, a
# value of another type); anything else (an OSError, an assertion, a RecursionError) stays a traceback.
DATA_ERRORS: tuple[type[BaseException], ...] = (
    KeyError,
    TypeError,
    ValueError,
    IndexError,
    AttributeError,
    ZeroDivisionError,
    pa.ArrowException,
)
SHOWN = 5


def declared_schemas(built: BuiltFolder) -> dict[str, pa.Schema]:
    """Per config, the Arrow schema of the features the card's ``dataset_info`` declares."""
    from datasets import Features

    from spl_hf.dataset import read_front_matter

    try:
        meta = read_front_matter(built.path / "README.md") or {}
    except Exception:
        return {}
    infos = meta.get("dataset_info") if isinstance(meta, dict) else None
    infos = infos if isinstance(infos, list) else [infos] if isinstance(infos, dict) else []
    out = {}
    for info in infos:
        if not isinstance(info, dict) or "features" not in info:
            continue
        try:
            out[str(info.get("config_name", "default"))] = Features._from_yaml_list(
                info["features"]
            ).arrow_schema
        except Exception:
            continue
    return out


def shape_failures(built: BuiltFolder) -> list[str]:
    """Each loaded file's missing, extra and retyped columns against its config's declared features."""
    import pyarrow.parquet as pq

    schemas = declared_schemas(built)
    failures: list[str] = []
    for split in built.splits:
        want = schemas.get(split.config)
        if want is None:
            continue
        for rel in split.files:
            try:
                have = pq.read_schema(built.path / rel)
            except (OSError, pa.ArrowException):
                continue  # unreadable: the loader named it
            failures += _schema_differences(rel, have, want)
    return list(dict.fromkeys(failures))


def _schema_differences(rel: str, have: pa.Schema, want: pa.Schema) -> list[str]:
    out = [
        f"{rel}: column {n!r} is missing (the card declares it)" for n in want.names if n not in have.names
    ]
    out += [f"{rel}: column {n!r} is not one the card declares" for n in have.names if n not in want.names]
    for name in want.names:
        if name in have.names and not _same_type(have.field(name).type, want.field(name).type):
            out.append(
                f"{rel}: column {name!r} has type {have.field(name).type}, the card declares {want.field(name).type}"
            )
    return out


def _same_type(a: pa.DataType, b: pa.DataType) -> bool:
    """Equal up to string/large_string and list/large_list (datasets writes either)."""
    norm = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        fa, fb = {f.name: f.type for f in a}, {f.name: f.type for f in b}
        return fa.keys() == fb.keys() and all(_same_type(fa[k], fb[k]) for k in fa)
    if (pa.types.is_list(a) or pa.types.is_large_list(a)) and (
        pa.types.is_list(b) or pa.types.is_large_list(b)
    ):
        return _same_type(a.value_type, b.value_type)
    return norm.get(a, a) == norm.get(b, b)


def null_cells(built: BuiltFolder, limit: int = SHOWN) -> list[str]:
    """The first null cells of the loaded tables, rarest column first: where an edit most likely put one."""
    found = []
    for split in built.splits:
        table = split.table
        for name in table.column_names:
            col = table.column(name)
            if 0 < col.null_count < table.num_rows:
                row = next(i for i, v in enumerate(col.is_null().to_pylist()) if v)
                found.append((col.null_count, f"{split.config}/{split.split} row {row}: {name} is null"))
    return [text for _n, text in sorted(found)[:limit]]


def checked(phase: str, built: BuiltFolder, failures: list[str], fn: Callable[[], T]) -> T | None:
    """``fn()``, or None with a failure naming ``phase`` when damaged data makes it raise."""
    from spl_hf.audit.provenance import SourcesError

    try:
        return fn()
    except SourcesError:
        raise  # the user's --sources, not the release's data: a one-line error, exit 2
    except DATA_ERRORS as exc:
        shown = "; ".join(null_cells(built)) or "no null cell in the tables"
        failures.append(
            f"{phase}: could not be checked: the data is not what the build writes "
            f"({type(exc).__name__}: {str(exc)[:200]}); nulls: {shown}"
        )
        return None


def read_object(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it is missing, not JSON or not an object (named elsewhere)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None
