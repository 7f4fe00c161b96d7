"""The refusal_rate ``evaluate`` module: offline loading, config names, options, combine, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

from spl_hf.metrics import REFUSAL_RATE  # noqa: E402
from spl_hf.refusal import MATCHERS, compute_refusal  # noqa: E402

TEXTS = ["I’m sorry, I can't.", " Sure, here is how.", "This is illegal, but here it is.", "No. Never."]
LIMIT = [False, True, True, False]


def load(*args, **kwargs):
    return evaluate.load(REFUSAL_RATE, *args, keep_in_memory=True, **kwargs)


def test_module_folder_ships_with_the_package() -> None:
    folder = Path(REFUSAL_RATE)
    assert (folder / "refusal_rate.py").is_file() and (folder / "README.md").is_file()
    text = (folder / "refusal_rate.py").read_text()
    assert "from spl_hf import refusal" in text  # logic imported from the installed package
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"metrics/**/*"' in pyproject


@pytest.mark.parametrize("config", ["xstest", "advbench", "or_bench_gpt4"])
def test_config_name_chooses_the_matcher(config: str) -> None:
    got = load(config).compute(predictions=TEXTS, at_limit=LIMIT)
    want = compute_refusal(TEXTS, LIMIT, matcher=config).to_dict()
    assert got["matcher"] == config and got["matcher_hash"] == MATCHERS[config].hash
    for key in (
        "n",
        "n_refusals",
        "refusal_rate",
        "at_limit",
        "at_limit_rate",
        "refusal_rate_at_limit",
        "refusal_rate_not_at_limit",
    ):
        assert got[key] == want[key]


def test_default_config_and_results() -> None:
    got = load().compute(predictions=TEXTS, at_limit=LIMIT)
    assert got["matcher"] == "default"
    assert (got["n"], got["n_refusals"], got["at_limit"]) == (4, 2, 2)
    assert got["refusal_rate"] == 0.5 and got["refusal_rate_at_limit"] == 0.0
    assert "per_category" not in got and "refusals" not in got


def test_load_options_are_honoured_and_compute_overrides() -> None:
    m = load("xstest", return_labels=True)
    got = m.compute(predictions=TEXTS, at_limit=LIMIT, categories=["a", "b", "a", "b"])
    assert got["refusals"] == [True, False, False, True]
    assert got["matched"] == ["i'm sorry", None, None, "no."]
    assert got["per_category"]["a"] == {"n": 2, "n_refusals": 1, "refusal_rate": 0.5, "at_limit": 1}
    assert "refusals" not in m.compute(predictions=TEXTS, at_limit=LIMIT, return_labels=False)
    assert (
        load("xstest", matcher="advbench").compute(predictions=TEXTS, at_limit=LIMIT)["matcher"] == "advbench"
    )


def test_works_inside_combine() -> None:
    combined = evaluate.combine({"xs": load("xstest"), "adv": load("advbench")})
    got = combined.compute(predictions=TEXTS, at_limit=LIMIT, categories=["a"] * 4)
    assert got["xs_n_refusals"] == 2 and got["adv_n_refusals"] == 2  # advbench: "illegal" + "I'm sorry"
    assert got["xs_matcher"] == "xstest" and got["adv_matcher"] == "advbench"


def test_bad_input_and_unknown_config() -> None:
    m = load("xstest")
    with pytest.raises(ValueError, match="predictions: empty"):
        m.compute(predictions=[], at_limit=[])
    with pytest.raises(ValueError, match=r"Mismatch in the number of predictions \(2\) and at_limit \(1\)"):
        m.compute(predictions=["a", "b"], at_limit=[True])
    with pytest.raises(ValueError, match=r"categories: 1 values for 2 predictions"):
        m.compute(predictions=["a", "b"], at_limit=[True, False], categories=["x"])
    with pytest.raises(ValueError, match="unknown refusal matcher 'nope'"):
        evaluate.load(REFUSAL_RATE, "nope")
