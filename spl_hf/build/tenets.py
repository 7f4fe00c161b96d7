"""Build per-tenet DPO datasets from unified pairs, judge scores and a min-cost-flow assignment.

The output is a Hub-layout folder: one config per kept tenet (splits per source pool), an
``all`` config (the default) with a ``tenet`` column, and a ``judge_scores`` config holding
every judged (pair, tenet) with its per-ordering probabilities. Every row carries its
derivation (the judge probabilities of both orderings from which the score is recomputed,
the chosen side, the assignment settings) and a digest; the assignment certificate is stored
as ``assignment_certificate.json``, so ``spl-hf audit`` re-verifies scores, orientation,
eligibility and the optimality of the split without a model or a solver.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spl_hf.assign import (
    AssignConfig,
    AssignmentResult,
    assign_tenets,
    certificate_path,
    encode_scores,
    given_assignment,
    read_certificate,
    read_row_groups,
    read_rows,
    read_table,
    verify_certificate,
)
from spl_hf.build.config import TenetBuildConfig, fields_of
from spl_hf.build.judge_quality import build_quality, read_not_judged
from spl_hf.build.rows import row_numbers, with_source_preference
from spl_hf.contract import (
    CERTIFICATE_FILE,
    DECONTAMINATION_FILE,
    DIGEST_DERIVATION,
    JUDGE_FIELDS,
    JUDGED_SCORE_COLUMNS,
    LICENSE_FILE,
    ROW_FEATURES,
    SCORE_FEATURES,
    TENET_INTRO,
    check_inputs,
    license_text,
    pair_hashes,
    read_decontamination,
    row_digests,
    scores_from_probs,
    stated_settings,
    tenet_license_fields,
)
from spl_hf.contract import pool_licenses as source_licenses
from spl_hf.dataset import (
    CARD_INPUTS,
    POOL_FIGURE,
    QUALITY_FIGURE,
    ConfigData,
    card_categories,
    card_inputs,
    judge_quality_card,
    judge_quality_png,
    markdown_table,
    multi_turn_share,
    origins_markdown,
    pool_preference_png,
    render_card,
    shares,
    stage_table,
    write_dataset_folder,
)
from spl_hf.errors import SplHfError
from spl_hf.files import json_text
from spl_hf.held import give_back_freed, hold
from spl_hf.outputs import guard_dir
from spl_hf.sources import ADAPTERS, DEFAULT_CLIP_CHARS, OMITTED_MARKER
from spl_hf.tenets import default_tenets, load_tenets


@dataclass(frozen=True)
class TenetBuildResult:
    path: Path
    rows: int
    tenets_kept: list[str]
    tenets_dropped: list[dict]
    rows_per_source: dict[str, int]
    objective: float
    certificate_ok: bool

    def summary(self) -> dict:
        d = asdict(self)
        d["path"] = str(self.path)
        return d


def _message(content: pa.Array) -> pa.Array:
    n = len(content)
    values = pa.StructArray.from_arrays(
        [pa.array(np.full(n, "assistant", dtype=object), pa.string()), content], names=["role", "content"]
    )
    return pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)), values)


def release_order(
    tenets: pa.Array, sources: pa.Array, kept: list[str], source_order: list[str]
) -> np.ndarray:
    """The rows' order in the release: by kept tenet, then source pool (each in the order given), else
    as they come (a stable sort; tenets not kept last). Each (tenet, source) split of the release is
    then one slice of the rows, holding them in the order a filter of the rows would."""
    t_rank = _ranks(tenets, kept)
    s_rank = _ranks(sources, source_order)
    return np.lexsort((np.arange(len(t_rank)), s_rank, t_rank))


def _ranks(values: pa.Array, order: list[str]) -> np.ndarray:
    """Each value's position in ``order`` (``len(order)`` for a value not in it)."""
    found = pc.index_in(values, value_set=pa.array(order, pa.string()))
    return found.fill_null(len(order)).to_numpy(zero_copy_only=False)


