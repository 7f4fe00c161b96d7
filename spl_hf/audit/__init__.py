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


__all__ = [
    "AuditArgs",
    "AuditReport",
    "BuiltFolder",
    "LabelChange",
    "LoadedSplit",
    "Mismatch",
    "RuleAuditReport",
    "TablesArgs",
    "audit",
    "audit_batches",
    "audit_table",
    "differs",
    "load_built",
    "merge_reports",
    "parse_specs",
    "read_folder",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
