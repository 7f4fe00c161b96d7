import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spl_hf.rules.expr import MAX_DEPTH, And, Eq, ExprError, In, Not, Or, Ref, parse_expr, to_source

NAMES = st.sampled_from(["topic", "refusal", "knowledge", "sensitive", "x_1", "benign", "A"])


def exprs():
    leaves = st.one_of(
        NAMES.map(Ref),
        st.builds(Eq, NAMES, NAMES, st.booleans()),
        st.builds(In, NAMES, st.lists(NAMES, min_size=1, max_size=4).map(tuple)),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            inner.map(Not),
            st.lists(inner, min_size=2, max_size=4).map(lambda xs: And(tuple(xs))),
            st.lists(inner, min_size=2, max_size=4).map(lambda xs: Or(tuple(xs))),
        ),
        max_leaves=20,
    )


def test_precedence_not_binds_tighter_than_and_than_or():
    assert parse_expr("not a and b or c") == Or((And((Not(Ref("a")), Ref("b"))), Ref("c")))
    assert parse_expr("a and (b or c)") == And((Ref("a"), Or((Ref("b"), Ref("c")))))
    assert parse_expr("topic in {benign, privacy}") == In("topic", ("benign", "privacy"))
    assert parse_expr("topic != benign") == Eq("topic", "benign", negate=True)


@given(exprs())
def test_generated_trees_round_trip_through_their_source(tree):
    text = to_source(tree)
    reparsed = parse_expr(text)
    assert to_source(reparsed) == text
    assert parse_expr(to_source(reparsed)) == reparsed


TOKENS = st.sampled_from(
    ["a", "b", "topic", "==", "!=", "in", "{", "}", ",", "(", ")", "and", "or", "not", "v"]
)


@settings(max_examples=400)
@given(st.lists(TOKENS, max_size=14))
def test_every_accepted_string_round_trips(tokens):
    text = " ".join(tokens)
    try:
        tree = parse_expr(text)
    except ExprError:
        return
    assert parse_expr(to_source(tree)) == tree


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_arbitrary_text_either_parses_or_raises_expr_error(text):
    try:
        tree = parse_expr(text)
    except ExprError as exc:
        assert 0 <= exc.pos <= len(text)
        return
    assert parse_expr(to_source(tree)) == tree


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "__import__('os').system('true')",
        "topic.__class__",
        "refusal()",
        "open('x')",
        "lambda: 1",
        "refusal; x",
        "a == 'benign'",
        "a and",
        "(a",
        "a)",
        "",
        "   ",
        "in",
        "a == and",
        "topic in {}",
        "a + b",
    ],
)
def test_python_and_malformed_input_are_rejected_cleanly(text):
    with pytest.raises(ExprError) as info:
        parse_expr(text)
    assert info.value.pos >= 0
    assert "col" in str(info.value)


def test_position_points_at_the_problem():
    with pytest.raises(ExprError) as info:
        parse_expr("refusal and topic.x")
    assert info.value.pos == len("refusal and topic")


@pytest.mark.parametrize("text", ["(" * 4_000 + "a" + ")" * 4_000, "not " * 2_000 + "a"])
def test_huge_nesting_is_rejected_without_recursion_error(text):
    with pytest.raises(ExprError, match=f"deeper than {MAX_DEPTH}"):
        parse_expr(text)


def test_overlong_condition_is_rejected():
    with pytest.raises(ExprError, match="longer than"):
        parse_expr(" or ".join(["a"] * 5000))


def test_non_string_condition_is_rejected():
    with pytest.raises(ExprError, match="must be a string"):
        parse_expr(42)  # type: ignore[arg-type]
