"""Reading a built dataset folder for audit: exactly the bytes on disk, as the card declares them.

No ``datasets`` cache is involved: the card's ``configs`` are resolved to files by globbing relative
to the folder, and each parquet file is read with pyarrow. Completeness is part of reading: every
declared config and split must have files, no file may be declared twice in one split (``datasets``
would read its rows twice), every data file on disk must be declared, row counts must equal those
the card's ``dataset_info`` or else the build report records, and (unless waived) the SHA-256
manifest must list every file with its bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from spl_hf.audit.decontam import check_decontamination
from spl_hf.audit.files import is_data_file
from spl_hf.contract import CERTIFICATE_FILE
from spl_hf.dataset import CardLayout, read_card
from spl_hf.errors import SplHfError
from spl_hf.held import combined, read_parquet
from spl_hf.manifest import MANIFEST, ManifestCheck, check_manifest, folder_files, safe_relative
from spl_hf.rules import RuleBase, default_rulebase, load_rulebase

NO_MANIFEST_NOTE = (
    f"--no_manifest: {MANIFEST} was not checked, so files outside the declared data (card, rule base, "
    "certificate, reports) may have been edited or added, and data files are trusted as read"
)


@dataclass(frozen=True)
class LoadedSplit:
    config: str
    split: str
    table: pa.Table
    files: tuple[str, ...] = ()


@dataclass
class BuiltFolder:
    """What the audit read from a folder, and every completeness failure found while reading it."""

    path: Path
    kind: str  # "tenets" or "spl"
    card: CardLayout
    splits: list[LoadedSplit] = field(default_factory=list)
    # (config, split) -> the files its patterns match, in card order, a file matched twice listed twice.
    files: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    manifest: ManifestCheck | None = None  # None with --no_manifest
    notes: list[str] = field(default_factory=list)

    def config(self, name: str) -> list[LoadedSplit]:
        return [s for s in self.splits if s.config == name]


BUILD_REPORT = "build_report.json"


def read_build_report(folder: Path) -> dict:
    """The build report as a dict; {} when it is missing or unreadable (the manifest check reports an
    edited file, and each reader falls back to what the card and files say)."""
    path = folder / BUILD_REPORT
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def build_kind(folder: Path, card: CardLayout) -> str:
    """ "tenets" or "spl", from the build report, else the card's configs and the folder's own files."""
    data = read_build_report(folder)
    if data.get("kind") in ("tenets", "spl"):
        return data["kind"]
    if "rulebase_hash" in data:
        return "spl"
    names = set(card.configs)
    if "judge_scores" in names or (folder / CERTIFICATE_FILE).is_file():
        return "tenets"
    if names & {"preferences", "derivations"} or (folder / "rulebase.yaml").is_file():
        return "spl"
    raise SplHfError(
        f"{folder}: not a spl_hf build: neither build_report.json, the card's configs "
        f"({sorted(names)}) nor its files identify a tenet or SPL build"
    )


def _resolve(folder: Path, patterns: list[str], where: str, failures: list[str]) -> list[str]:
    files: list[str] = []
    for pat in patterns:
        if not safe_relative(pat):
            failures.append(f"{where}: pattern {pat!r} points outside the folder")
            continue
        matched = sorted(
            p.relative_to(folder).as_posix()
            for p in folder.glob(pat)
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        )
        if not matched:
            failures.append(f"{where}: no file matches {pat!r} (a declared data file is missing)")
        for rel in matched:
            if rel in files:
                failures.append(
                    f"{where}: {rel} is declared more than once (datasets would read its rows twice)"
                )
        files.extend(matched)
    return files


def recorded_counts(folder: Path, card: CardLayout) -> dict[tuple[str, str], tuple[int, str]]:
    """Expected rows per (config, split) and who declares them: the card's ``dataset_info``, else the
    build report (the Hub layout's card states no split sizes, see :func:`spl_hf.dataset.yaml_metadata`)."""
    counts: dict[tuple[str, str], tuple[int, str]] = {}
    data = read_build_report(folder)
    spl_splits = data.get("splits") if "rulebase_hash" in data else None
    if isinstance(spl_splits, dict):  # an SPL build records its derivation rows per source
        counts.update(
            {("derivations", s): (n, BUILD_REPORT) for s, n in spl_splits.items() if isinstance(n, int)}
        )
    per_source = data.get("rows_per_source") if data.get("kind") == "tenets" else None
    if isinstance(per_source, dict) and all(isinstance(n, int) for n in per_source.values()):
        counts[("all", "train")] = (sum(per_source.values()), BUILD_REPORT)  # a tenet build's 'all' rows
    counts.update({key: (n, "the card") for key, n in card.num_examples.items()})
    return counts


# Configs of one row per judgement (16.4M at the card) whose strings repeat: read with their strings
# as dictionaries (spl_hf.held), about 80 bytes a row held instead of about 435.
HELD_CONFIGS = ("judge_scores",)


def _read_split(
    folder: Path,
    files: list[str],
    where: str,
    cache: dict[str, pa.Table],
    failures: list[str],
    held: bool = False,
) -> pa.Table | None:
    tables = []
    for rel in files:
        if rel not in cache:
            if not rel.endswith(".parquet"):
                failures.append(
                    f"{where}: {rel} is not a parquet file (the audit reads the parquet a build writes)"
                )
                return None
            try:
                # pq.read_table reads the file itself: no dataset cache can stand in for the bytes on disk.
                path = folder / rel
                table = (
                    read_parquet(path, memory_map=False) if held else pq.read_table(path, memory_map=False)
                )
            except (OSError, pa.ArrowException) as exc:
                failures.append(f"{where}: {rel} is not a readable parquet file ({exc})")
                return None
            if held:  # read once, combined below: a cached copy would double the split while combining
                tables.append(table)
                continue
            cache[rel] = table  # a union split lists these files again
        tables.append(cache[rel])
    if not tables:
        return None
    try:
        # A held split is one chunk per column (one dictionary each) from here on, made once: the
        # audit's casts and joins then take it as it is instead of each combining its own copy.
        return combined(tables) if held else pa.concat_tables(tables)
    except pa.ArrowInvalid:
        failures.append(f"{where}: its files {files} have different columns or types")
        return None


def read_folder(
    path: str | Path,
    *,
    config: str | None = None,
    manifest: bool = True,
    ignore: tuple[str, ...] = (),
) -> BuiltFolder:
    """Every declared split of ``config`` (default: all configs) read from disk, with completeness checks.

    ``ignore`` names top-level entries that are not part of the build (a Hub snapshot's
    ``.gitattributes`` and download metadata). Raises FileNotFoundError/ValueError only when the
    folder cannot be a build at all (no folder, no card); every other problem is a failure.
    """
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise SplHfError(f"{folder}: not a folder (audit takes a dataset folder or a Hub repo id)")
    card = read_card(folder)
    out = BuiltFolder(folder, build_kind(folder, card), card, failures=list(card.problems))
    if config is not None and config not in card.configs:
        raise SplHfError(
            f"{folder}: the card declares no config {config!r}; it declares {sorted(card.configs)}"
        )
    declared: set[str] = set()
    cache: dict[str, pa.Table] = {}
    resolved = {
        (name, split): _resolve(folder, patterns, f"{name}/{split}", out.failures)
        for name, splits in card.configs.items()
        for split, patterns in splits.items()
    }
    out.files = {key: tuple(files) for key, files in resolved.items()}
    counts = recorded_counts(folder, card)
    for (name, split), files in resolved.items():
        where = f"{name}/{split}"
        declared.update(files)
        if config is not None and name != config:
            continue
        if _union_within_config(name, split, resolved):
            continue  # e.g. SPL preferences/train: its rows are read (and audited) in their own splits
        files = list(dict.fromkeys(files))  # a repeat is already a failure; its rows are read once
        table = _read_split(folder, files, where, cache, out.failures, held=name in HELD_CONFIGS)
        if table is None:
            continue
        expected, declarer = counts.get((name, split), (None, ""))
        if expected is not None and expected != table.num_rows:
            out.failures.append(f"{where}: {table.num_rows} rows on disk, {declarer} declares {expected}")
        out.splits.append(LoadedSplit(name, split, table, tuple(files)))
    out.failures += check_decontamination(folder, out.splits)
    on_disk = folder_files(folder, ignore)
    out.failures += [
        f"{rel}: a data file no config of the card declares"
        for rel in on_disk
        if is_data_file(rel) and rel not in declared
    ]
    if manifest:
        out.manifest = check_manifest(folder, ignore)
        out.failures += out.manifest.failures()
    else:
        out.notes.append(NO_MANIFEST_NOTE)
    return out


def _union_within_config(name: str, split: str, resolved: dict[tuple[str, str], list[str]]) -> bool:
    """Whether a split's files are exactly those of other splits of its own config (a union split).

    Two splits with the same files (a config with one source: its split and ``train``) are not each
    other's union: the one declared first is read, the later one is the union.
    """
    files = set(resolved[(name, split)])
    keys = [k for k in resolved if k[0] == name]
    here = keys.index((name, split))
    others = [
        set(resolved[k])
        for i, k in enumerate(keys)
        if i != here and resolved[k] and set(resolved[k]) <= files and (set(resolved[k]) != files or i < here)
    ]
    return bool(others) and set().union(*others) == files


def load_built(path: str, config: str | None = None) -> list[LoadedSplit]:
    """Every split of ``config`` (or of every config) as Arrow tables read from disk.

    For readers that need the rows, not the audit's verdict (`spl-hf tables`, the demo): raises
    ValueError when a declared file is missing or unreadable; the manifest is the audit's business.
    """
    built = read_folder(path, config=config, manifest=False)
    if built.failures:
        raise SplHfError(f"{path}: incomplete or unreadable build: " + "; ".join(built.failures[:5]))
    return built.splits


def resolve_rulebase(path: str | Path, rulebase: str | None) -> tuple[RuleBase, str]:
    """The rule base to audit with, and where it came from: explicit file, the build's copy, or default."""
    if rulebase:
        return load_rulebase(rulebase), rulebase
    stored = Path(path) / "rulebase.yaml"
    if stored.is_file():
        return load_rulebase(stored), str(stored)
    return default_rulebase(), "packaged default"


def stored_rulebase_hashes(splits: list[LoadedSplit]) -> set[str]:
    hashes: set[str] = set()
    for s in splits:
        if "derivation" not in s.table.column_names:
            continue
        der = s.table.column("derivation").combine_chunks()
        if not pa.types.is_struct(der.type) or der.type.get_field_index("rulebase_hash") < 0:
            continue
        hashes |= {h for h in der.field("rulebase_hash").unique().to_pylist() if h is not None}
    return hashes
