"""Provenance: every published row holds byte for byte what the source row it names holds.

Self-consistency (digests, certificate, manifest) cannot expose a consistent forgery: edited text,
re-derived digest, regenerated manifest. Re-reading the sources can. A tenet build's rows name
their pool row by ``derivation.pair_id`` (``{source}_{row_id}``); the pools are read again with the
same adapters (``spl_hf.sources``) and each row's prompt, chosen and rejected must equal that pool
row's prompt and responses on the recorded side. An SPL build's rows name their candidates by
``pair_id``; the pairs are formed again from the prompt and candidate records and every pair column
(prompt, responses, instructions, recorded attributes) must be equal.

Source specs are ``KEY=VALUE``: for a tenet build ``POOL=PATH`` or ``POOL=ORG/NAME@REVISION`` (a Hub
dataset at a pinned revision), or a bare path to unified pair rows (``spl-hf sources read`` output);
for an SPL build ``prompts=FILE`` and ``candidates=FILE``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spl_hf.audit.hub import is_repo_id
from spl_hf.audit.load import BuiltFolder, LoadedSplit
from spl_hf.audit.spl.labels import differs
from spl_hf.contract import ROW_FEATURES, first_content
from spl_hf.derive import JUDGE_COLUMN, pair_features
from spl_hf.errors import SplHfError
from spl_hf.schema import AttributeSchema

SOURCE_COLUMNS = ("pair_id", "source", "prompt", "response_a", "response_b", "source_preference")


@dataclass
class ProvenanceReport:
    sources: list[str] = field(default_factory=list)
    rows_checked: int = 0
    scores_checked: int = 0  # judge_scores rows whose source_preference was compared with the source's
    differing: int = 0
    differences: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.differing == 0 and not self.failures

    def to_dict(self) -> dict:
        return asdict(self)


class SourcesError(SplHfError):
    """What is wrong with the ``--sources`` the user gave (not with the release): a one-line error, never
    a failed audit (:func:`spl_hf.audit.shape.checked` lets it through)."""


def parse_specs(specs: list[str]) -> list[tuple[str | None, str]]:
    """``KEY=VALUE`` specs as (key, value); a bare existing path as (None, path)."""
    out: list[tuple[str | None, str]] = []
    for spec in specs:
        key, sep, value = spec.partition("=")
        if sep and key and not Path(spec).exists():
            out.append((key, value))
        elif Path(spec).is_file():
            out.append((None, spec))
        else:
            raise SourcesError(
                f"--sources {spec!r}: expected KEY=PATH, KEY=ORG/NAME@REVISION or an existing file"
            )
    return out


def _pin(key: str, value: str) -> tuple[str, str | None]:
    """(path or repo id, revision); a Hub id must carry its revision."""
    if Path(value).exists():
        return value, None
    repo, sep, rev = value.rpartition("@")
    if sep and is_repo_id(repo) and rev:
        return repo, rev
    if is_repo_id(value):
        raise SourcesError(f"--sources {key}={value}: pin the Hub revision ({key}={value}@<commit or tag>)")
    raise FileNotFoundError(f"--sources {key}={value}: no such file")


def _read_rows_file(path: str) -> pa.Table:
    if path.endswith(".parquet"):
        try:
            return pq.read_table(path)
        except (OSError, pa.ArrowException) as exc:
            raise SplHfError(f"{path}: not a readable parquet file ({exc})") from None
    from spl_hf.jsonl import read_rows

    return pa.Table.from_pylist(read_rows(path))


def recorded_sha256(folder: Path) -> dict[str, str]:
    """sha256 of each training source file the build read (source -> digest), from its build report.

    A release records every source file's read report under ``decontamination.sources``; builds
    made without one record none, and then only the rows are compared.
    """
    from spl_hf.audit.load import read_build_report

    decon = read_build_report(Path(folder)).get("decontamination") or {}
    reports = decon.get("sources") if isinstance(decon, dict) else None
    out: dict[str, str] = {}
    for r in reports if isinstance(reports, list) else []:
        if isinstance(r, dict) and r.get("role") == "source" and isinstance(r.get("sha256"), str):
            out[str(r.get("source"))] = r["sha256"]
    return out


def different_files(folder: Path, specs: list[str]) -> list[str]:
    """One failure per ``POOL=PATH`` whose file is not the one the build read (checked before rows)."""
    from spl_hf.filehash import sha256_file

    recorded = recorded_sha256(folder)
    out = []
    for key, value in parse_specs(specs):
        if key in recorded and Path(value).is_file():
            digest = sha256_file(value)
            if digest != recorded[key]:
                out.append(
                    f"--sources {key}={value}: different file (sha256 {digest}, build recorded "
                    f"{recorded[key]}); its rows are compared below, but they come from another file"
                )
    return out


def tenet_sources(specs: list[str]) -> tuple[pa.Table, list[str]]:
    """The pool rows named by ``specs`` (columns ``SOURCE_COLUMNS``), and a description of each spec."""
    from spl_hf.sources import ADAPTERS, read_pool

    tables, described = [], []
    for key, value in parse_specs(specs):
        if key is None:
            table, what = _read_rows_file(value), f"pair rows {value}"
        elif key in ADAPTERS:
            target, revision = _pin(key, value)
            table = read_pool(key, target, progress=False, revision=revision).pairs.data.table
            what = f"{key} from {target}" + (f"@{revision}" if revision else "")
        else:
            raise SourcesError(f"--sources {key}=…: unknown pool {key!r}; known: {', '.join(ADAPTERS)}")
        missing = [c for c in SOURCE_COLUMNS if c not in table.column_names]
        if missing:
            raise SourcesError(f"--sources {what}: not unified pair rows (missing columns {missing})")
        tables.append(
            table.select(list(SOURCE_COLUMNS)).cast(
                pa.schema(
                    [
                        ("pair_id", pa.string()),
                        ("source", pa.string()),
                        ("prompt", ROW_FEATURES.arrow_schema.field("prompt").type),
                        ("response_a", pa.string()),
                        ("response_b", pa.string()),
                        ("source_preference", pa.string()),
                    ]
                )
            )
        )
        described.append(what)
    table = pa.concat_tables(tables)
    ids = table.column("pair_id")
    if pc.count_distinct(ids, mode="all").as_py() < len(ids):
        counts = pc.value_counts(ids)
        repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1)).to_pylist()
        raise SourcesError(
            f"--sources: pair_ids {repeated[:5]} occur more than once across the sources "
            "(a pool given twice?)"
        )
    return table, described


def _lookup(ids: pa.Array, source_ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Row of each id in ``source_ids`` (-1 if absent), and whether it names several source rows."""
    keys = pa.table({"pair_id": source_ids, "_srow": pa.array(np.arange(len(source_ids), dtype=np.int64))})
    unique = keys.group_by(["pair_id"], use_threads=False).aggregate([("_srow", "min"), ("_srow", "count")])
    left = pa.table({"pair_id": ids, "_row": pa.array(np.arange(len(ids), dtype=np.int64))})
    joined = left.join(unique, ["pair_id"], join_type="left outer")
    rows = joined.column("_row").to_numpy()
    index = np.full(len(ids), -1, dtype=np.int64)
    index[rows] = joined.column("_srow_min").fill_null(-1).to_numpy()
    repeated = np.zeros(len(ids), dtype=bool)
    repeated[rows] = joined.column("_srow_count").fill_null(0).to_numpy() > 1
    return index, repeated


