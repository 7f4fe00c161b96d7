"""Load one published split for DPO and check it before any model is loaded.

Data are consumed as published, through ``load_dataset`` (a local dataset folder, or a Hub id read
from ``HF_ENDPOINT``), with no conversion step. Everything that would otherwise fail deep inside
TRL — a missing config or split, a ``DatasetDict`` where one split is needed, missing columns,
unlabeled (null) pairs, messages with the wrong roles, an empty split, unusable weights — is
reported here as one ``ValueError`` naming the dataset, config, split and the offending rows.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict
from datasets.exceptions import DatasetGenerationError

from spl_hf.errors import SplHfError
from spl_hf.filehash import files_sha256

REQUIRED = ("prompt", "chosen", "rejected")
PROMPT_ROLES = frozenset({"system", "user", "assistant", "tool"})
SHOWN = 5  # offending rows named in an error


@dataclass(frozen=True)
class DataRecord:
    """Identity of the rows a run trained on (recorded in run.json)."""

    dataset_name: str
    dataset_config: str | None
    dataset_revision: str | None  # resolved Hub commit sha; None for a local folder
    dataset_fingerprint: str  # sha256 over the split's data files (local) or the commit sha (Hub)
    split: str
    rows: int
    sources: list[str] | None
    data_files: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _where(name: str, config: str | None, split: str | None = None) -> str:
    out = f"{name} (config {config!r}"
    return out + (f", split {split!r})" if split is not None else ")")


def is_local(name: str) -> bool:
    return Path(name).expanduser().is_dir()


def resolve_config(name: str, config: str | None, revision: str | None) -> str | None:
    """The config to load: the one asked for (it must exist) or the dataset's default."""
    from datasets import get_dataset_config_names, get_dataset_default_config_name

    available = get_dataset_config_names(name, revision=revision)
    if config is None:
        default = get_dataset_default_config_name(name, revision=revision)
        if default is None and len(available) > 1:
            raise SplHfError(
                f"{name}: has several configs and no default; pass --dataset_config, one of "
                f"{', '.join(available)}"
            )
        return default if default is not None else (available[0] if available else None)
    if config not in available:
        raise SplHfError(f"{name}: no config {config!r}; available configs: {', '.join(available)}")
    return config


def config_data_files(
    name: str, config: str | None, revision: str | None
) -> tuple[dict[str, list[str]], str]:
    """(split name -> data files, builder hash) of one config, resolved the way ``load_dataset`` does.

    For a Hub repo the builder hash is the commit the revision resolved to.
    """
    from datasets import load_dataset_builder

    builder = load_dataset_builder(name, config, revision=revision)
    files = builder.config.data_files or {}
    return {str(split): [str(f) for f in paths] for split, paths in files.items()}, str(builder.hash)


def check_split_name(name: str, config: str | None, split: str | None, splits: list[str]) -> str:
    if split is None or split == "":
        raise SplHfError(
            f"{_where(name, config)}: loads as a DatasetDict, but training needs one split; "
            f"pass --dataset_train_split, one of {', '.join(splits)}"
        )
    if split not in splits:
        raise SplHfError(f"{_where(name, config)}: no split {split!r}; available splits: {', '.join(splits)}")
    return split


def require_dataset(obj: object, where: str) -> Dataset:
    """A loaded object must be one split (a ``Dataset``), not a dict of splits or a stream."""
    if isinstance(obj, DatasetDict | IterableDatasetDict):
        raise SplHfError(
            f"{where}: got a DatasetDict with splits {', '.join(obj.keys())}; "
            "training needs one split (pass --dataset_train_split)"
        )
    if isinstance(obj, IterableDataset):
        raise SplHfError(f"{where}: streaming datasets are not supported; rows are counted and checked first")
    if not isinstance(obj, Dataset):
        raise SplHfError(f"{where}: expected a datasets.Dataset, got {type(obj).__name__}")
    return obj


