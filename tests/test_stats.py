import json
import math

import numpy as np
import pytest
from scipy import stats

from spl_hf.stats import ONE_VALUE_NOTE, ZERO_SPREAD_NOTE, describe, paired_contrast

# Figure 4 of the source paper: measured benign refusal (%) of seeds 1-5.
BENIGN = [40.71, 40.49, 40.71, 40.86, 41.32]


def test_hand_computed_three_values():
    s = describe([1.0, 2.0, 3.0])
    # mean 2, SD sqrt(((1)^2 + 0 + 1^2) / 2) = 1, t_{0.975, 2} = 4.302653, half = t / sqrt(3)
    assert (s.n, s.mean, s.sd, s.df) == (3, 2.0, 1.0, 2)
    assert s.t_critical == pytest.approx(4.302653, abs=1e-6)
    assert s.ci_low == pytest.approx(2.0 - 2.484138, abs=1e-6)
    assert s.ci_high == pytest.approx(2.0 + 2.484138, abs=1e-6)
    assert s.note is None


def test_paper_benign_seeds_match_reported_mean_and_sd():
    s = describe(BENIGN)
    assert round(s.mean, 2) == 40.82 and round(s.sd, 2) == 0.31  # as printed in the paper
    assert s.df == 4 and s.t_critical == pytest.approx(2.776, abs=5e-4)


@pytest.mark.parametrize(
    "values", [BENIGN, [84.73, 84.89, 85.19, 85.04, 85.04], [0.1, 0.5], [3.0, -1.0, 7.5, 2.2]]
)
def test_interval_equals_scipy(values):
    s = describe(values)
    lo, hi = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    assert (s.ci_low, s.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    assert s.sd == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    lo2, hi2 = stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=s.sd / math.sqrt(len(values))
    )
    assert (s.ci_low, s.ci_high) == pytest.approx((lo2, hi2), rel=1e-12)


def test_other_confidence_level():
    s = describe(BENIGN, confidence=0.9)
    lo, hi = stats.ttest_1samp(BENIGN, 0.0).confidence_interval(0.9)
    assert (s.ci_low, s.ci_high) == pytest.approx((lo, hi), rel=1e-12)


def test_one_seed_is_stated_not_nan():
    s = describe([41.0])
    assert s.n == 1 and s.mean == 41.0
    assert s.sd is s.df is s.ci_low is s.ci_high is None
    assert s.note == ONE_VALUE_NOTE
    assert "NaN" not in json.dumps(s.to_dict())


def test_zero_spread_gives_zero_width_interval_like_ttest():
    s = describe([0.4, 0.4, 0.4])
    assert s.sd == 0.0 and s.ci_low == s.ci_high == s.mean == 0.4
    assert s.note == ZERO_SPREAD_NOTE
    lo, hi = stats.ttest_1samp([0.4, 0.4, 0.4], 0.0).confidence_interval(0.95)
    assert (lo, hi) == pytest.approx((0.4, 0.4))
    assert math.isnan(stats.t.interval(0.95, 2, loc=0.4, scale=0.0)[0])  # why this is handled on purpose


def test_bad_values():
    with pytest.raises(ValueError, match="no values"):
        describe([])
    with pytest.raises(ValueError, match="finite"):
        describe([1.0, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        describe([1.0, 2.0], confidence=95)


def test_paired_contrast_hand_and_scipy():
    a = {1: 40.0, 2: 41.0, 3: 42.0}
    b = {3: 44.0, 1: 45.0, 2: 47.0}
    c = paired_contrast(a, b, ("shared", "judge"))
    assert c.seeds == (1, 2, 3)
    assert c.differences == (-5.0, -6.0, -2.0)  # matched by seed, not by position
    assert c.summary.mean == pytest.approx(-13 / 3)
    # SD of (-5, -6, -2): deviations (-2/3, -5/3, 7/3); squares sum 78/9; /2 -> sqrt(13/3)
    assert c.summary.sd == pytest.approx(math.sqrt(13 / 3))
    seeds = sorted(a)
    lo, hi = stats.ttest_rel([a[s] for s in seeds], [b[s] for s in seeds]).confidence_interval(0.95)
    assert (c.summary.ci_low, c.summary.ci_high) == pytest.approx((lo, hi), rel=1e-12)
    assert c.to_dict()["first"] == "shared" and c.to_dict()["differences"] == [-5.0, -6.0, -2.0]


def test_paired_contrast_missing_seed_is_named():
    with pytest.raises(ValueError, match=r"seed\(s\) \[3\] missing from 'judge'"):
        paired_contrast({1: 0.1, 2: 0.2, 3: 0.3}, {1: 0.1, 2: 0.2}, ("shared", "judge"))
    with pytest.raises(ValueError, match=r"seed\(s\) \[4\] missing from 'shared'"):
        paired_contrast({1: 0.1}, {1: 0.1, 4: 0.2}, ("shared", "judge"))


def test_paired_contrast_constant_difference():
    c = paired_contrast({1: 3.0, 2: 4.0}, {1: 1.0, 2: 2.0})
    assert c.differences == (2.0, 2.0)
    assert (c.summary.sd, c.summary.ci_low, c.summary.ci_high) == (0.0, 2.0, 2.0)
    assert c.summary.note == ZERO_SPREAD_NOTE