def _report(
    report: ProvenanceReport,
    splits: list[LoadedSplit],
    tables: list[pa.Table],
    ids: list[pa.Array],
    checks: dict[str, np.ndarray],
    max_report: int,
) -> None:
    bad = np.logical_or.reduce(list(checks.values())) if checks else np.zeros(0, bool)
    sizes = [t.num_rows for t in tables]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    flagged = np.flatnonzero(bad)
    report.rows_checked += int(starts[-1])
    report.differing += len(flagged)
    for i in flagged[:max_report]:
        k = int(np.searchsorted(starts, i, side="right") - 1)
        report.differences.append(
            {
                "config": splits[k].config,
                "split": splits[k].split,
                "row": int(i - starts[k]),
                "pair_id": ids[k][int(i - starts[k])].as_py(),
                "fields": [f for f, m in checks.items() if m[i]],
            }
        )


def _message_differs(messages: pa.Array, text: pa.Array) -> np.ndarray:
    """Not exactly one message whose content is ``text`` (byte for byte)."""
    one = pc.equal(pc.list_value_length(messages), 1).fill_null(False)
    same = pc.and_(one, pc.equal(first_content(messages), text).fill_null(False))
    return ~np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)


def check_tenet_provenance(built: BuiltFolder, specs: list[str], max_report: int = 1000) -> ProvenanceReport:
    source, described = tenet_sources(specs)
    report = ProvenanceReport(sources=described, failures=different_files(built.path, specs))
    splits = [
        s
        for s in built.splits
        if s.config != "judge_scores" and all(c in s.table.column_names for c in ROW_FEATURES)
    ]
    if not splits:
        report.failures.append("no row splits could be read: nothing was checked against the sources")
        return report
    tables = [s.table.select(list(ROW_FEATURES)).cast(ROW_FEATURES.arrow_schema) for s in splits]
    rows = pa.concat_tables(tables)
    der = rows.column("derivation").combine_chunks()
    pair_ids = pc.struct_field(der, "pair_id")
    index, repeated = _lookup(pair_ids, source.column("pair_id").combine_chunks())
    found = index >= 0
    given = set(source.column("source").unique().to_pylist())
    row_source = rows.column("source").combine_chunks()
    in_given = np.asarray(
        pc.is_in(row_source, pa.array(sorted(given), pa.string())).fill_null(False), dtype=bool
    )
    unchecked = ~found & ~in_given
    if unchecked.any():
        counts = pc.value_counts(pc.filter(row_source, pa.array(unchecked))).to_pylist()
        report.failures.append(
            "rows from pools not given in --sources, so not shown to hold their source's text: "
            + ", ".join(f"{c['values']}: {c['counts']}" for c in counts)
        )
    src = source.take(pa.array(np.maximum(index, 0)))
    a_side = pc.equal(pc.struct_field(der, "chosen_side"), "a").fill_null(False)
    resp_a, resp_b = src.column("response_a").combine_chunks(), src.column("response_b").combine_chunks()
    checked = found & ~repeated
    checks = {
        "pair_id": (~found & in_given) | repeated,
        "source": checked & differs(row_source, src.column("source").combine_chunks()),
        "prompt": checked
        & differs(rows.column("prompt").combine_chunks(), src.column("prompt").combine_chunks()),
        "chosen": checked
        & _message_differs(rows.column("chosen").combine_chunks(), pc.if_else(a_side, resp_a, resp_b)),
        "rejected": checked
        & _message_differs(rows.column("rejected").combine_chunks(), pc.if_else(a_side, resp_b, resp_a)),
    }
    ids = [pc.struct_field(t.column("derivation").combine_chunks(), "pair_id") for t in tables]
    _report(report, splits, tables, ids, checks, max_report)
    _check_score_preferences(report, built, source, given, max_report)
    return report


