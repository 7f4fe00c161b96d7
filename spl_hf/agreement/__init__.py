"""Agreement of model attribute labels with a human rater panel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spl_hf.lazy import lazy_exports

if TYPE_CHECKING:
    from spl_hf.agreement.config import AgreementArgs
    from spl_hf.agreement.figure import figure_agreement
    from spl_hf.agreement.io import ModelLabel, PanelLabel, normalise_label, read_model_labels, read_panel
    from spl_hf.agreement.measures import binary_counts, cohen_kappa, confusion, fleiss_kappa, plurality
    from spl_hf.agreement.panel import AgreementReport, AttributeAgreement, Confusion, panel_agreement

# module -> the names this face re-exports from it (as imported under TYPE_CHECKING, for readers)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "spl_hf.agreement.config": ("AgreementArgs",),
    "spl_hf.agreement.figure": ("figure_agreement",),
    "spl_hf.agreement.io": (
        "ModelLabel",
        "PanelLabel",
        "normalise_label",
        "read_model_labels",
        "read_panel",
    ),
    "spl_hf.agreement.measures": (
        "binary_counts",
        "cohen_kappa",
        "confusion",
        "fleiss_kappa",
        "plurality",
    ),
    "spl_hf.agreement.panel": (
        "AgreementReport",
        "AttributeAgreement",
        "Confusion",
        "panel_agreement",
    ),
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
