"""Reading raw source records: local files of the Hub schema, or the Hub dataset itself.

This is the only I/O in the adapters. A path that exists, names a data file (``.jsonl``, ``.json``,
``.csv``, ``.parquet``, ``.txt``, each optionally ``.gz`` but parquet) or starts in an existing folder
is local, and is read by the reader of its format (one module each under
:mod:`spl_hf.sources.formats`, sharing the byte/line streams and the damage policy of
:mod:`spl_hf.sources.formats.damage`, which says what is quarantined per record and what fails the
file). Only a string shaped like ``owner/name`` that is none of these is a Hub dataset id, and it
goes through ``datasets.load_dataset`` with the adapter's config/data_dir/split after a quick,
retry-free check that the Hub answers (so an offline machine fails in a second, naming the string,
instead of after half a minute of retries).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from spl_hf.sources.formats import DATA_SUFFIXES, data_suffix, read_local
from spl_hf.sources.formats.damage import (
    LFS_POINTER,
    RawTable,
    Records,
    SourceFileError,
    UnparsableRecord,
)

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class HubSpec:
    """Where a pool lives on the Hub (``datasets.load_dataset`` arguments)."""

    repo: str
    config: str | None = None
    data_dir: str | None = None
    split: str = "train"
    revision: str | None = None

    def describe(self) -> str:
        parts = [self.repo]
        if self.config:
            parts.append(f"config={self.config}")
        if self.data_dir:
            parts.append(f"data_dir={self.data_dir}")
        parts.append(f"split={self.split}")
        if self.revision:
            parts.append(f"revision={self.revision}")
        return " ".join(parts)


def is_hub_id(path_or_repo: str) -> bool:
    """Whether a string is read as a Hub dataset id rather than a local path (see the module doc)."""
    path = Path(path_or_repo)
    if path.exists() or data_suffix(path) is not None or not _HUB_ID.match(path_or_repo):
        return False
    return not Path(path_or_repo.split("/", 1)[0]).is_dir()  # "data/x" with a data/ folder is a path


def _offline() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def probe_hub(spec: HubSpec) -> None:
    """Fail fast (one request, no retries) when the Hub dataset is unreachable or does not exist."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

    try:
        HfApi().dataset_info(spec.repo, revision=spec.revision, timeout=10)
    except RepositoryNotFoundError:
        raise FileNotFoundError(
            f"{spec.repo}: no such local file, and no Hub dataset of that name (or it is private)"
        ) from None
    except RevisionNotFoundError:
        raise SourceFileError(f"{spec.repo}: the Hub dataset has no revision {spec.revision!r}") from None
    except HfHubHTTPError as exc:
        raise SourceFileError(f"{spec.repo}: the Hub refused the dataset ({exc})") from None
    except Exception as exc:  # network failures come from several HTTP stacks
        raise SourceFileError(
            f"{spec.repo}: no such local file, and the Hub could not be reached to read it as a dataset id "
            f"({type(exc).__name__}: {exc}); set HF_HUB_OFFLINE=1 to read a cached copy"
        ) from None


def read_hub(spec: HubSpec) -> RawTable:
    if not _offline():
        probe_hub(spec)
    from datasets import load_dataset

    try:
        ds = load_dataset(
            spec.repo, spec.config, data_dir=spec.data_dir, split=spec.split, revision=spec.revision
        )
    except Exception as exc:  # a Hub read fails in many library-specific ways; name the dataset
        hint = " (offline, and not in the local cache)" if _offline() else ""
        raise SourceFileError(
            f"{spec.repo}: no such local file; as the Hub dataset hf://datasets/{spec.describe()} it cannot "
            f"be loaded{hint} ({type(exc).__name__}: {exc})"
        ) from exc
    return RawTable(ds.to_list(), tuple(ds.column_names), f"hf://datasets/{spec.describe()}")


def read_table(path_or_repo: str | Path, hub: HubSpec) -> RawTable:
    """Read ``path_or_repo``: a local file, or the Hub dataset ``hub`` when it is that repo's id."""
    text = str(path_or_repo)
    if is_hub_id(text):
        if text != hub.repo:
            # A different repo id is allowed (mirrors, forks) but keeps the adapter's config/split.
            hub = HubSpec(text, hub.config, hub.data_dir, hub.split, hub.revision)
        return read_hub(hub)
    return read_local(text)


__all__ = [
    "DATA_SUFFIXES",
    "LFS_POINTER",
    "HubSpec",
    "RawTable",
    "Records",
    "SourceFileError",
    "UnparsableRecord",
    "is_hub_id",
    "probe_hub",
    "read_hub",
    "read_local",
    "read_table",
]
