from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.audit.config import AuditArgs, TablesArgs
    from spl_hf.audit.entry import AuditReport, audit
    from spl_hf.audit.load import BuiltFolder, LoadedSplit, load_built, read_folder
    from spl_hf.audit.provenance import parse_specs
    from spl_hf.audit.spl.labels import (
        LabelChange,
        Mismatch,
        RuleAuditReport,
        audit_batches,
        audit_table,
        differs,
        merge_reports,
    )


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.audit.config": (
        "AuditArgs",
        "TablesArgs",
    ),
    "spl_hf.audit.entry": (
        "AuditReport",
        "audit",
    ),
    "spl_hf.audit.load": (
        "BuiltFolder",
        "LoadedSplit",
        "load_built",
        "read_folder",
    ),
    "spl_hf.audit.provenance": ("parse_specs",),
    "spl_hf.audit.spl.labels": (
        "LabelChange",
        "Mismatch",
        "RuleAuditReport",
        "audit_batches",
        "audit_table",
        "differs",
        "merge_reports",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
