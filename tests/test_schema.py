import pytest

from spl_hf.schema import default_schema, parse_schema


def test_default_schema_matches_table_one():
    s = default_schema()
    assert s.names("prompt") == ("topic", "knowledge", "historical", "fictional", "method", "steps")
    assert s.names("response") == ("refusal", "provides_content", "partial", "safe_alternative")
    topic = s.attribute("topic")
    assert topic.values == (
        "benign",
        "chemistry_biology",
        "self_harm",
        "illegal_activity",
        "hate_harassment",
        "privacy",
        "sexual_content",
        "violence",
        "deception",
        "out_of_scope",
    )
    assert s.n_assignments() == 5120
    assert all(a.definition for a in s.attributes)


def test_hash_changes_with_a_definition():
    data = default_schema().to_dict()
    h0 = parse_schema(data).hash
    data["prompt"]["steps"]["definition"] = "Something else entirely."
    assert parse_schema(data).hash != h0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["prompt"]["topic"].update(type="enum"), "prompt.topic: type must be"),
        (lambda d: d["prompt"]["knowledge"].pop("definition"), "prompt.knowledge: a non-empty 'definition'"),
        (lambda d: d["response"].update(topic=d["prompt"]["topic"]), "used in both scopes"),
        (lambda d: d["prompt"]["topic"].update(values=["a", "a"]), "duplicate values"),
        (lambda d: d.update(extra=1), "unknown keys"),
    ],
)
def test_invalid_schema_is_rejected_naming_the_attribute(mutate, message):
    data = default_schema().to_dict()
    mutate(data)
    with pytest.raises(ValueError, match=message):
        parse_schema(data, "my.yaml")
