"""Min-cost-flow assignment of judged (pair, tenet) scores to per-tenet datasets, with certificates."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.assign.certificate import (
        CERTIFICATE_FORMAT,
        Certificate,
        CertificateCheck,
        DroppedTenet,
        SolveRecord,
        verify_assignment,
    )
    from spl_hf.assign.config import (
        ASSIGNMENT_SUFFIXES,
        DEFAULT_STRATEGY,
        SOLVERS,
        STRATEGIES,
        AssignConfig,
        AssignFiles,
    )
    from spl_hf.assign.duals import PromptArc, mark_assigned, prompt_arcs
    from spl_hf.assign.io import (
        certificate_path,
        read_certificate,
        read_row_groups,
        read_rows,
        read_table,
        write_certificate,
        write_table,
    )
    from spl_hf.assign.network import CostRangeError
    from spl_hf.assign.scores import REQUIRED_COLUMNS, ScoresError, ScoreTable, encode_scores
    from spl_hf.assign.solve import (
        GIVEN_STATS,
        AssignmentResult,
        assign_tenets,
        given_assignment,
        recorded_assignment,
        verify_certificate,
    )
    from spl_hf.assign.solvers import SolverError


# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.assign.certificate": (
        "CERTIFICATE_FORMAT",
        "Certificate",
        "CertificateCheck",
        "DroppedTenet",
        "SolveRecord",
        "verify_assignment",
    ),
    "spl_hf.assign.config": (
        "ASSIGNMENT_SUFFIXES",
        "DEFAULT_STRATEGY",
        "SOLVERS",
        "STRATEGIES",
        "AssignConfig",
        "AssignFiles",
    ),
    "spl_hf.assign.duals": (
        "PromptArc",
        "mark_assigned",
        "prompt_arcs",
    ),
    "spl_hf.assign.io": (
        "certificate_path",
        "read_certificate",
        "read_row_groups",
        "read_rows",
        "read_table",
        "write_certificate",
        "write_table",
    ),
    "spl_hf.assign.network": ("CostRangeError",),
    "spl_hf.assign.scores": (
        "REQUIRED_COLUMNS",
        "ScoresError",
        "ScoreTable",
        "encode_scores",
    ),
    "spl_hf.assign.solve": (
        "GIVEN_STATS",
        "AssignmentResult",
        "assign_tenets",
        "given_assignment",
        "recorded_assignment",
        "verify_certificate",
    ),
    "spl_hf.assign.solvers": ("SolverError",),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
