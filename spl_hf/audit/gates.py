"""The quality-gate record of a release (``quality_gates`` of ``build_report.json`` and ``card.json``),
recomputed.

The record lists each gate the release checked: its setting and minimum (the release's settings,
stated), the figure's value, whether it passed and what it concerns. The audit takes each gate's
setting and minimum from the record and recomputes the rest with the release's own function
(:func:`spl_hf.contract.gates.gate_results`) from the judge-quality section the audit recomputed from
the released ``judge_scores`` (a tenet build) and the released row count; ``passed`` at the top must
be every gate passing. The note is stated. A build made outside a release has no record (the key is
absent, or null in a tenet card); a record without its ``min_rows`` gate is not one a release writes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spl_hf.audit.claims import CARD_FILE, Claims, read_json
from spl_hf.audit.load import BUILD_REPORT
from spl_hf.contract import JUDGE_GATES, ROW_GATE, gate_record, gate_results

ENTRY = "quality_gates"


def _minimum_problem(setting: str, minimum: object) -> str:
    """Why a recorded minimum is not one the release's config accepts ('' when it is)."""
    if setting == ROW_GATE:
        ok = isinstance(minimum, int) and not isinstance(minimum, bool) and minimum >= 0
        return "" if ok else "minimum must be a whole number >= 0"
    ok = isinstance(minimum, (int, float)) and not isinstance(minimum, bool) and math.isfinite(minimum)
    return "" if ok else "minimum must be a finite number"


def _settings(where: str, record: Mapping, judged: bool) -> tuple[dict[str, Any] | None, list[str]]:
    """The settings a record states (setting -> minimum), or None and the reasons it is not a record."""
    gates = record.get("gates")
    if not isinstance(gates, list) or not all(isinstance(g, Mapping) for g in gates):
        return None, [f"{where}: {ENTRY}.gates is not a list of gates"]
    known = (*JUDGE_GATES, ROW_GATE) if judged else (ROW_GATE,)
    settings: dict[str, Any] = {}
    failures = []
    for g in gates:
        setting = g.get("setting")
        if setting not in known:
            failures.append(
                f"{where}: {ENTRY} lists a gate {setting!r}, not one this kind of release checks {list(known)}"
            )
        elif setting in settings:
            failures.append(f"{where}: {ENTRY} lists the gate {setting} twice")
        elif problem := _minimum_problem(setting, g.get("minimum")):
            failures.append(f"{where}: {ENTRY} gate {setting}: {problem}, got {g.get('minimum')!r}")
        else:
            settings[setting] = g["minimum"]
    if ROW_GATE not in settings and not failures:
        failures.append(f"{where}: {ENTRY} has no {ROW_GATE} gate; a release always gates its rows")
    return (None, failures) if failures else (settings, [])


def expected_record(
    where: str, stored: object, section: Mapping[str, Any] | None, rows: int, concerned: list[str]
) -> tuple[object, list[str]]:
    """The record ``stored`` should be, recomputed (the stored one itself when it is not a record, with
    the failures saying why); ``section`` is the recomputed judge-quality section (None: no judge)."""
    if stored is None:
        return None, []
    if not isinstance(stored, Mapping):
        return stored, [f"{where}: {ENTRY} is not a gate record"]
    settings, failures = _settings(where, stored, section is not None)
    if settings is None:
        return stored, failures
    results = gate_results(section, rows, settings, concerned)
    # The stored gates' order is kept (the expected record is compared gate by gate, by setting).
    order = [g["setting"] for g in stored["gates"]]
    results.sort(key=lambda r: order.index(r.setting))
    return gate_record(results, stored.get("note", "")), []


def gate_claims(
    claims: Claims, folder: Path, section: Mapping[str, Any] | None, rows: int, concerned: list[str]
) -> None:
    """Add the expected ``quality_gates`` of ``build_report.json`` and ``card.json`` to ``claims``,
    each recomputed from the settings its own record states; the two records must also agree."""
    report = read_json(folder / BUILD_REPORT)
    card = (read_json(folder / CARD_FILE) or {}).get("kwargs")
    stored = {}
    for name, entries, expected in ((BUILD_REPORT, report, claims.report), (CARD_FILE, card, claims.card)):
        if not isinstance(entries, Mapping) or ENTRY not in entries:
            continue  # a build outside a release (an unreadable file is reported by check_claims)
        stored[name] = entries[ENTRY]
        expected[ENTRY], failures = expected_record(name, entries[ENTRY], section, rows, concerned)
        claims.failures += failures
    recorded = {name: value for name, value in stored.items() if value is not None}
    if recorded and (len(recorded) != 2 or recorded[BUILD_REPORT] != recorded[CARD_FILE]):
        claims.failures.append(
            f"{CARD_FILE}: {ENTRY} differs from {BUILD_REPORT}'s (the build writes one record to both)"
        )
