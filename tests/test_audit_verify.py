import copy
import json

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spl_hf.audit import audit_batches, audit_table
from spl_hf.cli import main
from spl_hf.derive import derive_table, derived_features, pair_features
from spl_hf.rules import parse_rulebase
from tests.conftest import make_pair
from tests.test_derive_derivation import PROMPTS, RESPONSES


def test_audit_reproduces_the_sample(sample_derived, rulebase):
    report = audit_table(sample_derived, rulebase)
    assert report.ok and report.rows == report.reproduced == 144


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(PROMPTS, RESPONSES, RESPONSES), min_size=1, max_size=20), st.integers(1, 3))
def test_audit_of_any_derivation_reproduces(rulebase, triples, margin):
    rows = [make_pair(i, p, a, b) for i, (p, a, b) in enumerate(triples)]
    table = derive_table(
        pa.Table.from_pylist(rows, schema=pair_features(rulebase.schema).arrow_schema), rulebase, margin
    )
    report = audit_batches(table, rulebase, batch_size=7)
    assert report.ok, report.mismatches
    assert report.reproduced == len(rows)


def _leaf_paths(row: dict, prefix=()):
    for key, value in row.items():
        path = (*prefix, key)
        if isinstance(value, dict):
            yield from _leaf_paths(value, path)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, item in enumerate(value):
                yield from _leaf_paths(item, (*path, i))
        else:
            yield path


