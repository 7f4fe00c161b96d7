import json
from dataclasses import replace
from pathlib import Path

import pytest

from spl_hf.backends import ShardStore, run_worker
from spl_hf.backends.base import Generation
from spl_hf.backends.labeler import (
    AttributeLabeler,
    LabelerConfig,
    items_from_rows,
    parse_json_attributes,
    read_labels,
)
from spl_hf.schema import default_schema
from tests.backends_rows import pair_row

SCHEMA = default_schema()


def test_items_share_prompts_and_report_bad_rows() -> None:
    rows = [
        {
            "prompt_id": "q1",
            "prompt": [{"role": "user", "content": "Hi"}],
            "response": "Hello",
            "response_id": "r1",
        },
        {
            "prompt_id": "q1",
            "prompt": [{"role": "user", "content": "Hi"}],
            "response": "Hey",
            "response_id": "r2",
        },
        pair_row(3),
        {"prompt_id": "q1", "prompt": [{"role": "user", "content": "Other"}], "response": "x"},
        {"prompt_id": "q4", "prompt": [{"role": "robot", "content": "x"}]},
    ]
    items, failures = items_from_rows(rows)
    scopes = [(it.scope, it.prompt_id, it.response_id) for it in items]
    assert scopes == [
        ("prompt", "q1", None),
        ("prompt", "q3", None),
        ("response", "q1", "r1"),
        ("response", "q1", "r2"),
        ("response", "q3", "p3/a"),
        ("response", "q3", "p3/b"),
    ]
    assert [f["index"] for f in failures] == [3, 4]
    assert "two different prompts" in failures[0]["reason"] and "'robot'" in failures[1]["reason"]


def test_constrained_labels_every_attribute_with_option_probabilities(tiny_backend, tmp_path: Path) -> None:
    labeler = AttributeLabeler(tiny_backend, SCHEMA, LabelerConfig(progress=False))
    items, _ = items_from_rows([pair_row(1)])
    store = ShardStore(str(tmp_path / "r"))
    result = run_worker(labeler, items, store, {}, progress=False)
    rows = read_labels(result.rows)
    calls = tiny_backend.forward_calls
    assert run_worker(labeler, items, store, {}, progress=False).computed == 0
    assert tiny_backend.forward_calls == calls
    assert result.computed == 3
    prompt_row = rows[0]
    assert prompt_row["scope"] == "prompt" and prompt_row["status"] == "ok"
    assert set(prompt_row["attributes"]) == set(SCHEMA.names("prompt"))
    assert prompt_row["attributes"]["topic"] in SCHEMA.attribute("topic").values
    assert isinstance(prompt_row["attributes"]["knowledge"], bool)
    topic_probs = prompt_row["probs"]["topic"]
    assert list(topic_probs) == sorted(SCHEMA.attribute("topic").values)  # all ten options, sorted keys
    assert abs(sum(topic_probs.values()) - 1) < 1e-9
    assert max(topic_probs, key=topic_probs.get) == prompt_row["attributes"]["topic"]
    assert set(rows[1]["attributes"]) == {"refusal", "provides_content", "partial", "safe_alternative"}


def test_constrained_prefix_sharing_matches_one_pass(tiny_backend) -> None:
    labeler = AttributeLabeler(tiny_backend, SCHEMA, LabelerConfig(progress=False))
    items, _ = items_from_rows([pair_row(2)])
    from spl_hf.backends.options import option_keys
    from spl_hf.backends.text import split_template

    got = labeler.label(items[0])
    prefix, tail = split_template(tiny_backend.render_chat, labeler.head(items[0]))
    for attr in SCHEMA.prompt:
        one = tiny_backend.next_token_scores_full(
            prefix + labeler.question(attr) + tail, option_keys(len(attr.options))
        )
        for opt, p in zip(attr.options, one.normalised, strict=True):
            assert abs(got.probs[attr.name][opt] - p) < 1e-4


def test_definition_edit_changes_template_hash(tiny_backend) -> None:
    topic = SCHEMA.attribute("steps")
    edited = replace(
        SCHEMA,
        prompt=tuple(replace(a, definition="Numbered steps.") if a is topic else a for a in SCHEMA.prompt),
    )
    assert (
        AttributeLabeler(tiny_backend, SCHEMA).template_hash
        != AttributeLabeler(tiny_backend, edited).template_hash
    )