def assemble_rows(
    pairs: pa.Table,
    scores: pa.Table,
    assignment: pa.Table,
    cfg: TenetBuildConfig,
    kept: list[str],
    source_order: list[str],
) -> pa.Table:
    """Join assigned (pair, tenet) with their pair rows and judge probabilities; orient chosen/rejected.

    ``pairs`` holds the pair rows' keys; their texts are read from ``cfg.pairs`` for the assigned rows
    only. The rows come in :func:`release_order`, so the per-tenet configs are slices of them, not copies."""
    pi = row_numbers(assignment, pairs, ["pair_id"], "assigned pairs missing from the pair rows")
    order = pa.array(
        release_order(
            assignment.column("tenet").combine_chunks().cast(pa.string()),
            pairs.column("source").combine_chunks().take(pi).cast(pa.string()),
            kept,
            source_order,
        )
    )
    assignment, pi = assignment.take(order), pi.take(order)
    si = row_numbers(assignment, scores, ["pair_id", "tenet"], "assigned (pair, tenet) without a judge score")
    p_rows, s_rows = pairs.take(pi), scores.take(si)
    texts = read_rows(cfg.pairs, pi.to_numpy(), PAIR_TEXTS)
    p_rows = pa.Table.from_arrays(
        [*p_rows.columns, *texts.columns], names=[*p_rows.column_names, *texts.column_names]
    )
    del texts
    raw = scores_from_probs(s_rows.column("p_a_first").to_numpy(), s_rows.column("p_a_second").to_numpy())
    a_wins = pa.array(raw > 0)
    resp_a, resp_b = (
        p_rows.column("response_a").combine_chunks(),
        p_rows.column("response_b").combine_chunks(),
    )
    sources = p_rows.column("source").combine_chunks()
    row_ids = p_rows.column("row_id").combine_chunks()
    n = assignment.num_rows
    tenets = assignment.column("tenet").combine_chunks().cast(pa.string())
    scenario = pc.binary_join_element_wise(tenets, sources, pc.cast(row_ids, pa.string()), "_")
    judge = pa.StructArray.from_arrays(
        [s_rows.column(k).combine_chunks().cast(JUDGE_FIELDS[k].pa_type) for k in JUDGE_FIELDS],
        names=list(JUDGE_FIELDS),
    )
    derivation = pa.StructArray.from_arrays(
        [
            p_rows.column("pair_id").combine_chunks(),
            p_rows.column("prompt_id").combine_chunks(),
            row_ids.cast(pa.int64()),
            pc.if_else(a_wins, "a", "b"),
            judge,
            pa.array(np.full(n, cfg.threshold)),
            pa.array(np.full(n, cfg.capacity, dtype=np.int64)),
            pa.array(np.full(n, cfg.seed, dtype=np.int64)),
            pa.nulls(n, pa.string()),
        ],
        names=[*DIGEST_DERIVATION, "digest"],
    )
    table = pa.table(
        {
            "tenet": tenets,
            "source": sources,
            "scenario_id": scenario,
            "score": pa.array(np.abs(raw)),
            "prompt": p_rows.column("prompt").combine_chunks(),
            "chosen": _message(pc.if_else(a_wins, resp_a, resp_b)),
            "rejected": _message(pc.if_else(a_wins, resp_b, resp_a)),
            "derivation": derivation,
        }
    ).cast(ROW_FEATURES.arrow_schema)
    digests = row_digests(table)
    der = table.column("derivation").combine_chunks()
    fields = [*[pc.struct_field(der, f.name) for f in der.type][:-1], digests]
    der = pa.StructArray.from_arrays(fields, names=[f.name for f in der.type])
    return table.set_column(table.schema.get_field_index("derivation"), "derivation", der)


