"""Quality gates of a release: judge figures and row counts checked against the release's settings.

The figures are the judge-quality section of :mod:`spl_hf.contract.quality` (the one the card shows
and the audit recomputes), taken from the judge stage's scores before any assignment; the gates only
compare them with ``min_*`` settings. A failing gate raises :class:`GateFailed` before the write
stage, so nothing is written and the judge's cached work is kept: lowering a gate reruns only the
stages after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from spl_hf.errors import SplHfError


class GateFailed(SplHfError):
    """A release's quality gate failed: the message names the figure, its value, the setting and what
    it concerns."""


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


def _rate(entry: Mapping[str, Any]) -> float | None:
    """Share of an entry's judgements whose two orderings prefer the same response."""
    return entry["position"]["rates"]["consistent"]


def _label_mass(entry: Mapping[str, Any]) -> float | None:
    """Median probability on the answer labels: 1 - the off-label mass q50 the section records."""
    q50 = entry["off_label_mass"]["q50"]
    return None if q50 is None else round(1.0 - q50, 12)


def _below(value: float | None, minimum: float) -> bool:
    return value is not None and value < minimum


def _per_tenet(setting: str, figure: str, of: Any, section: Mapping[str, Any], minimum: float) -> GateResult:
    """A gate on a figure of the whole judge (``of(entry)``), naming the tenets below it."""
    value = of(section["overall"])
    low = [f"{t['tenet']} {of(t):.3f}" for t in section["tenets"] if _below(of(t), minimum)]
    return GateResult(setting, figure, value, minimum, value is not None and value >= minimum, low)


def _pool_gate(section: Mapping[str, Any], minimum: float) -> GateResult:
    """Kappa against each pool's own preference; pools without one (or with kappa undefined) are not gated."""
    kappas = {
        a["source"]: a["kappa"]
        for a in section["overall"]["sources"]
        if a["compared"] and a["kappa"] is not None
    }
    low = [f"{s} {k:.3f}" for s, k in kappas.items() if k < minimum]
    value = min(kappas.values()) if kappas else None
    return GateResult(
        "min_pool_agreement", "lowest kappa against a pool's preference", value, minimum, not low, low
    )


def _judge_gates(section: Mapping[str, Any], cfg: Any) -> list[GateResult]:
    out = []
    if cfg.min_position_consistency is not None:
        out.append(
            _per_tenet(
                "min_position_consistency",
                "position consistency",
                _rate,
                section,
                cfg.min_position_consistency,
            )
        )
    if cfg.min_median_label_mass is not None:
        out.append(
            _per_tenet(
                "min_median_label_mass", "median label mass", _label_mass, section, cfg.min_median_label_mass
            )
        )
    if cfg.min_pool_agreement is not None:
        out.append(_pool_gate(section, cfg.min_pool_agreement))
    return out


def row_gate(rows: int, cfg: Any, concerned: list[str] | None = None) -> GateResult:
    return GateResult(
        "min_rows", "rows of the release", rows, cfg.min_rows, rows >= cfg.min_rows, list(concerned or [])
    )


def check_gates(
    results: list[GateResult], note: str = "", stopped: str = "nothing written"
) -> dict[str, Any]:
    """The gates' record (for the build report and card), or :class:`GateFailed` naming each failure."""
    failed = [r for r in results if not r.passed]
    if failed:
        raise GateFailed(
            f"quality gate failed, {stopped}: "
            + "; ".join(r.describe() for r in failed)
            + " (the model's work is cached: lower the setting, or fix the model, and rerun)"
        )
    return {"passed": True, "gates": [asdict(r) for r in results], "note": note}


def gate_results(
    section: Mapping[str, Any] | None, rows: int, cfg: Any, concerned: list[str]
) -> list[GateResult]:
    """Every gate of ``cfg`` on a judge-quality ``section`` (None for a release without a judge)."""
    judged = _judge_gates(section, cfg) if section is not None else []
    return [*judged, row_gate(rows, cfg, concerned)]


def quality_line(section: Mapping[str, Any]) -> str:
    """The one console line after judging: judged, position-consistent, first-slot share, median
    label mass and kappa per pool."""
    o = section["overall"]
    pos = o["position"]
    n, rates = pos["judged"], pos["rates"]

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}%"

    mass = _label_mass(o)
    kappas = [
        f"{a['source']} {'–' if a['kappa'] is None else format(a['kappa'], '.3f')}"
        for a in o["sources"]
        if a["compared"]
    ]
    return (
        f"judge quality: judged {n}, position-consistent {pos['consistent']} ({pct(rates['consistent'])}), "
        f"first-slot {pct(rates['first_slot'])}, median label mass {'–' if mass is None else f'{mass:.3f}'}, "
        f"kappa {', '.join(kappas) or 'no pool label'}"
    )
