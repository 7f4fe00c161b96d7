"""Agreement of model attribute labels with a human rater panel."""

from spl_hf.agreement.io import ModelLabel, PanelLabel, normalise_label, read_model_labels, read_panel
from spl_hf.agreement.measures import binary_counts, cohen_kappa, confusion, fleiss_kappa, plurality
from spl_hf.agreement.panel import AgreementReport, AttributeAgreement, Confusion, panel_agreement

__all__ = [
    "AgreementReport",
    "AttributeAgreement",
    "Confusion",
    "ModelLabel",
    "PanelLabel",
    "binary_counts",
    "cohen_kappa",
    "confusion",
    "fleiss_kappa",
    "normalise_label",
    "panel_agreement",
    "plurality",
    "read_model_labels",
    "read_panel",
]
