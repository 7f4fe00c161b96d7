"""What an SPL build says about its rows, recomputed from them: the :class:`~spl_hf.audit.claims.Claims`
of ``card.json``, ``build_report.json`` and ``LICENSE.md``.

Counts, splits, the margin, the rule base, the composition and judge-comparison tables, the licence
and the decontamination summary are recomputed from the released ``derivations`` and
``judge_derivations`` rows, ``rulebase.yaml`` and ``decontamination.json`` with the functions the
build used. The producers, label quality and verdict quality are recounted by
:mod:`spl_hf.audit.spl.evidence`; a release's gate record by :mod:`spl_hf.audit.gates`. What is left is stated: names and settings of the build (title,
tags, the input file names, the rule base's and panel's text as the card shows them).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.audit.claims import Claims, decontamination_summary
from spl_hf.audit.gates import gate_claims
from spl_hf.audit.load import BuiltFolder
from spl_hf.contract import (
    SPL_INTRO,
    composition_tables,
    judge_comparison_tables,
    spl_license_fields,
    spl_source_licenses,
)
from spl_hf.derive import JUDGE_COLUMN
from spl_hf.rules import RuleBase

TEMPLATE = "spl_dataset.md.j2"
FILES = ("rulebase.yaml", "schema.yaml")
ALL_SOURCES = "train"
IDENTITY = ("model_id", "model_revision", "template_hash")
# Stated by the build (names, settings, the text of its inputs), or checked by the evidence audit.
CARD_STATED = frozenset(
    {
        "pretty_name",
        "tags",
        "repo_id",
        "revision",  # the branch publish pushed to (card.json records it with the repo id)
        "version",
        "inputs",
        "panel_markdown",  # the panel's agreement tables (the panel file is not in the release)
        "producers",  # checked against build_report.json and the rows by the evidence audit
        # Tables about the sources before the build (read records, stage counts of prompts that formed
        # no pair): shown from the decontamination record and the build's inputs.
        "origins_table",
        "stages_table",
        "shares_table",
        "harmful_pools",
        "undeclared_pools",  # sources whose category was not declared (from the read records)
    }
)
# The labeler's agreement with a rater panel is computed from the panel file and the labeler's records,
# neither of which the release holds; prompts that formed no pair are in no row.
REPORT_STATED = frozenset({"label_quality", "producers", "prompts_without_pairs", "panel"})


def _concat(built: BuiltFolder, config: str) -> pa.Table | None:
    tables = [s.table for s in built.splits if s.config == config]
    try:
        return pa.concat_tables(tables, promote_options="default") if tables else None
    except pa.ArrowInvalid:
        return None


def _margin(der: pa.Table) -> int | None:
    margins = pc.unique(pc.struct_field(der.column("derivation").combine_chunks(), "margin")).to_pylist()
    return margins[0] if len(margins) == 1 else None


def _judge_info(judged: pa.Table, der: pa.Table, verdicts: dict):
    """The judge entry's counts: records, not judged, candidates without a record, and its tables."""
    j = judged.column(JUDGE_COLUMN).combine_chunks()
    status: dict[str, str] = {}
    for side in ("a", "b"):
        ids = pc.struct_field(j, f"candidate_{side}").to_pylist()
        status.update(zip(ids, pc.struct_field(j, f"status_{side}").to_pylist(), strict=True))
    records = [s for s in status.values() if s != "no_record"]
    # The comparison of the build: every pair of derivations with its verdict-judge derivation.
    at = pc.index_in(der.column("pair_id"), value_set=judged.column("pair_id").combine_chunks())
    joined = der.append_column(JUDGE_COLUMN, judged.column(JUDGE_COLUMN).take(at))
    tables = judge_comparison_tables(joined, verdicts)
    ident = pa.table({k: pc.struct_field(j, k) for k in IDENTITY})
    idents = {
        tuple(r.values())
        for side in ("a", "b")
        for r in ident.filter(pc.equal(pc.struct_field(j, f"status_{side}"), "ok").fill_null(False))
        .group_by(list(IDENTITY))
        .aggregate([])
        .to_pylist()
    }
    info = dict(zip(IDENTITY, idents.pop())) if len(idents) == 1 else {}
    info.update(
        records=len(records),
        not_judged=sum(s != "ok" for s in records),
        candidates_without_record=len(status) - len(records),
        tables=tables.to_dict(),
    )
    return info, tables