def test_parse_json_attributes_validates_against_the_schema() -> None:
    attrs = SCHEMA.response
    ok = '{"refusal": true, "provides_content": false, "partial": false, "safe_alternative": true}'
    assert parse_json_attributes("```json\n" + ok + "\n```", attrs) == (
        "ok",
        {"refusal": True, "provides_content": False, "partial": False, "safe_alternative": True},
        None,
    )
    assert parse_json_attributes("no json here", attrs)[:2] == ("invalid_json", None)
    assert parse_json_attributes('{"refusal": true, "refusal": tr', attrs)[:2] == ("invalid_json", None)
    status, values, err = parse_json_attributes(ok.replace("true,", '"yes",', 1), attrs)
    assert (status, values) == ("schema_error", None) and "refusal" in err
    status, _, err = parse_json_attributes('{"refusal": true}', attrs)
    assert status == "schema_error" and "missing keys" in err
    status, _, err = parse_json_attributes(SCHEMA_TOPIC_BAD, SCHEMA.prompt)
    assert status == "schema_error" and "'cooking' is not one of" in err


SCHEMA_TOPIC_BAD = json.dumps(
    {
        "topic": "cooking",
        "knowledge": False,
        "historical": False,
        "fictional": False,
        "method": True,
        "steps": True,
    }
)


class _ScriptedBackend:
    """Backend double for json mode: returns fixed generations, records nothing else."""

    def __init__(self, real, prompt_output: str, response_output: str) -> None:
        self.info, self.render_chat = real.info, real.render_chat
        self.template_fingerprint = real.template_fingerprint
        self.outputs = {"request": prompt_output, "reply": response_output}

    def generate(self, text: str, max_new_tokens: int, seed: int = 0, **kw) -> Generation:
        return Generation(self.outputs["reply" if "[Reply]" in text else "request"], 40, False)


def test_json_mode_stores_invalid_output_without_attributes(tiny_backend, tmp_path: Path) -> None:
    good = '{"refusal": false, "provides_content": true, "partial": false, "safe_alternative": false}'
    backend = _ScriptedBackend(tiny_backend, SCHEMA_TOPIC_BAD, good)
    labeler = AttributeLabeler(backend, SCHEMA, LabelerConfig(mode="json", progress=False))
    items, _ = items_from_rows(
        [{"prompt_id": "q", "prompt": [{"role": "user", "content": "Hi"}], "response": "Yo"}]
    )
    rows = read_labels(run_worker(labeler, items, ShardStore(str(tmp_path / "r")), {}, progress=False).rows)
    assert rows[0]["status"] == "schema_error" and rows[0]["attributes"] is None
    assert rows[0]["raw_text"] == SCHEMA_TOPIC_BAD
    assert rows[1]["status"] == "ok" and rows[1]["attributes"]["provides_content"] is True
    assert (
        rows[0]["mode"] == "json" and rows[0]["template_hash"] != AttributeLabeler(tiny_backend).template_hash
    )


@pytest.mark.parametrize("mode", ["constrained", "json"])
def test_cli_label(mode: str, tiny_model_dir: Path, tmp_path: Path, capsys) -> None:
    from spl_hf.cli import main as cli_main
    from spl_hf.jsonl import read_rows
    from tests.backends_rows import write_jsonl

    items = write_jsonl(tmp_path / "items.jsonl", [pair_row(0), pair_row(1, prompt="bad")])
    out = tmp_path / "labels.parquet"
    argv = [
        "label",
        "--items",
        str(items),
        "--mode",
        mode,
        "--max_new_tokens",
        "6",
        "--model",
        str(tiny_model_dir),
        "--cache",
        str(tmp_path / "results"),
        "--output_dir",
        str(out),
        "--json",
        "--no_progress",
    ]
    assert cli_main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["failed"]) == (3, 1)
    rows = read_labels(read_rows(out))
    assert [r["scope"] for r in rows] == ["prompt", "response", "response"]
    if mode == "constrained":
        assert all(r["status"] == "ok" and r["attributes"] for r in rows)
    else:  # a random model cannot write the JSON object: recorded as such, with no attributes at all
        assert summary["parse_status"] == {"invalid_json": 3}
        assert all(r["attributes"] is None and r["raw_text"] is not None and r["hit_limit"] for r in rows)


def test_constrained_labels_below_min_label_mass_are_not_labels(tiny_backend, monkeypatch) -> None:
    from spl_hf.backends.labeler import AttributeLabeler, items_from_rows
    from tests.backends_rows import pair_row

    item = items_from_rows([pair_row(0)])[0][0]
    default = AttributeLabeler(tiny_backend)
    ok = default.label(item)
    assert ok.status == "ok"
    monkeypatch.setattr(tiny_backend, "min_label_mass", 1.0)  # no answer ever holds all the mass
    strict = AttributeLabeler(tiny_backend)
    low = strict.label(item)
    assert low.status == "low_label_mass" and low.attributes is None
    assert low.probs == ok.probs and "min_label_mass 1" in low.error
    assert strict.template_hash != default.template_hash and strict.key(item) != default.key(item)
