"""What a tenet build says about its rows, recomputed: the :class:`~spl_hf.audit.claims.Claims` of
``card.json``, ``build_report.json``, ``LICENSE.md``, and the judge-quality figure redrawn.

The assignment's summary (objective, kept and dropped tenets, settings) comes from the certificate
the row audit verified; counts from the released ``judge_scores`` and rows; the licence from the
released sources' adapters. ``judge_quality.png`` is drawn again from the released scores with the
build's own function (:func:`spl_hf.dataset.judge_quality_png`) and compared byte for byte: the figure
is saved without any version text, so the same data and the same matplotlib give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.assign import Certificate
from spl_hf.audit.claims import Claims, decontamination_summary, read_json
from spl_hf.audit.gates import gate_claims
from spl_hf.audit.load import BUILD_REPORT, BuiltFolder
from spl_hf.contract import (
    CERTIFICATE_FILE,
    TENET_INTRO,
    TenetQuality,
    expected_settings,
    no_rows_concerned,
    pool_licenses,
    tenet_license_fields,
)
from spl_hf.dataset import POOL_FIGURE, QUALITY_FIGURE, judge_quality_card
from spl_hf.held import count_distinct

TEMPLATE = "tenet_dataset.md.j2"
FIGURE_FILE = QUALITY_FIGURE
FILES = (CERTIFICATE_FILE, FIGURE_FILE, POOL_FIGURE)
CARD_STATED = frozenset(
    {
        "pretty_name",
        "tags",
        "repo_id",
        "revision",  # the branch publish pushed to (card.json records it with the repo id)
        "threshold_note",
        "judge_quality",  # recomputed by spl_hf.audit.tenets.judge_quality
        # Tables about the pools before the build (read records, pairs in the build before judging):
        # shown from the decontamination record and the build's inputs.
        "origins_table",
        "stages_table",
        "pairs_total",
        "eligible_total",
        "shares_table",
        "multi_turn",
        "harmful_pools",
        "undeclared_pools",  # sources whose category was not declared (from the read records)
    }
)
# quality_gates is recomputed by spl_hf.audit.gates (its settings and note are the release's, stated).
REPORT_STATED = frozenset({"judge_quality", "final_arcs"})


def _per_source(rows: pa.Table, order: object) -> dict[str, int]:
    """Released rows per source, in the order the card lists them when it lists the same sources."""
    counts = dict(
        zip(*(c.to_pylist() for c in pc.value_counts(rows.column("source")).flatten()), strict=True)
    )
    if isinstance(order, Mapping) and set(order) == set(counts):
        return {s: counts[s] for s in order}
    return counts


def _pool_licenses(per_source: Mapping[str, int], decontamination: Mapping | None) -> dict[str, str]:
    """The build's own rule: a built-in pool's adapter licence, a named source's recorded one."""
    from spl_hf.sources import ADAPTERS

    reports = (decontamination or {}).get("sources") or []
    return pool_licenses(per_source, {n: a.license for n, a in ADAPTERS.items()}, reports)


def _summary(cert: Certificate) -> dict:
    return {
        "objective": cert.objective,
        "assigned": cert.assigned,
        "mean_abs_score": cert.objective / cert.assigned if cert.assigned else None,
        "tenets_kept": list(cert.kept_tenets),
        "tenets_dropped": [{"tenet": d.tenet, "reason": d.reason} for d in cert.dropped_tenets],
        "num_tenets_kept": len(cert.kept_tenets),
        "num_tenets_dropped": len(cert.dropped_tenets),
        "capacity": cert.capacity,
        "threshold": cert.threshold,
        "seed": cert.seed,
        "scale": cert.scale,
        "tie_range": cert.tie_range,
        "strategy": cert.strategy,
        "solver": cert.solver,
        "solves": len(cert.solves),
    }


def tenet_claims(
    built: BuiltFolder,
    cert: Certificate,
    certificate_ok: bool,
    scores: pa.Table,
    rows: pa.Table,
    quality: list[TenetQuality],
) -> Claims:
    """The expected entries of a tenet build's card.json and build_report.json, and its licence
    (``quality``: :func:`released_quality`)."""
    claims = Claims(TEMPLATE, FILES, card_stated=CARD_STATED, report_stated=REPORT_STATED)
    card = (read_json(built.path / "card.json") or {}).get("kwargs") or {}
    per_source = _per_source(rows, card.get("per_source"))
    decontamination = decontamination_summary(built.path)
    licenses = _pool_licenses(per_source, decontamination)
    claims.license_intro, claims.licenses = TENET_INTRO, licenses
    eligible = pc.greater_equal(pc.abs(scores.column("score")), cert.threshold)
    elig = scores.filter(eligible)
    summary = _summary(cert)
    claims.report = {
        "kind": "tenets",
        **summary,
        "certificate_ok": certificate_ok,
        "rows": scores.num_rows,
        "eligible_rows": elig.num_rows,
        "eligible_pairs": count_distinct(elig.column("pair_id")),
        "eligible_prompts": count_distinct(elig.column("prompt_id")),
        "final_prompts": len(cert.prompt_ids),
        "rows_per_source": per_source,
        "decontamination": decontamination,
        "settings": expected_settings(_report_entry(built.path, "settings"), cert, scores),
    }
    claims.card = _card(cert, summary, card, scores, rows, per_source, elig.num_rows)
    claims.card["decontamination"] = decontamination
    claims.card["sft"] = "sft" in built.card.configs
    section = _quality_section(built.path, quality, cert)
    claims.card["judge_quality_card"] = judge_quality_card(section)
    claims.card.update(tenet_license_fields(licenses))
    # The release gated the judge stage's scores, which the build releases whole as judge_scores (every
    # judged tenet, kept or not), so the gated figures are this section's; its rows are the 'all' rows.
    tenets = len(cert.kept_tenets) + len(cert.dropped_tenets)
    concerned = no_rows_concerned(rows.num_rows, tenets, cert.capacity)
    gate_claims(claims, built.path, section, rows.num_rows, concerned)
    return claims


