"""What a decomposition of every level of X refuses, and how it says so."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from fairpath._exceptions import FairpathInputError
from fairpath._stats import z_value
from fairpath._vocabulary import LABELS
from fairpath.causal import SFM, decompose
from fairpath.datasets import make_multilevel_sfm

MAIN = ("tv", "ctfde", "ctfie", "ctfse")


@pytest.fixture(scope="module")
def sample():
    return make_multilevel_sfm(1500, seed=1, levels=3)


def _sfm(sample, x0=0):
    return SFM(x="x", x0=x0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")


@pytest.mark.parametrize("options", [{"method": "medDML"}, {"n_boot": 50}])
def test_intervals_other_than_the_influence_function_are_refused(sample, options):
    with pytest.raises(FairpathInputError, match=r"every level of 'x' at once \(x1=None\) takes its simultaneous intervals from the "
                                                 r"influence function: use method='debiasing' with n_boot=0"):
        decompose(sample.data, _sfm(sample), **options)


def test_an_absent_reference_level_and_a_single_level_are_refused(sample):
    with pytest.raises(FairpathInputError, match=r"no rows with the reference level 9; its levels are \[0, 1, 2\]"):
        decompose(sample.data, _sfm(sample, x0=9))
    one = sample.data[sample.data["x"] == 0]
    with pytest.raises(FairpathInputError, match="has one level \\(0\\) only: there is nothing to compare"):
        decompose(one, _sfm(sample))


def test_small_levels_are_listed_together_with_both_remedies(sample):
    data = pd.concat([sample.data, sample.data.iloc[:7].assign(x=5), sample.data.iloc[:12].assign(x=6)], ignore_index=True)
    with pytest.raises(FairpathInputError) as error:
        decompose(data, _sfm(sample))
    message = str(error.value)
    assert message.startswith("column 'x' has 2 levels with fewer than 50 rows: '5' (7 rows), '6' (12 rows); 5-fold cross-fitting "
                              "needs at least 50 rows per level")
    assert message.endswith("Merge each into another level (merge={'5': 'other', '6': 'other'}) or drop their rows explicitly "
                            "(drop_levels=['5', '6'])")  # the API's words: the command line names its flags (tests/cli)


def test_an_unknown_contrast_and_contrasts_option_are_named(sample):
    result = decompose(sample.data, _sfm(sample), measures=["tv"], n_rep=1)
    with pytest.raises(FairpathInputError, match=re.escape("no contrast '7'; the contrasts are ['1', '2']")):
        result["7"]
    with pytest.raises(FairpathInputError, match="contrasts"):
        decompose(sample.data, _sfm(sample), contrasts="all")
    with pytest.raises(FairpathInputError, match="measure 'nde' was not estimated"):
        result.simultaneous("nde")


def test_a_dask_frame_with_every_level_is_refused(sample):
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(sample.data, npartitions=2)
    with pytest.raises(FairpathInputError, match="needs a pandas DataFrame; a Dask DataFrame takes one contrast: give x1"):
        decompose(frame, _sfm(sample), workers=1)


def test_a_binary_only_consumer_names_x1():
    from fairpath._sfm import check_binary_sfm

    with pytest.raises(FairpathInputError, match="FairAdapt compares two levels of 'race'; this SFM has x1=None"):
        check_binary_sfm(SFM(x="race", x0="white", x1=None, y="y"), "FairAdapt")
    assert str(SFM(x="race", x0="white", x1=None, y="y")) == "SFM(X=race [every level against 'white'], Z=∅, W=∅, Y=y)"


class _InfiniteAtLevelTwo(LinearRegression):
    """A learner whose outcome regressions at level 2 are +inf (the propensities, without X's columns, stay finite)."""

    def predict(self, X):
        predictions = super().predict(X)
        at_two = X.shape[1] in (4, 6) and (X[:, 0] == 0.0) & (X[:, 1] == 1.0)  # X's indicator columns come first
        return np.where(at_two, np.inf, predictions)


def test_a_measure_whose_contributions_are_not_finite_is_left_out_instead_of_raising(sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, _sfm(sample), measures=MAIN, n_rep=1, learner=_InfiniteAtLevelTwo())
    assert not np.isfinite(result["2"].pseudo_outcomes()["ctfde"]).all() and np.isfinite(result["2"].pseudo_outcomes()["tv"]).all()
    frame = result.to_frame().set_index(["measure", "contrast"])  # no LinAlgError from the simultaneous draws
    for measure in ("ctfde", "ctfie", "ctfse"):
        assert result.left_out(measure) == {"2": f"not estimable: its {measure} estimate or SE is not finite (per-row "
                                                  "contributions with NaN or ±inf)"}
        # a family of one: the marginal interval and p
        assert np.allclose(frame.loc[(measure, "1"), ["simultaneous_low", "simultaneous_high", "p_simultaneous"]].astype(float),
                           frame.loc[(measure, "1"), ["ci_low", "ci_high", "p_value"]].astype(float))
        assert np.isnan(frame.loc[(measure, "2"), "simultaneous_low"])
        assert result.verdict_cells().loc["2", LABELS[measure]] == ("not estimable", "na")
    assert result.left_out("tv") == {} and result.critical_value("tv") > z_value(0.95)
    assert result.notes == ["contrast '2', y: ctfde, ctfie, ctfse NOT ESTIMABLE (estimate or SE not finite): left out of the "
                            "family of these measures"]


@pytest.mark.parametrize("correlation", [np.ones((2, 2)), np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])],
                         ids=["equal", "rank-2"])
