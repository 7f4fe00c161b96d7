"""The audit never crashes on data: every column of every config dropped or retyped is named by file
and column, and edits of ids, joins, nulls, card.json, build_report.json and the certificate fail the
audit naming what differs, never with a traceback (in-process audits of copies of session builds)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spl_hf.audit import audit
from spl_hf.audit.load import read_folder
from spl_hf.audit.shape import shape_failures
from tests.audit_fixtures import copy_build, reseal


def _first_files(folder: Path) -> list[Path]:
    return [
        sorted(d.glob("*.parquet"))[0]
        for d in sorted(folder.iterdir())
        if d.is_dir() and any(d.glob("*.parquet"))
    ]


def _retyped(table: pa.Table, name: str) -> pa.Table:
    values = [json.dumps(v, default=str) for v in table.column(name).to_pylist()]
    if pa.types.is_string(table.schema.field(name).type) or pa.types.is_large_string(
        table.schema.field(name).type
    ):
        return table.set_column(table.column_names.index(name), name, pa.array([len(v) for v in values]))
    return table.set_column(table.column_names.index(name), name, pa.array(values))


@pytest.mark.parametrize("fixture", ["built_spl_judge", "built_tenets"])
def test_every_column_of_every_config_dropped_or_retyped_is_named(fixture, request, tmp_path):
    folder = copy_build(request.getfixturevalue(fixture), tmp_path / "ds")
    built = read_folder(folder, manifest=False)
    assert shape_failures(built) == []
    walked = 0
    for path in _first_files(folder):
        rel = path.relative_to(folder).as_posix()
        original = path.read_bytes()
        table = pq.read_table(path)
        for name in table.column_names:
            for edited, says in ((table.drop([name]), "is missing"), (_retyped(table, name), "has type")):
                pq.write_table(edited, path)
                named = shape_failures(built)
                assert any(rel in f and repr(name) in f and says in f for f in named), (rel, name, named)
                walked += 1
            path.write_bytes(original)
    assert walked > 40


def _edit_rows(path: Path, edit) -> None:
    table = pq.read_table(path)
    rows = table.to_pylist()
    edit(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def _edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    data = edit(data)
    path.write_text(json.dumps(data))


def _spl_edits(folder: Path):
    (derivations,) = (
        sorted((folder / "derivations").glob("xstest-*.parquet"))[:1]
        or sorted((folder / "derivations").glob("*.parquet"))[:1]
    )

    def pair_id(rows):  # the review's reproduction: a join that no longer matches
        rows[0]["pair_id"] = rows[0]["pair_id"] + "x"

    def null_derivation(rows):
        rows[0]["derivation"] = None

    yield "pair_id", lambda: _edit_rows(derivations, pair_id)
    yield "null derivation", lambda: _edit_rows(derivations, null_derivation)
    yield "card.json kwargs", lambda: _edit_json(folder / "card.json", lambda d: {**d, "kwargs": [1, 2]})
    yield "build_report.json list", lambda: _edit_json(folder / "build_report.json", lambda d: [d])


def _tenet_edits(folder: Path):
    (scores,) = sorted((folder / "judge_scores").glob("*.parquet"))
    cert = folder / "assignment_certificate.json"

    def null_score(rows):
        rows[0]["p_a_first"] = None

    def other_pair(rows):
        rows[0]["pair_id"] = "not-a-pair"

    yield "null p_a_first", lambda: _edit_rows(scores, null_score)
    yield "judge pair_id", lambda: _edit_rows(scores, other_pair)
    yield "certificate capacity", lambda: _edit_json(cert, lambda d: {**d, "capacity": "two"})
    yield "certificate list", lambda: _edit_json(cert, lambda d: [d])
    yield (
        "build_report threshold",
        lambda: _edit_json(
            folder / "build_report.json", lambda d: {**d, "settings": {**d["settings"], "threshold": 0.77}}
        ),
    )
    yield (
        "build_report tenets",
        lambda: _edit_json(
            folder / "build_report.json", lambda d: {**d, "settings": {**d["settings"], "tenets": ["x"]}}
        ),
    )
    yield "card.json null", lambda: _edit_json(folder / "card.json", lambda d: {**d, "kwargs": None})


@pytest.mark.parametrize(
    ("fixture", "edits"), [("built_spl_judge", _spl_edits), ("built_tenets", _tenet_edits)]
)
def test_edits_of_ids_joins_nulls_and_json_fail_the_audit_naming_them(fixture, edits, request, tmp_path):
    source = request.getfixturevalue(fixture)
    for i, (label, _edit) in enumerate(list(edits(source))):
        folder = tmp_path / f"e{i}"
        shutil.copytree(source, folder)
        dict(edits(folder))[label]()
        reseal(folder)  # a consistent forger: the manifest matches
        report = audit(folder)
        assert not report.ok, label
        assert report.describe_failure(), label  # names the file and entry (failures or certificate)
        if "settings" in label or label.startswith("build_report "):
            key = label.split()[-1]
            assert any(f"settings.{key}" in f for f in report.failures), (label, report.failures[:5])
