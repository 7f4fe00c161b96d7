"""Settings of ``spl-hf report seeds|judge`` (no heavy import: the CLI reads them for ``--help``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SeedReportArgs:
    """Seed report"""

    runs_dir: str = field(
        metadata={"help": "Sweep folder: <condition>/seed<k>/eval/<prompt_set>/.", "positional": True}
    )
    contrast: list[str] | None = field(
        default=None,
        metadata={
            "help": "Paired contrasts FIRST:SECOND, FIRST minus SECOND (several may be given; default: "
            "every pair of conditions).",
            "metavar": "FIRST:SECOND",
        },
    )
    confidence: float = field(default=0.95, metadata={"help": "Interval coverage."})
    figures: bool = field(
        default=True,
        metadata={"help": "Draw the PNG figures.", "negated_help": "Write no PNG files."},
    )


@dataclass
class JudgeReportArgs:
    """Judge comparison"""

    build: str = field(
        metadata={
            "help": "SPL dataset folder written by the SPL build (has derivations/*.parquet).",
            "positional": True,
        }
    )
    verdicts: str | None = field(
        default=None,
        metadata={
            "help": "Verdict-judge output: pair labels (spl-hf label --pair_labels) or per-response verdicts "
            "(default: the judge labels the build recorded in its judge_derivations config)."
        },
    )
