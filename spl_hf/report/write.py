"""Writing a seed report folder: report.json, report.md and the figures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spl_hf.files import write_json
from spl_hf.report.runs import load_runs
from spl_hf.report.seeds import SeedReport, seed_report


def write_seed_report(
    runs_dir: str | Path,
    out_dir: str | Path | None = None,
    contrasts: Sequence[tuple[str, str]] | None = None,
    *,
    confidence: float = 0.95,
    figures: bool = True,
    overwrite: bool = False,
) -> tuple[SeedReport, Path, list[Path]]:
    """Read a sweep, write its report (default folder: ``runs_dir/report``); returns report, folder, files."""
    from spl_hf.files import write_text
    from spl_hf.outputs import guard_dir, mark_output, seal_output

    out = guard_dir(Path(out_dir) if out_dir else Path(runs_dir) / "report", overwrite=overwrite)
    report = seed_report(load_runs(runs_dir), contrasts, confidence)
    mark_output(out, "seed-report", replace=True)
    written = [out / "report.json", out / "report.md"]
    write_json(written[0], report.to_dict(), sort_keys=True, ascii_only=True)
    write_text(written[1], report.to_markdown())
    if figures:
        from spl_hf.report.figures import write_figures

        written += write_figures(report, out)
    seal_output(out)
    return report, out, written
