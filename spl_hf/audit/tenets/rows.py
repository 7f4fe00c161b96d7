"""Audit of a per-tenet DPO build: scores, orientation, eligibility, digests and the assignment.

Everything is recomputed from what the build stored: each row's score from its two per-ordering
judge probabilities, the chosen side from the score's sign, eligibility from the threshold, the
digest from the row, and optimality of the whole split from the ``judge_scores`` config and
``assignment_certificate.json`` (no model, no solver). All row splits are checked in one
vectorised pass: rows meet their judge scores through one Arrow join on (pair_id, tenet).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from datasets import Features, Value

from spl_hf.assign import Certificate, verify_assignment
from spl_hf.audit.claims import Claims
from spl_hf.audit.load import BuiltFolder, read_folder
from spl_hf.audit.spl.labels import differs
from spl_hf.audit.tenets.claims import check_figure, released_quality, tenet_claims
from spl_hf.audit.tenets.judge_quality import check_judge_quality
from spl_hf.contract import (
    CERTIFICATE_FILE,
    JUDGE_FIELDS,
    MESSAGES,
    ROW_FEATURES,
    SCORE_FEATURES,
    oriented_input_hashes_arrow,
    row_digests,
    scores_from_probs,
)
from spl_hf.derive import filled
from spl_hf.errors import SplHfError
from spl_hf.held import give_back_freed, hold, key_codes, taken

TOLERANCE = 1e-12
# The optional companion config of `spl-hf build tenets --sft` (spl_hf.build.sft; audit never imports build).
SFT_CONFIG = "sft"
SFT_FEATURES = Features(
    {
        "scenario_id": Value("string"),
        "tenet": Value("string"),
        "source": Value("string"),
        "messages": MESSAGES,
    }
)
NOT_TENET_CONFIGS = ("all", "judge_scores", SFT_CONFIG)


@dataclass
class TenetAuditReport:
    rows: int = 0
    reproduced: int = 0
    mismatch_count: int = 0
    mismatches: list[dict] = field(default_factory=list)
    certificate_ok: bool = False
    certificate_failures: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # completeness and manifest: files, configs, counts
    notes: list[str] = field(default_factory=list)  # what was not checked, and why
    # What card.json, build_report.json and LICENSE.md must say (None when the certificate, the rows or
    # the scores could not be read); checked by spl_hf.audit.claims with the rest of the release.
    claims: Claims | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.mismatch_count == 0 and self.certificate_ok and not self.failures

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "claims"} | {
            "mismatches": [dict(m) for m in self.mismatches]
        }


def _field(der: pa.Array, *names: str) -> pa.Array:
    for name in names:
        der = pc.struct_field(der, name)
    return der


def _mask(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """True where ``values`` (a boolean array) is false or null."""
    return ~filled(values, False, bool)


def score_rows(pair_id: pa.Array, tenet: pa.Array, scores: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """For each (pair_id, tenet): its row in ``scores`` (-1 if absent) and whether that key repeats there.

    One Arrow hash join instead of a Python dict over every judged row. The audited rows are the
    join's build side (far fewer than the judged rows, which only probe it); a key judged twice
    shows up as two matches of its row.
    """
    n = len(pair_id)
    if not pa.types.is_dictionary(scores.schema.field("tenet").type):
        tenet = tenet.cast(scores.schema.field("tenet").type)  # rows hold large_string, scores string
    # Where the scores are held with dictionaries (spl_hf.held), both sides join on their indices.
    (pair_probe, pair_held), (tenet_probe, tenet_held) = (
        key_codes(pair_id, scores.column("pair_id")),
        key_codes(tenet, scores.column("tenet")),
    )
    judged = pa.table(
        {
            "pair_id": pair_held,
            "tenet": tenet_held,
            "_srow": pa.array(np.arange(scores.num_rows, dtype=np.int64)),
        }
    )
    audited = pa.table(
        {"pair_id": pair_probe, "tenet": tenet_probe, "_row": pa.array(np.arange(n, dtype=np.int64))}
    )
    matches = judged.join(audited, ["pair_id", "tenet"], join_type="inner")
    rows = matches.column("_row").to_numpy()
    index = np.full(n, -1, dtype=np.int64)
    index[rows] = matches.column("_srow").to_numpy()
    return index, np.bincount(rows, minlength=n) > 1


# Rows checked (and twins and sft rows compared) a slice at a time: the texts a check combines, takes or
# hashes are then held for so many rows, not for every row (at the card the audited rows are 392,000
# of about 5 KB: each whole-column copy was 0.6-1 GB).
CHECK_SLICE_ROWS = 1 << 13


def _slices(n: int) -> range:
    """Starts of the slices of ``n`` rows (one, empty, slice when ``n`` is 0)."""
    return range(0, max(n, 1), CHECK_SLICE_ROWS)


def check_rows(table: pa.Table, scores: pa.Table, cert: Certificate | None) -> dict[str, np.ndarray]:
    """Per-row checks of row table(s) against the judge score table and the certificate (vectorised):
    one join of every row with the scores, then the rest a slice of rows at a time."""
    index, repeated = score_rows(
        pc.struct_field(table.column("derivation"), "pair_id").combine_chunks(),
        table.column("tenet").combine_chunks(),
        scores,
    )
    parts = [
        _check_slice(
            table.slice(i, CHECK_SLICE_ROWS),
            scores,
            cert,
            index[i : i + CHECK_SLICE_ROWS],
            repeated[i : i + CHECK_SLICE_ROWS],
        )
        for i in _slices(table.num_rows)
    ]
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _check_slice(
    table: pa.Table, scores: pa.Table, cert: Certificate | None, index: np.ndarray, repeated: np.ndarray
) -> dict[str, np.ndarray]:
    """:func:`check_rows` of the rows ``table``, whose score rows are ``index`` (-1: none) and ``repeated``."""
    der = table.column("derivation").combine_chunks()
    p1 = _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False)
    p2 = _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False)
    raw = scores_from_probs(p1, p2)
    score = table.column("score").to_numpy()
    side = _field(der, "chosen_side")
    threshold = _field(der, "threshold").to_numpy(zero_copy_only=False)
    checks = {
        "score": ~(np.abs(np.abs(raw) - score) <= TOLERANCE),
        "chosen_side": _mask(pc.equal(side, pa.array(np.where(raw > 0, "a", "b")))),
        "threshold": ~(score >= threshold),
        "digest": _mask(pc.equal(_field(der, "digest"), row_digests(table))),
    }
    expected_scenario = pc.binary_join_element_wise(
        table.column("tenet"),
        table.column("source"),
        pc.cast(_field(der, "row_id"), table.schema.field("tenet").type),
        pa.scalar("_", table.schema.field("tenet").type),
    )
    checks["scenario_id"] = _mask(pc.equal(table.column("scenario_id"), expected_scenario))
    settings = np.zeros(len(table), dtype=bool)
    if cert is not None:
        for name, want in (("threshold", cert.threshold), ("capacity", cert.capacity), ("seed", cert.seed)):
            settings |= _mask(pc.equal(_field(der, name), want))
    checks["settings"] = settings
    # chosen/rejected must be the judged texts, on the side the score favours.
    implied = oriented_input_hashes_arrow(
        table.column("prompt").combine_chunks(),
        table.column("chosen").combine_chunks(),
        table.column("rejected").combine_chunks(),
        side,
    )
    checks["texts"] = _mask(pc.equal(_field(der, "judge", "input_sha256"), implied))
    # The stored probabilities must be the judged ones.
    judged = (index < 0) | repeated
    take = pa.array(np.maximum(index, 0))
    for name in JUDGE_FIELDS:
        expected = (
            scores.column(name).take(take)
            if scores.num_rows
            else pa.nulls(len(table), JUDGE_FIELDS[name].pa_type)
        )
        judged |= _mask(pc.equal(_field(der, "judge", name), expected))
    checks["judge"] = judged
    return checks


def _twins(rows: pa.Table, reference: pa.Table) -> np.ndarray:
    """For each row, the one ``reference`` row with its scenario_id if the two are identical in every
    column (null equal to null), else -1."""
    n = rows.num_rows
    probe = pa.table(
        {
            "scenario_id": reference.column("scenario_id"),
            "_ref": pa.array(np.arange(reference.num_rows, dtype=np.int64)),
        }
    )
    build = pa.table(
        {"scenario_id": rows.column("scenario_id"), "_row": pa.array(np.arange(n, dtype=np.int64))}
    )
    matches = probe.join(build, "scenario_id", join_type="inner")
    at = matches.column("_row").to_numpy()
    twin = np.full(n, -1, dtype=np.int64)
    twin[at] = matches.column("_ref").to_numpy()
    twin[np.bincount(at, minlength=n) != 1] = -1
    candidates = np.flatnonzero(twin >= 0)
    for i in range(0, len(candidates), CHECK_SLICE_ROWS):
        part = candidates[i : i + CHECK_SLICE_ROWS]
        mine, theirs = taken(rows, part), taken(reference, twin[part])
        differ = np.zeros(len(part), dtype=bool)
        for name in rows.column_names:
            differ |= differs(mine.column(name).combine_chunks(), theirs.column(name).combine_chunks())
        twin[part[differ]] = -1
    return twin


def _checks_once(
    rows: pa.Table, n_all: int, scores: pa.Table, cert: Certificate | None
) -> dict[str, np.ndarray]:
    """:func:`check_rows` over ``rows`` whose first ``n_all`` are the 'all' config.

    A per-tenet row identical in every column to its 'all' row gets that row's verdicts (the checks
    are a function of the row's content), so each published row is recomputed once, not twice.
    """
    if n_all == 0 or n_all == rows.num_rows:
        return check_rows(rows, scores, cert)
    head, tail = rows.slice(0, n_all), rows.slice(n_all)
    head_checks = check_rows(head, scores, cert)
    give_back_freed()  # the join with every score (at the card, 0.6 GB the allocators kept)
    twin = _twins(tail, head)
    tail_checks = {name: mask[np.maximum(twin, 0)] for name, mask in head_checks.items()}
    own = np.flatnonzero(twin < 0)
    if len(own):
        checked = check_rows(tail.take(pa.array(own)), scores, cert)
        for name, mask in tail_checks.items():
            mask[own] = checked[name]
    return {name: np.concatenate([head_checks[name], tail_checks[name]]) for name in head_checks}


def _read_certificate(folder: Path, failures: list[str]) -> Certificate | None:
    path = folder / CERTIFICATE_FILE
    if not path.is_file():
        failures.append(f"{CERTIFICATE_FILE} is missing: the assignment cannot be verified")
        return None
    try:
        return Certificate.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        failures.append(f"{CERTIFICATE_FILE}: not a readable certificate ({type(exc).__name__}: {exc})")
        return None


def _typed(
    splits: list, features, failures: list[str], held: bool = False
) -> list[tuple[str, str, pa.Table]]:
    """Splits cast to the contract's schema; a split that does not fit it is a failure, not a crash.
    ``held``: string columns kept as dictionaries (spl_hf.held), as the judge scores are read."""
    out = []
    schema = features.arrow_schema
    for s in splits:
        missing = [c for c in schema.names if c not in s.table.column_names]
        try:
            if missing:
                raise SplHfError(f"missing columns {missing}")
            table = s.table.select(schema.names)
            out.append((s.config, s.split, hold(table, schema) if held else table.cast(schema)))
        except (ValueError, pa.ArrowException) as exc:
            failures.append(f"{s.config}/{s.split}: not the tenet build's row schema ({exc})")
    return out


def _check_all_files(built: BuiltFolder, failures: list[str]) -> None:
    """When the card declares 'all' as other configs' files (the Hub layout), it must list exactly the
    per-tenet files, each once: a card that drops a file hides rows, one that repeats a file serves
    them twice (the row partition check cannot see a repeat, which the reader reads once)."""
    all_files = [f for (c, _), files in built.files.items() if c == "all" for f in files]
    if all(f.startswith("all/") for f in all_files):
        return  # 'all' stores its rows itself: the row partition check compares them
    tenet_files = [f for (c, _), files in built.files.items() if c not in NOT_TENET_CONFIGS for f in files]
    listed, stored = Counter(all_files), Counter(tenet_files)
    if listed != stored:
        missing = sorted((stored - listed).elements())
        extra = sorted(f for f in (listed - stored).elements() if f not in stored)
        repeated = sorted({f for f, n in listed.items() if n > 1})
        failures.append(
            f"'all' lists {len(all_files)} files but the per-tenet configs hold {len(tenet_files)}: "
            f"'all' must list every per-tenet file exactly once (missing {missing[:5]}, "
            f"not per-tenet {extra[:5]}, repeated {repeated[:5]})"
        )


def _messages_differ(messages: pa.Array, prompt: pa.Array, chosen: pa.Array) -> np.ndarray:
    """True where ``messages[i]`` is not ``prompt[i] + chosen[i]`` (a null list anywhere differs)."""
    lp, lc = (
        pc.list_value_length(a).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        for a in (prompt, chosen)
    )
    n = lp + lc
    row_of = np.repeat(np.arange(len(n)), n)
    k = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)  # position within the expected row
    off_p, off_c = (a.offsets.to_numpy()[:-1] for a in (prompt, chosen))
    # Each expected row: its prompt's messages, then its chosen's (indices into prompt.values + chosen.values).
    want = np.where(k < lp[row_of], off_p[row_of] + k, len(prompt.values) + off_c[row_of] + k - lp[row_of])
    values = pa.concat_arrays([prompt.values, chosen.values]).take(pa.array(want, pa.int64()))
    offsets = pa.array(np.concatenate([[0], np.cumsum(n)]), pa.int32())
    expected = pa.ListArray.from_arrays(offsets, values, type=messages.type)
    null = _mask(pc.and_(pc.and_(messages.is_valid(), prompt.is_valid()), chosen.is_valid()))
    return null | differs(messages, expected)


def _sft_slice(sft: pa.Table, all_table: pa.Table, at: np.ndarray) -> dict[str, np.ndarray]:
    """Where each of the 'sft' rows ``sft`` differs from the 'all' row ``at`` (in its tenet, source, or
    messages = prompt + chosen)."""
    ref = taken(all_table.select(["tenet", "source", "prompt", "chosen"]), at)
    checks = {
        name: differs(sft.column(name).combine_chunks(), ref.column(name).combine_chunks())
        for name in ("tenet", "source")
    }
    checks["messages"] = _messages_differ(
        sft.column("messages").combine_chunks(),
        ref.column("prompt").combine_chunks(),
        ref.column("chosen").combine_chunks(),
    )
    return checks


def _audit_sft(
    splits: list, all_table: pa.Table | None, report: TenetAuditReport, flag, max_report: int
) -> None:
    """The 'sft' rows must be the 'all' rows, in order, each with messages = prompt + chosen."""
    typed = _typed(splits, SFT_FEATURES, report.failures)
    if not typed or all_table is None:
        if typed:
            report.failures.append("'sft' cannot be checked: the 'all' rows could not be read")
        return
    sft = pa.concat_tables([t for _, _, t in typed])
    n = sft.num_rows
    ids = sft.column("scenario_id").combine_chunks()
    ref_ids = all_table.column("scenario_id").combine_chunks()
    index = pc.index_in(ids, value_set=ref_ids).to_numpy(zero_copy_only=False)
    index = np.nan_to_num(index.astype(float), nan=-1).astype(np.int64)
    found = index >= 0
    checks = {"scenario_id": ~found}
    if not all_table.num_rows:
        for name in ("tenet", "source", "messages", "order"):
            checks[name] = np.zeros(n, dtype=bool)
    else:
        parts = [
            _sft_slice(
                sft.slice(i, CHECK_SLICE_ROWS), all_table, np.maximum(index[i : i + CHECK_SLICE_ROWS], 0)
            )
            for i in _slices(n)
        ]
        for name in ("tenet", "source", "messages"):
            checks[name] = found & np.concatenate([p[name] for p in parts])
        checks["order"] = found & (index != np.arange(n))
    bad = np.logical_or.reduce(list(checks.values()))
    report.rows += n
    report.mismatch_count += int(bad.sum())
    starts = np.cumsum([0] + [t.num_rows for _, _, t in typed])
    for i in np.flatnonzero(bad)[: max(0, max_report - len(report.mismatches))]:
        k = int(np.searchsorted(starts, i, side="right") - 1)
        flag(
            SFT_CONFIG,
            typed[k][1],
            int(i - starts[k]),
            ids[int(i)].as_py(),
            [f for f, m in checks.items() if m[i]],
        )
    missing = pc.sum(pc.invert(pc.is_in(ref_ids, value_set=ids))).as_py() or 0
    if n != all_table.num_rows or missing:
        report.failures.append(
            f"'sft' holds {n} rows and 'all' {all_table.num_rows} ({missing} 'all' rows have no sft row): "
            "'sft' must hold the 'all' rows, each once, in the same order"
        )


def audit_folder(built: BuiltFolder, max_report: int = 1000) -> TenetAuditReport:
    """Audit the tenet build ``built`` (read by :func:`read_folder`)."""
    report = TenetAuditReport(failures=list(built.failures), notes=list(built.notes))
    names = set(built.card.configs)
    for required in ("all", "judge_scores"):
        if required not in names:
            report.failures.append(
                f"the card declares no {required!r} config: a tenet build has 'all' and 'judge_scores'"
            )
    cert_failures: list[str] = []
    cert = _read_certificate(built.path, cert_failures)
    give_back_freed()  # what reading the files freed (at the card, 1.1 GB), before the checks' own

    def flag(config: str, split: str, row: int, ident: str, fields: list[str]) -> None:
        report.mismatches.append(
            {"config": config, "split": split, "row": row, "id": ident, "fields": fields}
        )

    scores, score_splits, bad_scores = _audit_scores(built, report, flag, max_report)
    # Rows are audited under every config that serves them: 'all' (its own files, or in the Hub layout
    # the per-tenet files it lists) first, then each tenet's, whose rows identical to theirs in 'all'
    # take those verdicts (see _checks_once).
    all_typed = _typed(built.config("all"), ROW_FEATURES, report.failures)
    _check_all_files(built, cert_failures)
    row_splits = all_typed + _typed(
        [s for s in built.splits if s.config not in NOT_TENET_CONFIGS], ROW_FEATURES, report.failures
    )
    if row_splits:
        _audit_rows(row_splits, scores, cert, report, flag, max_report, cert_failures)
        give_back_freed()  # the slices' texts and hashes (at the card, 0.9 GB the allocators kept)
    all_table = pa.concat_tables([t for _, _, t in all_typed]) if all_typed else None
    sft_splits = built.config(SFT_CONFIG)
    if sft_splits:
        _audit_sft(sft_splits, all_table, report, flag, max_report)
        give_back_freed()
    report.reproduced = report.rows - report.mismatch_count
    if len(bad_scores):
        cert_failures.append(
            f"{len(bad_scores)} judge_scores rows have a score that is not p_a_first - p_a_second"
        )
    if cert is not None and all_table is not None and score_splits:
        cert_failures += _certificate_failures(scores, all_table, cert)
        report.certificate_ok = not cert_failures
    elif cert is not None:
        cert_failures.append(
            "the 'all' rows or the judge scores could not be read: the certificate is unverified"
        )
    report.certificate_failures = cert_failures
    if cert is not None and all_table is not None and score_splits:
        give_back_freed()  # the row checks' slices, before the figures' arrays over every judgement
        tenets = [c for c in built.card.configs if c not in NOT_TENET_CONFIGS]
        # Recomputed once (16.4M judgements at the card: 6 s and 0.8 GB each time) for the stored
        # figures, the drawn figures and the card's table: the same inputs give the same figures.
        quality = released_quality(built.path, scores, all_table, cert)
        report.failures += check_judge_quality(
            built.path,
            scores,
            all_table,
            tenets,
            cert.threshold,
            cert.capacity,
            quality if tenets == list(cert.kept_tenets) else None,
        )
        report.failures += check_figure(built, scores, all_table, cert, quality)
        report.claims = tenet_claims(built, cert, report.certificate_ok, scores, all_table, quality)
    else:
        report.notes.append(
            "judge_quality not recomputed: the certificate, 'all' rows or judge scores are unread"
        )
    return report


def _audit_scores(built: BuiltFolder, report: TenetAuditReport, flag, max_report: int):
    """Judge scores: every score is the difference of its stored probabilities."""
    score_splits = _typed(built.config("judge_scores"), SCORE_FEATURES, report.failures, held=True)
    scores = (
        pa.concat_tables([t for _, _, t in score_splits]).combine_chunks()  # one dictionary per column
        if score_splits
        else SCORE_FEATURES.arrow_schema.empty_table()
    )
    s_raw = scores_from_probs(scores.column("p_a_first").to_numpy(), scores.column("p_a_second").to_numpy())
    bad_scores = np.flatnonzero(s_raw != scores.column("score").to_numpy())
    report.mismatch_count += len(bad_scores)
    score_starts = np.cumsum([0] + [t.num_rows for _, _, t in score_splits])
    for i in bad_scores[:max_report]:
        k = int(np.searchsorted(score_starts, i, side="right") - 1)
        pair, tenet = (scores.column(c)[int(i)].as_py() for c in ("pair_id", "tenet"))
        ident = None if pair is None or tenet is None else f"{pair}/{tenet}"
        flag("judge_scores", score_splits[k][1], int(i - score_starts[k]), ident, ["score"])
    report.rows += scores.num_rows
    return scores, score_splits, bad_scores


def _audit_rows(
    row_splits: list[tuple[str, str, pa.Table]],
    scores: pa.Table,
    cert: Certificate | None,
    report: TenetAuditReport,
    flag,
    max_report: int,
    cert_failures: list[str],
) -> None:
    """Every row of 'all' and the per-tenet configs in one pass; the per-tenet configs partition 'all'."""
    rows = pa.concat_tables([t for _, _, t in row_splits])
    checks = _checks_once(rows, sum(t.num_rows for c, _, t in row_splits if c == "all"), scores, cert)
    sizes = [t.num_rows for _, _, t in row_splits]
    per_tenet = np.repeat([c != "all" for c, _, _ in row_splits], sizes)
    want_config = pa.array(np.repeat([c for c, _, _ in row_splits], sizes))
    want_split = pa.array(np.repeat([s for _, s, _ in row_splits], sizes))
    checks["split"] = per_tenet & _mask(pc.equal(rows.column("source"), want_split))
    checks["config"] = per_tenet & _mask(pc.equal(rows.column("tenet"), want_config))
    bad = np.logical_or.reduce(list(checks.values()))
    report.rows += rows.num_rows
    starts = np.concatenate([[0], np.cumsum(sizes)])
    scenario = rows.column("scenario_id").combine_chunks()
    flagged = np.flatnonzero(bad)
    report.mismatch_count += len(flagged)
    for i in flagged[: max(0, max_report - len(report.mismatches))]:
        k = int(np.searchsorted(starts, i, side="right") - 1)
        config, split, _ = row_splits[k]
        flag(
            config,
            split,
            int(i - starts[k]),
            scenario[int(i)].as_py(),
            [f for f, m in checks.items() if m[i]],
        )
    cert_failures += _partition_failures(scenario, per_tenet)


def _partition_failures(scenario: pa.Array, per_tenet: np.ndarray) -> list[str]:
    """The per-tenet configs must partition 'all' (as multisets: no row missing, extra or repeated)."""
    tenet_ids = pc.filter(scenario, pa.array(per_tenet))
    all_ids = pc.filter(scenario, pa.array(~per_tenet))
    same = len(tenet_ids) == len(all_ids) and (
        len(all_ids) == 0
        or pc.all(
            pc.equal(
                pc.array_take(tenet_ids, pc.sort_indices(tenet_ids)),
                pc.array_take(all_ids, pc.sort_indices(all_ids)),
            ).fill_null(False)
        ).as_py()
    )
    if same:
        return []
    return [
        f"per-tenet configs hold {len(tenet_ids)} rows ({pc.count_distinct(tenet_ids).as_py()} distinct) "
        f"but 'all' holds {len(all_ids)}: the per-tenet configs must partition 'all'"
    ]


def _certificate_failures(scores: pa.Table, all_table: pa.Table, cert: Certificate) -> list[str]:
    """The assignment the 'all' rows make, verified against the judge scores and the certificate."""
    der = all_table.column("derivation").combine_chunks()
    assignment = pa.table(
        {
            "pair_id": _field(der, "pair_id"),
            "prompt_id": _field(der, "prompt_id"),
            "tenet": all_table.column("tenet"),
            "score": pa.array(
                scores_from_probs(
                    _field(der, "judge", "p_a_first").to_numpy(zero_copy_only=False),
                    _field(der, "judge", "p_a_second").to_numpy(zero_copy_only=False),
                )
            ),
        }
    )
    try:
        check = verify_assignment(scores.select(["pair_id", "prompt_id", "tenet", "score"]), assignment, cert)
    except ValueError as exc:  # a score table the assignment could never have been solved on
        return [f"judge_scores: {exc}"]
    return list(check.failures)


def audit_tenet_build(
    path: str | Path, max_report: int = 1000, *, manifest: bool = True, ignore: tuple[str, ...] = ()
) -> TenetAuditReport:
    """Read ``path`` from disk (see :func:`read_folder`) and audit it as a tenet build."""
    return audit_folder(read_folder(path, manifest=manifest, ignore=ignore), max_report)
