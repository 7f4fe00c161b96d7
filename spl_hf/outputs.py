"""Output paths that never destroy a user's data.

Every command that writes checks its output path here before doing any work: a folder may be
written when it is new or empty, or replaced (with ``overwrite``) when spl_hf can prove it wrote
every entry in it: a dataset build by its ``MANIFEST.sha256``, any other output by the marker
(:data:`MARKER`) in which :func:`seal_output` recorded the path and SHA-256 of each file the command
wrote. An entry no record vouches for (an unlisted or changed file, a symlink, a folder spl_hf did
not make) makes the command refuse and name it, deleting nothing; a marker alone proves nothing.
A file may be replaced only with ``overwrite``. Paths that hold a user's work (``.``, a parent of
the working folder, the home folder, a filesystem root, a folder containing ``.git``, an input or
a folder holding one) are refused outright. Every record is written through :mod:`spl_hf.files`,
which never follows a symlink.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from spl_hf.errors import OutputError
from spl_hf.filehash import sha256_file
from spl_hf.files import refuse_symlink, write_json
from spl_hf.manifest import MANIFEST, read_manifest

MARKER = ".spl_hf-output.json"

__all__ = [
    "MARKER",
    "OutputError",
    "foreign_entries",
    "guard_dir",
    "guard_file",
    "mark_output",
    "marker_kind",
    "owned_by_spl_hf",
    "refuse_dangerous",
    "seal_output",
    "unproven_entries",
    "written_by_live_process",
]


def _resolved(path: str | Path) -> Path:
    # realpath: a symlink to an input is the input.
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _is_within(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def refuse_dangerous(path: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """Raise ``OutputError`` when ``path`` is a place no output may replace; returns it resolved."""
    out = _resolved(path)
    cwd = _resolved(os.getcwd())
    home = _resolved(Path.home())
    if out == Path(out.anchor):
        raise OutputError(f"{path}: refusing to write into a filesystem root")
    if _is_within(cwd, out):
        raise OutputError(f"{path}: refusing to write into the working folder or one of its parents")
    if out == home:
        raise OutputError(f"{path}: refusing to write into the home folder")
    if (out / ".git").exists():
        raise OutputError(f"{path}: refusing to write into a folder that holds a .git repository")
    for given in inputs:
        if given is None or str(given) == "":
            continue
        inp = _resolved(given)
        if inp == out:
            raise OutputError(f"{path}: the output is also an input ({given})")
        if _is_within(inp, out):
            raise OutputError(f"{path}: the output folder holds an input ({given}); choose another folder")
    return out


def owned_by_spl_hf(folder: str | Path) -> bool:
    """Whether a record spl_hf wrote vouches for every entry in ``folder`` (see :func:`unproven_entries`)."""
    return unproven_entries(folder) == []


def foreign_entries(folder: str | Path) -> list[str] | None:
    """The entries of ``folder`` its record does not vouch for, each with the reason; None without a record."""
    found = _unproven(Path(folder))
    return None if found is None else [f"{rel} ({why})" for rel, why in found]


def unproven_entries(folder: str | Path) -> list[str] | None:
    """Relative paths in ``folder`` that spl_hf cannot prove it wrote; None when no record is there.

    A record is the marker :func:`seal_output` wrote (relative path and SHA-256 of every file the
    command wrote) or a build's ``MANIFEST.sha256``. A file the record does not list, a changed
    file, a symlink (to anything) or a folder the record does not name is someone else's, and
    replacing the folder would delete it. A subfolder with its own record (a build or a train run
    inside the demo folder) is proven by that record. Walked without following links.
    """
    found = _unproven(Path(folder))
    return None if found is None else [rel for rel, _ in found]


def _marker(folder: Path) -> dict | None:
    path = folder / MARKER
    if path.is_symlink() or not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("created_by") == "spl_hf" else None


def marker_kind(folder: str | Path) -> str | None:
    """The ``kind`` in the marker of ``folder`` (None without one); says nothing about ownership."""
    meta = _marker(Path(folder))
    return meta.get("kind") if meta is not None else None


def _record(folder: Path) -> _Record | None:
    """What the folder's own record vouches for; an old or hand-made marker vouches for nothing."""
    meta = _marker(folder)
    if meta is not None:
        files, dirs = meta.get("files"), meta.get("folders")
        if not isinstance(files, dict) or not isinstance(dirs, list):
            return _Record({}, frozenset(), frozenset({MARKER}))
        return _Record(
            {str(k): str(v) for k, v in files.items()}, frozenset(map(str, dirs)), frozenset({MARKER})
        )
    if (folder / MANIFEST).is_symlink():
        return None
    try:
        manifest = read_manifest(folder)
    except OSError:
        return None
    if manifest is None or manifest.problems:  # a manifest that breaks the rules vouches for nothing
        return None
    return _Record(dict(manifest.entries), frozenset(), frozenset({MANIFEST}))