def _check_score_preferences(
    report: ProvenanceReport, built: BuiltFolder, source: pa.Table, given: set[str], max_report: int
) -> None:
    """Each judge_scores row of a given pool must carry its source pair's ``source_preference``: the
    judge's agreement with the pools is computed from it, so an edited one would misstate it."""
    splits = built.config("judge_scores")
    if any("source_preference" not in s.table.column_names for s in splits):
        report.failures.append("judge_scores has no source_preference column: the build predates it")
        return
    for s in splits:
        t = s.table
        index, repeated = _lookup(
            t.column("pair_id").combine_chunks().cast(pa.string()), source.column("pair_id")
        )
        found = index >= 0
        in_given = np.asarray(
            pc.is_in(t.column("source"), pa.array(sorted(given), pa.string())).fill_null(False)
        )
        src = source.column("source_preference").take(pa.array(np.maximum(index, 0)))
        checks = {
            "pair_id": (~found & in_given) | repeated,
            "source_preference": found
            & ~repeated
            & differs(t.column("source_preference").combine_chunks().cast(pa.string()), src.combine_chunks()),
        }
        report.scores_checked += int((found & ~repeated).sum())
        bad = np.flatnonzero(np.logical_or.reduce(list(checks.values())))
        report.differing += len(bad)
        ids = t.column("pair_id").combine_chunks()
        for i in bad[: max(0, max_report - len(report.differences))]:
            report.differences.append(
                {
                    "config": s.config,
                    "split": s.split,
                    "row": int(i),
                    "pair_id": ids[int(i)].as_py(),
                    "fields": [f for f, m in checks.items() if m[i]],
                }
            )


