from spl_hf.audit.load import BuiltFolder, LoadedSplit, load_built, read_folder
from spl_hf.audit.tables import CompositionTables, composition_tables
from spl_hf.audit.verify import AuditReport, LabelChange, Mismatch, audit_batches, audit_table, differs

__all__ = [
    "AuditReport",
    "BuiltFolder",
    "CompositionTables",
    "LabelChange",
    "LoadedSplit",
    "Mismatch",
    "audit_batches",
    "audit_table",
    "composition_tables",
    "differs",
    "load_built",
    "read_folder",
]
