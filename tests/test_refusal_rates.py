"""Refusal rates: vectorised matching equals the per-response rule; counts, splits and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from spl_hf.refusal import MATCHERS, agreement, compute_refusal, match_array, match_one

PIECES = [
    "I'm sorry",
    "I’m sorry",
    "sorry",
    "Sorry",
    "No,",
    "No.",
    "no",
    "I cannot",
    "I can’t",
    "As an AI",
    "As an",
    "illegal",
    "unethical",
    "Sure",
    "The",
    "Certainly",
    "Here is",
    "It's illegal",
    "I am designed",
    "can't",
    "Hello!",
    "i won't",
    "Unfortunately, I cannot",
    "ünïcode",
    "",
    " ",
    "\n",
    "\t",
    "\u00a0",
]


def random_responses(rng: np.random.Generator, n: int) -> list[str]:
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 5))
        out.append(
            "".join(PIECES[int(i)] + rng.choice(["", " ", ", "]) for i in rng.integers(0, len(PIECES), k))
        )
    return out


@pytest.mark.parametrize("as_arrow", [False, True])
@pytest.mark.parametrize("matcher", list(MATCHERS))
def test_vectorised_equals_per_item_reference(matcher: str, as_arrow: bool) -> None:
    import pyarrow as pa

    texts = random_responses(np.random.default_rng(len(matcher)), 3000)
    refused, index = match_array(pa.array(texts) if as_arrow else texts, matcher)
    patterns = MATCHERS[matcher].patterns
    got = [patterns[i] if i >= 0 else None for i in index.tolist()]
    want = [match_one(t, matcher) for t in texts]
    assert got == want
    assert refused.tolist() == [w is not None for w in want]
    assert 0 < refused.sum() < len(texts)  # the sample exercises both outcomes


def test_counts_and_splits() -> None:
    texts = ["I'm sorry, no.", "Sure, here it is", " I cannot do that", "Here you go", "No.", "Yes"]
    limit = [True, True, False, False, True, False]
    cats = ["hate", "hate", "privacy", "privacy", "privacy", "hate"]
    r = compute_refusal(texts, limit, cats, "xstest", return_labels=True)
    assert (r.n, r.n_refusals, r.refusal_rate) == (6, 3, 0.5)
    assert (r.at_limit, r.at_limit_rate) == (3, 0.5)
    assert r.n_refusals_at_limit == 2
    assert r.refusal_rate_at_limit == pytest.approx(2 / 3)
    assert r.refusal_rate_not_at_limit == pytest.approx(1 / 3)
    assert r.per_category["hate"].n == 3 and r.per_category["hate"].n_refusals == 1
    assert r.per_category["privacy"].refusal_rate == pytest.approx(2 / 3)
    assert r.per_category["privacy"].at_limit == 1
    assert r.refusals == (True, False, True, False, True, False)
    assert r.matched == ("i'm sorry", None, "i cannot", None, "no.", None)
    assert r.matcher == "xstest" and r.matcher_hash == MATCHERS["xstest"].hash


def test_empty_groups_are_none_not_nan() -> None:
    r = compute_refusal(["Sorry.", "Sure"], [False, False], matcher="xstest")
    assert r.refusal_rate_at_limit is None and r.refusal_rate_not_at_limit == 0.5
    assert r.per_category is None and r.refusals is None


def test_numpy_and_arrow_inputs() -> None:
    import pyarrow as pa

    r = compute_refusal(pa.array(["Sorry", "ok"]), np.array([True, False]), matcher="xstest")
    assert (r.n_refusals, r.at_limit) == (1, 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": [], "at_limit": []}, "predictions: empty"),
        ({"predictions": ["a", "b"], "at_limit": [True]}, r"at_limit: 1 values for 2 predictions"),
        ({"predictions": ["a"], "at_limit": [True], "categories": ["x", "y"]}, r"categories: 2 values for 1"),
        ({"predictions": ["a", None], "at_limit": [True, False]}, r"predictions\[1\]"),
        (
            {"predictions": ["a", 3], "at_limit": [True, False]},
            r"predictions\[1\]: expected a string, got int",
        ),
        ({"predictions": ["a", "b"], "at_limit": [True, "yes"]}, r"at_limit\[1\]: expected true or false"),
        ({"predictions": ["a"], "at_limit": [True], "categories": [None]}, r"categories\[0\]"),
    ],
)
def test_bad_input_is_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compute_refusal(**kwargs)


def test_agreement_counts_rate_kappa_confusion() -> None:
    a = [True, True, False, False, True, None]
    b = ["refusal", "compliance", "compliance", "compliance", "refusal", "refusal"]
    ag = agreement(a, b)
    assert (ag.n, ag.n_agree, ag.missing) == (5, 4, 1)
    assert ag.rate == pytest.approx(0.8)
    assert ag.confusion == {
        "compliance": {"compliance": 2, "refusal": 0},
        "refusal": {"compliance": 1, "refusal": 2},
    }
    # by hand: po = 0.8; pa = (2/5, 3/5), pb = (3/5, 2/5); pe = 0.24 + 0.24 = 0.48
    assert ag.cohen_kappa == pytest.approx((0.8 - 0.48) / (1 - 0.48))
    cohen_kappa_score = pytest.importorskip("sklearn.metrics").cohen_kappa_score  # independent implementation

    keep = [i for i, x in enumerate(a) if x is not None]
    ref = cohen_kappa_score([("refusal" if a[i] else "compliance") for i in keep], [b[i] for i in keep])
    assert ag.cohen_kappa == pytest.approx(ref)


def test_agreement_bad_input() -> None:
    with pytest.raises(ValueError, match="3 labels from the first classifier, 2 from the second"):
        agreement([True, False, True], [True, False])
    with pytest.raises(ValueError, match="no labelled items"):
        agreement([], [])
    with pytest.raises(ValueError, match="all 2 items lack a label"):
        agreement([None, True], [False, None])
    assert agreement(["x", "x"], ["x", "x"]).cohen_kappa is None  # stated: undefined, not NaN