def spl_sources(specs: list[str], schema: AttributeSchema) -> tuple[pa.Table, list[str], str | None]:
    """The pair table formed again from ``prompts=FILE`` and ``candidates=FILE`` records, and the
    ``verdicts=FILE`` of a judge comparison when given."""
    from spl_hf.derive import pairs_from_records, read_jsonl

    given = dict(parse_specs(specs))
    unknown = sorted(str(k) for k in given if k not in ("prompts", "candidates", "verdicts"))
    if unknown or not {"prompts", "candidates"} <= set(given):
        raise SourcesError(
            "--sources for an SPL build: give prompts=FILE and candidates=FILE (the records it was "
            f"built from), and verdicts=FILE for its judge configs; got {sorted(str(k) for k in given)}"
        )
    prompts, candidates = given["prompts"], given["candidates"]
    table = pairs_from_records(read_jsonl(prompts), read_jsonl(candidates), schema, prompts, candidates)
    described = [f"prompts {prompts}", f"candidates {candidates}"]
    if "verdicts" in given:
        described.append(f"verdicts {given['verdicts']}")
    return table, described, given.get("verdicts")


def _judge_differs(
    tables: list[pa.Table], judged: list[bool], verdicts: str, ranking: dict[str, int]
) -> dict[str, np.ndarray]:
    """Each judged row's components against the verdict record of each of its candidates (rows of
    tables without a judge column are not flagged)."""
    from spl_hf.derive import parse_verdict_records, read_jsonl

    records = parse_verdict_records(read_jsonl(verdicts), ranking, verdicts)
    judges = [
        j
        for t, has in zip(tables, judged, strict=True)
        for j in (t.column(JUDGE_COLUMN).to_pylist() if has else [None] * t.num_rows)
    ]
    checks = {
        f"judge.{k}_{side}": np.zeros(len(judges), bool)
        for k in ("candidate", "probs", "status", "mass")
        for side in "ab"
    }
    checks["judge.model"] = np.zeros(len(judges), bool)
    for i, j in enumerate(judges):
        if j is None:
            continue
        for side in "ab":
            rec = records.get(j[f"candidate_{side}"])
            if rec is None:
                checks[f"judge.candidate_{side}"][i] = True
                continue
            probs = tuple(j[f"probs_{side}"]) if j[f"probs_{side}"] is not None else None
            checks[f"judge.probs_{side}"][i] = probs != rec.probs
            checks[f"judge.status_{side}"][i] = j[f"status_{side}"] != rec.status
            checks[f"judge.mass_{side}"][i] = j[f"mass_{side}"] != rec.mass
            if rec.probs is not None:
                checks["judge.model"][i] |= (j["model_id"], j["model_revision"], j["template_hash"]) != (
                    rec.model_id,
                    rec.model_revision,
                    rec.template_hash,
                )
    return checks


def check_spl_provenance(
    built: BuiltFolder,
    specs: list[str],
    schema: AttributeSchema,
    max_report: int = 1000,
    ranking: dict[str, int] | None = None,
) -> ProvenanceReport:
    source, described, verdicts = spl_sources(specs, schema)
    report = ProvenanceReport(sources=described)
    feats = pair_features(schema)
    splits = [s for s in built.splits if all(c in s.table.column_names for c in feats)]
    if not splits:
        report.failures.append("no row splits could be read: nothing was checked against the sources")
        return report
    tables = [s.table.select(list(feats)).cast(feats.arrow_schema) for s in splits]
    rows = pa.concat_tables(tables)
    index, repeated = _lookup(rows.column("pair_id").combine_chunks(), source.column("pair_id"))
    found = (index >= 0) & ~repeated
    src = source.take(pa.array(np.maximum(index, 0)))
    checks = {"pair_id": ~found}
    for name in feats:
        if name != "pair_id":
            checks[name] = found & differs(
                rows.column(name).combine_chunks(), src.column(name).combine_chunks()
            )
    if verdicts:
        if ranking is None:
            raise SplHfError("the verdict ranking is needed to read verdicts=FILE")
        judged = [JUDGE_COLUMN in s.table.column_names for s in splits]
        if not any(judged):
            report.failures.append(f"verdicts={verdicts} given, but the build has no verdict-judge configs")
        else:
            checks.update(_judge_differs([s.table for s in splits], judged, verdicts, ranking))
    _report(report, splits, tables, [t.column("pair_id") for t in tables], checks, max_report)
    return report
