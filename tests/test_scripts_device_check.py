"""The prepared GPU check (scripts/device_check.sh) runs whole on CPU with --dry_run: both parts, and
a JSON of figures from what they did (a lent GPU machine runs the same script without the flag)."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

from tests import procs

ROOT = Path(__file__).resolve().parents[1]


def test_the_device_check_dry_run_judges_trains_one_step_and_writes_its_figures(tmp_path):
    out = tmp_path / "device_check.json"
    got = procs.run(
        [str(ROOT / "scripts" / "device_check.sh"), "--dry_run", "--out", str(out)],
        timeout=240,
        env={**os.environ, "PY": sys.executable},
    )
    assert got.returncode == 0, got.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["dry_run"] is True and figures["gpu"]["device"] == "cpu"
    judge = figures["judge"]
    # every (pair, tenet) judged in both orderings, by the embedded model
    assert judge["judgements"] == 2 * judge["scores"] == 2 * judge["pairs"] * judge["tenets"] > 0
    assert judge["judgements_per_s"] > 0 and judge["parameters"] > 100_000_000
    train = figures["train"]
    # one DPO step from the reference itself: the sigmoid loss is log 2 before any update
    assert train["steps"] == 1 and math.isclose(train["loss"], math.log(2), abs_tol=1e-3)
    assert train["lora_modules"] > 0
