"""The judge-quality part of a tenet build: the report entry, and the not-judged counts (the card's table and sentence are
:func:`spl_hf.dataset.judge_quality_card`, the PNG :func:`spl_hf.dataset.judge_quality_png`).

The figures themselves are :func:`spl_hf.contract.quality.judge_quality_section`, a pure
function of the released ``judge_scores`` rows and the released rows' scores, which the audit
recomputes; this module only gathers its inputs from the build and formats its output.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.contract import TenetQuality, judge_quality, section_of
from spl_hf.errors import SplHfError


def released_scores(rows: pa.Table, kept: list[str]) -> dict[str, np.ndarray]:
    """The |score| of each released row, per kept tenet."""
    tenet = rows.column("tenet")
    return {t: rows.filter(pc.equal(tenet, t)).column("score").to_numpy() for t in kept}


def build_quality(
    scores: pa.Table,
    rows: pa.Table,
    kept: list[str],
    threshold: float,
    capacity: int,
    not_judged: Mapping[str, int] | None = None,
) -> tuple[list[TenetQuality], dict]:
    """The per-tenet figures and the ``judge_quality`` entry of the build report and card inputs.

    ``not_judged`` is the judge stage's count per tenet of judgements below its label-mass floor;
    without it (a build from bare score files) the count is 0 and ``not_judged_recorded`` false, and
    the card says so.
    """
    quality = judge_quality(
        scores, released_scores(rows, kept), threshold=threshold, capacity=capacity, not_judged=not_judged
    )
    section = section_of(
        quality, threshold=threshold, capacity=capacity, not_judged_recorded=not_judged is not None
    )
    return quality, section


def judged_quality(scores: pa.Table, pairs: pa.Table, threshold: float) -> dict:
    """The judge-quality section of a judge stage's scores before any assignment (nothing released):
    what a release's quality gates and its console line read, computed as the card's figures are."""
    from spl_hf.build.rows import with_source_preference
    from spl_hf.contract import JUDGED_SCORE_COLUMNS, SCORE_FEATURES
    from spl_hf.held import hold

    # As a build reads them: the released score columns, typed (a judge stage writes a few more).
    judged = pa.schema([SCORE_FEATURES.arrow_schema.field(c) for c in JUDGED_SCORE_COLUMNS])
    scores = hold(scores.select(list(JUDGED_SCORE_COLUMNS)), judged)
    rows = judge_quality(with_source_preference(scores, pairs), {}, threshold=threshold, capacity=0)
    return section_of(rows, threshold=threshold, capacity=0, not_judged_recorded=False)


def read_not_judged(path: str | None) -> dict[str, int] | None:
    """The judge stage's ``not_judged.json`` (tenet -> count), checked; None without a file."""
    import json
    from pathlib import Path

    if path is None:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SplHfError(f"{path}: not a JSON object of not-judged counts ({exc})") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in data.items()
    ):
        raise SplHfError(f"{path}: expected a JSON object of tenet -> count (whole numbers >= 0)")
    return data