def _report_entry(folder: Path, key: str) -> object:
    """An entry of build_report.json, or None when the file is not a JSON object (named elsewhere)."""
    report = read_json(folder / BUILD_REPORT)
    return report.get(key) if isinstance(report, dict) else None


def _card(cert, summary, card, scores, rows, per_source, eligible) -> dict:
    from spl_hf.sources import DEFAULT_CLIP_CHARS, OMITTED_MARKER

    statements = {k[0]: k[1] for k in card.get("kept") or [] if isinstance(k, list) and len(k) == 2}
    keys = ["model_id", "model_revision", "template_hash"]
    judges = scores.select(keys).group_by(keys).aggregate([]).to_pylist()
    return {
        "rows": rows.num_rows,
        # Each kept tenet's statement is the tenet file's text (stated); the tenets are the certificate's.
        "kept": [[t, statements.get(t, "missing")] for t in cert.kept_tenets],
        "dropped": summary["tenets_dropped"],
        "per_source": per_source,
        "capacity": cert.capacity,
        "threshold": cert.threshold,
        "seed": cert.seed,
        "solver": cert.solver,
        "strategy": cert.strategy,
        "scale": cert.scale,
        "objective": round(cert.objective, 6),
        "mean_abs": round(summary["mean_abs_score"] or 0.0, 6),
        "judged": scores.num_rows,
        "eligible": eligible,
        "model_ids": sorted(set(pc.unique(scores.column("model_id")).to_pylist())),
        "judges": sorted(judges, key=lambda j: tuple(map(str, j.values()))),
        "clip_chars": DEFAULT_CLIP_CHARS,
        "omitted_marker": OMITTED_MARKER,
    }


def _compare_png(built: BuiltFolder, name: str, drawn: bytes, what: str) -> list[str]:
    import matplotlib

    path = built.path / name
    if not path.is_file():
        return [f"{name} is missing: a tenet build ships its {what}"]
    if path.read_bytes() == drawn:
        return []
    return [
        f"{name}: differs from the figure drawn again from the released judge_scores and rows "
        f"(drawn here with matplotlib {matplotlib.__version__}; a figure drawn by another matplotlib "
        "version may differ: audit with the version the build used)"
    ]


def quality_inputs(folder, rows: pa.Table, cert: Certificate) -> tuple[dict, dict | None]:
    """The released |scores| per kept tenet (in the certificate's order, as the build lists them) and
    :func:`recorded_not_judged`."""
    tenet = rows.column("tenet")
    released = {t: rows.filter(pc.equal(tenet, t)).column("score").to_numpy() for t in cert.kept_tenets}
    return released, recorded_not_judged(folder)


def recorded_not_judged(folder) -> dict | None:
    """The not-judged counts the build recorded (the judge stage's: not recomputable from the release,
    checked to sum by the judge-quality audit), or None when it recorded none."""
    section = _report_entry(folder, "judge_quality")
    recorded = isinstance(section, Mapping) and bool(section.get("not_judged_recorded"))
    if not recorded:
        return None
    return {t.get("tenet"): int(t.get("not_judged") or 0) for t in section.get("tenets", [])}


def released_quality(folder, scores: pa.Table, rows: pa.Table, cert: Certificate) -> list[TenetQuality]:
    """The judge-quality figures recomputed from the release: its judge scores, the 'all' rows' scores
    per kept tenet and the not-judged counts the build recorded (see :func:`quality_inputs`)."""
    from spl_hf.contract import judge_quality

    released, not_judged = quality_inputs(folder, rows, cert)
    return judge_quality(
        scores, released, threshold=cert.threshold, capacity=cert.capacity, not_judged=not_judged
    )


def check_figure(
    built: BuiltFolder, scores: pa.Table, rows: pa.Table, cert: Certificate, quality: list[TenetQuality]
) -> list[str]:
    """``judge_quality.png`` and ``judge_vs_pool.png`` against the figures drawn again from the release
    (``quality``: :func:`released_quality`)."""
    from spl_hf.dataset import judge_quality_png, pool_preference_png

    return _compare_png(
        built, FIGURE_FILE, judge_quality_png(scores, rows, quality, cert.threshold), "judge-quality figure"
    ) + _compare_png(built, POOL_FIGURE, pool_preference_png(scores, cert.threshold), "judge-vs-pool figure")


def _quality_section(folder, quality: list[TenetQuality], cert: Certificate) -> dict:
    """The judge-quality section of :func:`released_quality` (for the card's table and the gates)."""
    from spl_hf.contract import section_of

    recorded = recorded_not_judged(folder) is not None
    return section_of(quality, threshold=cert.threshold, capacity=cert.capacity, not_judged_recorded=recorded)
