"""Quality gates of a release, evaluated: judge figures and row counts against ``min_*`` settings.

A pure function of a judge-quality section (:mod:`spl_hf.contract.quality`), a row count and the
settings, so the release computes its gate record with it and the audit recomputes that record from
the released columns with the same code. Raising on a failed gate is the release's
(:mod:`spl_hf.release.gates`); here a failed gate is only ``passed: false``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

# The settings in the order a record lists their gates (the judge's first, then the rows').
JUDGE_GATES = ("min_position_consistency", "min_median_label_mass", "min_pool_agreement")
ROW_GATE = "min_rows"
GATE_SETTINGS = (*JUDGE_GATES, ROW_GATE)


@dataclass(frozen=True)
class GateResult:
    setting: str  # the release setting, e.g. min_position_consistency
    figure: str  # what was measured
    value: float | None
    minimum: float | None  # None: the gate is off
    passed: bool
    concerned: list[str] = field(default_factory=list)  # tenets or sources below the setting

    def describe(self) -> str:
        shown = "undefined" if self.value is None else f"{self.value:.4g}"
        where = f" ({', '.join(self.concerned)})" if self.concerned else ""
        return f"{self.figure} is {shown}, below {self.setting} {self.minimum:g}{where}"


def position_rate(entry: Mapping[str, Any]) -> float | None:
    """Share of an entry's judgements whose two orderings prefer the same response."""
    return entry["position"]["rates"]["consistent"]


def label_mass(entry: Mapping[str, Any]) -> float | None:
    """Median probability on the answer labels: 1 - the off-label mass q50 the section records."""
    q50 = entry["off_label_mass"]["q50"]
    return None if q50 is None else round(1.0 - q50, 12)


def _below(value: float | None, minimum: float) -> bool:
    return value is not None and value < minimum


def _per_tenet(
    setting: str,
    figure: str,
    of: Callable[[Mapping[str, Any]], float | None],
    section: Mapping[str, Any],
    minimum: float,
) -> GateResult:
    """A gate on a figure of the whole judge (``of(entry)``), naming the tenets below it."""
    value = of(section["overall"])
    low = [f"{t['tenet']} {of(t):.3f}" for t in section["tenets"] if _below(of(t), minimum)]
    return GateResult(setting, figure, value, minimum, value is not None and value >= minimum, low)


def _pool_gate(section: Mapping[str, Any], minimum: float) -> GateResult:
    """The lower end of the 95 % Wilson interval of the share of eligible pairs on which the judge picks
    each pool's own side; pools that state no side are not gated. Not kappa: every pool read from
    chosen/rejected columns states side "a" throughout, where kappa is 0 for any imperfect judge."""
    lows = {a["source"]: a.get("low") for a in section["overall"]["sources"] if a["compared"]}
    lows = {s: v for s, v in lows.items() if v is not None}
    low = [f"{s} {v:.3f}" for s, v in lows.items() if v < minimum]
    value = min(lows.values()) if lows else None
    figure = "lowest 95% Wilson lower bound of the share agreeing with a pool's preference"
    return GateResult("min_pool_agreement", figure, value, minimum, not low, low)


def judge_gates(section: Mapping[str, Any], settings: Mapping[str, float | None]) -> list[GateResult]:
    """The gates of the judge settings that are set (None or absent: not gated), in record order."""
    out = []
    if settings.get("min_position_consistency") is not None:
        out.append(
            _per_tenet(
                "min_position_consistency",
                "position consistency",
                position_rate,
                section,
                settings["min_position_consistency"],
            )
        )
    if settings.get("min_median_label_mass") is not None:
        out.append(
            _per_tenet(
                "min_median_label_mass",
                "median label mass",
                label_mass,
                section,
                settings["min_median_label_mass"],
            )
        )
    if settings.get("min_pool_agreement") is not None:
        out.append(_pool_gate(section, settings["min_pool_agreement"]))
    return out


def row_gate(rows: int, minimum: int, concerned: list[str] | None = None) -> GateResult:
    return GateResult(ROW_GATE, "rows of the release", rows, minimum, rows >= minimum, list(concerned or []))


def no_rows_concerned(rows: int, tenets: int, capacity: int) -> list[str]:
    """What the row gate of a tenet release names: why no row was kept, when none was."""
    return [] if rows else [f"0 of {tenets} tenets kept at capacity {capacity}"]


def gate_results(
    section: Mapping[str, Any] | None,
    rows: int,
    settings: Mapping[str, float | None],
    concerned: list[str],
) -> list[GateResult]:
    """Every gate of ``settings`` on a judge-quality ``section`` (None for a release without a judge);
    ``settings`` maps each ``min_*`` name to its minimum (``min_rows`` is always gated)."""
    judged = judge_gates(section, settings) if section is not None else []
    return [*judged, row_gate(rows, settings[ROW_GATE], concerned)]


def gate_record(results: list[GateResult], note: str = "") -> dict[str, Any]:
    """The gates' record, as the build report and the card keep it."""
    return {"passed": all(r.passed for r in results), "gates": [asdict(r) for r in results], "note": note}


def gate_settings(cfg: Any) -> dict[str, float | None]:
    """The ``min_*`` settings of a release config (a setting it has not: None, not gated)."""
    return {name: getattr(cfg, name, None) for name in GATE_SETTINGS}
