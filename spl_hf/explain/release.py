"""A release as files: its card's configs and splits, its reports, and Arrow views of its rows.

Everything the explain and view commands show is read here from the release alone (a local folder,
or a Hub dataset downloaded at a revision into a temporary folder): no model, no solver, and rows
are read as Arrow (a ``pyarrow.dataset`` over the split's parquet files), never all at once as
Python objects.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds

from spl_hf.dataset import card_body, read_front_matter
from spl_hf.errors import SplHfError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class ReleaseError(SplHfError):
    """A folder or repo that is not a readable spl_hf release, or a row it does not hold."""


@dataclass
class Release:
    """A release folder (``repo_id``/``revision`` set when it was downloaded from the Hub)."""

    folder: Path
    repo_id: str | None = None
    revision: str | None = None
    _datasets: dict = field(default_factory=dict, repr=False)
    _fragments: dict = field(default_factory=dict, repr=False)  # (config, split) -> (fragments, starts)

    @property
    def target(self) -> str:
        """What to hand the audit: the repo id for a Hub release, else the folder."""
        return self.repo_id or str(self.folder)

    def describe(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.repo_id else str(self.folder)

    @cached_property
    def front_matter(self) -> dict:
        card = self.folder / "README.md"
        if not card.is_file():
            raise ReleaseError(f"{self.folder}: no README.md (not a built release)")
        meta = read_front_matter(card)  # the one card reader: limits, no aliases, a mapping
        if meta is None:
            raise ReleaseError(f"{card}: no YAML front matter")
        return meta

    @cached_property
    def card_body(self) -> str:
        return card_body((self.folder / "README.md").read_text(encoding="utf-8"))

    @cached_property
    def report(self) -> dict:
        return self._json("build_report.json")

    @cached_property
    def card_kwargs(self) -> dict:
        return self._json("card.json").get("kwargs", {})

    @cached_property
    def certificate(self) -> dict | None:
        path = self.folder / "assignment_certificate.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    @property
    def kind(self) -> str:
        kind = self.report.get("kind") or ("spl" if "rulebase_hash" in self.report else None)
        if kind not in ("tenets", "spl"):
            raise ReleaseError(f"{self.folder}/build_report.json: unknown kind {kind!r}")
        return kind

    def _json(self, name: str) -> dict:
        path = self.folder / name
        if not path.is_file():
            raise ReleaseError(f"{self.folder}: no {name} (not a built release)")
        return json.loads(path.read_text(encoding="utf-8"))

    @cached_property
    def splits(self) -> dict[str, dict[str, list[str]]]:
        """config -> split -> its data-file patterns, in the card's order."""
        out: dict[str, dict[str, list[str]]] = {}
        for cfg in self.front_matter.get("configs", []):
            files = cfg.get("data_files", [])
            out[cfg["config_name"]] = {
                d["split"]: [d["path"]] if isinstance(d["path"], str) else list(d["path"]) for d in files
            }
        return out

    @property
    def default_config(self) -> str:
        for cfg in self.front_matter.get("configs", []):
            if cfg.get("default"):
                return cfg["config_name"]
        return next(iter(self.splits))

    def files(self, config: str, split: str) -> list[Path]:
        """The split's parquet files, in the card's order (the order the Hub and `datasets` read them)."""
        if config not in self.splits:
            raise ReleaseError(f"{self.describe()}: no config {config!r}; it has {sorted(self.splits)}")
        if split not in self.splits[config]:
            raise ReleaseError(
                f"{self.describe()}: config {config!r} has no split {split!r}; it has {list(self.splits[config])}"
            )
        out: list[Path] = []
        for pattern in self.splits[config][split]:
            out.extend(sorted(self.folder.glob(pattern)))
        return out

    def dataset(self, config: str, split: str) -> ds.Dataset:
        key = (config, split)
        if key not in self._datasets:
            self._datasets[key] = ds.dataset([str(p) for p in self.files(config, split)], format="parquet")
        return self._datasets[key]

    def _offsets(self, config: str, split: str) -> tuple[list, np.ndarray]:
        """The split's parquet fragments and the position of each one's first row (read once)."""
        key = (config, split)
        if key not in self._fragments:
            frags = list(self.dataset(config, split).get_fragments())
            counts = [f.count_rows() for f in frags]  # from each file's footer
            self._fragments[key] = (frags, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))
        return self._fragments[key]

    def take(self, config: str, split: str, indices: list[int], columns: list[str]) -> pa.Table:
        """The rows at ``indices`` (in that order), reading only the files that hold them: a whole-split
        ``Dataset.take`` reads far more than a page of a card-scale release needs."""
        frags, starts = self._offsets(config, split)
        where = np.asarray(indices, dtype=np.int64)
        if where.size and not (where.min() >= 0 and where.max() < starts[-1]):
            raise ReleaseError(
                f"{self.describe()}: {config}/{split} has {starts[-1]} rows; no row {where.max()}"
            )
        part = np.searchsorted(starts, where, side="right") - 1
        pieces, order = [], []
        for k in np.unique(part):
            mine = np.flatnonzero(part == k)
            pieces.append(frags[k].take(pa.array(where[mine] - starts[k]), columns=columns))
            order.append(mine)
        if not pieces:
            return self.dataset(config, split).head(0, columns=columns)
        table = pa.concat_tables(pieces)
        return table.take(pa.array(np.argsort(np.concatenate(order), kind="stable")))

    def row(self, config: str, split: str, index: int) -> dict:
        """One row as Python values (only that row is materialised)."""
        data = self.dataset(config, split)
        n = data.count_rows()
        if not 0 <= index < n:
            raise ReleaseError(f"{self.describe()}: {config}/{split} has {n} rows; no row {index}")
        return data.take(pa.array([index])).to_pylist()[0]


def is_repo_id(text: str) -> bool:
    return bool(_REPO_ID.match(text)) and ".." not in text


@contextmanager
def open_release(path: str, revision: str | None = None) -> Iterator[Release]:
    """A local folder as it is, or a Hub dataset at ``revision`` in a temporary folder removed afterwards.

    A path that exists is local (a revision is then an error); anything else must be a repo id. The
    Hub endpoint and token come from the environment (``HF_ENDPOINT``, ``HF_TOKEN``) only.
    """
    local = Path(path)
    if local.exists():
        if revision is not None:
            raise ReleaseError(f"{path}: --revision applies to a Hub repo id, but this is a local path")
        if not local.is_dir():
            raise ReleaseError(f"{path}: not a folder (give a release folder or a Hub repo id)")
        yield Release(local)
        return
    if not is_repo_id(path):
        raise ReleaseError(f"{path}: no such folder")
    with tempfile.TemporaryDirectory(prefix="spl-hf-explain-") as tmp:
        yield Release(download(path, revision, Path(tmp) / "snapshot"), path, revision or "main")


def download(repo_id: str, revision: str | None, local_dir: Path) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_dir=local_dir))
    except (OSError, ValueError) as exc:  # network, auth, missing repo or revision
        raise ReleaseError(f"{repo_id}@{revision or 'main'}: cannot download the dataset ({exc})") from None