@dataclass(frozen=True)
class _Record:
    files: dict[str, str]  # relative path -> sha256
    folders: frozenset[str]  # folders the command made (an empty one is otherwise a user's)
    own: frozenset[str]  # the record's own file(s) at the top


def _has_record(folder: Path) -> bool:
    return any((folder / n).is_file() and not (folder / n).is_symlink() for n in (MARKER, MANIFEST))


def _unproven(top: Path) -> list[tuple[str, str]] | None:
    if top.is_symlink() or not top.is_dir():
        return None
    record = _record(top)
    if record is None:
        return None
    found: list[tuple[str, str]] = []
    _scan(top, top, record, found)
    return found


def _scan(top: Path, here: Path, record: _Record, found: list[tuple[str, str]]) -> None:
    for entry in sorted(here.iterdir()):
        rel = entry.relative_to(top).as_posix()
        if here == top and entry.name in record.own and not entry.is_symlink():
            continue
        if entry.is_symlink():
            found.append((rel, "a symlink"))
        elif entry.is_dir():
            nested = _unproven(entry) if _has_record(entry) else None
            if nested is not None:
                found.extend((f"{rel}/{r}", why) for r, why in nested)
                continue
            if rel not in record.folders and not any(entry.iterdir()):
                found.append((rel + "/", "a folder spl_hf did not make"))
            _scan(top, entry, record, found)
        elif rel not in record.files or not entry.is_file():
            found.append((rel, "not written by spl_hf"))
        elif sha256_file(entry) != record.files[rel]:
            found.append((rel, "changed since spl_hf wrote it"))


def _refuse_unproven(path: str | Path, out: Path) -> None:
    found = _unproven(out)
    if found is None:
        sample = ", ".join(sorted(p.name for p in out.iterdir())[:5])
        raise OutputError(
            f"{path}: holds files spl_hf did not write ({sample}); "
            "refusing to replace them: choose a new or empty folder"
        )
    if found:
        sample = ", ".join(f"{rel} ({why})" for rel, why in found[:5])
        more = f" and {len(found) - 5} more" if len(found) > 5 else ""
        raise OutputError(
            f"{path}: holds files spl_hf did not write, by its record: {sample}{more}; "
            "refusing to replace them: move them out, or choose a new or empty folder"
        )