def _rows_named(table: pa.Table, idx: list[int]) -> str:
    shown = idx[:SHOWN]
    if "pair_id" in table.column_names:
        ids = table.column("pair_id").take(pa.array(shown)).to_pylist()
        named = ", ".join(f"{i} (pair_id {p})" for i, p in zip(shown, ids))
    else:
        named = ", ".join(str(i) for i in shown)
    return named + (f" and {len(idx) - len(shown)} more" if len(idx) > len(shown) else "")


def _indices(mask: pa.Array | pa.ChunkedArray) -> list[int]:
    return pc.indices_nonzero(mask.fill_null(True) if mask.null_count else mask).to_pylist()


def _check_messages(table: pa.Table, col: str, where: str) -> None:
    """Conversational columns: non-empty message lists; completions are the assistant's, and the
    prompt ends on a user (or tool) turn so the completion answers it."""
    arr = table.column(col).combine_chunks()
    lengths = pc.list_value_length(arr)
    empty = _indices(pc.equal(lengths, 0))
    if empty:
        raise SplHfError(
            f"{where}: {len(empty)} rows have an empty `{col}` message list: {_rows_named(table, empty)}"
        )
    flat = pc.list_flatten(arr)
    if not pa.types.is_struct(flat.type) or flat.type.get_field_index("role") < 0:
        raise SplHfError(f"{where}: `{col}` must be a list of {{role, content}} messages, got {arr.type}")
    roles = pc.struct_field(flat, "role")
    parents = pc.list_parent_indices(arr)
    allowed = {"assistant"} if col != "prompt" else PROMPT_ROLES
    bad = pc.invert(pc.is_in(roles, value_set=pa.array(sorted(allowed)))).fill_null(True)
    bad_rows = sorted(set(pc.filter(parents, bad).to_pylist()))
    if bad_rows:
        seen = sorted({str(r) for r in pc.filter(roles, bad).to_pylist()})
        raise SplHfError(
            f"{where}: {len(bad_rows)} rows have `{col}` messages with role(s) {', '.join(seen)} "
            f"(allowed: {', '.join(sorted(allowed))}): {_rows_named(table, bad_rows)}"
        )
    if col == "prompt":
        ends = pc.subtract(pc.list_value_length(arr), 1)
        offsets = pc.add(arr.offsets[:-1], ends.cast(arr.offsets.type))
        last_roles = roles.take(offsets)
        wrong = _indices(pc.invert(pc.is_in(last_roles, value_set=pa.array(["user", "tool"]))))
        if wrong:
            raise SplHfError(
                f"{where}: {len(wrong)} rows have a prompt that does not end on a user turn "
                f"(the completion must answer it): {_rows_named(table, wrong)}"
            )


def check_rows(ds: Dataset, where: str, weight_column: str | None = None) -> None:
    """Raise one ``ValueError`` for the first problem that would break DPO training on ``ds``."""
    table = ds.data.table
    if ds._indices is not None:  # a filtered view: check exactly the rows that will be trained on
        table = ds.flatten_indices().data.table
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise SplHfError(
            f"{where}: rows lack {', '.join(missing)}; DPO needs prompt, chosen and rejected "
            f"(columns present: {', '.join(table.column_names)})"
        )
    if table.num_rows == 0:
        raise SplHfError(f"{where}: the split is empty; nothing to train on")
    for col in REQUIRED:
        nulls = _indices(pc.is_null(table.column(col)))
        if nulls:
            hint = (
                "; unlabeled pairs (like the SPL `derivations` config) have no chosen/rejected — "
                "train on the `preferences` config"
                if col != "prompt"
                else ""
            )
            raise SplHfError(
                f"{where}: {len(nulls)} of {table.num_rows} rows have a null `{col}`{hint}: "
                f"{_rows_named(table, nulls)}"
            )
    kinds = {
        c: pa.types.is_list(table.schema.field(c).type) or pa.types.is_large_list(table.schema.field(c).type)
        for c in REQUIRED
    }
    if len(set(kinds.values())) != 1:
        raise SplHfError(
            f"{where}: prompt, chosen and rejected must all be message lists or all be strings; "
            f"got {', '.join(f'{c}: {table.schema.field(c).type}' for c in REQUIRED)}"
        )
    if kinds["prompt"]:
        for col in REQUIRED:
            _check_messages(table, col, where)
    else:
        for col in REQUIRED:
            if not pa.types.is_string(table.schema.field(col).type) and not pa.types.is_large_string(
                table.schema.field(col).type
            ):
                raise SplHfError(
                    f"{where}: `{col}` must be a message list or a string, got {table.schema.field(col).type}"
                )
    for col in REQUIRED:
        _check_texts(table, col, kinds[col], where)
    if weight_column is not None:
        check_weights(table, weight_column, where)


