"""What the viewer serves, independent of the web framework: a release's rows index, its pages, its
figures and the explanation of any row (the audit is run once, on first use, and kept)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from spl_hf.explain import Release, RowRef, audit_verdict, explain_ref, find_row, render
from spl_hf.view.record import POSITION_SHORT, record_html
from spl_hf.view.rows import HEADERS, Page, RowFilter, RowsIndex, rows_index

FIGURES = (
    ("judge_quality.png", "Judge quality: score distribution and position consistency per tenet"),
    ("judge_vs_pool.png", "Judge score against the pool's own preference"),
)


@dataclass
class ViewerSession:
    release: Release
    audit: bool = True
    clip: int = 400
    index: RowsIndex = field(init=False)
    _report: object = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = rows_index(self.release)

    def preload(self) -> threading.Thread:
        """Read the prompt texts for search in the background, so the first search does not wait."""
        thread = threading.Thread(target=self.index.preload_prompts, name="spl-hf-view-prompts", daemon=True)
        thread.start()
        return thread

    @property
    def title(self) -> str:
        """The card's ``pretty_name`` (what the Hub shows), else where the release was read from."""
        name = self.release.front_matter.get("pretty_name")
        return str(name) if name else self.release.describe()

    @property
    def subtitle(self) -> str:
        return f"{self.release.kind} release, {self.index.total} rows · {self.release.describe()}"

    @property
    def headers(self) -> list[str]:
        return [HEADERS[self.index.kind][c] for c in self.index.columns]

    def page(self, flt: RowFilter, page: int, size: int) -> Page:
        return self.index.page(flt, page, size)

    def table(self, p: Page) -> list[list]:
        """The page as the table shows it: scores at 3 decimals (the Explain tab and its JSON keep the
        stored value), the orderings' class in words."""
        out = []
        for r in p.rows:
            shown = dict(r)
            if self.index.kind == "tenets" and r["score"] is not None:
                shown["score"] = round(r["score"], 3)
            elif r["score"] is not None:
                shown["score"] = int(r["score"])
            shown["position"] = POSITION_SHORT.get(r["position"], r["position"])
            out.append([shown[c] for c in self.index.columns])
        return out

    def figures(self) -> list[tuple[Path, str]]:
        return [(self.release.folder / f, t) for f, t in FIGURES if (self.release.folder / f).is_file()]

    def audit_report(self):
        """The release's audit, computed once (a lock: two first clicks do not audit twice)."""
        with self._lock:
            if self._report is None:
                from spl_hf.audit import audit

                rev = self.release.revision if self.release.repo_id else None
                self._report = audit(self.release.target, revision=rev)
            return self._report

    def explain(self, spec: list[str]) -> tuple[str, dict, str]:
        """The row's explanation as text (what ``spl-hf explain`` prints), as JSON, and as the
        structured HTML view."""
        ref: RowRef = find_row(self.release, spec)
        ex = explain_ref(self.release, ref, self.clip)
        if self.audit:
            ex["audit"] = audit_verdict(self.release, ex, self.audit_report())
        return render(ex), ex, record_html(ex)

    def composition(self):
        """A figure of the rows per tenet (topic, for SPL) and source, counted in Arrow."""
        from spl_hf.view.composition import composition_figure

        return composition_figure(self.index)
