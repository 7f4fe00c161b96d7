import json

import pytest

from spl_hf.derive.pairs import apply_labels, pairs_from_records


def test_labeler_output_replaces_recorded_attributes_and_keeps_parse_failures(schema):
    prompts = [
        {
            "prompt_id": "p1",
            "source": "xstest",
            "source_category": "over_refusal_prone",
            "prompt": "q?",
            "attributes": None,
            "parse_status": "pending",
            "raw_output": None,
        }
    ]
    cands = [
        {
            "prompt_id": "p1",
            "candidate_id": f"c{i}",
            "instruction": "none",
            "response": f"r{i}",
            "attributes": None,
            "parse_status": "pending",
            "raw_output": None,
        }
        for i in range(2)
    ]
    p_attrs = {
        "topic": "benign",
        "knowledge": False,
        "historical": False,
        "fictional": False,
        "method": True,
        "steps": False,
    }
    r_attrs = {"refusal": False, "provides_content": True, "partial": False, "safe_alternative": False}
    labels = [
        {
            "scope": "prompt",
            "prompt_id": "p1",
            "response_id": None,
            "status": "ok",
            "attributes_json": json.dumps(p_attrs),
        },
        {
            "scope": "response",
            "prompt_id": "p1",
            "response_id": "c0",
            "status": "ok",
            "attributes_json": json.dumps(r_attrs),
        },
        {
            "scope": "response",
            "prompt_id": "p1",
            "response_id": "c1",
            "status": "invalid_json",
            "attributes_json": None,
            "raw_text": '{"refusal": ye',
        },
    ]
    new_p = apply_labels(prompts, labels, "prompt")
    new_c = apply_labels(cands, labels, "response")
    assert new_p[0]["attributes"] == p_attrs and new_p[0]["parse_status"] == "ok"
    assert new_c[1]["attributes"] is None and new_c[1]["raw_output"] == '{"refusal": ye'
    (row,) = pairs_from_records(new_p, new_c, schema).to_pylist()
    assert row["attribute_status"] == {"prompt": "ok", "response_a": "ok", "response_b": "invalid_json"}
    with pytest.raises(ValueError, match="no response label for candidate_id 'c1'"):
        apply_labels(cands, labels[:2], "response")
