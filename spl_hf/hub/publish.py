"""Publishing a built dataset folder to the Hub: audit first, then one commit.

The commit adds every file of the build and deletes the repo's files that the build no longer
has, so a reshaped or removed config leaves no stale parquet or card YAML behind. It is made on
top of the head the deletions were computed from (``parent_commit``): a concurrent push makes it
fail rather than mix two builds. Endpoint and token come from the environment (``HF_ENDPOINT``,
``HF_TOKEN``) through ``huggingface_hub``; nothing here prints or stores the token.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from spl_hf.hub.folder import MANIFEST, verify_manifest

REPO_TYPE = "dataset"
KEEP = (".gitattributes",)  # repo files a build never holds but the Hub manages
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class PublishResult:
    repo_id: str
    commit_sha: str
    revision: str
    files: list[str]
    deleted: list[str]
    configs: list[str]
    default_config: str | None
    default_split: str | None
    pr_url: str | None = None

    def load_line(self) -> str:
        """The ``load_dataset`` call that reads this exact commit."""
        args = [f'"{self.repo_id}"']
        if self.default_config:
            args.append(f'"{self.default_config}"')
        if self.default_split:
            args.append(f'split="{self.default_split}"')
        args.append(f'revision="{self.commit_sha}"')
        return f"load_dataset({', '.join(args)})"

    def to_json(self) -> dict:
        return {
            "repo_id": self.repo_id,
            "commit_sha": self.commit_sha,
            "files": self.files,
            "configs": self.configs,
        }


def _audit_clean(folder: Path) -> tuple[bool, str]:
    """Whether a build folder audits clean, and why not. The one place publishing asks the audit."""
    bad = verify_manifest(folder)
    if bad:
        return False, f"files differ from {MANIFEST}: {bad[:5]}"
    try:
        from spl_hf.audit.tenets import audit_tenet_build, is_tenet_build

        if is_tenet_build(folder):
            t = audit_tenet_build(str(folder))
            if not t.ok:
                failures = "; ".join(t.certificate_failures[:3]) or "verified"
                return False, f"{t.mismatch_count} rows do not reproduce; assignment certificate: {failures}"
            return True, ""
        from spl_hf.audit.spl import audit_spl_path

        result = audit_spl_path(folder)
    except (ValueError, KeyError, FileNotFoundError) as exc:
        return False, f"the audit cannot read it: {exc}"
    return result.ok, result.describe_failure()


def build_files(folder: Path) -> list[str]:
    """Relative paths of the build's files; hidden files and folders (.git, caches) are not part of it."""
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.is_symlink():
            raise ValueError(f"{p}: a symlink in a build folder; publish only regular files")
        if p.is_file():
            out.append(rel.as_posix())
    return out


def card_configs(folder: Path) -> tuple[list[str], str | None, str | None]:
    """Config names in the card, the default config and the split a DPO user loads from it."""
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    meta = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else None
    entries = (meta or {}).get("configs") or []
    names = [e["config_name"] for e in entries]
    default = next((e for e in entries if e.get("default")), entries[0] if entries else None)
    if default is None:
        return names, None, None
    splits = [d["split"] for d in default.get("data_files") or [] if isinstance(d, dict)]
    split = "train" if "train" in splits else (splits[0] if splits else None)
    return names, default["config_name"], split


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    revision: str | None = None,
    private: bool = False,
    create_pr: bool = False,
    message: str | None = None,
) -> PublishResult:
    """Audit ``folder`` and push it to ``repo_id`` as one commit; raises ValueError when it is not clean."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import RevisionNotFoundError

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such build folder")
    if not (folder / MANIFEST).is_file():
        raise ValueError(f"{folder}: no {MANIFEST}; publish takes a folder written by an spl-hf build")
    if not _REPO_ID.match(repo_id):
        raise ValueError(f"--repo_id {repo_id!r}: expected ORG/NAME")
    ok, reason = _audit_clean(folder)
    if not ok:
        raise ValueError(f"{folder} does not audit clean, nothing published: {reason}")

    # Read at call time, so a caller that sets the environment after import is honoured.
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=os.environ.get("HF_TOKEN") or None)
    branch = revision or "main"
    api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
    try:
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    except RevisionNotFoundError:
        if create_pr:
            raise ValueError(
                f"branch {branch!r} does not exist in {repo_id}: a pull request needs a base"
            ) from None
        api.create_branch(repo_id, branch=branch, repo_type=REPO_TYPE, exist_ok=True)
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    existing = api.list_repo_files(repo_id, repo_type=REPO_TYPE, revision=head)
    files = build_files(folder)
    stale = sorted(set(existing) - set(files) - set(KEEP))
    operations: list = [CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(folder / f)) for f in files]
    operations += [CommitOperationDelete(path_in_repo=f) for f in stale]
    from spl_hf import __version__

    info = api.create_commit(
        repo_id,
        operations,
        commit_message=message or f"Publish {folder.name} (spl_hf {__version__})",
        repo_type=REPO_TYPE,
        revision=branch,
        create_pr=create_pr,
        parent_commit=head,
    )
    configs, default, split = card_configs(folder)
    return PublishResult(repo_id, info.oid, branch, files, stale, configs, default, split, info.pr_url)
