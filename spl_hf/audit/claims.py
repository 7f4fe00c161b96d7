"""Every claim a release makes outside its rows, recomputed; and every file of the release accounted for.

The rows are audited elsewhere (:mod:`spl_hf.audit.spl`, :mod:`spl_hf.audit.tenets`). This module checks
what a release says *about* them, against what the rows, the certificate and the records give:

- **files**: every file of the folder is a declared data file or one the audit checks (a file the
  audit cannot check is not in a release);
- **card.json and build_report.json**: each entry is recomputed (counts, settings, tables), or equal
  to a checked file, or a stated name (title, tags, input file names) listed by the kind;
- **LICENSE.md**: rendered again from the sources of the released rows with the build's own function;
- **README.md**: rendered again from ``card.json`` and the released tables with the build's renderer
  (plus, in a published commit, the provenance section rendered from ``provenance.json``);
- **decontamination.json**: its counts recomputed from its removal records.

Each failure names the file and the entry. The kind supplies its expected entries as a :class:`Claims`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spl_hf.audit.files import is_data_file
from spl_hf.audit.load import BUILD_REPORT, BuiltFolder
from spl_hf.contract import DECONTAMINATION_FILE, LICENSE_FILE, flat_figures, license_text
from spl_hf.manifest import MANIFEST, folder_files

CARD_FILE = "card.json"
README = "README.md"
PROVENANCE = "provenance.json"  # added by `spl-hf publish` to the published commit
COMMON_FILES = (README, MANIFEST, CARD_FILE, BUILD_REPORT, LICENSE_FILE, DECONTAMINATION_FILE, PROVENANCE)
TOLERANCE = 1e-9  # floats in the reports are rounded or summed in another order
SHOWN = 5


@dataclass
class Claims:
    """What a kind expects of its non-row files: recomputed entries and the entries that are stated."""

    template: str
    files: tuple[str, ...]  # the kind's own files besides COMMON_FILES (each checked by the kind)
    card: dict[str, Any] = field(default_factory=dict)  # card.json kwargs, recomputed
    report: dict[str, Any] = field(default_factory=dict)  # build_report.json entries, recomputed
    # Entries that are names or settings the release states (a title, tags, input file names), or that
    # another check covers (judge quality, producers): present, not recomputed here.
    card_stated: frozenset[str] = frozenset()
    report_stated: frozenset[str] = frozenset()
    license_intro: str = ""
    licenses: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # found while recomputing


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE)
    return a == b


def differences(where: str, stored: Mapping, expected: Mapping) -> list[str]:
    """Failures naming each recomputed entry of ``stored`` that differs from ``expected``."""
    out = []
    for key, want in expected.items():
        have = stored.get(key, "missing")
        flat_have, flat_want = flat_figures(have, key), flat_figures(want, key)
        bad = [
            k for k in sorted(set(flat_have) | set(flat_want)) if not same(flat_have.get(k), flat_want.get(k))
        ]
        out += [
            f"{where}: {k} is {_short(flat_have.get(k, 'missing'))}, recomputed {_short(flat_want.get(k, 'missing'))}"
            for k in bad[:SHOWN]
        ]
    return out


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def unchecked_entries(where: str, stored: Mapping, expected: Mapping, stated: frozenset[str]) -> list[str]:
    return [
        f"{where}: {key} is not an entry the audit checks (a release states nothing the audit cannot check)"
        for key in stored
        if key not in expected and key not in stated
    ]


def unchecked_files(built: BuiltFolder, kind_files: tuple[str, ...], ignore: tuple[str, ...]) -> list[str]:
    """Files that are neither declared data nor a file the audit checks."""
    known = set(COMMON_FILES) | set(kind_files)
    return [
        f"{rel}: a file the audit does not check (a release holds only its data and the files the audit checks)"
        for rel in folder_files(built.path, ignore)
        if not is_data_file(rel) and rel not in known
    ]


def check_decontamination_counts(folder: Path) -> list[str]:
    """The record's summary counts against its own removal records."""
    data = read_json(folder / DECONTAMINATION_FILE)
    if data is None:
        return [] if not (folder / DECONTAMINATION_FILE).exists() else [f"{DECONTAMINATION_FILE}: not JSON"]
    from spl_hf.decontam import near_by_score

    try:
        summary, removed = data["summary"], data["removed"]
        by = {k: {} for k in ("heldout", "match")}
        for r in removed:
            for k, counts in by.items():
                counts[r[k]] = counts.get(r[k], 0) + 1
        expected = {
            "prompts_removed": len(removed),
            "removed_by_heldout": {h: by["heldout"].get(h, 0) for h in summary["removed_by_heldout"]}
            | by["heldout"],
            "removed_by_match": {m: by["match"].get(m, 0) for m in summary["removed_by_match"]} | by["match"],
            "rows_removed": sum(summary["removed_by_source"].values()),
            "rows_kept": summary["rows_in"] - summary["rows_removed"],
        }
        import pyarrow as pa

        table = pa.Table.from_pylist(
            [{"match": r["match"], "overlap": r["overlap"]} for r in removed],
            schema=pa.schema([("match", pa.string()), ("overlap", pa.float64())]),
        )
        expected["near_by_score"] = near_by_score(table, summary["config"]["overlap_threshold"])
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return [f"{DECONTAMINATION_FILE}: not a decontamination record ({type(exc).__name__}: {exc})"]
    return differences(f"{DECONTAMINATION_FILE} summary", summary, expected)