def _check_texts(table: pa.Table, col: str, messages: bool, where: str) -> None:
    """No empty (or whitespace-only) text and no NUL character in a column's strings or message contents:
    DPO would train on them without a word."""
    arr = table.column(col).combine_chunks()
    if messages:
        flat = pc.list_flatten(arr)
        if flat.type.get_field_index("content") < 0:
            raise SplHfError(f"{where}: `{col}` messages have no `content` field")
        texts, rows = pc.struct_field(flat, "content"), pc.list_parent_indices(arr)
    else:
        texts, rows = arr, pa.array(range(len(arr)), pa.int64())
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        raise SplHfError(f"{where}: `{col}` text must be a string, got {texts.type}")
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(texts)), 0).fill_null(True)
    for mask, what in (
        (empty, "an empty text"),
        (pc.match_substring(texts, "\x00").fill_null(False), "a NUL character"),
    ):
        bad = sorted(set(pc.filter(rows, mask).to_pylist()))
        if bad:
            raise SplHfError(f"{where}: {len(bad)} rows have {what} in `{col}`: {_rows_named(table, bad)}")


def check_weights(table: pa.Table, column: str, where: str) -> None:
    if column not in table.column_names:
        raise SplHfError(
            f"{where}: score weighting needs the column `{column}`, which the rows lack "
            f"(columns present: {', '.join(table.column_names)}); set --weight_column"
        )
    typ = table.schema.field(column).type
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)):
        raise SplHfError(f"{where}: weight column `{column}` must be numeric, got {typ}")
    values = table.column(column).cast(pa.float64())
    nulls = _indices(pc.is_null(values))
    if nulls:
        raise SplHfError(
            f"{where}: {len(nulls)} rows have a null weight `{column}`: {_rows_named(table, nulls)}"
        )
    arr = values.to_numpy()
    bad = [i for i, v in enumerate(arr.tolist()) if not math.isfinite(v) or v < 0]
    if bad:
        raise SplHfError(
            f"{where}: {len(bad)} rows have a negative or non-finite weight `{column}`: "
            f"{_rows_named(table, bad)}"
        )
    if float(arr.sum()) == 0.0:
        raise SplHfError(f"{where}: every weight in `{column}` is 0; nothing would be trained")


def filter_sources(ds: Dataset, sources: list[str] | None, where: str) -> Dataset:
    if not sources:
        return ds
    if "source" not in ds.column_names:
        raise SplHfError(f"{where}: --sources needs a `source` column, which the rows lack")
    present = set(ds.unique("source"))
    unknown = sorted(set(sources) - present)
    if unknown:
        raise SplHfError(
            f"{where}: no rows from source(s) {', '.join(unknown)}; sources present: "
            f"{', '.join(sorted(str(s) for s in present))}"
        )
    keep = pc.is_in(ds.data.table.column("source"), value_set=pa.array(sorted(set(sources))))
    return ds.select(pc.indices_nonzero(keep).to_pylist())


