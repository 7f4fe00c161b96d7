"""Reports over evaluation runs and built datasets: seed statistics, figures, judge comparison."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.report.config import JudgeReportArgs, SeedReportArgs
    from spl_hf.report.figures import figure_conditions
    from spl_hf.report.judge_comparison import compare_build, write_comparison
    from spl_hf.report.runs import METRIC_KEYS, RunMetrics, load_runs
    from spl_hf.report.seeds import ConditionSummary, ContrastSummary, SeedReport, parse_contrast, seed_report
    from spl_hf.report.write import write_seed_report


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.report.config": (
        "JudgeReportArgs",
        "SeedReportArgs",
    ),
    "spl_hf.report.figures": ("figure_conditions",),
    "spl_hf.report.judge_comparison": (
        "compare_build",
        "write_comparison",
    ),
    "spl_hf.report.runs": (
        "METRIC_KEYS",
        "RunMetrics",
        "load_runs",
    ),
    "spl_hf.report.seeds": (
        "ConditionSummary",
        "ContrastSummary",
        "SeedReport",
        "parse_contrast",
        "seed_report",
    ),
    "spl_hf.report.write": ("write_seed_report",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
