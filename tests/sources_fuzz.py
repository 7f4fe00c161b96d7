"""Seeded fuzz cases for the source adapters: damaged records inside good files, and damaged files.

Each case is a file written under a temporary folder plus what reading it must give. The cases are
built from the good records of each adapter's fixture, so "good rows kept" has an exact meaning: the
rows the same good records give when read undamaged in the same format.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from spl_hf.sources import ADAPTERS, read_pool, read_prompt_pool
from spl_hf.sources.io import LFS_POINTER, read_local

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
SEED = 20261201

BASES = {
    "pku_train": "pku_train.jsonl",
    "hh_train": "hh_harmless_train.jsonl.gz",
    "ultrafeedback_train": "ultrafeedback_train.jsonl",
    "helpsteer2_train": "helpsteer2_preference.jsonl",
    "community_alignment_en": "community_alignment.csv",
    "wildfeedback_st": "wildfeedback.json",
    "ca_en_mt_p1": "community_alignment.csv",
    "wf_mt": "wildfeedback.json",
    "ultrachat": "ultrachat.jsonl",
    "or_bench_80k": "or_bench_80k.csv",
    "or_bench_hard_1k": "or_bench_80k.csv",
    "or_bench_toxic": "or_bench_toxic.csv",
    "xstest": "xstest.jsonl",
    "harmbench": "harmbench_behaviors_text_all.csv",
    "do_not_answer": "do_not_answer.jsonl",
    "malicious_instruct": "malicious_instruct.jsonl",
}

SENTINEL = "\u2603FUZZ\u2603"
CSV_SENTINEL = "FUZZSENTINEL"
DEEP = 100_000
HUGE = "x" * 5_000_000
# Replacement values for one field of one record (the record must then be a row, filtered or quarantined).
VALUES: dict[str, Any] = {
    "null": None,
    "int": 7,
    "float": 1.5,
    "bool": True,
    "list": ["x"],
    "dict": {"from": ["human"], "value": 1},
    "empty": "",
    "nul": "bad\x00text",
}
# Byte-level damage inside one record, and the quarantine reason it must give.
JSON_DAMAGE = {
    "invalid_utf8": (b'"ab\xffcd"', "invalid_utf8"),
    "surrogate": (b'"\\ud800"', "lone_surrogate"),
    "deep": (b"[" * DEEP + b"]" * DEEP, "too_deep"),
    # a key given twice in the object that holds the text (JSON keeps only the last value: review N8)
    "duplicate_key": (b'"x", "dup": 1, "dup": 2', "duplicate_key"),
}
CSV_DAMAGE = {
    "latin1": (b"caf\xe9 au lait", "invalid_utf8"),
    "unclosed_quote": (b'"an unclosed quote', "bad_csv_row"),
}


@dataclass
class Case:
    adapter: str
    name: str
    path: Path
    expect: str  # "rows" | "error"
    good_rows: list[tuple] = field(default_factory=list)  # rows that must all be kept, in order
    exact: bool = False  # the rows must be exactly good_rows
    must_quarantine: str | list[str] | None = None  # reason(s) that must appear in the quarantine
    error_match: str | None = None
    prefix: bool = False  # rows must be a prefix of good_rows (a cut file)
    slack: int = 0  # how many trailing rows of a cut file may be damaged beyond detection
    damaged: int = 0  # damaged records in the file
    quarantined_index: int | None = None  # a record that must have a quarantine entry
    error_ok: tuple[
        str, ...
    ] = ()  # clear whole-file errors this case may also give (a cut that leaves nothing)
    options: dict[str, Any] = field(default_factory=dict)  # SourceOptions of the read


@dataclass
class Outcome:
    case: Case
    rows: list[tuple] | None = None
    record_indices: list[int] = field(default_factory=list)
    quarantine: list[Any] = field(default_factory=list)
    report: Any = None
    error: BaseException | None = None


def read(adapter: str, path: Path, **options: Any):
    if adapter in ADAPTERS:
        return read_pool(adapter, path, **options)
    return read_prompt_pool(adapter, path, **options)


def row_key(row: dict) -> tuple:
    return tuple(
        (k, json.dumps(v, sort_keys=True))
        for k, v in row.items()
        if k not in ("pair_id", "row_id", "record_index")
    )


def good_records(adapter: str) -> list[dict]:
    """The records of the adapter's fixture that give rows and no quarantine entry."""
    table = read_local(FIXTURES / BASES[adapter])
    result = read(adapter, FIXTURES / BASES[adapter])
    rows = result[0].data.table.column("record_index").to_pylist()
    bad = {q.record_index for q in result.quarantine}
    keep = sorted(set(rows) - bad)
    return [table.records[i] for i in keep]  # type: ignore[misc]


def is_flat(records: list[dict]) -> bool:
    return all(v is None or isinstance(v, (str, int, float, bool)) for r in records for v in r.values())


