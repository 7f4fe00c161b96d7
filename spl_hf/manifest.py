"""``MANIFEST.sha256``: the one reader and writer of a build's file manifest.

A build lists every file it wrote, one ``<sha256>  <path>`` line each (the ``sha256sum`` format):
a 64-character lowercase hex digest, two spaces, and a POSIX path relative to the build folder that
stays inside it (no absolute path, no ``..``, no backslash, no URL), each path once, the whole file
UTF-8. Everything that trusts a manifest — the output guard (is this folder ours to replace?), the
card regenerator, the folder writer's crash recovery, publishing and the audit — reads it here, under
these rules, so a line one of them accepts is never one another rejects.

Lines are written in the order of the paths' parts (what ``sorted(folder.rglob("*"))`` gives), the
order builds have always used, so a manifest's bytes depend only on the files.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from spl_hf.errors import SplHfError
from spl_hf.filehash import sha256_file
from spl_hf.files import write_text

MANIFEST = "MANIFEST.sha256"
_DIGEST = re.compile(r"[0-9a-f]{64}")

__all__ = [
    "MANIFEST",
    "Manifest",
    "ManifestCheck",
    "check_manifest",
    "folder_files",
    "format_manifest",
    "parse_manifest",
    "read_manifest",
    "safe_relative",
    "update_manifest",
    "verify_manifest",
    "write_manifest",
]


@dataclass
class Manifest:
    """The listed files (path -> digest, in file order) and the lines that broke the rules."""

    entries: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def safe_relative(rel: str) -> bool:
    """A path that stays inside the folder (no absolute path, no '..', no URL).

    >>> [safe_relative(p) for p in ("data/train.parquet", "/etc/passwd", "a/../b", "", "a\\\\b")]
    [True, False, False, False, False]
    """
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and ".." not in p.parts and "://" not in rel and "\\" not in rel


def parse_manifest(text: str) -> Manifest:
    """Parse manifest text; every line that breaks the rules is a problem naming its line number.

    >>> m = parse_manifest("a" * 64 + "  README.md\\n" + "b" * 64 + "  ../x\\n")
    >>> list(m.entries), m.problems[0][:37]
    (['README.md'], 'MANIFEST.sha256:2: malformed manifest')
    """
    out = Manifest()
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, rel = line.partition("  ")
        if not sep or not _DIGEST.fullmatch(digest) or not safe_relative(rel):
            out.problems.append(
                f"{MANIFEST}:{n}: malformed manifest line (want '<sha256>  <relative path>'): {line[:120]!r}"
            )
        elif rel in out.entries:
            out.problems.append(f"{MANIFEST}:{n}: {rel} is listed twice")
        else:
            out.entries[rel] = digest
    return out


def read_manifest(folder: str | Path) -> Manifest | None:
    """The folder's manifest, or None when it has none; text that is not UTF-8 is a problem."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return Manifest(problems=[f"{MANIFEST}: not UTF-8 text"])
    return parse_manifest(text)


def format_manifest(digests: Mapping[str, str]) -> str:
    """Manifest text for ``digests`` (path -> sha256), in the order of the paths' parts.

    >>> print(format_manifest({"b.txt": "1" * 64, "a/x.parquet": "2" * 64}), end="")  # doctest: +ELLIPSIS
    2222...2222  a/x.parquet
    1111...1111  b.txt
    """
    for rel, digest in digests.items():
        if not _DIGEST.fullmatch(digest) or not safe_relative(rel):
            raise SplHfError(f"{MANIFEST}: cannot list {rel!r} with digest {digest!r}")
    order = sorted(digests, key=lambda rel: PurePosixPath(rel).parts)
    return "".join(f"{digests[rel]}  {rel}\n" for rel in order)


def write_manifest(folder: str | Path, digests: Mapping[str, str]) -> None:
    write_text(Path(folder) / MANIFEST, format_manifest(digests))  # atomic; never through a symlink


def update_manifest(folder: str | Path, digests: Mapping[str, str]) -> None:
    """Replace the digests of files already listed (a regenerated card); no manifest, no change.

    A manifest that breaks the rules is not rewritten: a ValueError names its first problem.
    """
    manifest = read_manifest(folder)
    if manifest is None:
        return
    if manifest.problems:
        raise SplHfError(f"{Path(folder)}/{manifest.problems[0]}")
    write_manifest(folder, {rel: digests.get(rel, digest) for rel, digest in manifest.entries.items()})


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


def check_manifest(folder: Path, ignore: tuple[str, ...] = ()) -> ManifestCheck:
    """Every listed file present with its bytes (no symlink), and every file on disk listed."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        return ManifestCheck(present=False)
    check = ManifestCheck(present=True, problems=list(manifest.problems))
    for rel, digest in manifest.entries.items():
        path = folder / rel
        if not path.is_file() or path.is_symlink() or sha256_file(path) != digest:
            check.mismatched.append(rel)
    check.unlisted = [
        rel for rel in folder_files(folder, ignore) if rel != MANIFEST and rel not in manifest.entries
    ]
    return check


def verify_manifest(folder: str | Path) -> list[str]:
    """Files that differ from the manifest, are missing, or are not listed; empty when intact.

    A folder without a manifest reports the manifest itself as missing: nothing in it can be
    vouched for. A manifest that breaks the rules raises ``ValueError`` naming its first problem.
    """
    check = check_manifest(Path(folder))
    if not check.present:
        return [MANIFEST]
    if check.problems:
        raise SplHfError(f"{Path(folder)}/{check.problems[0]}")
    return check.mismatched + check.unlisted
