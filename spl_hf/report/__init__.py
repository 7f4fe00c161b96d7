"""Reports over evaluation runs and built datasets: seed statistics, figures, judge comparison."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.report._judge_quality_figure import (
        judge_quality_figure,
        judge_quality_png,
        save_judge_quality_figure,
    )
    from spl_hf.report._pool_preference_figure import (
        pool_preference_data,
        pool_preference_figure,
        pool_preference_png,
        save_pool_preference_figure,
    )
    from spl_hf.report.config import JudgeReportArgs, SeedReportArgs
    from spl_hf.report.figures import PNG_METADATA, figure_conditions, save_png
    from spl_hf.report.judge_comparison import compare_build, write_comparison
    from spl_hf.report.runs import METRIC_KEYS, RunMetrics, load_runs
    from spl_hf.report.seeds import ConditionSummary, ContrastSummary, SeedReport, parse_contrast, seed_report
    from spl_hf.report.write import write_seed_report


__all__ = [
    "METRIC_KEYS",
    "PNG_METADATA",
    "ConditionSummary",
    "ContrastSummary",
    "JudgeReportArgs",
    "RunMetrics",
    "SeedReport",
    "SeedReportArgs",
    "compare_build",
    "figure_conditions",
    "judge_quality_figure",
    "judge_quality_png",
    "load_runs",
    "parse_contrast",
    "pool_preference_data",
    "pool_preference_figure",
    "pool_preference_png",
    "save_judge_quality_figure",
    "save_png",
    "save_pool_preference_figure",
    "seed_report",
    "write_comparison",
    "write_seed_report",
]

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.report._judge_quality_figure": (
        "judge_quality_figure",
        "judge_quality_png",
        "save_judge_quality_figure",
    ),
    "spl_hf.report._pool_preference_figure": (
        "pool_preference_data",
        "pool_preference_figure",
        "pool_preference_png",
        "save_pool_preference_figure",
    ),
    "spl_hf.report.config": (
        "JudgeReportArgs",
        "SeedReportArgs",
    ),
    "spl_hf.report.figures": (
        "PNG_METADATA",
        "figure_conditions",
        "save_png",
    ),
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
