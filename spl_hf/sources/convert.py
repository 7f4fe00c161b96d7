"""Converting an already-read table: records in, unified rows + quarantine + report out.

Pure over a :class:`~spl_hf.sources.io.RawTable` (no file or Hub access): ``pairs_from_table`` and
``prompts_from_table``, the typed datasets they return, and the whole-file check. Reading a file or a
Hub dataset, and the plural forms over several pools, are :mod:`spl_hf.sources.pools`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

import pyarrow as pa
from datasets import Dataset, DatasetInfo, Features
from datasets.table import InMemoryTable
from tqdm.auto import tqdm

from spl_hf.errors import SplHfError
from spl_hf.sources.adapter import (
    Converted,
    Filtered,
    PairAdapter,
    PromptAdapter,
    QuickPair,
    SourceOptions,
    missing_columns,
    one_per_record,
)
from spl_hf.sources.fields import RowError, text_problem
from spl_hf.sources.io import RawTable, SourceFileError, UnparsableRecord
from spl_hf.sources.report import BuildReport, SourceReport
from spl_hf.sources.rows import (
    PAIR_FEATURES,
    PROMPT_FEATURES,
    QUARANTINE_FEATURES,
    SAFETY_COLUMNS,
    Issue,
    PairDraft,
    PromptDraft,
    QuarantineRecord,
    normalize_text,
    prompt_id,
)

# Features.arrow_schema is rebuilt on every access; the three row schemas are fixed.
_SCHEMAS = {id(f): f.arrow_schema for f in (PAIR_FEATURES, PROMPT_FEATURES, QUARANTINE_FEATURES)}


class PoolResult(NamedTuple):
    pairs: Dataset
    quarantine: list[QuarantineRecord]
    report: SourceReport


class PromptPoolResult(NamedTuple):
    prompts: Dataset
    quarantine: list[QuarantineRecord]
    report: SourceReport


class PoolsResult(NamedTuple):
    rows: Dataset  # pairs or prompts, sources in registry order
    quarantine: list[QuarantineRecord]
    report: BuildReport


def typed_dataset(columns: dict[str, list[Any]], features: Features) -> Dataset:
    """A Dataset of these columns with its fingerprint taken from a digest of the Arrow data.

    ``Dataset.from_dict`` fingerprints by pickling the whole table (about 60 ms for a handful of
    rows, far more for a real pool); a digest of the serialised table is as deterministic and cheap.
    """
    table = pa.Table.from_pydict(columns, schema=_SCHEMAS[id(features)])
    sink = _Sha256Sink()  # hashed as it is written: no copy of the serialised table is kept
    with pa.ipc.new_stream(pa.PythonFile(sink, mode="w"), table.schema) as writer:
        writer.write_table(table)
    fingerprint = sink.hash.hexdigest()[:32]
    return Dataset(InMemoryTable(table), info=DatasetInfo(features=features), fingerprint=fingerprint)


class _Sha256Sink:
    """A write-only file object that hashes the bytes written to it (the handle of a ``pa.PythonFile``)."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.closed = False

    def write(self, data: Any) -> int:
        self.hash.update(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def quarantine_dataset(records: list[QuarantineRecord]) -> Dataset:
    columns: dict[str, list[Any]] = {name: [] for name in QUARANTINE_FEATURES}
    for record in records:
        for name, value in record.to_dict().items():
            columns[name].append(value)
    return typed_dataset(columns, QUARANTINE_FEATURES)


def _check_columns(adapter: PairAdapter | PromptAdapter, table: RawTable) -> None:
    if not any(isinstance(r, dict) for r in table.records) and not table.columns:
        return  # nothing readable (an empty file, or only damaged records, each quarantined)
    lacking = missing_columns(adapter.schemas, table.columns)
    if lacking:
        expected = " or ".join("(" + ", ".join(s) + ")" for s in adapter.schemas)
        raise SourceFileError(
            f"{adapter.name}: {table.origin}: missing column(s) {', '.join(lacking)}; "
            f"expected the {adapter.hub.repo} columns {expected}"
        )


def check_whole_file(table: RawTable, options: SourceOptions) -> bool:
    """Refuse file-level damage; True when the file broke off and ``accept_partial`` keeps its head.

    A file with no records (0 bytes, only a header, a 0-row parquet, only blank lines) or none that
    decodes is no pool; a file that breaks off has lost an unknown part, so it passes only when
    asked for (record-level damage is quarantined by the readers and is not this).
    """
    cut = next(
        (r for r in table.records if isinstance(r, UnparsableRecord) and r.reason == "truncated_file"), None
    )
    readable = sum(1 for r in table.records if isinstance(r, dict))
    if cut is not None and not (options.accept_partial and readable):
        keep = f"; set accept_partial to keep the {readable} record(s) before the break" if readable else ""
        raise SourceFileError(f"{table.origin}: incomplete file: {cut.detail}{keep}")
    if not table.records:
        raise SourceFileError(f"{table.origin}: holds no records (an empty file, or only a header)")
    if not readable:
        raise SourceFileError(
            f"{table.origin}: none of its {len(table.records)} record(s) could be read "
            f"(first: {table.records[0].detail})"  # type: ignore[union-attr]
        )
    return cut is not None


def _issues(
    adapter: PairAdapter | PromptAdapter, table: RawTable, options: SourceOptions
) -> Iterator[tuple[int, Converted | PromptDraft | Filtered | Issue | QuickPair]]:
    """Each item of the table converted, or the issue that stopped it; a record the adapter's quick
    reader takes comes as its :data:`QuickPair` (a tuple), which the pool reader checks further."""
    quick = adapter.quick if isinstance(adapter, PairAdapter) and adapter.group is one_per_record else None
    items = adapter.group(table.records) if isinstance(adapter, PairAdapter) else enumerate(table.records)
    with tqdm(total=len(table.records), desc=adapter.name, unit="rec", disable=not options.progress) as bar:
        for index, item in items:
            bar.update(index + 1 - bar.n)  # grouped items can cover several records
            if isinstance(item, UnparsableRecord):
                yield index, Issue(item.reason, item.field, item.detail)
            elif isinstance(item, Issue):
                yield index, item
            else:
                pair = None if quick is None else quick(item, options)
                yield index, pair if pair is not None else _convert(adapter, item, options)


def _convert(
    adapter: PairAdapter | PromptAdapter, item: Any, options: SourceOptions
) -> Converted | PromptDraft | Filtered | Issue:
    try:
        return adapter.convert(item, options)
    except RowError as exc:
        return exc.issue


def _whole(adapter: PairAdapter | PromptAdapter, table: RawTable, options: SourceOptions) -> bool:
    try:
        return check_whole_file(table, options)
    except SplHfError as exc:
        raise SourceFileError(f"{adapter.name}: {exc}") from None


def _new_report(
    adapter: PairAdapter | PromptAdapter, table: RawTable, options: SourceOptions
) -> SourceReport:
    """The report of a table about to be read, once its columns and its whole-file check pass."""
    _check_columns(adapter, table)
    report = SourceReport(
        adapter.name, adapter.kind, table.origin, adapter.license, records_read=len(table.records)
    )
    report.partial = _whole(adapter, table, options)
    return report


class _PairRows:
    """The rows of one pair pool as its records are read: the columns, the quarantine, and the check
    that a pair (prompt and the two responses, either order) is not kept twice."""

    def __init__(self, adapter: PairAdapter, options: SourceOptions, report: SourceReport) -> None:
        self.adapter, self.options, self.report = adapter, options, report
        self.quarantine: list[QuarantineRecord] = []
        self.filtered: Counter[str] = Counter()
        self.columns: dict[str, list[Any]] = {name: [] for name in PAIR_FEATURES}
        self.first_seen: dict[bytes, tuple[str, int]] = {}

    def issue(self, index: int, issue: Issue) -> None:
        self.quarantine.append(
            QuarantineRecord(self.adapter.name, index, issue.field, issue.reason, issue.detail)
        )

    def converted(self, index: int, result: Converted | Issue) -> None:
        if isinstance(result, Issue):
            self.issue(index, result)
            return
        if result.skipped:
            self.filtered[result.skipped] += 1
        for draft in result.pairs:
            self.add(index, draft)
        for issue in result.issues:
            self.issue(index, issue)

    def add(self, index: int, draft: PairDraft) -> None:
        for name, texts in (
            ("prompt", [c for _, c in draft.prompt] + [c for _, c in draft.turns or ()]),
            ("response_a", (draft.response_a,)),
            ("response_b", (draft.response_b,)),
        ):
            for text in texts:  # the first problem of the first field that has one
                problem = text_problem(text, self.options.max_text_chars)
                if problem:
                    self.issue(index, Issue(problem[0], name, problem[1]))
                    return
        pid = prompt_id(draft.identity())
        norms = normalize_text(draft.response_a), normalize_text(draft.response_b)
        values = (draft.response_a, draft.response_b, draft.source_preference, draft.safety.columns())
        if self._keep(index, draft.messages(), pid, norms, values):
            self.report.clipped_prompts += draft.clipped

    def add_quick(self, index: int, pair: QuickPair) -> bool:
        """:meth:`add` of an adapter's quick pair, when it passes what a converted pair must pass;
        False (nothing done) where a text has a problem or the responses are blank or the same text:
        the record then goes the full way, which words the issue."""
        prompt, a, b, _, _, turns = pair
        limit = self.options.max_text_chars
        # The turns are pieces of the prompt text: a problem in one is a problem in it.
        if text_problem(prompt, limit) or text_problem(a, limit) or text_problem(b, limit):
            return False
        norms = normalize_text(a), normalize_text(b)
        if norms[0] == norms[1] or not a.strip() or not b.strip():
            return False
        pid = prompt_id(turns or (("user", prompt),))
        self._keep(index, [{"role": "user", "content": prompt}], pid, norms, pair[1:5])
        return True

    def _keep(self, index: int, messages: list, pid: str, norms: tuple[str, str], values: tuple) -> bool:
        """The row of a checked pair, unless it repeats an earlier one (then quarantined, and False).

        ``values``: response a, response b, the source preference and the four safety columns.
        """
        # The same prompt with the same two responses (either order) would be judged twice.
        key = "\x1e".join([pid, *sorted(norms)])
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        name = self.adapter.name
        if digest in self.first_seen:
            kept, kept_index = self.first_seen[digest]
            detail = f"same prompt and responses as {kept} (record {kept_index})"
            self.issue(index, Issue("duplicate_pair", None, detail))
            return False
        columns = self.columns
        row_id = len(columns["pair_id"])
        self.first_seen[digest] = (f"{name}_{row_id}", index)
        response_a, response_b, preference, safety = values
        columns["pair_id"].append(f"{name}_{row_id}")
        columns["prompt_id"].append(pid)
        columns["source"].append(name)
        columns["row_id"].append(row_id)
        columns["record_index"].append(index)
        columns["prompt"].append(messages)
        columns["response_a"].append(response_a)
        columns["response_b"].append(response_b)
        columns["source_preference"].append(preference)
        for column, value in zip(SAFETY_COLUMNS, safety, strict=True):
            columns[column].append(value)
        return True


def pairs_from_table(
    adapter: PairAdapter, table: RawTable, options: SourceOptions | None = None
) -> PoolResult:
    options = options or SourceOptions()
    report = _new_report(adapter, table, options)
    rows = _PairRows(adapter, options, report)
    for index, result in _issues(adapter, table, options):
        if isinstance(result, tuple):  # the adapter's quick pair
            if rows.add_quick(index, result):
                continue
            result = _convert(adapter, table.records[index], options)
        assert isinstance(result, (Converted, Issue))
        rows.converted(index, result)
    report.rows_yielded = len(rows.columns["pair_id"])
    report.distinct_prompts = len(set(rows.columns["prompt_id"]))
    report.filtered = dict(rows.filtered)
    report.quarantined = dict(Counter(q.reason for q in rows.quarantine))
    return PoolResult(typed_dataset(rows.columns, PAIR_FEATURES), rows.quarantine, report)


def prompts_from_table(
    adapter: PromptAdapter, table: RawTable, options: SourceOptions | None = None
) -> PromptPoolResult:
    options = options or SourceOptions()
    report = _new_report(adapter, table, options)
    quarantine: list[QuarantineRecord] = []
    columns: dict[str, list[Any]] = {name: [] for name in PROMPT_FEATURES}
    filtered: Counter[str] = Counter()
    first_seen: dict[str, tuple[int, int]] = {}  # prompt_id -> (row_id, record_index)
    for index, result in _issues(adapter, table, options):
        if isinstance(result, Issue):
            quarantine.append(
                QuarantineRecord(adapter.name, index, result.field, result.reason, result.detail)
            )
            continue
        if isinstance(result, Filtered):
            filtered[result.reason] += 1
            continue
        assert isinstance(result, PromptDraft)
        problem = text_problem(result.prompt, options.max_text_chars)
        if problem:
            quarantine.append(QuarantineRecord(adapter.name, index, "prompt", *problem))
            continue
        pid = prompt_id(result.prompt)
        if pid in first_seen:
            kept, kept_index = first_seen[pid]
            detail = f"same prompt as row {kept} (record {kept_index})"
            quarantine.append(QuarantineRecord(adapter.name, index, None, "duplicate_prompt", detail))
            continue
        row_id = len(columns["prompt_id"])
        first_seen[pid] = (row_id, index)
        columns["prompt_id"].append(pid)
        columns["source"].append(adapter.name)
        columns["row_id"].append(row_id)
        columns["record_index"].append(index)
        columns["prompt"].append(result.prompt)
        columns["category"].append(adapter.category or result.category)
        columns["source_label"].append(result.source_label)
        columns["license"].append(adapter.license)
    report.rows_yielded = len(columns["prompt_id"])
    report.distinct_prompts = len(set(columns["prompt_id"]))
    report.filtered = dict(filtered)
    report.quarantined = dict(Counter(q.reason for q in quarantine))
    return PromptPoolResult(typed_dataset(columns, PROMPT_FEATURES), quarantine, report)
