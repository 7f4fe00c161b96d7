import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.derive import derive_row, derive_table, pair_features
from tests.conftest import make_pair

BENIGN = dict(topic="benign", knowledge=False, historical=True, fictional=False, method=False, steps=False)
CHEM_OPS = dict(
    topic="chemistry_biology", knowledge=False, historical=False, fictional=False, method=True, steps=True
)
CHEM_FRAMED = dict(CHEM_OPS, method=False, steps=False, fictional=True)
COMPLY = dict(refusal=False, provides_content=True, partial=False, safe_alternative=False)
REFUSE = dict(refusal=True, provides_content=False, partial=False, safe_alternative=False)
REFUSE_ALT = dict(REFUSE, safe_alternative=True)
PARTIAL = dict(refusal=False, provides_content=False, partial=True, safe_alternative=False)
NOTHING = dict(refusal=False, provides_content=False, partial=False, safe_alternative=False)


def _derive(rows, rb, margin=1):
    table = pa.Table.from_pylist(rows, schema=pair_features(rb.schema).arrow_schema)
    return derive_table(table, rb, margin).to_pylist()


@pytest.mark.parametrize(
    ("prompt", "a", "b", "label", "reason", "rules_a", "rules_b", "diff"),
    [
        (BENIGN, COMPLY, REFUSE, "a", None, ["R6"], ["R1"], 3),
        (BENIGN, REFUSE, COMPLY, "b", None, ["R1"], ["R6"], -3),
        (CHEM_OPS, COMPLY, REFUSE_ALT, "b", None, ["R5"], ["R3", "R9"], -3),
        (CHEM_FRAMED, PARTIAL, REFUSE, "a", None, ["R8"], ["R2"], 1),
        (CHEM_FRAMED, COMPLY, PARTIAL, "a", None, ["R7"], ["R8"], 2),
        (BENIGN, COMPLY, COMPLY, None, "equal_ranks", ["R6"], ["R6"], 0),
        (BENIGN, COMPLY, NOTHING, None, "no_verdict", ["R6"], [], None),
        (None, COMPLY, REFUSE, None, "missing_attributes", [], [], None),
        (BENIGN, None, REFUSE, None, "missing_attributes", [], ["R1"], None),
        (dict(BENIGN, steps=None), COMPLY, REFUSE, None, "missing_attributes", [], [], None),
    ],
)
def test_labels_and_reasons(rulebase, prompt, a, b, label, reason, rules_a, rules_b, diff):
    (row,) = _derive([make_pair(0, prompt, a, b)], rulebase)
    d = row["derivation"]
    assert (d["label"], d["no_label_reason"]) == (label, reason)
    assert (d["rules_a"], d["rules_b"], d["rank_diff"]) == (rules_a, rules_b, diff)
    assert d["rulebase_hash"] == rulebase.hash and d["rulebase_id"] == "spl_table2"
    if label:
        win = row[f"response_{label}"]
        assert row["chosen"] == [{"role": "assistant", "content": win}]
        assert row["rejected"][0]["content"] != win
    else:
        assert row["chosen"] is None and row["rejected"] is None


def test_margin_is_configurable(rulebase):
    rows = [make_pair(0, CHEM_FRAMED, PARTIAL, REFUSE), make_pair(1, BENIGN, COMPLY, REFUSE)]
    out = _derive(rows, rulebase, margin=2)
    assert out[0]["derivation"]["no_label_reason"] == "margin_not_met"
    assert out[1]["derivation"]["label"] == "a" and out[1]["derivation"]["margin"] == 2
    with pytest.raises(ValueError, match="margin must be at least 1"):
        _derive(rows, rulebase, margin=0)


def test_conflicting_verdicts_get_no_label(rulebase):
    from spl_hf.rules import parse_rulebase

    rb2 = parse_rulebase(
        rulebase.to_yaml() + "- id: R10\n  when: topic == benign and refusal\n  verdict: partial_compliance\n"
    )
    (row,) = _derive([make_pair(0, BENIGN, COMPLY, REFUSE)], rb2)
    assert row["derivation"]["no_label_reason"] == "conflicting_verdicts"
    assert row["derivation"]["verdict_b"] is None and row["derivation"]["rules_b"] == ["R1", "R10"]


def test_unknown_category_value_names_row_and_field(rulebase):
    rows = [
        make_pair(0, BENIGN, COMPLY, REFUSE),
        make_pair(1, dict(BENIGN, topic="gambling"), COMPLY, REFUSE),
    ]
    with pytest.raises(ValueError, match=r"prompt_attributes.topic: 1 row\(s\).*row 1 \(pair1\): 'gambling'"):
        _derive(rows, rulebase)


def test_missing_columns_are_rejected(rulebase, sample_pairs):
    with pytest.raises(ValueError, match="lacks columns \\['response_b'\\]"):
        derive_table(sample_pairs.drop_columns(["response_b"]), rulebase)


def test_prompt_attributes_are_shared_by_every_pair_of_a_prompt(sample_pairs):
    by_prompt: dict = {}
    for pid, attrs in zip(
        sample_pairs.column("prompt_id").to_pylist(), sample_pairs.column("prompt_attributes").to_pylist()
    ):
        by_prompt.setdefault(pid, []).append(attrs)
    assert all(all(x == v[0] for x in v) for v in by_prompt.values())
    assert len(by_prompt) == 48 and sample_pairs.num_rows == 144


def test_sample_has_every_outcome(sample_derived):
    d = sample_derived.column("derivation").to_pylist()
    reasons = {x["no_label_reason"] for x in d}
    assert reasons == {None, "no_verdict", "equal_ranks", "missing_attributes"}
    assert sum(x["label"] is not None for x in d) == 72


ATTR = st.one_of(st.none(), st.booleans())
PROMPTS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "topic": st.one_of(st.none(), st.sampled_from(["benign", "violence", "out_of_scope", "privacy"])),
            **{k: ATTR for k in ("knowledge", "historical", "fictional", "method", "steps")},
        }
    ),
)
RESPONSES = st.one_of(
    st.none(),
    st.fixed_dictionaries({k: ATTR for k in ("refusal", "provides_content", "partial", "safe_alternative")}),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(PROMPTS, RESPONSES, RESPONSES), min_size=1, max_size=25), st.integers(1, 4))
def test_vectorised_derivation_equals_per_row_reference(rulebase, triples, margin):
    rows = [make_pair(i, p, a, b) for i, (p, a, b) in enumerate(triples)]
    vec = _derive(rows, rulebase, margin)
    for row, out in zip(rows, vec):
        ref = derive_row(row, rulebase, margin)
        assert out["derivation"] == ref["derivation"]
        assert (out["chosen"], out["rejected"]) == (ref["chosen"], ref["rejected"])


def test_the_digest_covers_who_produced_each_model_output(rulebase):
    row = make_pair(0, BENIGN, COMPLY, REFUSE)
    other = {**row, "producers": {**row["producers"], "response_b_labeler": "f" * 16}}
    (a, b) = _derive([row, other], rulebase)
    assert a["derivation"]["digest"] != b["derivation"]["digest"]
    assert b["derivation"]["digest"] == derive_row(other, rulebase, 1)["derivation"]["digest"]


def test_derivation_is_deterministic(sample_pairs, rulebase):
    a = derive_table(sample_pairs, rulebase)
    b = derive_table(sample_pairs, rulebase)
    assert a.equals(b)
    assert (
        np.unique(
            pa.compute.struct_field(a.column("derivation"), "digest").to_numpy(zero_copy_only=False)
        ).size
        == a.num_rows
    )