# --- writers ----------------------------------------------------------------------------------


def jsonl_bytes(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def json_bytes(records: list[dict]) -> bytes:
    return ("[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n").encode("utf-8")


def csv_bytes(records: list[dict]) -> bytes:
    header = list(dict.fromkeys(k for r in records for k in r))
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(header)
    for r in records:
        writer.writerow(["" if r.get(k) is None else str(r.get(k)) for k in header])
    return buf.getvalue().encode("utf-8")


def parquet_bytes(records: list[dict]) -> bytes | None:
    try:
        table = pa.Table.from_pylist(records)
    except (pa.ArrowException, TypeError, ValueError):
        return None  # mixed types in a column: not writable as parquet, so not a parquet case
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return buf.getvalue().to_pybytes()


WRITERS: dict[str, Callable[[list[dict]], bytes | None]] = {
    ".jsonl": jsonl_bytes,
    ".json": json_bytes,
    ".csv": csv_bytes,
    ".parquet": parquet_bytes,
}


def formats(records: list[dict]) -> list[str]:
    out = [".jsonl", ".jsonl.gz", ".json", ".json.gz", ".parquet"]
    if is_flat(records):
        out += [".csv", ".csv.gz"]
    return out


def encode(records: list[dict], fmt: str) -> bytes | None:
    data = WRITERS[fmt.removesuffix(".gz")](records)
    if data is not None and fmt.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    return data


# --- mutations --------------------------------------------------------------------------------


def leaf_paths(record: dict) -> list[tuple]:
    paths: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((k,), v) for k, v in record.items()]
    while stack:
        path, value = stack.pop()
        paths.append(path)
        if isinstance(value, dict) and len(path) < 4:
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list) and len(path) < 4:
            stack.extend(((*path, i), v) for i, v in enumerate(value))
    return sorted(paths, key=lambda p: [str(x) for x in p])


def set_path(record: dict, path: tuple, value: Any, delete: bool = False) -> dict | None:
    """A copy of `record` with the value at `path` replaced (or deleted); None where there is no such path."""
    copy = json.loads(json.dumps(record))
    target: Any = copy
    for key in path[:-1]:
        try:
            target = target[key]
        except (KeyError, IndexError, TypeError):
            return None
    if isinstance(target, dict) and path[-1] not in target and len(path) > 1:
        return None
    if isinstance(target, list) and not (
        isinstance(path[-1], int) and -len(target) <= path[-1] < len(target)
    ):
        return None
    if delete and isinstance(target, dict):
        del target[path[-1]]
    elif delete and isinstance(target, list):
        target.pop(path[-1])
    else:
        target[path[-1]] = value
    return copy


def text_path(record: dict) -> tuple:
    """A path to a non-blank text in the record, a top-level one where there is one."""

    def value(path: tuple) -> Any:
        target: Any = record
        for key in path:
            target = target[key]
        return target

    texts = [p for p in leaf_paths(record) if isinstance(value(p), str) and value(p).strip()]
    return min(texts, key=len)


def with_text(record: dict, value: str) -> tuple[dict, str]:
    path = text_path(record)
    changed = set_path(record, path, value)
    assert changed is not None
    return changed, ".".join(map(str, path))


# --- cases ------------------------------------------------------------------------------------


