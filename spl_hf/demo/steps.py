"""How a demo step announces itself."""

from __future__ import annotations

import time


def step(title: str) -> float:
    print(f"\n== {title}", flush=True)
    return time.perf_counter()
