"""Agreement of model attribute labels with a human panel (the paper's Tables V, XI, XII; Figure 3).

Per attribute, the panel's plurality label is the reference (items whose top labels tie have none).
Conditional accuracy counts correct labels among parsed items with a unique reference; coverage-aware
accuracy counts parse failures as wrong among all items with a unique reference. Kappa, F1 and the
error counts use the parsed items with a unique reference; Fleiss' kappa uses every panel item.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from spl_hf.agreement.io import ModelLabel, PanelLabel
from spl_hf.agreement.measures import binary_counts, cohen_kappa, confusion, fleiss_kappa, plurality
from spl_hf.errors import SplHfError, UnknownNameError
from spl_hf.schema import Attribute, AttributeSchema


@dataclass(frozen=True)
class Confusion:
    """Rows: the model's label; columns: the panel reference; only labels that occur."""

    model_labels: list[str]
    reference_labels: list[str]
    counts: list[list[int]]


@dataclass(frozen=True)
class AttributeAgreement:
    attribute: str
    kind: str
    items: int
    raters: int
    ties: int
    parse_failures: int  # among all items
    unique_reference: int  # items with a unique plurality label
    parsed_unique: int  # of those, items the model labeled
    correct: int
    conditional_accuracy: float | None  # correct / parsed_unique
    coverage_aware_accuracy: float | None  # correct / unique_reference
    cohen_kappa: float | None
    f1: float | None  # bool attributes only
    reference_positives: int | None
    false_positives: int | None
    false_negatives: int | None
    fleiss_kappa: float | None
    confusion: Confusion | None  # category attributes only
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AgreementReport:
    attributes: list[AttributeAgreement]

    def get(self, attribute: str) -> AttributeAgreement:
        for a in self.attributes:
            if a.attribute == attribute:
                return a
        raise UnknownNameError(f"no agreement computed for attribute {attribute!r}")

    def to_dict(self) -> dict:
        return {"attributes": {a.attribute: a.to_dict() for a in self.attributes}}

    def to_markdown(self) -> str:
        out = [
            "## Agreement with the panel's plurality reference (Table V; accuracies in percent)",
            "",
            "| attribute | correct / parsed non-tied | conditional accuracy | correct / all non-tied | "
            "coverage-aware accuracy | Cohen's kappa | F1 |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for a in self.attributes:
            out.append(
                f"| {a.attribute} | {a.correct}/{a.parsed_unique} | {_pct(a.conditional_accuracy)} | "
                f"{a.correct}/{a.unique_reference} | {_pct(a.coverage_aware_accuracy)} | "
                f"{_num(a.cohen_kappa)} | {_num(a.f1)} |"
            )
        out += [
            "",
            "## Ties, reference positives, model errors, rater agreement (Table XI)",
            "",
            "| attribute | items | raters | ties | parse failures | reference positive | false positive | "
            "false negative | Fleiss' kappa |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for a in self.attributes:
            out.append(
                f"| {a.attribute} | {a.items} | {a.raters} | {a.ties} | {a.parse_failures} | "
                f"{_int(a.reference_positives)} | {_int(a.false_positives)} | {_int(a.false_negatives)} | "
                f"{_num(a.fleiss_kappa, 2)} |"
            )
        for a in self.attributes:
            if a.confusion is None:
                continue
            c = a.confusion
            out += [
                "",
                f"## {a.attribute}: model (rows) against panel reference (columns) (Table XII)",
                "",
                "| model \\ reference | " + " | ".join(c.reference_labels) + " | total |",
                "|---|" + "---:|" * (len(c.reference_labels) + 1),
            ]
            out += [
                f"| {r} | " + " | ".join(str(v) for v in row) + f" | {sum(row)} |"
                for r, row in zip(c.model_labels, c.counts)
            ]
        notes = [f"- {a.attribute}: {n}" for a in self.attributes for n in a.notes]
        if notes:
            out += ["", *notes]
        return "\n".join(out) + "\n"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.2f}"


def _num(v: float | None, digits: int = 4) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _int(v: int | None) -> str:
    return "—" if v is None else str(v)


def _check_items(
    panel_items: set[str], model_items: set[str], attribute: str, panel: str, labels: str
) -> None:
    for missing, holder, other in (
        (panel_items - model_items, labels, panel),
        (model_items - panel_items, panel, labels),
    ):
        if missing:
            shown = sorted(missing)
            more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
            raise SplHfError(
                f"{holder}: no {attribute!r} label for {len(shown)} item(s) that {other} has: "
                f"{', '.join(shown[:10])}{more}"
            )


def panel_agreement(
    panel: Sequence[PanelLabel],
    model: Sequence[ModelLabel],
    schema: AttributeSchema,
    panel_name: str = "panel",
    labels_name: str = "labels",
) -> AgreementReport:
    """Per attribute the panel rated (in schema order), agreement of the model with the panel."""
    ratings: dict[str, dict[str, list[PanelLabel]]] = defaultdict(lambda: defaultdict(list))
    for r in panel:
        ratings[r.attribute][r.item_id].append(r)
    predicted: dict[str, dict[str, str | None]] = defaultdict(dict)
    for m in model:
        predicted[m.attribute][m.item_id] = m.label
    extra = sorted(set(predicted) - set(ratings))
    if extra:
        raise SplHfError(
            f"{labels_name}: attribute(s) {extra} have model labels but no panel ratings in {panel_name}"
        )
    out = []
    for name in (n for n in schema.names() if n in ratings):
        items = ratings[name]
        _check_items(set(items), set(predicted.get(name, {})), name, panel_name, labels_name)
        raters = _raters(items, name, panel_name)
        out.append(_attribute_agreement(schema.attribute(name), items, predicted[name], raters))
    return AgreementReport(out)


def _raters(items: Mapping[str, list[PanelLabel]], name: str, panel_name: str) -> int:
    """The number of raters per item: the same for every item, and at least two."""
    sizes = {len(v) for v in items.values()}
    if len(sizes) != 1:
        first = sorted(items)[0]
        odd = next(i for i in sorted(items) if len(items[i]) != len(items[first]))
        raise SplHfError(
            f"{panel_name}: attribute {name!r} has {len(items[first])} ratings for item {first!r} "
            f"but {len(items[odd])} for item {odd!r}; every item needs the same number of raters"
        )
    raters = sizes.pop()
    if raters < 2:
        raise SplHfError(f"{panel_name}: attribute {name!r} has one rater per item; agreement needs a panel")
    return raters


def _attribute_agreement(
    attr: Attribute, items: Mapping[str, list[PanelLabel]], guesses: Mapping[str, str | None], raters: int
) -> AttributeAgreement:
    """One attribute's accuracies, kappas, F1 or confusion against the panel's plurality label."""
    order = sorted(items)
    reference = {i: plurality([r.label for r in items[i]]) for i in order}
    unique = [i for i in order if reference[i] is not None]
    parsed = [i for i in unique if guesses[i] is not None]
    pred = [guesses[i] for i in parsed]
    ref = [reference[i] for i in parsed]
    correct = sum(p == r for p, r in zip(pred, ref))
    notes: list[str] = []
    kappa = cohen_kappa(pred, ref)
    if kappa is None and parsed:
        notes.append("Cohen's kappa undefined: model and reference use one and the same label throughout")
    if not parsed:
        notes.append("no parsed item with a unique reference: accuracies and kappa undefined")
    f1 = ref_pos = fp = fn = None
    table = None
    if attr.kind == "bool":
        bc = binary_counts(pred, ref, "true")
        f1, fp, fn = bc.f1, bc.false_positives, bc.false_negatives
        ref_pos = bc.true_positives + bc.false_negatives
        if f1 is None and parsed:
            notes.append("F1 undefined: neither the model nor the reference has a positive")
    else:
        table = Confusion(*confusion(pred, ref, attr.options))
    counts = [[sum(r.label == v for r in items[i]) for v in attr.options] for i in order]
    fk = fleiss_kappa(counts)
    if fk is None:
        notes.append("Fleiss' kappa undefined: every rating uses the same label")
    return AttributeAgreement(
        attribute=attr.name,
        kind=attr.kind,
        items=len(order),
        raters=raters,
        ties=len(order) - len(unique),
        parse_failures=sum(guesses[i] is None for i in order),
        unique_reference=len(unique),
        parsed_unique=len(parsed),
        correct=correct,
        conditional_accuracy=correct / len(parsed) if parsed else None,
        coverage_aware_accuracy=correct / len(unique) if unique else None,
        cohen_kappa=kappa,
        f1=f1,
        reference_positives=ref_pos,
        false_positives=fp,
        false_negatives=fn,
        fleiss_kappa=fk,
        confusion=table,
        notes=notes,
    )
