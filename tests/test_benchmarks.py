"""Every script in benchmarks/ runs at tiny size and prints its ratio line, so none can go stale.

No timing is asserted (the suite runs on shared machines): a benchmark passes when it completes,
exit 0, and prints ``ratio: ... <number>x`` against the baseline it measures in the same run.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path

import pytest

from tests import procs
from tests.conftest import REPO

SCRIPTS = sorted((REPO / "benchmarks").glob("bench_*.py"))
RATIO = re.compile(r"^ratio\b[^:\n]*:.*?([0-9][0-9,]*(?:\.[0-9]+)?)x\b", re.MULTILINE)


def test_every_benchmark_is_covered() -> None:
    assert len(SCRIPTS) >= 8, SCRIPTS  # the glob finds them all; a new script joins the test below


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_benchmark_runs_at_tiny_size(script: Path, tmp_path: Path) -> None:
    args = [sys.executable, str(script), "--tiny"]
    if "--workdir" in script.read_text(encoding="utf-8"):
        args += ["--workdir", str(tmp_path / "work")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "TQDM_DISABLE": "1",
    }
    done = procs.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    ratios = RATIO.findall(done.stdout)
    assert ratios, f"{script.name} printed no ratio line:\n{done.stdout[-3000:]}"
    value = float(ratios[-1].replace(",", ""))
    assert math.isfinite(value) and value > 0
