"""Where an audit reads from: an existing local folder, or a Hub dataset at a pinned revision.

A Hub repo is downloaded whole (``snapshot_download`` into a fresh temporary folder, never a shared
cache) and then audited exactly like a local folder, manifest and certificate included. Endpoint
and token come from the environment (``HF_ENDPOINT``, ``HF_TOKEN``) only.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spl_hf.errors import SplHfError

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
# Entries a Hub snapshot holds that the build did not write: the repo's own .gitattributes and
# huggingface_hub's download metadata under local_dir.
HUB_ONLY = (".gitattributes", ".cache")


@dataclass(frozen=True)
class AuditTarget:
    folder: Path
    repo_id: str | None = None
    revision: str | None = None
    ignore: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.repo_id else str(self.folder)


def is_repo_id(text: str) -> bool:
    return bool(_REPO_ID.match(text)) and ".." not in text


def download_snapshot(repo_id: str, revision: str, local_dir: Path) -> Path:
    """The dataset repo's files at ``revision`` under ``local_dir`` (one place tests replace)."""
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_dir=local_dir))


@contextmanager
def audit_target(path: str, revision: str | None = None) -> Iterator[AuditTarget]:
    """The folder to audit; a Hub snapshot lives in a temporary folder removed afterwards.

    A path that exists is local (``--revision`` is then an error). Anything else must be a repo id
    given with ``--revision``: a mistyped local path is never sent to the Hub.
    """
    local = Path(path)
    if local.exists():
        if revision is not None:
            raise SplHfError(f"{path}: --revision applies to a Hub repo id, but this is a local path")
        if not local.is_dir():
            raise SplHfError(f"{path}: not a folder (audit takes a dataset folder or a Hub repo id)")
        yield AuditTarget(local)
        return
    if not is_repo_id(path):
        raise FileNotFoundError(f"{path}: no such folder")
    if revision is None:
        raise FileNotFoundError(
            f"{path}: no such folder; to audit the Hub dataset {path!r} give --revision (a commit or tag): "
            "an audit reads one pinned revision"
        )
    with tempfile.TemporaryDirectory(prefix="spl-hf-audit-") as tmp:
        try:
            folder = download_snapshot(path, revision, Path(tmp) / "snapshot")
        except (OSError, ValueError) as exc:  # network, auth, missing repo or revision
            raise FileNotFoundError(
                f"{path}@{revision}: cannot download the dataset ({type(exc).__name__}: {exc})"
            ) from None
        yield AuditTarget(folder, path, revision, HUB_ONLY)