def files_fingerprint(name: str, files: list[str]) -> tuple[str, list[str]]:
    """sha256 over (relative path, file sha256) of the given data files, in path order."""
    root = Path(name).expanduser().resolve()
    named = []
    for f in sorted(set(files)):
        p = Path(f)
        named.append(
            (p.resolve().relative_to(root).as_posix() if p.resolve().is_relative_to(root) else str(p), p)
        )
    return files_sha256(named), [rel for rel, _ in named]


def _parquet_rows(files: list[str]) -> int | None:
    """Rows in local parquet files from their footers; None when a file is not parquet."""
    import pyarrow.parquet as pq

    if not files or not all(f.endswith(".parquet") for f in files):
        return None
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def hub_commit(name: str, revision: str | None) -> str:
    """The commit sha a Hub revision (or the default branch) resolves to, from ``HF_ENDPOINT``."""
    from huggingface_hub import HfApi

    return str(HfApi().dataset_info(name, revision=revision).sha)


def load_split(
    name: str | None,
    config: str | None,
    split: str | None,
    revision: str | None = None,
    sources: list[str] | None = None,
    weight_column: str | None = None,
) -> tuple[Dataset, DataRecord]:
    """Load and check one split; returns the rows and what identifies them. Loads no model."""
    from datasets import load_dataset

    if not name:
        raise SplHfError("no dataset given: pass --dataset_name (a local dataset folder or a Hub id)")
    local = is_local(name)
    if local and revision:
        raise SplHfError(
            f"{name}: --dataset_revision pins a Hub commit, but this is a local folder "
            "(its data files are hashed and recorded instead)"
        )
    try:
        config = resolve_config(name, config, revision)
        files, builder_hash = config_data_files(name, config, revision)
    except FileNotFoundError:
        raise
    except (ConnectionError, OSError) as exc:  # `datasets` reports an unreachable Hub as ConnectionError
        raise SplHfError(
            f"{name}: not a local dataset folder, and the Hub could not be reached to read it as a "
            f"dataset id ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
            "check the id and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to read a cached copy"
        ) from None
    split = check_split_name(name, config, split, list(files))
    where = _where(name, config, split)
    if local:
        resolved = None
        if _parquet_rows(files[split]) == 0:
            raise SplHfError(f"{where}: the split is empty; nothing to train on")
    else:
        # Pin the commit the files were listed at, so a push in between cannot change the rows.
        resolved = builder_hash if re.fullmatch(r"[0-9a-f]{40}", builder_hash) else hub_commit(name, revision)
    kwargs = {}
    if local:
        # `datasets` keys a local folder's Arrow cache on its folder name and card, not on the data:
        # two folders named alike with equal cards would share one cache and train on stale rows.
        # A cache folder named by the hash of every data file of the config rules that out.
        from datasets import config as ds_config

        every = sorted({f for fs in files.values() for f in fs})
        kwargs["cache_dir"] = str(
            Path(ds_config.HF_DATASETS_CACHE) / "spl_hf-local" / files_fingerprint(name, every)[0][:32]
        )
    try:
        loaded = load_dataset(name, config, split=split, revision=resolved, **kwargs)
    except DatasetGenerationError as exc:
        raise SplHfError(f"{where}: its data files could not be read: {exc.__cause__ or exc}") from exc
    ds = require_dataset(loaded, where)
    ds = filter_sources(ds, sources, where)
    check_rows(ds, where, weight_column)
    if local:
        fingerprint, rels = files_fingerprint(name, files[split])
    else:
        # hf://datasets/<repo>@<sha>/<path>: keep the path inside the repo
        fingerprint, rels = resolved, [f.split("@", 1)[-1].split("/", 1)[-1] for f in files[split]]
    return ds, DataRecord(
        name,
        config,
        resolved,
        fingerprint,
        split,
        ds.num_rows,
        sorted(set(sources)) if sources else None,
        rels,
    )