def test_a_singular_correlation_gives_the_critical_value_of_its_distinct_contrasts(correlation):
    from fairpath.causal._decomposition import _max_t

    draws = _max_t((0, 0), correlation, seed=3)
    # equal contrasts count once, independent ones multiply: P(max |T| ≤ c) = P(|T| ≤ c)^distinct
    distinct = np.linalg.matrix_rank(correlation)
    assert np.quantile(draws, 0.95) == pytest.approx(z_value(0.95 ** (1 / distinct)), abs=0.015)


def test_the_correlation_of_huge_finite_contributions_is_finite():
    from fairpath.causal._decomposition import column_correlation

    columns = np.random.default_rng(0).standard_normal((500, 3))
    columns[:, 2] = columns[:, 0] + 0.5 * columns[:, 2]
    columns -= columns.mean(axis=0)  # centred, as influence functions
    huge = column_correlation(columns * 1e200)  # cross-products of 1e200 overflow to inf
    assert np.isfinite(huge).all() and np.allclose(huge, np.corrcoef(columns, rowvar=False))


# -- one name per contrast (issue 41: a level "c vs b" made two contrasts share a name) ----------------

def _named(sample, names: dict):
    return sample.data.assign(x=sample.data["x"].map(names).astype(object))


def test_a_level_named_like_a_pair_is_refused_before_fitting(sample):
    data = _named(sample, {0: "a", 1: "b", 2: "c"})
    data.loc[data.index[:300], "x"] = "c vs b"
    sfm = SFM(x="x", x0="a", x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    message = ("two contrasts of column 'x' would share the name 'c vs b' ('c vs b' against 'a' and 'c' against 'b'); rename the "
               "level(s) ['c vs b'] whose text contains ' vs ', which separates a pair's levels, e.g. merge={'c vs b': 'c-b'} "
               "(command line: --merge \"c vs b=c-b\")")
    with pytest.raises(FairpathInputError, match="^" + re.escape(message) + "$"):
        decompose(data, sfm, contrasts="pairs", n_rep=1, learner="linear", n_folds=2)
    result = decompose(data, sfm, measures=["tv"], n_rep=1, learner="linear", n_folds=2)  # against the reference: no clash
    assert result.contrasts == ["b", "c", "c vs b"]


def test_levels_written_alike_are_refused(sample):
    data = _named(sample, {0: 0, 1: 1, 2: "1"})
    pair = r"\('1' against 0 and 1 against 0\)|\(1 against 0 and '1' against 0\)"  # the two levels sort alike: either order
    with pytest.raises(FairpathInputError, match=rf"^two contrasts of column 'x' would share the name '1' ({pair}); make the column's "
                                                 r"values one type first \(two levels are written alike\)$"):
        decompose(data, _sfm(sample), n_rep=1, learner="linear", n_folds=2)


def test_more_pairs_than_one_run_can_hold_are_refused_before_fitting():
    # 129 levels in pairs were 8,256 contrasts: a run of hours (the hostile pass timed out), refused now at once.
    from fairpath._levels import MAX_CONTRASTS, contrast_codes

    assert len(contrast_codes(46, "pairs")) == MAX_CONTRASTS and len(contrast_codes(129, "reference")) == 128
    with pytest.raises(FairpathInputError, match=re.escape(
            "every pair of 129 levels is 8,256 contrasts, more than 1,035 (every pair of 46 levels), each with its own fits: compare "
            'each level with the reference (contrasts="reference"), or merge levels (merge={...})')):
        contrast_codes(129, "pairs")
