"""Fuzz every source adapter with damaged records and damaged files (cases in tests/sources_fuzz.py).

Per adapter and per file format (.jsonl, .jsonl.gz, .json, .json.gz, .parquet, and .csv/.csv.gz for
flat sources): undamaged, BOM, empty, truncated, Git LFS pointer, directory instead of file, plain
file named .gz, missing file; and inside good files: fields missing, null, of the wrong type, empty,
holding NUL, 5 MB long, invalid UTF-8, lone surrogates, nesting 100k deep, unparsable lines, CSV
unclosed quotes and Latin-1 bytes. Each case asserts no traceback, only ValueError/FileNotFoundError
naming the file where the whole file is unusable, every good row kept, every damaged record
quarantined (or filtered) with its reason, and every record accounted for.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from tests.sources_fuzz import BASES, build_cases, problems, run_case


@pytest.mark.parametrize("adapter", list(BASES))
def test_fuzzed_files_give_rows_quarantine_or_a_clear_error(adapter, tmp_path):
    cases = build_cases(adapter, tmp_path)
    counts: Counter[str] = Counter()
    failures = []
    for case in cases:
        outcome = run_case(case)
        failures += problems(outcome)
        counts["cases"] += 1
        counts["damaged_records"] += case.damaged
        if outcome.error is None:
            counts["quarantined"] += len(outcome.quarantine)
        elif isinstance(outcome.error, (ValueError, FileNotFoundError)):
            counts["clean_errors"] += 1
        else:
            counts["tracebacks"] += 1
    print(f"{adapter}: {dict(counts)}")
    assert not failures, "\n".join(failures[:20])
    assert counts["tracebacks"] == 0
    # the fuzz really exercised both outcomes
    assert counts["quarantined"] > 0 and counts["damaged_records"] > 0 and counts["clean_errors"] >= 10


def test_cases_are_deterministic(tmp_path):
    def digest(root):
        cases = build_cases("wf_mt", root)
        return [
            (
                c.name,
                c.path.name,
                hashlib.sha256(c.path.read_bytes()).hexdigest() if c.path.is_file() else None,
            )
            for c in cases
        ]

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
