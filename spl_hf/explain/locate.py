"""Find one row of a release: by its id (a tenet row's ``scenario_id``, an SPL row's ``pair_id``) or
by config, split and index. Only the id column is scanned; the row itself is taken alone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow.compute as pc

from spl_hf.explain.release import Release, ReleaseError

# The config that holds every row of each kind, and the column that names a row there.
ID_COLUMN = {"tenets": "scenario_id", "spl": "pair_id"}
HOME_CONFIG = {"tenets": "all", "spl": "derivations"}


@dataclass(frozen=True)
class RowRef:
    config: str
    split: str
    index: int
    row: dict


def find_row(release: Release, spec: Sequence[str]) -> RowRef:
    """The row ``spec`` names: ``[ID]`` or ``[CONFIG, SPLIT, INDEX]``."""
    if len(spec) == 3:
        config, split, index = spec
        try:
            i = int(index)
        except ValueError:
            raise ReleaseError(f"row index must be an integer, got {index!r}") from None
        return RowRef(config, split, i, release.row(config, split, i))
    if len(spec) != 1:
        raise ReleaseError(f"a row is one id or CONFIG SPLIT INDEX, got {list(spec)}")
    return find_id(release, spec[0])


def find_id(release: Release, ident: str) -> RowRef:
    column = ID_COLUMN[release.kind]
    config = (
        HOME_CONFIG[release.kind] if HOME_CONFIG[release.kind] in release.splits else release.default_config
    )
    for split in release.splits[config]:
        index = index_of(release, config, split, column, ident)
        if index is not None:
            return RowRef(config, split, index, release.row(config, split, index))
    raise ReleaseError(f"{release.describe()}: no row with {column} {ident!r} in config {config!r}")


def index_of(release: Release, config: str, split: str, column: str, value: str) -> int | None:
    """Position of the first row whose ``column`` equals ``value`` (None when absent)."""
    data = release.dataset(config, split)
    if column not in data.schema.names:
        return None
    values = data.to_table(columns=[column]).column(column)
    hit = pc.index(values, value).as_py()
    return None if hit < 0 else int(hit)
