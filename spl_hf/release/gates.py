"""Quality gates of a release: judge figures and row counts checked against the release's settings.

The figures are the judge-quality section of :mod:`spl_hf.contract.quality` (the one the card shows
and the audit recomputes), taken from the judge stage's scores before any assignment; the gates only
compare them with ``min_*`` settings. The evaluation is :mod:`spl_hf.contract.gates` (the audit
recomputes the record with it); this module raises :class:`GateFailed` on a failed gate, before the
write stage of a tenet release, so nothing is written and the judge's cached work is kept: lowering a
gate reruns only the stages after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spl_hf import contract
from spl_hf.contract import GateResult, gate_record, gate_settings, label_mass
from spl_hf.errors import SplHfError

__all__ = ["GateFailed", "GateResult", "check_gates", "gate_results", "quality_line", "row_gate"]


class GateFailed(SplHfError):
    """A release's quality gate failed: the message names the figure, its value, the setting and what
    it concerns."""


def row_gate(rows: int, cfg: Any, concerned: list[str] | None = None) -> GateResult:
    return contract.row_gate(rows, cfg.min_rows, concerned)


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
    return gate_record(results, note)


def gate_results(
    section: Mapping[str, Any] | None, rows: int, cfg: Any, concerned: list[str]
) -> list[GateResult]:
    """Every gate of the release config ``cfg`` on a judge-quality ``section`` (None for a release
    without a judge): :func:`spl_hf.contract.gates.gate_results` on its ``min_*`` settings."""
    return contract.gate_results(section, rows, gate_settings(cfg), concerned)


def quality_line(section: Mapping[str, Any]) -> str:
    """The one console line after judging: judged, position-consistent, first-slot share, median
    label mass and, per pool, the agreement share with its 95% Wilson interval."""
    o = section["overall"]
    pos = o["position"]
    n, rates = pos["judged"], pos["rates"]

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}%"

    mass = label_mass(o)
    kappas = [
        f"{a['source']} {a['agree']}/{a['compared']} [{a['low']:.2f}, {a['high']:.2f}]"
        for a in o["sources"]
        if a["compared"] and a.get("low") is not None
    ]
    return (
        f"judge quality: judged {n}, position-consistent {pos['consistent']} ({pct(rates['consistent'])}), "
        f"first-slot {pct(rates['first_slot'])}, median label mass {'–' if mass is None else f'{mass:.3f}'}, "
        f"pool agreement {', '.join(kappas) or 'no pool label'}"
    )