def guard_dir(path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
    """Check a folder output before any work is done; returns the resolved path.

    New or empty folders pass. A folder spl_hf wrote passes only with ``overwrite``. Anything
    else — a file, a folder with other files, a dangerous place — raises ``OutputError``.
    """
    if str(path) == "":
        raise OutputError("the output folder path is empty")
    out = refuse_dangerous(path, inputs)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{path}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        _refuse_unproven(path, out)
        if not overwrite:
            raise OutputError(f"{path}: holds an earlier spl_hf output; pass --overwrite to replace it")
    _check_writable(out)
    return out


def guard_file(path: str | Path, *, overwrite: bool = False, inputs: Iterable[str | Path] = ()) -> Path:
    """Check a file output before any work is done; returns the resolved path."""
    if str(path) == "":
        raise OutputError("the output path is empty")
    out = _resolved(path)
    for given in inputs:
        if given is not None and str(given) != "" and _resolved(given) == out:
            raise OutputError(f"{path}: the output is also an input ({given}); choose another file")
    refuse_symlink(Path(os.path.expanduser(str(path))))  # replacing it would write into the link's target
    if out.is_dir():
        raise OutputError(f"{path}: is a folder, expected a file path")
    if out.exists() and not overwrite:
        raise OutputError(f"{path}: already exists; pass --overwrite to replace it")
    _check_writable(out)
    return out


def mark_output(folder: str | Path, kind: str, *, replace: bool = False) -> None:
    """Claim ``folder`` for this run before it writes there; :func:`seal_output` records what it wrote.

    With ``replace``, what an earlier spl_hf output left there is removed first, and only when its
    record vouches for every entry (else ``OutputError`` names them and nothing is removed).
    Without it (a run resuming in its own folder), the earlier record's files stay listed, and the
    entries it does not vouch for are noted as someone else's, so :func:`seal_output` never claims
    them. The marker names the writing process, so a cleanup can tell a live run's folder from a
    killed one's.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    refuse_symlink(folder / MARKER)
    if replace and any(folder.iterdir()):
        _refuse_unproven(folder, folder)
        for entry in list(folder.iterdir()):
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    record = _record(folder)
    found = _unproven(folder) or []
    foreign = {rel: _digest_or_none(folder / rel) for rel, _ in found}
    meta = {
        "created_by": "spl_hf",
        "kind": kind,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "files": {r: d for r, d in (record.files if record else {}).items() if r not in foreign},
        "folders": sorted(record.folders) if record else [],
        "not_ours": foreign,
    }
    write_json(folder / MARKER, meta, sort_keys=True)


def seal_output(folder: str | Path) -> None:
    """Record in the marker every file now in ``folder`` (path and SHA-256), so ``--overwrite`` may replace them.

    Entries noted as someone else's when the run began are left out while unchanged; a subfolder
    with its own record (a build, a train run) is named but proven by that record; symlinks are
    never recorded.
    """
    folder = Path(folder)
    meta = _marker(folder)
    if meta is None:
        raise OutputError(f"{folder}: has no spl_hf marker to seal")
    foreign = meta.get("not_ours") if isinstance(meta.get("not_ours"), dict) else {}
    files: dict[str, str] = {}
    dirs: list[str] = []
    for root, subdirs, names in os.walk(folder, followlinks=False):
        base = Path(root)
        for name in sorted(subdirs):
            rel = (base / name).relative_to(folder).as_posix()
            if not (base / name).is_symlink() and rel not in foreign:
                dirs.append(rel)
        subdirs[:] = [d for d in subdirs if not (base / d).is_symlink() and not _has_record(base / d)]
        for name in sorted(names):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if rel == MARKER or path.is_symlink() or not path.is_file():
                continue
            digest = sha256_file(path)
            if foreign.get(rel) != digest:
                files[rel] = digest
    write_json(
        folder / MARKER, {**meta, "files": files, "folders": sorted(dirs), "sealed": True}, sort_keys=True
    )


def _digest_or_none(path: Path) -> str | None:
    return sha256_file(path) if path.is_file() and not path.is_symlink() else None


def written_by_live_process(folder: str | Path) -> bool:
    """Whether the marker in ``folder`` names a process that is still running (or one on another host)."""
    try:
        meta = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    pid, host = meta.get("pid"), meta.get("host")
    if not isinstance(pid, int) or host is None:
        return False
    if host != socket.gethostname():
        return True  # cannot tell: leave it alone
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _check_writable(out: Path) -> None:
    # Outputs are written beside their destination and renamed into place: the parent must be
    # (or become) a writable folder.
    probe = out.parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"{out}: cannot be created under {probe}, which is a file")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(f"{out}: folder {probe} is not writable")
