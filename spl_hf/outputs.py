"""Output paths that never destroy a user's data.

Every command that writes checks its output path here before doing any work: a folder may be
written when it is new or empty, or replaced (with ``overwrite``) when spl_hf wrote it — a dataset
build recognised by its ``MANIFEST.sha256`` listing every file in it, or another output recognised
by the marker file spl_hf leaves in it. A file may be replaced only with ``overwrite``. Paths that
hold a user's work (``.``, a parent of the working folder, the home folder, a filesystem root, a
folder containing ``.git``, an input or a folder holding one) are refused outright.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from pathlib import Path

from spl_hf.errors import OutputError
from spl_hf.manifest import MANIFEST, read_manifest

MARKER = ".spl_hf-output.json"

__all__ = [
    "MARKER",
    "OutputError",
    "foreign_entries",
    "guard_dir",
    "guard_file",
    "mark_output",
    "owned_by_spl_hf",
    "refuse_dangerous",
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
    """Whether every entry in ``folder`` was written by spl_hf (manifest build or marked output)."""
    folder = Path(folder)
    if (folder / MARKER).is_file():
        return True
    foreign = foreign_entries(folder)
    return foreign is not None and not foreign


def foreign_entries(folder: str | Path) -> list[str] | None:
    """What in a manifest build spl_hf did not write (None when ``folder`` has no readable manifest).

    A build holds only regular files its manifest lists and the folders leading to them; a symlink
    (to anything), an empty folder or an unlisted file is a user's, and replacing the build would
    delete it. Walked without following links, so a link's target is never looked into.
    """
    folder = Path(folder)
    if (folder / MANIFEST).is_symlink():
        return None
    try:
        manifest = read_manifest(folder)
    except OSError:
        return None
    if manifest is None or manifest.problems:  # a manifest that breaks the rules vouches for nothing
        return None
    listed = manifest.entries.keys()
    foreign: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        base = Path(root)
        for name in sorted(dirs):
            path = base / name
            if path.is_symlink() or not any(path.iterdir()):
                foreign.append(path.relative_to(folder).as_posix() + ("" if path.is_symlink() else "/"))
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in sorted(files):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if rel == MANIFEST:
                continue
            if path.is_symlink() or not path.is_file() or rel not in listed:
                foreign.append(rel)
    return sorted(foreign)


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
        if not owned_by_spl_hf(out):
            # name the user's entries where a manifest tells them apart from the build's
            sample = (foreign_entries(out) or sorted(p.name for p in out.iterdir()))[:5]
            raise OutputError(
                f"{path}: holds files spl_hf did not write ({', '.join(sample)}); "
                "refusing to replace them — choose a new or empty folder"
            )
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
    if out.is_dir():
        raise OutputError(f"{path}: is a folder, expected a file path")
    if out.exists() and not overwrite:
        raise OutputError(f"{path}: already exists; pass --overwrite to replace it")
    _check_writable(out)
    return out


def mark_output(folder: str | Path, kind: str) -> None:
    """Leave the marker that lets a later run with ``overwrite`` recognise this folder as ours.

    It names the writing process, so a cleanup can tell a live run's folder from a killed one's.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"created_by": "spl_hf", "kind": kind, "host": socket.gethostname(), "pid": os.getpid()}
    (folder / MARKER).write_text(json.dumps(meta) + "\n", encoding="utf-8")


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
