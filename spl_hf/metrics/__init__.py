"""``evaluate`` modules shipped with spl_hf, loadable offline from their folders.

import evaluate
from spl_hf.metrics import REFUSAL_RATE
metric = evaluate.load(REFUSAL_RATE, "xstest", keep_in_memory=True)
"""

from __future__ import annotations

from pathlib import Path

METRICS_DIR = Path(__file__).resolve().parent
REFUSAL_RATE = str(METRICS_DIR / "refusal_rate")

__all__ = ["METRICS_DIR", "REFUSAL_RATE"]
