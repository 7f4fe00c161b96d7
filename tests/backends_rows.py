"""Plain row builders for the LM-backend tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def pair_row(i: int, **over: Any) -> dict[str, Any]:
    """A unified pair row with distinct, deterministic texts."""
    row: dict[str, Any] = {
        "pair_id": f"p{i}",
        "prompt_id": f"q{i}",
        "source": "unit",
        "row_id": i,
        "prompt": [
            {"role": "user", "content": f"Question {i}: how should I plan a trip to city number {i}?"}
        ],
        "response_a": f"Book early, pack light and check the weather for city {i}."
        + " More detail." * (i % 3),
        "response_b": f"I cannot help with travel to city {i}.",
        "source_preference": None,
    }
    row.update(over)
    return row


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
