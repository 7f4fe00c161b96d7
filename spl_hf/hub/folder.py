"""Writing a build as a Hub dataset repository laid out on disk.

The layout is the one ``Dataset.push_to_hub`` produces (``<config>/<split>-NNNNN-of-NNNNN.parquet``,
``data/`` for a config named ``default``) plus a README whose YAML lists every config, so
``load_dataset(folder, config)`` reads it locally and the same folder uploads unchanged.
The folder is written next to its destination and moved into place at the end, so an
interrupted build never leaves a half-written dataset behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from datasets import Features

_SPLIT = re.compile(r"^\w+(\.\w+)*$")
MANIFEST = "MANIFEST.sha256"


@dataclass(frozen=True)
class ConfigData:
    """One config of a dataset repo: its features and a table per split (in order)."""

    name: str
    features: Features
    splits: Mapping[str, pa.Table]
    default: bool = False


@dataclass(frozen=True)
class WrittenFolder:
    path: Path
    files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256


def config_dir(name: str) -> str:
    return "data" if name == "default" else name


def validate_layout(configs: list[ConfigData]) -> None:
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate config names: {names}")
    if "data" in names:
        raise ValueError("config name 'data' is reserved by the Hub layout")
    if sum(c.default for c in configs) > 1:
        raise ValueError("more than one default config")
    for c in configs:
        for split in c.splits:
            if not _SPLIT.match(split):
                raise ValueError(f"config {c.name!r}: split name {split!r} must match {_SPLIT.pattern}")


def yaml_metadata(configs: list[ConfigData]) -> dict:
    """The ``configs`` and ``dataset_info`` README entries for these configs."""
    entries, infos = [], []
    for c in configs:
        entry: dict = {"config_name": c.name}
        if c.default:
            entry["default"] = True
        entry["data_files"] = [
            {"split": s, "path": f"{config_dir(c.name)}/{s}-*"} for s in c.splits
        ]
        entries.append(entry)
        infos.append(
            {
                "config_name": c.name,
                "features": c.features._to_yaml_list(),
                "splits": [
                    {"name": s, "num_bytes": t.nbytes, "num_examples": t.num_rows} for s, t in c.splits.items()
                ],
            }
        )
    return {"configs": entries, "dataset_info": infos}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_dataset_folder(
    out_dir: str | Path, configs: list[ConfigData], readme: str, extra_files: Mapping[str, str] | None = None
) -> WrittenFolder:
    """Write configs as parquet shards, the README and extra text files; then a SHA-256 manifest."""
    validate_layout(configs)
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        files: dict[str, str] = {}
        for c in configs:
            schema = c.features.arrow_schema
            for split, table in c.splits.items():
                rel = f"{config_dir(c.name)}/{split}-00000-of-00001.parquet"
                dest = tmp / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                # Fixed writer settings: the same table always gives the same bytes.
                pq.write_table(table.cast(schema), dest, compression="zstd", compression_level=3)
        for rel, text in {"README.md": readme, **(extra_files or {})}.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_text(text, encoding="utf-8")
        for p in sorted(tmp.rglob("*")):
            if p.is_file():
                files[p.relative_to(tmp).as_posix()] = sha256_file(p)
        (tmp / MANIFEST).write_text("".join(f"{h}  {rel}\n" for rel, h in files.items()))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return WrittenFolder(out, files)


def verify_manifest(folder: str | Path) -> list[str]:
    """Files whose SHA-256 differs from the manifest (or that are missing); empty when intact."""
    folder = Path(folder)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return []
    bad = []
    for line in manifest.read_text().splitlines():
        digest, rel = line.split("  ", 1)
        path = folder / rel
        if not path.is_file() or sha256_file(path) != digest:
            bad.append(rel)
    return bad
