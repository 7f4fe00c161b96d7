"""Audit of a tenet build's judge-quality figures: recomputed from the released columns, compared.

The figures in ``build_report.json`` and ``card.json`` (``judge_quality``) must equal what
:func:`spl_hf.contract.quality.judge_quality_section` gives for the released ``judge_scores``
rows, the released rows' scores and the certificate's threshold and capacity: the same pure function
the build used, so any difference is an edited file or an edited column. Each difference names the
file, the figure and both values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import TenetQuality, flat_figures, judge_quality, section_of

SECTION = "judge_quality"
# Figures are rounded to 12 places; a mean summed in another row order (the 'all' rows are stored per
# tenet and source, the build summed them in assignment order) may differ in its last bits.
TOLERANCE = 1e-9
SHOWN = 5  # differences named per file


def _released(rows: pa.Table, tenets: list[str]) -> dict[str, np.ndarray]:
    tenet = rows.column("tenet")
    return {t: rows.filter(pc.equal(tenet, t)).column("score").to_numpy() for t in tenets}


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE)
    return a == b


def compare(where: str, stored: object, expected: Mapping) -> list[str]:
    """Failures naming each figure of ``stored`` that differs from ``expected`` (or is missing)."""
    if not isinstance(stored, Mapping):
        return [f"{where}: no {SECTION} entry; a tenet build records its judge quality there"]
    have, want = flat_figures(stored), flat_figures(expected)
    bad = [k for k in sorted(set(have) | set(want)) if not _same(have.get(k), want.get(k))]
    shown = [
        f"{k} is {have.get(k, 'missing')!r}, recomputed {want.get(k, 'not a figure')!r}" for k in bad[:SHOWN]
    ]
    if not bad:
        return []
    more = f" (and {len(bad) - SHOWN} more)" if len(bad) > SHOWN else ""
    return [f"{where}: {SECTION} differs from the released columns: " + "; ".join(shown) + more]


def _stored(folder: Path) -> dict[str, object]:
    """The judge-quality entry of each file that records one (None where missing or unreadable)."""
    out: dict[str, object] = {}
    for name, path in (("build_report.json", ()), ("card.json", ("kwargs",))):
        try:
            value: object = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            value = None
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        out[name] = value.get(SECTION) if isinstance(value, Mapping) else None
    return out


def check_judge_quality(
    folder: Path,
    scores: pa.Table,
    rows: pa.Table,
    tenets: list[str],
    threshold: float,
    capacity: int,
    quality: list[TenetQuality] | None = None,
) -> list[str]:
    """Failures of the stored judge-quality figures against their recomputation.

    ``scores`` are the released ``judge_scores`` rows, ``rows`` the 'all' rows, ``tenets`` the
    per-tenet configs and ``threshold``/``capacity`` the certificate's. A not-judged count the judge
    stage recorded cannot be recomputed from the release, so when the build says it recorded one the
    stored counts are taken as given (and still have to sum to the overall count). ``quality``: the
    figures :func:`spl_hf.contract.judge_quality` gives for these inputs, where the caller has them.
    """
    stored = _stored(folder)
    report = stored["build_report.json"]
    recorded = isinstance(report, Mapping) and bool(report.get("not_judged_recorded"))
    not_judged = (
        {t.get("tenet"): int(t.get("not_judged") or 0) for t in report.get("tenets", [])}
        if recorded
        else None
    )
    if quality is None:
        quality = judge_quality(
            scores, _released(rows, tenets), threshold=threshold, capacity=capacity, not_judged=not_judged
        )
    expected = section_of(quality, threshold=threshold, capacity=capacity, not_judged_recorded=recorded)
    return [f for name, value in stored.items() for f in compare(name, value, expected)]
