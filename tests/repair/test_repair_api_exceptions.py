"""`fairpath.repair.repair` with bad input: a FairpathInputError that names the argument or column at fault."""

import re

import pytest
from sklearn.linear_model import LogisticRegression

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.repair import repair


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(300, seed=0)


def _repair(sample, data=None, **options):
    options = {"n_boot": 20, **options}
    return repair(sample.data if data is None else data, sample.sfm, bn="SE", engine="linear",
                  learner=LogisticRegression(max_iter=1000), audit_learner="linear", **options)


@pytest.mark.parametrize("option, value, message", [
    ("holdout", 1.5, "holdout must lie in (0, 1), got 1.5"),
    ("holdout", "0.3", "holdout must be a number"),
    ("alpha", 0.0, "alpha must lie in (0, 1), got 0.0"),
    ("margin", -0.01, "margin must lie in (0, inf], got -0.01"),
    ("n_boot", 1, "n_boot must be"),
    ("n_folds", 1, "n_folds must be"),
    ("seed", -1, "seed"),
])
def test_bad_settings_are_refused_before_any_fitting(sample, option, value, message):
    with pytest.raises(FairpathInputError, match=re.escape(message)):
        _repair(sample, **{option: value})


def test_a_held_out_part_too_small_for_the_verdict_is_named(sample):
    with pytest.raises(FairpathInputError, match=r"in the held-out part of the verdict \(holdout=0.1\) needs at least 50"):
        _repair(sample, holdout=0.1)


def test_test_rows_lacking_a_column_are_refused(sample):
    test = make_binary_sfm(30, seed=1).data.drop(columns="w2")
    with pytest.raises(FairpathInputError, match=r"\['w2'\] not found in the test data"):
        _repair(sample, test=test)


def test_missing_sfm_column(sample):
    with pytest.raises(FairpathInputError, match="z1"):
        _repair(sample, data=sample.data.drop(columns="z1"))


def test_plot_draws_an_interval_that_excludes_its_estimate(sample):
    # With two bootstrap draws a percentile interval may miss its estimate; the plot drew it as distances from
    # the estimate, which matplotlib refuses when negative (an internal error after the whole computation).
    result = _repair(sample, n_boot=2, holdout=0.5, seed=0)
    ippm = {name: parity.ippm for name, parity in result.parity.items()}
    assert any(not e.ci_low <= e.estimate <= e.ci_high for e in ippm.values())
    fig = result.plot()
    drawn = sorted(end for collection in fig.axes[0].collections for segment in collection.get_segments() for end in segment[:, 0])
    assert drawn == pytest.approx(sorted(end for e in ippm.values() for end in (e.ci_low, e.ci_high)))


def test_bn_and_resolving_together_are_refused_before_any_fitting(sample):
    with pytest.raises(FairpathInputError, match=re.escape("the BN set 'SE' and the resolving columns ['w1', 'w2'] are both given; give one")):
        _repair(sample, resolving=["w1", "w2"])