def _groups(rows: pa.Table, kept: tuple[str, ...], source_order: list[str]) -> dict[str, dict[str, pa.Table]]:
    """Per kept tenet, its rows per source (sources without rows left out), as slices of ``rows``, which
    are in :func:`release_order`."""
    t_rank = _ranks(rows.column("tenet").combine_chunks().cast(pa.string()), list(kept))
    s_rank = _ranks(rows.column("source").combine_chunks().cast(pa.string()), source_order)
    key = t_rank.astype(np.int64) * (len(source_order) + 1) + s_rank
    out: dict[str, dict[str, pa.Table]] = {t: {} for t in kept}
    if not len(key):
        return out
    if np.any(np.diff(key) < 0):
        raise RuntimeError("the rows are not in release order")  # assemble_rows puts them so
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], len(key)]
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if t_rank[a] < len(kept):
            out[kept[t_rank[a]]][source_order[s_rank[a]]] = rows.slice(a, b - a)
    return out


def _per_source(rows: pa.Table, source_order: list[str]) -> dict[str, int]:
    """Rows per source, for the sources that have any, in ``source_order``."""
    counts = np.bincount(
        _ranks(rows.column("source").combine_chunks().cast(pa.string()), source_order),
        minlength=len(source_order) + 1,
    )
    return {s: int(n) for s, n in zip(source_order, counts.tolist(), strict=False) if n}


def released_score_features():
    """The judge_scores config's features: the contract's, with tenet and source as large_string like
    config `all` (and the v3 card); the audit casts the config to the contract's schema, so both read."""
    from datasets import Features, Value

    return Features({**SCORE_FEATURES, "source": Value("large_string"), "tenet": Value("large_string")})


# The pair columns the build holds (of the decontaminated pairs of a release, or any pairs table), and
# the texts it reads a batch at a time to hash them and again for the assigned rows: at the card, about
# 1.2 GB of text is never held whole.
PAIR_COLUMNS = ("pair_id", "prompt_id", "source", "row_id", "source_preference")
PAIR_TEXTS = ("prompt", "response_a", "response_b")


def build_tenets(
    cfg: TenetBuildConfig, gates: dict | None = None, assigned: AssignmentResult | None = None, tenets=None
) -> TenetBuildResult:
    """``gates``: a release's quality-gate record for the report and card (None outside a release).
    ``assigned``: ``cfg.assignment`` as a release's assign stage solved and verified it, taken as it is
    (:func:`spl_hf.assign.recorded_assignment`); None: solved here, or verified when given.
    ``tenets``: those a release asked to judge, for the report's ``settings`` (spl_hf.contract.settings)."""
    guard_dir(
        cfg.output_dir,
        overwrite=cfg.overwrite,
        inputs=(cfg.pairs, cfg.scores, cfg.tenets_file, cfg.assignment, cfg.not_judged),
    )
    pairs = read_table(cfg.pairs, PAIR_COLUMNS)
    scores, recomputed = _read_scores(cfg)
    hashes = _pair_hashes(cfg.pairs)
    scores = with_source_preference(scores, pairs, check_inputs(pairs, scores, cfg.scores, hashes))
    del hashes
    result, result_check = _assign(cfg, scores.select(["pair_id", "prompt_id", "tenet", "score"]), assigned)
    source_order = list(dict.fromkeys(pairs.column("source").to_pylist()))
    rows = assemble_rows(pairs, scores, result.assignment, cfg, list(result.kept_tenets), source_order)
    give_back_freed()  # the join's and the assignment's temporaries, before the figures' arrays
    configs = _configs(cfg, rows, scores, result.kept_tenets, source_order)
    per_source = _per_source(rows, source_order)
    quality, judge_quality = build_quality(
        scores, rows, list(result.kept_tenets), cfg.threshold, cfg.capacity, read_not_judged(cfg.not_judged)
    )
    decontamination = read_decontamination(cfg.decontamination) if cfg.decontamination else None
    statements = _statements(cfg, result.kept_tenets)
    summary = result.summary()
    card_kwargs = _card_kwargs(cfg, result, rows, scores, recomputed, per_source, statements, decontamination)
    card_kwargs.update(
        judge_quality=judge_quality, judge_quality_card=judge_quality_card(judge_quality), quality_gates=gates
    )
    card_kwargs.update(
        _construction_kwargs(cfg, pairs, scores, rows, source_order, per_source, decontamination)
    )
    del pairs, recomputed  # nothing below reads them
    readme = render_card("tenet_dataset.md.j2", configs, **card_kwargs)
    report = {
        "kind": "tenets",
        **summary,
        "certificate_ok": result_check,
        "rows_per_source": per_source,
        "decontamination": decontamination.summary if decontamination else None,
        "judge_quality": judge_quality,
        **({"quality_gates": gates} if gates is not None else {}),
        "settings": stated_settings(fields_of(cfg, AssignConfig), scores, tenets),
    }
    written = write_dataset_folder(
        cfg.output_dir,
        configs,
        readme,
        overwrite=cfg.overwrite,
        inputs=(cfg.pairs, cfg.scores, cfg.tenets_file, cfg.assignment, cfg.decontamination, cfg.not_judged),
        extra_files={
            CERTIFICATE_FILE: json_text(result.certificate.to_dict(), compact=True, ascii_only=True),
            "build_report.json": json_text(report, sort_keys=True, ascii_only=True, default=str),
            CARD_INPUTS: card_inputs("tenet_dataset.md.j2", configs, **card_kwargs),
            LICENSE_FILE: license_text(TENET_INTRO, pool_licenses(per_source, decontamination)),
            QUALITY_FIGURE: judge_quality_png(scores, rows, quality, cfg.threshold),
            POOL_FIGURE: pool_preference_png(scores, cfg.threshold),
            **({DECONTAMINATION_FILE: decontamination.text} if decontamination else {}),
        },
        max_shard_size=cfg.max_shard_size,
    )
    return TenetBuildResult(
        written.path,
        rows.num_rows,
        list(result.kept_tenets),
        summary["tenets_dropped"],
        per_source,
        result.objective,
        bool(result_check),
    )


