"""Publishing a built dataset folder to the Hub: audit first, then one commit.

The commit adds every file of the build and deletes the repo's files that the build no longer
has, so a reshaped or removed config leaves no stale parquet or card YAML behind. It is made on
top of the head the deletions were computed from (``parent_commit``): a concurrent push makes it
fail rather than mix two builds. Endpoint and token come from the environment (``HF_ENDPOINT``,
``HF_TOKEN``) through ``huggingface_hub``; nothing here prints or stores the token.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spl_hf.dataset import CARD_INPUTS, PROVENANCE, card_configs, card_text, provenance_section
from spl_hf.errors import USER_ERRORS, SplHfError
from spl_hf.filehash import sha256_file
from spl_hf.files import json_text
from spl_hf.manifest import MANIFEST, format_manifest, read_manifest

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
    changed: bool = True  # False: the branch already held exactly these files, no commit was made
    private: bool | None = None
    visibility_changed: bool = False
    provenance: dict = field(default_factory=dict)

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
            "changed": self.changed,
            "private": self.private,
            "provenance": self.provenance,
        }


def _audit_clean(folder: Path, sources: list[str] | None = None) -> tuple[bool, str, dict | None]:
    """Whether a build folder audits clean (manifest included), and why not, and with ``sources`` the
    provenance report (every row against the source files it came from)."""
    from spl_hf.audit import audit

    try:
        report = audit(folder, sources=sources or None)
    except USER_ERRORS as exc:  # bad input only: a bug in the audit keeps its traceback
        return False, f"the audit cannot read it: {exc}", None
    prov = {**report.provenance, "ok": report.provenance_ok} if report.provenance is not None else None
    if not report.ok:
        return False, report.describe_failure(), prov if report.checks_ok else None
    return True, "", prov


def useless_build(folder: Path, allow_empty: bool = False) -> str:
    """Why a build must not be published though it audits clean ("" when it may be): it holds no
    preference rows (unless ``allow_empty``), or the quality gates its release recorded in
    build_report.json failed."""
    path = folder / "build_report.json"
    if not path.is_file():
        return ""
    report = json.loads(path.read_text(encoding="utf-8"))
    rows = report.get("assigned") if report.get("kind") == "tenets" else report.get("labeled")
    if rows == 0 and not allow_empty:
        return "it holds no preference rows (build_report.json: 0 released; --allow_empty publishes it)"
    gates = report.get("quality_gates") or {}
    failed = [g for g in gates.get("gates", []) if not g.get("passed")]
    if failed or gates.get("passed") is False:
        named = ", ".join(f"{g['setting']} ({g['value']} < {g['minimum']})" for g in failed)
        return f"its release's quality gates failed: {named or 'recorded as failed'}"
    return ""


def provenance_record(sources: list[str] | None, report: dict | None) -> dict:
    """What ``provenance.json`` of a release says: whether its rows were checked against their
    sources, and which: local files by name and sha256 (never their local path), Hub datasets by id
    and pinned revision."""
    from spl_hf.audit import parse_specs

    record: dict = {"checked": bool(sources), "sources": []}
    for key, value in parse_specs(list(sources or [])):
        path = Path(value)
        entry: dict = {"key": key}
        if path.is_file():
            entry.update(file=path.name, sha256=sha256_file(path), bytes=path.stat().st_size)
        else:
            entry["hub_dataset"] = value
        record["sources"].append(entry)
    if report is not None:
        record.update(rows_checked=report["rows_checked"], rows_differing=report["differing"])
    return record


def release_files(
    folder: Path, files: list[str], record: dict, repo_id: str | None = None, revision: str | None = None
) -> dict[str, bytes | str]:
    """What the commit holds: the build's files, with README.md carrying the provenance section,
    ``provenance.json`` added, and MANIFEST.sha256 vouching for both (the local folder is untouched).

    With ``repo_id``, the card is rendered again from ``card.json`` so that its loading snippets name
    the repo (and ``revision`` unless it is main) that it is pushed to."""
    out: dict[str, bytes | str] = {f: str(folder / f) for f in files}
    card = (folder / "README.md").read_bytes()
    changed: dict[str, bytes] = {}
    if repo_id and (folder / CARD_INPUTS).is_file():
        pinned = None if revision in (None, "main") else revision
        card = card_text(folder, repo_id, pinned).encode()
        # card.json records what the pushed README was rendered from, so the audit of the published
        # repo renders the same card again.
        inputs = json.loads((folder / CARD_INPUTS).read_text(encoding="utf-8"))
        inputs["kwargs"].update(repo_id=repo_id, revision=pinned)
        changed[CARD_INPUTS] = json_text(inputs, indent=1, ascii_only=True).encode()
    changed["README.md"] = card + provenance_section(record).encode()
    changed[PROVENANCE] = json_text(record, sort_keys=True, ascii_only=True).encode()
    out.update(changed)
    listed = read_manifest(folder)
    if listed is None or listed.problems:  # the audit passed, so only a concurrent edit gets here
        raise SplHfError(f"{folder / MANIFEST}: changed since the audit; publish again")
    digests = {**listed.entries, **{name: hashlib.sha256(data).hexdigest() for name, data in changed.items()}}
    out[MANIFEST] = format_manifest(digests).encode()
    return out


def build_files(folder: Path) -> list[str]:
    """Relative paths of the build's files; hidden files and folders (.git, caches) are not part of it."""
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.is_symlink():
            raise SplHfError(f"{p}: a symlink in a build folder; publish only regular files")
        if p.is_file():
            out.append(rel.as_posix())
    return out