def spl_claims(built: BuiltFolder, rb: RuleBase) -> Claims:
    """The expected entries of an SPL build's card.json, build_report.json and LICENSE.md."""
    claims = Claims(TEMPLATE, FILES, card_stated=CARD_STATED, report_stated=REPORT_STATED)
    der = _concat(built, "derivations")
    if der is None:
        claims.failures.append("derivations: not read, so the build's claims cannot be recomputed")
        return claims
    splits = {s.split: s.table.num_rows for s in built.splits if s.config == "derivations"}
    labeled = int(
        pc.sum(pc.is_valid(pc.struct_field(der.column("derivation").combine_chunks(), "label"))).as_py() or 0
    )
    licenses = spl_source_licenses(list(splits))
    claims.license_intro, claims.licenses = SPL_INTRO, licenses
    tables = composition_tables(der)
    decontamination = decontamination_summary(built.path)
    claims.report = {
        "rulebase_id": rb.id,
        "rulebase_hash": rb.hash,
        "margin": _margin(der),
        "splits": splits,
        "labeled": labeled,
        "tables": tables.to_dict(),
        "decontamination": decontamination,
    }
    claims.card = {
        **spl_license_fields(licenses),
        "labeled": labeled,
        "total": der.num_rows,
        "unlabeled": der.num_rows - labeled,
        "splits": ", ".join(f"`{s}`" for s in splits),
        "all_sources": ALL_SOURCES,
        "first_split": ALL_SOURCES,
        "margin": claims.report["margin"],
        "rulebase_id": rb.id,
        "rulebase_hash": rb.hash,
        "rulebase_yaml": rb.to_yaml().strip(),
        "schema_hash": rb.schema.hash,
        "tables": tables.to_markdown(),
        "decontamination": decontamination,
        "common_configs": [c for c in built.card.configs if c.startswith("common_support")],
        "judge": None,
        "judge_tables": None,
    }
    claims.card.update(_evidence_card(built))
    gate_claims(claims, built.path, None, labeled, [])  # an SPL release gates its labeled pairs only
    judged = _concat(built, "judge_derivations")
    if judged is not None and JUDGE_COLUMN in judged.column_names:
        _judge_claims(claims, built, judged, der, rb)
    return claims


def _judge_claims(claims: Claims, built: BuiltFolder, judged: pa.Table, der: pa.Table, rb: RuleBase) -> None:
    """The judge entry of both files: its counts and tables recomputed; file name and identity stated
    (the identity is checked against the judge column by the evidence audit)."""
    from spl_hf.audit.claims import read_json
    from spl_hf.audit.load import BUILD_REPORT

    info, tables = _judge_info(judged, der, dict(rb.verdicts))
    stored = (read_json(built.path / BUILD_REPORT) or {}).get("judge")
    # The verdict file's name is stated; one identity is recomputed from the judge column (several
    # are each checked against the column by the evidence audit).
    stated = {k: stored.get(k) for k in ("verdicts_file", *IDENTITY)} if isinstance(stored, dict) else {}
    claims.report["judge"] = claims.card["judge"] = {**stated, **info}
    claims.card["judge_tables"] = tables.to_markdown()


def _evidence_card(built: BuiltFolder) -> dict:
    """The card's producer and label-quality tables, formatted again from build_report.json's entries
    (which the evidence audit recounts from the rows) with the build's own formatter."""
    from spl_hf.audit.claims import read_json
    from spl_hf.audit.load import BUILD_REPORT
    from spl_hf.dataset import evidence_card

    report = read_json(built.path / BUILD_REPORT) or {}
    stored = (read_json(built.path / "card.json") or {}).get("kwargs") or {}
    try:
        quality = dict(report["label_quality"])
        # build_report.json sorts its keys; the card lists the attributes in the labeler's order.
        order = [r.get("attribute") for r in stored.get("label_quality_rows") or [] if isinstance(r, dict)]
        attrs = quality["attributes"]
        if sorted(order) == sorted(attrs):
            quality["attributes"] = {a: attrs[a] for a in order}
        card = evidence_card({"producers": report["producers"], "label_quality": quality})
    except (KeyError, TypeError, AttributeError):
        return {}  # a missing or malformed entry: reported by the evidence audit
    panel = report.get("panel")
    card["panel_file"] = panel.get("file") if isinstance(panel, dict) else None
    del card["panel_markdown"]
    return card