def _pair_hashes(path: str) -> pa.Array:
    """:func:`spl_hf.contract.pair_hashes` of every pair row of the file, a row group at a time."""
    parts = [pair_hashes(texts) for texts in read_row_groups(path, PAIR_TEXTS)]
    return pa.concat_arrays(parts) if parts else pa.array([], pa.string())


def _read_scores(cfg: TenetBuildConfig) -> tuple[pa.Table, np.ndarray]:
    """The judge scores, typed, and each score recomputed from its two probabilities (must be equal)."""
    # Held with dictionaries (spl_hf.held): at the card, 16.4M rows at ~80 bytes rather than ~435.
    scores = read_table(cfg.scores, JUDGED_SCORE_COLUMNS, held=True)
    missing = [c for c in JUDGED_SCORE_COLUMNS if c not in scores.column_names]
    if missing:
        raise SplHfError(f"{cfg.scores}: judge scores lack columns {missing}")
    judged_schema = pa.schema([SCORE_FEATURES.arrow_schema.field(c) for c in JUDGED_SCORE_COLUMNS])
    scores = hold(scores.select(list(JUDGED_SCORE_COLUMNS)), judged_schema)
    recomputed = scores_from_probs(
        scores.column("p_a_first").to_numpy(), scores.column("p_a_second").to_numpy()
    )
    # Exact: the audit recomputes scores from the probabilities, so a build must assign on those.
    off = np.flatnonzero(recomputed != scores.column("score").to_numpy())
    if len(off):
        raise SplHfError(
            f"{cfg.scores}: rows {off[:5].tolist()} have a score that is not p_a_first - p_a_second"
        )
    return scores, recomputed