def decontamination_summary(folder: Path) -> dict | None:
    data = read_json(folder / DECONTAMINATION_FILE)
    return data.get("summary") if isinstance(data, Mapping) else None


def check_claims(built: BuiltFolder, claims: Claims, ignore: tuple[str, ...] = ()) -> list[str]:
    """Failures of the release's non-row files against ``claims`` (see the module docstring)."""
    folder = built.path
    failures = list(claims.failures) + unchecked_files(built, claims.files, ignore)
    card = read_json(folder / CARD_FILE)
    report = read_json(folder / BUILD_REPORT)
    if not isinstance(card, Mapping) or not isinstance(card.get("kwargs"), Mapping):
        failures.append(f"{CARD_FILE}: missing or unreadable; the README cannot be rendered again from it")
    else:
        kwargs = card["kwargs"]
        failures += differences(CARD_FILE, kwargs, claims.card)
        failures += unchecked_entries(CARD_FILE, kwargs, claims.card, claims.card_stated)
        failures += check_readme(built, card, claims.template)
    if not isinstance(report, Mapping):
        failures.append(f"{BUILD_REPORT}: missing or unreadable")
    else:
        failures += differences(BUILD_REPORT, report, claims.report)
        failures += unchecked_entries(BUILD_REPORT, report, claims.report, claims.report_stated)
    want = license_text(claims.license_intro, claims.licenses)
    if _text(folder / LICENSE_FILE) != want:
        failures.append(
            f"{LICENSE_FILE}: differs from the licences of the released sources "
            f"({', '.join(f'{s}: {lic}' for s, lic in claims.licenses.items()) or 'none'})"
        )
    return failures + check_decontamination_counts(folder)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def check_readme(built: BuiltFolder, card: Mapping, template: str) -> list[str]:
    """README.md against the card rendered again from ``card.json`` and the released tables."""
    if card.get("template") != template:
        return [
            f"{CARD_FILE}: template {card.get('template')!r}: the audit renders the README with {template!r}"
        ]
    try:
        want = render_from_inputs(built, card)
    except (KeyError, TypeError, ValueError) as exc:
        return [f"{CARD_FILE}: the README cannot be rendered from it ({type(exc).__name__}: {exc})"]
    prov = read_json(built.path / PROVENANCE)
    if (built.path / PROVENANCE).exists():
        from spl_hf.dataset import provenance_section

        if not isinstance(prov, dict):
            return [f"{PROVENANCE}: not a JSON object"]
        try:
            want += provenance_section(prov)
        except (KeyError, TypeError) as exc:
            return [f"{PROVENANCE}: not a provenance record ({type(exc).__name__}: {exc})"]
    have = _text(built.path / README)
    if have == want:
        return []
    have_lines, want_lines = (have or "").splitlines(), want.splitlines()
    line = next(
        (i for i, (a, b) in enumerate(zip(have_lines, want_lines)) if a != b),
        min(len(have_lines), len(want_lines)),
    )
    shown = have_lines[line] if line < len(have_lines) else "(end of file)"
    return [
        f"{README}: differs from the card rendered from {CARD_FILE} and the released data "
        f"(line {line + 1}: {_short(shown)}, rendered {_short(want_lines[line] if line < len(want_lines) else '(end)')})"
    ]


def render_from_inputs(built: BuiltFolder, card: Mapping) -> str:
    """The README ``card.json`` renders, with the released tables as each stored split's data."""
    from datasets import Features

    from spl_hf.dataset import ConfigData, render_card

    tables = {(s.config, s.split): s.table for s in built.splits}
    configs = []
    for c in card["configs"]:
        feats = Features._from_yaml_list(c["features"])
        splits = {}
        for s in c["splits"]:
            table = tables.get((c["name"], s))
            splits[s] = table if table is not None else feats.arrow_schema.empty_table()
        unions = {s: [tuple(r) for r in refs] for s, refs in c["unions"].items()}
        configs.append(ConfigData(c["name"], feats, splits, c["default"], unions))
    return render_card(card["template"], configs, **dict(card["kwargs"]))
