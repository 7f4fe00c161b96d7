"""Writing a build as a Hub dataset repository laid out on disk.

The layout is the one ``Dataset.push_to_hub`` produces (``<config>/<split>-NNNNN-of-NNNNN.parquet``,
``data/`` for a config named ``default``) plus a README whose YAML lists every config, so
``load_dataset(folder, config)`` reads it locally and the same folder uploads unchanged.
The folder is written next to its destination and moved into place at the end, so an
interrupted build never leaves a half-written dataset behind; only a folder spl_hf wrote is
ever replaced (see :mod:`spl_hf.outputs`).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from datasets import Features

from spl_hf.dataset import DEFAULT_MAX_SHARD_SIZE
from spl_hf.errors import SplHfError
from spl_hf.filehash import sha256_file
from spl_hf.files import replace_dir, temp_dir_beside, write_bytes, write_parquet
from spl_hf.held import decoded_nbytes
from spl_hf.manifest import check_manifest, write_manifest
from spl_hf.outputs import (
    MARKER,
    OutputError,
    guard_dir,
    mark_output,
    marker_kind,
    owned_by_spl_hf,
    written_by_live_process,
)

_SPLIT = re.compile(r"^\w+(\.\w+)*$")
WRITE_THREADS = min(4, os.cpu_count() or 1)


@dataclass(frozen=True)
class ConfigData:
    """One config of a dataset repo: its features, a table per split (in order), and union splits.

    ``unions`` maps a split name to the ``(config, split)`` pairs whose data files it covers: the
    card declares it as the list of those files, so its rows are stored once, in the splits named.
    """

    name: str
    features: Features
    splits: Mapping[str, pa.Table]
    default: bool = False
    unions: Mapping[str, Sequence[tuple[str, str]]] = field(default_factory=dict)

    def split_names(self) -> list[str]:
        return [*self.splits, *self.unions]


@dataclass(frozen=True)
class WrittenFolder:
    path: Path
    files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256


def config_dir(name: str) -> str:
    return "data" if name == "default" else name


def validate_layout(configs: list[ConfigData]) -> None:
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise SplHfError(f"duplicate config names: {names}")
    if "data" in names:
        raise SplHfError("config name 'data' is reserved by the Hub layout")
    if sum(c.default for c in configs) > 1:
        raise SplHfError("more than one default config")
    tables = {(c.name, s): c for c in configs for s in c.splits}
    for c in configs:
        names = c.split_names()
        if len(set(names)) != len(names):
            raise SplHfError(f"config {c.name!r}: a union split has the name of a stored split: {names}")
        for split in names:
            if not _SPLIT.match(split):
                raise SplHfError(f"config {c.name!r}: split name {split!r} must match {_SPLIT.pattern}")
        for split, refs in c.unions.items():
            if not refs:
                raise SplHfError(f"config {c.name!r}: union split {split!r} names no splits")
            for ref in refs:
                if tuple(ref) not in tables:
                    raise SplHfError(
                        f"config {c.name!r}: union split {split!r} names {ref}, which is not a stored split"
                    )
                if tables[tuple(ref)].features != c.features:
                    raise SplHfError(
                        f"config {c.name!r}: union split {split!r} names {ref}, whose features differ"
                    )


def split_rows(configs: list[ConfigData]) -> dict[tuple[str, str], int]:
    """Rows per (config, split), union splits included (the sum of the splits they cover)."""
    rows = {(c.name, s): t.num_rows for c in configs for s, t in c.splits.items()}
    for c in configs:
        for split, refs in c.unions.items():
            rows[(c.name, split)] = sum(rows[tuple(r)] for r in refs)
    return rows


def config_rows(config: ConfigData, configs: list[ConfigData]) -> int:
    """Distinct rows of a config: its stored splits, or what its unions cover when it stores none."""
    if config.splits:
        return sum(t.num_rows for t in config.splits.values())
    rows = split_rows(configs)
    covered = {tuple(r) for refs in config.unions.values() for r in refs}
    return sum(rows[r] for r in covered)


def yaml_metadata(configs: list[ConfigData]) -> dict:
    """The ``configs`` and ``dataset_info`` README entries for these configs.

    A union split's ``path`` is the list of the data files of the splits it covers. ``dataset_info``
    gives the features but no ``splits``: ``datasets`` reads split sizes only together with
    ``num_bytes``, which it measures on the Arrow batches it reads back from each parquet row group
    (the in-memory tables here differ by a few bytes), so a stated size would be wrong.
    """
    entries, infos = [], []
    for c in configs:
        entry: dict = {"config_name": c.name}
        if c.default:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": shard_pattern(c.name, s)} for s in c.splits] + [
            {"split": s, "path": [shard_pattern(rc, rs) for rc, rs in refs]} for s, refs in c.unions.items()
        ]
        entries.append(entry)
        infos.append({"config_name": c.name, "features": c.features._to_yaml_list()})
    return {"configs": entries, "dataset_info": infos}


def union_splits(card: Mapping, *, within_config: bool = False) -> dict[str, list[str]]:
    """Per config, the splits a card declares as lists of other splits' files.

    With ``within_config``, only those made of the config's own other splits (such as SPL's
    ``preferences/train``): a reader that visits every split would see their rows twice.
    """
    out: dict[str, list[str]] = {}
    for entry in card.get("configs") or []:
        own = config_dir(entry["config_name"]) + "/"
        for df in entry.get("data_files") or []:
            paths = df.get("path") if isinstance(df, dict) else None
            if not isinstance(paths, list) or len(paths) < 2:
                continue
            if within_config and not all(str(p).startswith(own) for p in paths):
                continue
            out.setdefault(entry["config_name"], []).append(df["split"])
    return out


def shard_pattern(config: str, split: str) -> str:
    return f"{config_dir(config)}/{split}-*"


def shard_paths(config: str, split: str, num_shards: int) -> list[str]:
    """``<dir>/<split>-NNNNN-of-NNNNN.parquet``, the names ``push_to_hub`` gives its shards."""
    return [f"{config_dir(config)}/{split}-{i:05d}-of-{num_shards:05d}.parquet" for i in range(num_shards)]


def shard_table(table: pa.Table, max_shard_bytes: int, nbytes: int | None = None) -> list[pa.Table]:
    """Contiguous row ranges of about equal size whose Arrow size stays under ``max_shard_bytes``.

    Parquet with compression is smaller than the Arrow data, so each file stays under the bound too.
    ``nbytes``: the size the table has as written, where it is held otherwise (dictionaries).
    """
    if max_shard_bytes <= 0:
        raise SplHfError(f"max shard size must be positive, got {max_shard_bytes}")
    size = table.nbytes if nbytes is None else nbytes
    n = max(1, min(table.num_rows, -(-size // max_shard_bytes)))
    bounds = [round(i * table.num_rows / n) for i in range(n + 1)]
    return [table.slice(a, b - a) for a, b in itertools.pairwise(bounds)]


def parse_size(size: str | int) -> int:
    """Bytes in ``500MB``, ``2GB``, ``64KiB`` or a plain integer."""
    if isinstance(size, int):
        return size
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?)B?\s*", size.upper())
    if not m:
        raise SplHfError(f"size {size!r}: expected a number of bytes like 500MB or 2GB")
    base = 1024 if m.group(3) else 1000
    return int(m.group(1)) * base ** " KMGT".index(m.group(2) or " ")


TEMP_TAG = ".spl_hf-"  # temp siblings are ".<name>.spl_hf-new-XXXX" / ".<name>.spl_hf-old-XXXX"
PARTIAL_KIND = "partial dataset build"


def _temp_sibling(out: Path, role: str) -> Path:
    """A fresh hidden sibling folder ``.<name>.spl_hf-<role>-<random>`` of ``out``."""
    return temp_dir_beside(out, f"{TEMP_TAG}{role}")


def _our_temps(out: Path, role: str = "") -> list[Path]:
    """Our temp siblings: a partial build carries the partial marker, a build moved aside proves itself."""
    prefix = f".{out.name}{TEMP_TAG}{role}"
    if not out.parent.is_dir():
        return []
    return sorted(
        p
        for p in out.parent.iterdir()
        if p.name.startswith(prefix)
        and p.is_dir()
        and not p.is_symlink()
        and (owned_by_spl_hf(p) or ("-new-" in p.name and marker_kind(p) == PARTIAL_KIND))
    )


def _recover_and_clean(out: Path) -> None:
    """Undo what a killed earlier run left: restore a build moved aside, delete our stale temp folders.

    A run killed between moving the old build aside and moving the new one in leaves ``out`` missing
    and the old build complete (manifest intact) in an ``-old-`` sibling: put it back first.
    """
    if not out.exists():
        for old in reversed(_our_temps(out, "old-")):
            if check_manifest(old).ok:
                os.rename(old, out)
                break
    for stale in _our_temps(out):
        if not written_by_live_process(stale):  # a concurrent build's folder is not stale
            shutil.rmtree(stale)


def write_dataset_folder(
    out_dir: str | Path,
    configs: list[ConfigData],
    readme: str,
    extra_files: Mapping[str, str | bytes] | None = None,
    max_shard_size: str | int = DEFAULT_MAX_SHARD_SIZE,
    *,
    overwrite: bool = False,
    inputs: Iterable[str | Path] = (),
) -> WrittenFolder:
    """Write configs as parquet shards, the README and extra files (text, or bytes); then a SHA-256 manifest.

    ``out_dir`` must be new, empty, or (with ``overwrite``) an earlier spl_hf build; inputs may not
    lie in it (see :func:`spl_hf.outputs.guard_dir`). The build is written to a hidden sibling and
    swapped in (old aside, new in, old deleted), so at every instant a complete build sits at
    ``out_dir`` or aside, never a half-deleted one.
    """
    validate_layout(configs)
    inputs = tuple(inputs)
    out = guard_dir(out_dir, overwrite=overwrite, inputs=inputs)
    out.parent.mkdir(parents=True, exist_ok=True)
    _recover_and_clean(out)
    out = guard_dir(out_dir, overwrite=overwrite, inputs=inputs)  # a restored build needs --overwrite too
    tmp = _temp_sibling(out, "new")
    try:
        # The marker makes the partial folder recognisably ours, so a later run may remove it.
        mark_output(tmp, PARTIAL_KIND)
        # Each shard is cast to its config's schema as it is written, not the whole table up front: a
        # table held with dictionaries (spl_hf.held: a release's judge scores) is decoded one shard at
        # a time, so the driver never holds a second, decoded copy of it.
        shards: list[tuple[Path, pa.Table, pa.Schema]] = []
        for c in configs:
            schema = c.features.arrow_schema
            for split, table in c.splits.items():
                size = decoded_nbytes(table, schema)
                parts = shard_table(table, parse_size(max_shard_size), size)
                for rel, shard in zip(shard_paths(c.name, split, len(parts)), parts, strict=True):
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    shards.append((tmp / rel, shard, schema))
        for rel, text in {"README.md": readme, **(extra_files or {})}.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            write_bytes(tmp / rel, text if isinstance(text, bytes) else text.encode("utf-8"))
        # Parquet encoding and hashing run outside the GIL, so files are written and hashed in
        # parallel (largest first, so the longest write does not start last); each file's bytes
        # depend only on its own table.
        with ThreadPoolExecutor(max_workers=WRITE_THREADS) as pool:
            list(
                pool.map(_write_shard, sorted(shards, key=lambda job: -job[1].nbytes))
            )  # raises a failed write
            paths = [p for p in sorted(tmp.rglob("*")) if p.is_file() and p.name != MARKER]
            hashes = pool.map(sha256_file, paths)
            files = {p.relative_to(tmp).as_posix(): h for p, h in zip(paths, hashes, strict=True)}
        write_manifest(tmp, files)
        (tmp / MARKER).unlink()  # the manifest now identifies the folder
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return WrittenFolder(out, files)


def _write_shard(job: tuple[Path, pa.Table, pa.Schema]) -> None:
    dest, shard, schema = job
    # The one writer's fixed settings: the same table gives the same bytes, decoded a row group at a time.
    write_parquet(dest, shard, schema)


def _swap_in(new: Path, out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not owned_by_spl_hf(out):  # changed since the guard
        raise OutputError(f"{out}: now holds files spl_hf did not write; the new build was not moved in")
    replace_dir(new, out, f"{TEMP_TAG}old")  # a killed swap leaves the old build aside: recovered above
