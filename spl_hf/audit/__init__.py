from spl_hf.audit.tables import CompositionTables, composition_tables
from spl_hf.audit.verify import AuditReport, LabelChange, Mismatch, audit_batches, audit_table, differs

__all__ = [
    "AuditReport",
    "CompositionTables",
    "LabelChange",
    "Mismatch",
    "audit_batches",
    "audit_table",
    "composition_tables",
    "differs",
]