class Builder:
    def __init__(self, adapter: str, root: Path, rng: random.Random) -> None:
        self.adapter, self.root, self.rng = adapter, root, rng
        self.records = good_records(adapter)
        self.count = 0
        self.baseline: dict[str, list[tuple]] = {}

    def path(self, name: str, fmt: str) -> Path:
        self.count += 1
        return self.root / f"{self.adapter}-{self.count:04d}-{name}{fmt}"

    def write(self, name: str, fmt: str, data: bytes) -> Path:
        path = self.path(name, fmt)
        path.write_bytes(data)
        return path

    def rows_of(self, records: list[dict], fmt: str) -> list[tuple]:
        """The rows the good records give undamaged in this format (read once per format)."""
        key = fmt
        if key not in self.baseline:
            data = encode(records, fmt)
            assert data is not None
            result = read(self.adapter, self.write("base", fmt, data))
            assert not result.quarantine, (
                f"{self.adapter}{fmt}: the good records are not clean: {result.quarantine}"
            )
            self.baseline[key] = [row_key(r) for r in result[0].data.table.to_pylist()]
        return self.baseline[key]

    def cases(self) -> Iterator[Case]:
        yield from self.file_cases()
        yield from self.record_cases()

    def file_cases(self) -> Iterator[Case]:
        adapter, records = self.adapter, self.records
        for fmt in formats(records):
            data = encode(records, fmt)
            if data is None:
                continue
            good = self.rows_of(records, fmt)
            yield Case(adapter, "clean", self.write("clean", fmt, data), "rows", good, exact=True)
            if fmt in (".jsonl", ".json", ".csv"):
                bom = b"\xef\xbb\xbf" + data
                yield Case(adapter, "bom", self.write("bom", fmt, bom), "rows", good, exact=True)
            yield Case(
                adapter, "empty", self.write("empty", fmt, b""), "error", error_match="holds no records"
            )
            cut = self.rng.randrange(len(data) // 4, 3 * len(data) // 4)
            truncated = self.write("truncated", fmt, data[:cut])
            cut_header = (
                "before any complete CSV record",
                "missing column",
                "holds no records",
                "could be read",
            )
            if fmt.endswith(".gz"):
                # A cut download is refused, naming the file; accept_partial keeps the part before the cut.
                yield Case(
                    adapter,
                    "truncated",
                    truncated,
                    "error",
                    error_match="incomplete file",
                    error_ok=cut_header,
                )
                yield Case(
                    adapter,
                    "truncated_accepted",
                    truncated,
                    "rows",
                    good,
                    prefix=True,
                    must_quarantine="truncated_file",
                    error_ok=(*cut_header, "incomplete file"),  # a cut before the first record
                    options={"accept_partial": True},
                )
            elif fmt == ".parquet":
                yield Case(
                    adapter, "truncated", truncated, "error", error_match="not a readable parquet file"
                )
            else:
                # A plain text file cut at a line end is indistinguishable from a shorter file, and a CSV
                # cut inside an unquoted cell still parses; the rows before the cut must be intact.
                yield Case(
                    adapter,
                    "truncated",
                    truncated,
                    "rows",
                    good,
                    prefix=True,
                    slack=int(fmt == ".csv"),
                    error_ok=(*cut_header, "incomplete file"),  # a JSON list that is never closed
                )
            yield Case(
                adapter,
                "lfs_pointer",
                self.write("lfs", fmt, LFS_POINTER + b"\noid sha256:" + b"0" * 64 + b"\nsize 123\n"),
                "error",
                error_match="Git LFS pointer",
            )
            folder = self.path("directory", fmt)
            folder.mkdir()
            yield Case(adapter, "directory", folder, "error", error_match="is a directory")
            if fmt.endswith(".gz"):
                raw = WRITERS[fmt.removesuffix(".gz")](records)
                assert raw is not None
                yield Case(
                    adapter,
                    "plain_named_gz",
                    self.write("plain", fmt, raw),
                    "error",
                    error_match="not gzip-compressed",
                )
        yield Case(
            adapter,
            "missing_file",
            self.root / f"{adapter}-missing.jsonl",
            "error",
            error_match="no such file",
        )

    def record_cases(self) -> Iterator[Case]:
        """Damaged copies of good records appended after the good ones (so no copy can shadow one)."""
        adapter, records, rng = self.adapter, self.records, self.rng
        n = len(records)
        paths = leaf_paths(records[0])
        top = [p for p in paths if len(p) == 1]
        nested = [p for p in paths if len(p) > 1]
        chosen = rng.sample(top, min(len(top), 6)) + rng.sample(nested, min(len(nested), 4))
        flat = is_flat(records)
        for number, path in enumerate(chosen):
            copies = []
            for name, value in [("missing", None), *VALUES.items()]:
                m = rng.randrange(n)
                record = set_path(records[m], path, value, delete=name == "missing")
                if record is None:  # records differ in shape; records[0] has every chosen path
                    record = set_path(records[0], path, value, delete=name == "missing")
                assert record is not None
                copies.append(record)
            fmts = [".jsonl", ".json"] + ([".csv"] if flat and len(path) == 1 else [])
            fmt = fmts[number % len(fmts)]
            good = self.rows_of(records, fmt)
            label = f"values@{'.'.join(map(str, path))}"
            yield Case(
                adapter,
                label,
                self.write("values", fmt, encode([*records, *copies], fmt) or b""),
                "rows",
                good,
                damaged=len(copies),
            )
        # one huge text (5 MB): over max_text_chars, so quarantined
        huge, huge_field = with_text(records[0], HUGE)
        data = jsonl_bytes([*records, huge])
        # (the reason depends on the field: text_too_long, or what the text breaks, or a duplicate
        # of records[0] when the field is one the adapter does not read)
        yield Case(
            adapter,
            f"huge@{huge_field}",
            self.write("huge", ".jsonl", data),
            "rows",
            self.rows_of(records, ".jsonl"),
            quarantined_index=n,
            damaged=1,
        )
        # byte-level damage inside single records: each quarantined with its reason, the rest kept
        for fmt in (".jsonl", ".json"):
            copies, raws = [], []
            for name, (raw, _) in JSON_DAMAGE.items():
                copies.append(with_text(records[rng.randrange(n)], SENTINEL + name)[0])
                raws.append((json.dumps(SENTINEL + name, ensure_ascii=False).encode(), raw))
            half = (n + 1) // 2  # damage in the middle: the good records after it must survive too
            data = WRITERS[fmt]([*records[:half], *copies, *records[half:]]) or b""
            for placeholder, raw in raws:
                data = data.replace(placeholder, raw)
            if fmt == ".jsonl":
                data += b"{not json\n"
            reasons = [reason for _, reason in JSON_DAMAGE.values()] + (
                ["unparsable_record"] if fmt == ".jsonl" else []
            )
            yield Case(
                adapter,
                "byte_damage",
                self.write("bytes", fmt, data),
                "rows",
                self.rows_of(records, fmt),
                must_quarantine=reasons,
                damaged=len(reasons),
            )
        if flat:
            copies = []
            for name in CSV_DAMAGE:
                copies.append(with_text(records[rng.randrange(n)], CSV_SENTINEL + name.upper())[0])
            # in the middle: an unclosed quote must not swallow the good rows after it
            half = (n + 1) // 2
            data = csv_bytes([*records[:half], *copies, *records[half:]])
            for name, (raw, _) in CSV_DAMAGE.items():
                data = data.replace((CSV_SENTINEL + name.upper()).encode(), raw)
            reasons = [reason for _, reason in CSV_DAMAGE.values()]
            good = self.rows_of(records, ".csv")
            yield Case(
                adapter,
                "csv_damage",
                self.write("csvbytes", ".csv", data),
                "rows",
                good,
                must_quarantine=reasons,
                damaged=2,
            )


def run_case(case: Case) -> Outcome:
    try:
        result = read(case.adapter, case.path, **case.options)
    except Exception as exc:  # a traceback is exactly what the fuzz looks for; problems() tells them apart
        return Outcome(case, error=exc)
    rows = result[0].data.table.to_pylist()
    return Outcome(
        case,
        [row_key(r) for r in rows],
        [r["record_index"] for r in rows],
        list(result.quarantine),
        result.report,
    )


def is_subsequence(needles: list, haystack: list) -> bool:
    it = iter(haystack)
    return all(any(x == y for y in it) for x in needles)


def problems(outcome: Outcome) -> list[str]:
    """What is wrong with one outcome (empty when the case passed)."""
    case, where = outcome.case, f"{outcome.case.adapter} {outcome.case.name} ({outcome.case.path.name})"
    error = outcome.error
    if error is not None and not isinstance(error, (ValueError, FileNotFoundError)):
        return [f"{where}: traceback {type(error).__name__}: {error}"]
    if case.expect == "error":
        if error is None:
            return [f"{where}: read without error, expected a clear error"]
        named = [case.error_match or "", *case.error_ok]
        if not any(text in str(error) for text in named) or case.path.name not in str(error):
            return [f"{where}: error does not name the file and problem: {error}"]
        return []
    if error is not None:
        if any(text in str(error) for text in case.error_ok) and case.path.name in str(error):
            return []
        return [f"{where}: unexpected whole-file error: {error}"]
    rows, out = outcome.rows or [], []
    if case.exact and rows != case.good_rows:
        out.append(f"{where}: rows differ from the undamaged file")
    if case.prefix:
        intact = rows[: len(rows) - case.slack] if case.slack else rows
        if intact != case.good_rows[: len(intact)]:
            out.append(f"{where}: rows before the cut are not the file's first rows")
    elif not is_subsequence(case.good_rows, rows):
        out.append(f"{where}: good rows lost ({len(case.good_rows)} expected among {len(rows)})")
    reasons = [q.reason for q in outcome.quarantine]
    wanted = [case.must_quarantine] if isinstance(case.must_quarantine, str) else case.must_quarantine or []
    for reason in wanted:
        if reason not in reasons:
            out.append(f"{where}: expected a {reason} quarantine entry, got {reasons}")
    if case.quarantined_index is not None and case.quarantined_index not in {
        q.record_index for q in outcome.quarantine
    }:
        out.append(f"{where}: record {case.quarantined_index} is not quarantined")
    if any(not q.reason or not q.detail or q.source != case.adapter for q in outcome.quarantine):
        out.append(f"{where}: a quarantine entry lacks its source, reason or detail")
    # every record is a row source, filtered or quarantined: nothing disappears silently
    seen = set(outcome.record_indices) | {q.record_index for q in outcome.quarantine}
    if len(seen) + outcome.report.n_filtered != outcome.report.records_read:
        out.append(f"{where}: {outcome.report.records_read} records read but {len(seen)} accounted for")
    return out


def build_cases(adapter: str, root: Path, seed: int = SEED) -> list[Case]:
    rng = random.Random(f"{seed}:{adapter}")
    return list(Builder(adapter, root, rng).cases())
