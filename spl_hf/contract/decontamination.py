"""The decontamination record a build carries: what the builder removed, for the card and the audit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from spl_hf.errors import SplHfError
from spl_hf.files import json_text

DECONTAMINATION_FILE = "decontamination.json"


class DecontaminationRecord(NamedTuple):
    summary: dict[str, Any]  # counts per source, held-out set and match kind, and the settings
    removed_ids: frozenset[str]  # the prompt ids the build removed
    text: str  # the file's canonical JSON: {"summary": ..., "removed": [{prompt_id, heldout, ...}]}


def read_decontamination(path: str | Path) -> DecontaminationRecord:
    """A record written by a release's decontaminate stage; a clear error naming the file otherwise."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        summary, removed = data["summary"], data["removed"]
        if not isinstance(summary, dict) or not all(isinstance(r["prompt_id"], str) for r in removed):
            raise TypeError("summary must be an object and every removed row needs a prompt_id")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such decontamination record") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise SplHfError(f"{path}: not a decontamination record ({exc})") from None
    text = json_text({"summary": summary, "removed": removed}, indent=1, sort_keys=True, ascii_only=True)
    return DecontaminationRecord(summary, frozenset(r["prompt_id"] for r in removed), text)
