"""Build reports: what each source pool read, yielded, filtered and quarantined."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from spl_hf.errors import UnknownNameError


@dataclass
class SourceReport:
    source: str
    kind: str  # "pairs" or "prompts"
    origin: str  # file path or hf://datasets/... description
    license: str
    records_read: int = 0
    rows_yielded: int = 0
    distinct_prompts: int = 0
    clipped_prompts: int = 0
    filtered: dict[str, int] = field(default_factory=dict)  # reason -> records outside this pool
    quarantined: dict[str, int] = field(default_factory=dict)  # reason -> quarantine records
    partial: bool = False  # the file broke off and accept_partial kept the part before the break
    sha256: str | None = None  # of the local file read (None for a Hub dataset)
    adapter: str | None = None  # the adapter that read it, when the source was named otherwise
    columns: dict[str, str] = field(default_factory=dict)  # what the adapter reads -> the file's column
    description: str = ""  # what the adapter takes from the file (the card's origins table)
    category: str | None = (
        None  # declared (or "unknown" for a renamed or generic source); None: the adapter's
    )

    @property
    def n_filtered(self) -> int:
        return sum(self.filtered.values())

    @property
    def n_quarantined(self) -> int:
        return sum(self.quarantined.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": self.kind,
            "origin": self.origin,
            "license": self.license,
            "records_read": self.records_read,
            "rows_yielded": self.rows_yielded,
            "distinct_prompts": self.distinct_prompts,
            "clipped_prompts": self.clipped_prompts,
            "filtered": dict(sorted(self.filtered.items())),
            "n_filtered": self.n_filtered,
            "quarantined": dict(sorted(self.quarantined.items())),
            "n_quarantined": self.n_quarantined,
            "partial": self.partial,
            "sha256": self.sha256,
            **({"adapter": self.adapter} if self.adapter and self.adapter != self.source else {}),
            **({"columns": dict(sorted(self.columns.items()))} if self.columns else {}),
            **({"description": self.description} if self.description else {}),
            **({"category": self.category} if self.category else {}),
        }


@dataclass
class BuildReport:
    sources: list[SourceReport] = field(default_factory=list)

    def source(self, name: str) -> SourceReport:
        for report in self.sources:
            if report.source == name:
                return report
        raise UnknownNameError(f"no source {name!r} in this report")

    @property
    def records_read(self) -> int:
        return sum(r.records_read for r in self.sources)

    @property
    def rows_yielded(self) -> int:
        return sum(r.rows_yielded for r in self.sources)

    @property
    def quarantined(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for report in self.sources:
            total.update(report.quarantined)
        return dict(sorted(total.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": [r.to_dict() for r in self.sources],
            "records_read": self.records_read,
            "rows_yielded": self.rows_yielded,
            "quarantined": self.quarantined,
            "n_quarantined": sum(self.quarantined.values()),
        }