def rehearsal_scores(folder: Path) -> bool:
    """Whether a build's judge scores come from the rehearsal engine (synthetic, not a judge)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from spl_hf.contract import REHEARSAL_MODEL_ID

    for path in sorted((folder / "judge_scores").glob("*.parquet")):
        if "model_id" in pq.read_schema(path).names:
            ids = pc.unique(pq.read_table(path, columns=["model_id"]).column("model_id")).to_pylist()
            if REHEARSAL_MODEL_ID in ids:
                return True
    return False


def loopback(endpoint: str | None) -> bool:
    """Whether a Hub endpoint is this machine (the local Hub server of tests and rehearsals)."""
    from urllib.parse import urlsplit

    host = urlsplit(endpoint or "https://huggingface.co").hostname or ""
    return host in ("127.0.0.1", "localhost", "::1")


def _publishable(folder: Path, repo_id: str, sources: list[str] | None, allow_empty: bool) -> dict | None:
    """The checks made before any Hub request (a build folder, a repo id, a clean audit, not an empty or
    gate-failed release); returns the audit's report for the provenance record."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such build folder")
    if not (folder / MANIFEST).is_file():
        raise SplHfError(f"{folder}: no {MANIFEST}; publish takes a folder written by an spl-hf build")
    if not _REPO_ID.match(repo_id):
        raise SplHfError(f"--repo_id {repo_id!r}: expected ORG/NAME")
    if rehearsal_scores(folder) and not loopback(os.environ.get("HF_ENDPOINT")):
        raise SplHfError(
            f"{folder}: its judge scores come from the rehearsal engine (synthetic, not a judge); it "
            "is published only to a local Hub on 127.0.0.1, nothing published"
        )
    ok, reason, report = _audit_clean(folder, sources)
    if not ok:
        raise SplHfError(f"{folder} does not audit clean, nothing published: {reason}")
    if useless := useless_build(folder, allow_empty):
        raise SplHfError(f"{folder}: {useless}; nothing published")
    return report


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    revision: str | None = None,
    private: bool = False,
    create_pr: bool = False,
    message: str | None = None,
    sources: list[str] | None = None,
    allow_empty: bool = False,
) -> PublishResult:
    """Audit ``folder`` (and with ``sources`` its rows' provenance) and push it to ``repo_id`` as one
    commit; raises ValueError when it is not clean or when the repo cannot be made private as asked."""
    from huggingface_hub import HfApi

    folder = Path(folder)
    record = provenance_record(sources, _publishable(folder, repo_id, sources, allow_empty))

    # Read at call time, so a caller that sets the environment after import is honoured.
    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=os.environ.get("HF_TOKEN") or None)
    branch = revision or "main"
    created = not api.repo_exists(repo_id, repo_type=REPO_TYPE)
    api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
    try:
        return _push(api, folder, repo_id, branch, record, private, create_pr, message, revision)
    except BaseException:
        if created:  # a failed first push leaves no empty repo behind (the repo is ours, nothing in it)
            _delete_quietly(api, repo_id)
        raise


def _delete_quietly(api: Any, repo_id: str) -> None:
    """Remove the repo this push created; the push's own error is what the user needs, so a failing
    removal (the endpoint gone) only adds a line."""
    import sys

    import httpx2

    try:
        api.delete_repo(repo_id, repo_type=REPO_TYPE, missing_ok=True)
    except (OSError, httpx2.HTTPError) as exc:
        print(f"could not remove the empty repo {repo_id} this push created: {exc}", file=sys.stderr)


def _push(
    api: Any,
    folder: Path,
    repo_id: str,
    branch: str,
    record: dict,
    private: bool,
    create_pr: bool,
    message: str | None,
    revision: str | None,
) -> PublishResult:
    """The commit of ``publish``, into a repo that exists."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete
    from huggingface_hub.errors import RevisionNotFoundError

    is_private, changed_visibility = _ensure_visibility(api, repo_id, private)
    try:
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    except RevisionNotFoundError:
        if create_pr:
            raise SplHfError(
                f"branch {branch!r} does not exist in {repo_id}: a pull request needs a base"
            ) from None
        api.create_branch(repo_id, branch=branch, repo_type=REPO_TYPE, exist_ok=True)
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    existing = api.list_repo_files(repo_id, repo_type=REPO_TYPE, revision=head)
    files = build_files(folder)
    content = release_files(folder, files, record, repo_id, revision)
    stale = sorted(set(existing) - set(content) - set(KEEP))
    operations: list = [
        CommitOperationAdd(path_in_repo=f, path_or_fileobj=c) for f, c in sorted(content.items())
    ]
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
    # The client skips a commit that changes nothing and answers with the branch head.
    changed = bool(info.pr_url) or info.oid != head
    configs, default, split = card_configs(folder)
    return PublishResult(
        repo_id,
        info.oid,
        branch,
        sorted(content),
        stale,
        configs,
        default,
        split,
        info.pr_url,
        changed=changed,
        private=is_private,
        visibility_changed=changed_visibility,
        provenance=record,
    )


def _ensure_visibility(api, repo_id: str, private: bool) -> tuple[bool, bool]:
    """Make an existing public repo private when asked (its settings, through the API); refuse when
    that cannot be done. Returns (private now, changed). A private repo is never made public unasked."""
    from huggingface_hub.errors import HfHubHTTPError

    now = bool(api.repo_info(repo_id, repo_type=REPO_TYPE).private)
    if not private or now:
        return now, False
    try:
        api.update_repo_settings(repo_id, private=True, repo_type=REPO_TYPE)
    except HfHubHTTPError as exc:
        raise SplHfError(
            f"--private: {repo_id} exists and is public, and its visibility could not be changed "
            f"({str(exc).splitlines()[0]}); nothing published"
        ) from None
    if not api.repo_info(repo_id, repo_type=REPO_TYPE).private:
        raise SplHfError(f"--private: {repo_id} is still public after the settings update; nothing published")
    return True, True