def _assign(cfg: TenetBuildConfig, columns: pa.Table, assigned: AssignmentResult | None = None):
    """The assignment (solved here, given and verified, or recorded) and whether its certificate holds."""
    if assigned is not None:  # solved and verified by the release's assign stage on these scores
        _check_solved_as_built(cfg, assigned)
        return assigned, True
    if cfg.assignment:  # solved by `spl-hf assign`: used only once its certificate verifies here
        cert = read_certificate(certificate_path(cfg.assignment))
        # given_assignment verifies the certificate against these scores and raises unless it holds
        # (checking it again on the same rows, sorted, could only repeat the verdict).
        given = read_table(cfg.assignment)
        result = given_assignment(encode_scores(columns), given, cert, cfg.assignment)
        _check_solved_as_built(cfg, result)
        return result, True
    config = AssignConfig(**fields_of(cfg, AssignConfig))  # the build's config is an AssignConfig
    judged = encode_scores(columns)  # once, for the solve and its check
    result = assign_tenets(judged, config)
    check = verify_certificate(judged, result)
    if not check.ok:  # a solver or reduction bug: publish nothing rather than an unproven split
        raise RuntimeError(f"the assignment's certificate does not verify: {list(check.failures)[:5]}")
    return result, check.ok


def _check_solved_as_built(cfg: TenetBuildConfig, result: AssignmentResult) -> None:
    """An assignment solved elsewhere must have been solved with the build's capacity, threshold and seed."""
    differ = [k for k in ("capacity", "threshold", "seed") if getattr(result.config, k) != getattr(cfg, k)]
    if differ:
        raise SplHfError(
            f"{cfg.assignment}: solved with "
            + ", ".join(f"{k}={getattr(result.config, k)!r}" for k in differ)
            + ", the build is set to "
            + ", ".join(f"{k}={getattr(cfg, k)!r}" for k in differ)
        )


def _configs(
    cfg: TenetBuildConfig, rows: pa.Table, scores: pa.Table, kept: tuple[str, ...], source_order: list[str]
) -> list[ConfigData]:
    """One config per kept tenet (a split per source), 'all' over them, 'judge_scores' and maybe 'sft'."""
    # Slices of the rows (in release order), not copies: at the card, 196,000 rows held once, not twice.
    per_tenet = [
        ConfigData(tenet, ROW_FEATURES, splits) for tenet, splits in _groups(rows, kept, source_order).items()
    ]
    # `all` stores nothing itself: its `train` split lists every per-tenet file (rows keep `tenet`).
    union = [(c.name, s) for c in per_tenet for s in c.splits]
    everything = (
        ConfigData("all", ROW_FEATURES, {}, default=True, unions={"train": union})
        if union
        else (ConfigData("all", ROW_FEATURES, {"train": rows}, default=True))
    )  # no tenet kept: an empty split
    configs = [everything, *per_tenet]
    released = released_score_features()
    # Still held: the folder writer decodes the dictionaries one shard at a time.
    configs.append(ConfigData("judge_scores", released, {"train": hold(scores, released.arrow_schema)}))
    if cfg.sft:
        from spl_hf.build.sft import sft_config

        configs.append(sft_config(per_tenet))
    return configs


def _statements(cfg: TenetBuildConfig, kept: tuple[str, ...]) -> dict[str, str]:
    tenet_set = load_tenets(cfg.tenets_file) if cfg.tenets_file else default_tenets()
    statements = {t.name: t.statement for t in tenet_set.tenets}
    unknown = [t for t in kept if t not in statements]
    if unknown:
        raise SplHfError(f"kept tenets without a statement (give tenets_file / --tenets_file): {unknown}")
    return statements


def _pair_stage(table: pa.Table) -> pa.Table:
    """One row per judged pair (``source``, ``prompt_id``) of a (pair, tenet) score table."""
    return table.group_by(["pair_id", "prompt_id", "source"]).aggregate([])


def _judges(scores: pa.Table) -> list[dict[str, str]]:
    """Each judge identity of the scores (model id, revision or directory digest, template hash)."""
    keys = ["model_id", "model_revision", "template_hash"]
    return sorted(
        scores.select(keys).group_by(keys).aggregate([]).to_pylist(),
        key=lambda j: tuple(map(str, j.values())),
    )


