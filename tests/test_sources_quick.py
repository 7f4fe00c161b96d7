"""The adapters' quick readers (``PairAdapter.quick``): a pool read with them is the pool read without.

The quick reader of PKU-SafeRLHF, HH-RLHF and UltraFeedback takes the records of the regular shape
and leaves every other record to the full converter, so the rows, the quarantine (reasons, fields,
details) and the report must be the same either way: checked on every fuzz case of the three
adapters (damaged records and files), on hand-made records at each edge of what the quick reader
takes, and on random HH-RLHF transcripts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.sources import read_pool
from spl_hf.sources.adapter import SourceOptions
from spl_hf.sources.adapters.hh import convert_hh, quick_hh
from spl_hf.sources.adapters.pku import quick_pku
from spl_hf.sources.adapters.ultrafeedback import quick_ultrafeedback
from spl_hf.sources.convert import pairs_from_table
from spl_hf.sources.fields import RowError
from spl_hf.sources.io import read_local
from spl_hf.sources.registry import ADAPTERS
from tests.sources_fuzz import build_cases

QUICK = ("pku_train", "hh_train", "ultrafeedback_train")


def _both(adapter_name: str, path: Path, monkeypatch, **options) -> tuple:
    """(with the quick reader, without it): each a (rows, quarantine, report, fingerprint) or the error."""

    def outcome():
        try:
            result = read_pool(adapter_name, path, **options)
        except Exception as exc:  # the same error either way is what is compared
            return (type(exc).__name__, str(exc))
        pairs = result.pairs
        return (
            pairs.data.table,
            [asdict(q) for q in result.quarantine],
            result.report.to_dict(),
            pairs._fingerprint,
        )

    quick = outcome()
    with monkeypatch.context() as m:
        m.setitem(ADAPTERS, adapter_name, replace(ADAPTERS[adapter_name], quick=None))
        full = outcome()
    return quick, full


def _same(quick, full) -> None:
    if isinstance(full[0], str):
        assert quick == full
        return
    assert quick[0].equals(full[0]) and quick[0].schema == full[0].schema
    assert quick[1:] == full[1:]


@pytest.mark.parametrize("adapter", QUICK)
def test_every_fuzz_case_reads_the_same_with_and_without_the_quick_reader(adapter, tmp_path, monkeypatch):
    cases = build_cases(adapter, tmp_path)
    assert len(cases) > 30
    for case in cases:
        quick, full = _both(adapter, case.path, monkeypatch, **case.options)
        _same(quick, full)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


PKU_BASE = {
    "prompt": "How do I fix a bike?",
    "response_0": "Use a wrench.",
    "response_1": "Ask a shop.",
    "prompt_source": "x",
    "is_response_0_safe": True,
    "is_response_1_safe": False,
    "response_0_severity_level": 0,
    "response_1_severity_level": 2,
    "better_response_id": 1,
    "safer_response_id": 0,
}
# field -> values at and beyond each edge of what quick_pku takes
PKU_EDGES = {
    "prompt": ["", "  ", "\x00x", "ok\tprompt", None, 3, "caf\u00e9  au\u00a0lait"],
    "response_0": ["Ask a shop.", " Ask  a\nshop. ", "", " ", "\x00", "x" * 50, 1.5],
    "safer_response_id": [0, 1, 2, -1, True, False, 1.0, "1", None],
    "is_response_0_safe": [None, True, False, "true", "nope", 0, float("nan")],
    "response_1_severity_level": [None, 0, 3, 4, -1, "", "2", 2.0, True],
}


def test_pku_edges_read_the_same(tmp_path, monkeypatch):
    records = [PKU_BASE]
    for field, values in PKU_EDGES.items():
        records += [{**PKU_BASE, field: v} for v in values]
        records.append({k: v for k, v in PKU_BASE.items() if k != field})
    records += [dict(PKU_BASE, prompt=f"Prompt {i}") for i in range(3)] + [PKU_BASE]  # a duplicate pair
    path = _jsonl(tmp_path / "pku.jsonl", records)
    for options in ({}, {"max_text_chars": 40}, {"pku_preference": "better"}, {"pku_drop_both_unsafe": True}):
        _same(*_both("pku_train", path, monkeypatch, **options))
    assert quick_pku(PKU_BASE, SourceOptions()) is not None  # the regular record is taken quickly


def _uf(prompt="What is 2+2?", a="Four.", b="Five.", **extra) -> dict:
    def messages(reply):
        return [{"content": prompt, "role": "user"}, {"content": reply, "role": "assistant"}]

    return {
        "prompt": prompt,
        "chosen": messages(a),
        "rejected": messages(b),
        "score_chosen": 8.0,
        "score_rejected": 3.0,
        **extra,
    }


def test_ultrafeedback_edges_read_the_same(tmp_path, monkeypatch):
    base = _uf()
    records = [base, _uf(a="Same", b=" Same "), _uf(a="  "), _uf(b="\x00"), _uf(prompt=" ")]
    records += [
        {**base, "score_chosen": v, "score_rejected": 3} for v in (3, 3.0, None, "3", True, float("nan"))
    ]
    records += [
        {**base, "chosen": v}
        for v in (
            [],
            "text",
            None,
            [{"role": "user", "content": "x"}],
            [{"role": "assistant"}],
            [{"role": "assistant", "content": 5}],
            ["x"],
        )
    ]
    records += [{k: v for k, v in base.items() if k != drop} for drop in ("score_chosen", "chosen", "prompt")]
    records += [_uf(prompt=f"Q{i}") for i in range(3)] + [base]
    path = _jsonl(tmp_path / "uf.jsonl", records)
    for options in ({}, {"max_text_chars": 8}):
        _same(*_both("ultrafeedback_train", path, monkeypatch, **options))
    assert quick_ultrafeedback(base, SourceOptions()) is not None


def _hh(history: str, a: str, b: str) -> dict:
    return {"chosen": f"{history}\n\nAssistant: {a}", "rejected": f"{history}\n\nAssistant: {b}"}


HH_RECORDS = [
    _hh("\n\nHuman: Hi there", "Hello!", "Go away."),
    _hh("\n\nHuman: Hi\n\nAssistant: Yes?\n\nHuman: More", "Sure.", "No."),
    _hh("  \n\nHuman: leading space", "a", "b"),
    _hh("Human: no leading newlines", "a", "b"),
    _hh("\n\nAssistant: starts with the assistant\n\nHuman: q", "a", "b"),
    _hh("\n\nHuman: q\n\nAssistant: twice", "a", "b"),  # two assistant turns at the end
    _hh("\n\nHuman: q", "a\n\nHuman: an invented turn", "b"),
    _hh("\n\nHuman: q", "same", " same"),
    _hh("\n\nHuman: q", "", "b"),
    _hh("\n\nHuman: q\x00", "a", "b"),
    {"chosen": "\n\nHuman: q\n\nAssistant: a", "rejected": "\n\nHuman: other q\n\nAssistant: b"},
    {"chosen": "\n\nHuman: q  \n\nAssistant: a", "rejected": "\n\nHuman: q\n\nAssistant: b"},
    {"chosen": "\n\nHuman: q\n\nAssistant: a", "rejected": "\n\nHuman: q\n\nAssistant: b\n\nHuman: more"},
    {"chosen": "\n\nHuman: q\n\n\nAssistant: a", "rejected": "\n\nHuman: q\n\n\nAssistant: b"},
    {"chosen": "\n\nHuman: q", "rejected": "\n\nHuman: q"},
    {"chosen": 5, "rejected": "\n\nHuman: q\n\nAssistant: b"},
    {"chosen": "\n\nHuman: q\n\nAssistant: a"},
    _hh("\n\nHuman: Hi there", "Hello!", "Go away."),  # a duplicate pair
]


def test_hh_edges_read_the_same(tmp_path, monkeypatch):
    path = _jsonl(tmp_path / "hh.jsonl", HH_RECORDS)
    for options in ({}, {"max_text_chars": 12}):
        _same(*_both("hh_train", path, monkeypatch, **options))
    assert quick_hh(HH_RECORDS[1], SourceOptions()) is not None


_PIECES = ["\n\nHuman:", "\n\nAssistant:", "\n\n\nAssistant:", " hi", " there", "\n", " ", "x", "Human:"]
_transcripts = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(_transcripts, _transcripts, _transcripts)
def test_quick_hh_is_convert_hh_wherever_it_answers(shared, tail_a, tail_b):
    """Where the quick reader gives a pair, the converter gives the same one (or, for blank or equal
    replies, an issue, which the pool reader then takes from the converter)."""
    record = {"chosen": shared + tail_a, "rejected": shared + tail_b}
    quick = quick_hh(record, SourceOptions())
    if quick is None:
        return
    try:
        converted = convert_hh(record, SourceOptions())
    except RowError as exc:
        assert exc.issue.reason in ("empty_response", "identical_responses")
        return
    (draft,) = converted.pairs
    assert (draft.prompt, draft.response_a, draft.response_b, draft.turns) == (
        (("user", quick[0]),),
        quick[1],
        quick[2],
        quick[5],
    )
    assert draft.source_preference == quick[3] and draft.safety.columns() == quick[4]


def test_the_bench_shaped_pools_are_read_quickly(tmp_path):
    """Records of the three pools' usual shape all go the quick way (none falls back)."""
    for name, record in (
        ("pku_train", PKU_BASE),
        ("ultrafeedback_train", _uf()),
        ("hh_train", HH_RECORDS[1]),
    ):
        raw = read_local(_jsonl(tmp_path / f"{name}.jsonl", [record]))
        calls = []
        adapter = replace(ADAPTERS[name], convert=lambda r, o, calls=calls: calls.append(r))
        result = pairs_from_table(adapter, raw, SourceOptions())
        assert result.report.rows_yielded == 1 and not calls
