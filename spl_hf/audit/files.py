"""The files of a build on disk: the SHA-256 manifest, and which data files the card accounts for."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from spl_hf.filehash import sha256_file

MANIFEST = "MANIFEST.sha256"
DATA_SUFFIXES = (".parquet", ".arrow")


@dataclass
class ManifestCheck:
    present: bool
    mismatched: list[str] = field(default_factory=list)  # listed, but missing or with other bytes
    unlisted: list[str] = field(default_factory=list)  # on disk, not in the manifest
    problems: list[str] = field(default_factory=list)  # unreadable lines, unsafe paths

    @property
    def ok(self) -> bool:
        return self.present and not (self.mismatched or self.unlisted or self.problems)

    def failures(self) -> list[str]:
        if not self.present:
            return [
                f"{MANIFEST} is missing: the files cannot be shown to be the ones the build wrote "
                "(give --no_manifest to audit the rows without it)"
            ]
        out = [f"{rel}: missing or differs from {MANIFEST}" for rel in self.mismatched]
        out += [f"{rel}: not listed in {MANIFEST}" for rel in self.unlisted]
        return out + self.problems


def safe_relative(rel: str) -> bool:
    """A path that stays inside the folder (no absolute path, no '..', no URL)."""
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and ".." not in p.parts and "://" not in rel and "\\" not in rel


def folder_files(folder: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    """Every regular file under ``folder`` as a relative POSIX path, sorted; ``ignore`` names top-level entries."""
    out = []
    for p in folder.rglob("*"):
        rel = p.relative_to(folder).as_posix()
        if rel.split("/", 1)[0] in ignore:
            continue
        if p.is_file() or p.is_symlink():
            out.append(rel)
    return sorted(out)


def is_data_file(rel: str) -> bool:
    """A file the card must account for: a parquet/arrow file anywhere, or any file in a subfolder."""
    return rel.endswith(DATA_SUFFIXES) or "/" in rel


def check_manifest(folder: Path, ignore: tuple[str, ...] = ()) -> ManifestCheck:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return ManifestCheck(present=False)
    check = ManifestCheck(present=True)
    listed: set[str] = set()
    try:
        lines = manifest.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        check.problems.append(f"{MANIFEST}: not UTF-8 text")
        return check
    for n, line in enumerate(lines, 1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64 or not safe_relative(rel):
            check.problems.append(f"{MANIFEST}:{n}: not a '<sha256>  <relative path>' line: {line[:120]!r}")
            continue
        if rel in listed:
            check.problems.append(f"{MANIFEST}:{n}: {rel} is listed twice")
            continue
        listed.add(rel)
        path = folder / rel
        if not path.is_file() or path.is_symlink() or sha256_file(path) != digest:
            check.mismatched.append(rel)
    check.unlisted = [rel for rel in folder_files(folder, ignore) if rel != MANIFEST and rel not in listed]
    return check