def _construction_kwargs(
    cfg: TenetBuildConfig, pairs, scores, rows, source_order, per_source, decontamination
) -> dict:
    """The card's construction: each source's origin, counts per stage and source, shares, warnings."""
    summary = decontamination.summary if decontamination else None
    # Only the columns a stage counts are filtered (the whole judge_scores table is millions of rows).
    eligible = scores.select(["pair_id", "prompt_id", "source"]).filter(
        pc.greater_equal(pc.abs(scores.column("score")), cfg.threshold)
    )
    released = pa.table(
        {
            "source": rows.column("source"),
            "prompt_id": pc.struct_field(rows.column("derivation").combine_chunks(), "prompt_id"),
        }
    )
    stage_rows = stage_table(
        source_order,
        summary,
        [
            ("in build", pairs.select(["source", "prompt_id"])),
            ("judged", _pair_stage(scores)),
            ("eligible", _pair_stage(eligible)),
            ("released", released),
        ],
    )
    total = stage_rows[-1] if stage_rows else {}
    no_rows = "The build has no pair rows, so there is nothing to count per source."
    return dict(
        origins_table=origins_markdown(
            (summary or {}).get("sources") or [],
            source_order,
            empty="The build has no pair rows, so no source is named.",
        ),
        stages_table=markdown_table(
            stage_rows,
            right=[k for k in (stage_rows[0] if stage_rows else {}) if k != "source"],
            empty=no_rows,
        ),
        pairs_total=total.get("in build", "0 (0)"),
        eligible_total=total.get("eligible", "0 (0)"),
        shares_table=markdown_table(
            shares(per_source),
            right=["rows", "share"],
            empty="No row was released (no tenet's eligible pool filled the capacity), so there is no "
            "share per source.",
        ),
        judges=_judges(scores),
        multi_turn=multi_turn_share(per_source),
        **card_categories(source_order, (summary or {}).get("sources") or []),
        sft=bool(cfg.sft),
    )


def pool_licenses(per_source: dict[str, int], decontamination: Any) -> dict[str, str]:
    """Each source pool of the rows with its licence (a named source's from its recorded read)."""
    reports = (decontamination.summary.get("sources") or []) if decontamination is not None else []
    return source_licenses(per_source, {n: a.license for n, a in ADAPTERS.items()}, reports)


def _card_kwargs(
    cfg: TenetBuildConfig, result, rows, scores, recomputed, per_source, statements, decontamination
):
    """What the card is rendered from: the licence, the solve's summary, counts and settings."""
    fields = tenet_license_fields(pool_licenses(per_source, decontamination))
    summary = result.summary()
    return dict(
        license=fields["license"],
        license_name=fields["license_name"],
        license_link=fields["license_link"],
        pretty_name=cfg.pretty_name,
        tags=["dpo", "preference", "values", "alignment", "recorded-derivation"],
        repo_id=cfg.repo_id,
        rows=rows.num_rows,
        kept=[(t, statements.get(t, "")) for t in result.kept_tenets],
        dropped=summary["tenets_dropped"],
        per_source=per_source,
        capacity=cfg.capacity,
        threshold=cfg.threshold,
        threshold_note=cfg.threshold_note,
        seed=cfg.seed,
        solver=result.config.solver,
        strategy=summary["strategy"],
        scale=summary["scale"],
        objective=round(result.objective, 6),
        mean_abs=round(summary["mean_abs_score"] or 0.0, 6),
        judged=scores.num_rows,
        eligible=int((np.abs(recomputed) >= cfg.threshold).sum()),
        license_note=fields["license_note"],
        model_ids=sorted(pc.unique(scores.column("model_id")).to_pylist()),
        clip_chars=DEFAULT_CLIP_CHARS,
        omitted_marker=OMITTED_MARKER,
        decontamination=decontamination.summary if decontamination else None,
    )