def _changed(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return "x"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + " " if value else "x"
    if isinstance(value, list):
        return [*value, "R1"] if len(value) < 2 else value[:-1]
    raise AssertionError(value)


def _set(row, path, value):
    target = row
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def _get(row, path):
    for key in path:
        row = row[key]
    return row


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_single_field_edit_is_caught_on_that_row(sample_derived, rulebase, data):
    rows = sample_derived.to_pylist()
    i = data.draw(st.integers(0, len(rows) - 1), label="row")
    paths = sorted(_leaf_paths(rows[i]), key=str)
    path = data.draw(st.sampled_from(paths), label="field")
    edited = copy.deepcopy(rows)
    old = _get(edited[i], path)
    new = _changed(old)
    if old is None and isinstance(path[-1], str) and path[-1] in rulebase.schema.names():
        new = True if rulebase.schema.attribute(path[-1]).kind == "bool" else "benign"
    if old is None and path[-1] in ("rank_a", "rank_b", "rank_diff", "margin"):
        new = 1
    if old is None and path[-1] in ("prompt_attributes", "response_a_attributes", "response_b_attributes"):
        scope = "prompt" if path[-1] == "prompt_attributes" else "response"
        new = {a.name: (True if a.kind == "bool" else "benign") for a in getattr(rulebase.schema, scope)}
    if old is None and path[-1] in ("chosen", "rejected"):
        new = [{"role": "assistant", "content": "x"}]
    _set(edited[i], path, new)
    table = pa.Table.from_pylist(edited, schema=derived_features(rulebase.schema).arrow_schema)
    report = audit_table(table, rulebase)
    assert [m.index for m in report.mismatches] == [i], (path, old, new)
    assert report.reproduced == len(rows) - 1


def test_mismatch_names_the_fields(sample_derived, rulebase):
    rows = sample_derived.to_pylist()
    i = next(k for k, r in enumerate(rows) if r["derivation"]["label"] == "a")
    rows[i]["derivation"]["label"] = "b"
    table = pa.Table.from_pylist(rows, schema=sample_derived.schema)
    (m,) = audit_table(table, rulebase).mismatches
    assert m.pair_id == rows[i]["pair_id"] and m.fields == ["label"]
    rows[i]["derivation"]["label"] = "a"
    rows[i]["response_a"] += "!"
    (m,) = audit_table(pa.Table.from_pylist(rows, schema=sample_derived.schema), rulebase).mismatches
    assert set(m.fields) == {"digest", "chosen"}


def test_counterfactual_rulebase_reports_changed_labels(sample_derived, rulebase):
    text = (
        rulebase.to_yaml()
        .replace("id: spl_table2", "id: no_r8")
        .replace(
            "- id: R8\n  when: sensitive and framing and not operational and not refusal and not provides_content and partial\n"
            "  verdict: partial_compliance\n  reconstructed: true\n",
            "",
        )
    )
    variant = parse_rulebase(text)
    assert "R8" not in variant.rule_ids
    report = audit_table(sample_derived, variant, counterfactual=True)
    assert report.ok  # integrity holds; labels may change
    r8_rows = [
        r["pair_id"]
        for r in sample_derived.to_pylist()
        if "R8" in r["derivation"]["rules_a"] + r["derivation"]["rules_b"] and r["derivation"]["label"]
    ]
    assert report.changed_labels == len(r8_rows) == 10
    assert {c.pair_id for c in report.changes} == set(r8_rows)
    assert all(
        c.after["label"] is None and c.after["no_label_reason"] == "no_verdict" for c in report.changes
    )


def test_cli_audit_exit_codes(built_spl, tmp_path, capsys, rulebase):
    assert main(["audit", str(built_spl), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"] == out["reproduced"] == 144 + 72 and out["mismatches"] == []

    variant = tmp_path / "published_only.yaml"
    variant.write_text(
        rulebase.to_yaml()
        .replace("id: spl_table2", "id: v")
        .replace("reconstructed: true", "reconstructed: false")
    )
    assert (
        main(["audit", str(built_spl), "--config_name", "derivations", "--rulebase", str(variant), "--json"])
        == 0
    )
    cf = json.loads(capsys.readouterr().out)
    assert cf["counterfactual"] is True and cf["changed_labels"] == 0
    assert cf["recorded_rulebase_hashes"] == [rulebase.hash]


@pytest.mark.slow
def test_cli_audit_fails_on_an_edited_parquet_file(built_spl, tmp_path, capsys):
    import shutil

    import pyarrow.parquet as pq

    copy_dir = tmp_path / "edited"
    shutil.copytree(built_spl, copy_dir)
    path = copy_dir / "derivations" / "ultrachat-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[3]["prompt_attributes"]["historical"] = not rows[3]["prompt_attributes"]["historical"]
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    assert main(["audit", str(copy_dir), "--config_name", "derivations", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["manifest_mismatches"] == ["derivations/ultrachat-00000-of-00001.parquet"]
    assert [(m["split"], m["row"]) for m in out["mismatches"]] == [("ultrachat", 3)]


def test_threaded_audit_reports_the_same_as_one_thread(sample_derived, rulebase):
    rows = sample_derived.to_pylist()
    rows[5]["response_a"] += "!"
    rows[100]["derivation"]["rank_a"] = 9
    table = pa.Table.from_pylist(rows, schema=sample_derived.schema)
    one = audit_batches(table, rulebase, batch_size=16, workers=1)
    many = audit_batches(table, rulebase, batch_size=16, workers=4)
    assert one == many
    assert [m.index for m in many.mismatches] == [5, 100]


MESSAGE_EDITS = {
    "extra message": lambda m, r: [*m, {"role": "assistant", "content": "more"}],
    "empty list": lambda m, r: [],
    "null message": lambda m, r: [None],
    "user role": lambda m, r: [{"role": "user", "content": m[0]["content"]}],
    "null role": lambda m, r: [{"role": None, "content": m[0]["content"]}],
    "other response": lambda m, r: [{"role": "assistant", "content": r}],
    "null content": lambda m, r: [{"role": "assistant", "content": None}],
    "missing": lambda m, r: None,
}


@pytest.mark.parametrize("edit", sorted(MESSAGE_EDITS))
@pytest.mark.parametrize("column", ["chosen", "rejected"])
def test_every_kind_of_message_edit_is_caught_in_a_sliced_many_chunk_table(
    sample_derived, rulebase, edit, column
):
    """chosen/rejected are compared message by message, wherever a batch starts in its chunks."""
    rows = sample_derived.to_pylist()
    labeled = [k for k, r in enumerate(rows) if r["derivation"]["label"]]
    unlabeled = next(k for k, r in enumerate(rows) if k > 3 and not r["derivation"]["label"])
    i = labeled[len(labeled) // 2]
    label = rows[i]["derivation"]["label"]
    picked = label if column == "chosen" else {"a": "b", "b": "a"}[label]
    other = rows[i]["response_b" if picked == "a" else "response_a"]  # the response not picked
    rows[i][column] = MESSAGE_EDITS[edit](rows[i][column], other)
    rows[unlabeled][column] = [{"role": "assistant", "content": rows[unlabeled]["response_a"]}]
    table = pa.Table.from_pylist(rows, schema=sample_derived.schema)
    chunked = pa.concat_tables([table.slice(0, 50), table.slice(50, 41), table.slice(91)])
    for t in (table, chunked):
        report = audit_batches(t.slice(3), rulebase, batch_size=17, workers=2)
        assert [(m.index + 3, m.fields) for m in report.mismatches] == sorted(
            [(i, [column]), (unlabeled, [column])]
        )
