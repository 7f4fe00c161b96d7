"""Reading a built SPL dataset (local folder or Hub repo) for audit, with its rule base."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import yaml
from datasets import get_dataset_config_names, load_dataset

from spl_hf.hub.folder import union_splits
from spl_hf.rules.rulebase import RuleBase, default_rulebase, load_rulebase


@dataclass(frozen=True)
class LoadedSplit:
    config: str
    split: str
    table: pa.Table


def load_built(path: str, config: str | None = None) -> list[LoadedSplit]:
    """Every split of ``config`` (or of every config) as Arrow tables, read with ``load_dataset``."""
    names = [config] if config else get_dataset_config_names(path)
    covered = union_splits(card_yaml(path), within_config=True)  # e.g. preferences/train: rows seen once
    out = []
    for name in names:
        # No split-size verification: an edited file must reach the audit and be reported, not
        # stop the load with a size mismatch against the card.
        # Always re-read the files: datasets may reuse an Arrow cache built from another folder of the
        # same name, and an audit must see the bytes on disk.
        dd = load_dataset(path, name, verification_mode="no_checks", download_mode="force_redownload")
        for split, ds in dd.items():
            if split in covered.get(name, ()):
                continue
            out.append(LoadedSplit(name, split, ds.data.table))
    return out


def resolve_rulebase(path: str, rulebase: str | None) -> tuple[RuleBase, str]:
    """The rule base to audit with, and where it came from: explicit file, the build's copy, or default."""
    if rulebase:
        return load_rulebase(rulebase), rulebase
    stored = Path(path) / "rulebase.yaml"
    if stored.is_file():
        return load_rulebase(stored), str(stored)
    return default_rulebase(), "packaged default"


def stored_rulebase_hashes(splits: list[LoadedSplit]) -> set[str]:
    hashes: set[str] = set()
    for s in splits:
        col = s.table.column("derivation").combine_chunks().field("rulebase_hash")
        hashes |= {h for h in col.unique().to_pylist() if h is not None}
    return hashes


def card_yaml(path: str) -> dict:
    readme = Path(path) / "README.md"
    if not readme.is_file():
        return {}
    text = readme.read_text()
    if not text.startswith("---"):
        return {}
    return yaml.safe_load(text.split("---", 2)[1]) or {}
