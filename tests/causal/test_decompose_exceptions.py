"""Bad input to the decomposition: each error names the problem."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier

from fairpath.causal import MIN_GROUP_ROWS_PER_FOLD, SFM, combine_attributes, decompose
from fairpath.datasets import make_binary_sfm, make_confounded_sfm


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(300, seed=0)


def test_missing_column(sample):
    sfm = SFM(x="x", x0=0, x1=1, z=["z1", "nope"], w=["w1"], y="y")
    with pytest.raises(FairpathInputError, match=r"column\(s\) \['nope'\] not found"):
        decompose(sample.data, sfm)


def test_column_in_two_roles():
    with pytest.raises(FairpathInputError, match="'z1' is given two roles"):
        SFM(x="x", x0=0, x1=1, z=["z1"], w=["z1"], y="y")


def test_predictor_in_a_model_role(sample):
    with pytest.raises(FairpathInputError, match="predictor column 'w1' is also the model's W column"):
        decompose(sample.data, sample.sfm, predictors=["w1"])


def test_x_with_one_level(sample):
    data = sample.data.assign(x=0)
    with pytest.raises(FairpathInputError, match=r"has no rows with level\(s\) \[1\]"):
        decompose(data, sample.sfm)


def test_x_without_named_levels(sample):
    sfm = SFM(x="x", x0="a", x1="b", z=sample.sfm.z, w=sample.sfm.w, y="y")
    with pytest.raises(FairpathInputError, match=r"no rows with level\(s\) \['a', 'b'\]"):
        decompose(sample.data, sfm)


def test_other_levels_are_excluded_with_a_warning(sample):
    data = sample.data.copy()
    data.loc[:9, "x"] = 2
    with pytest.warns(UserWarning, match="10 rows excluded because 'x' is neither 0 nor 1"):
        result = decompose(data, sample.sfm, n_folds=2)
    assert result.counts["n_excluded"] == 10 and result.n == 290


def test_nan_counted_per_column(sample):
    data = sample.data.copy()
    data.loc[:2, "z1"] = np.nan
    data.loc[:4, "y"] = np.nan
    with pytest.raises(FairpathInputError, match=r"'z1': 3, 'y': 5"):
        decompose(data, sample.sfm)


def test_non_numeric_outcome(sample):
    data = sample.data.assign(y=np.where(sample.data["y"] > 0, "yes", "no"))
    with pytest.raises(FairpathInputError, match="outcome column 'y' is not numeric"):
        decompose(data, sample.sfm)


def test_empty_group(sample):
    data = sample.data.copy()
    data.loc[data.index[:-1], "x"] = 0
    data.loc[data.index[-1], "x"] = 1
    with pytest.raises(FairpathInputError, match="group x=1 has 1 rows; at least 2 are needed"):
        decompose(data, sample.sfm)


def test_fewer_rows_than_folds(sample):
    with pytest.raises(FairpathInputError, match=r"group x=0 has \d+ rows; 400-fold cross-fitting needs at least 4000"):
        decompose(sample.data, sample.sfm, n_folds=400)


def test_group_too_small_for_the_folds(sample):
    # 3 rows in x1 with 3 folds once gave Ctf-IE = −493 for a 0/1 outcome; now a floor per fold and group.
    data = sample.data.copy()
    data["x"] = 0
    data.loc[data.index[:3], "x"] = 1
    with pytest.raises(FairpathInputError, match=r"group x=1 has 3 rows; 3-fold cross-fitting needs at least 30 \(10 per fold"):
        decompose(data, sample.sfm, n_folds=3)
    assert MIN_GROUP_ROWS_PER_FOLD == 10


def test_classifier_for_a_continuous_outcome():
    sample = make_confounded_sfm(400, seed=0)
    with pytest.raises(FairpathInputError, match=r"is a classifier, but column\(s\) \['y'\] are not 0/1"):
        decompose(sample.data, sample.sfm, learner=LogisticRegression())


def test_classifier_without_sample_weights_for_nested_means(sample):
    learner = KNeighborsClassifier(15)
    with pytest.raises(FairpathInputError, match="cannot fit the nested means"):
        decompose(sample.data, sample.sfm, learner=learner, n_folds=2)
    # Measures without nested means need no soft labels: the same classifier works for them.
    result = decompose(sample.data, sample.sfm, learner=learner, n_folds=2, measures=["tv", "ctfde", "ctfie", "ctfse"])
    assert np.isfinite(result.estimate("ctfie").estimate)


def test_measures_not_requested(sample):
    result = decompose(sample.data, sample.sfm, n_folds=2, measures=["ctfde"])
    with pytest.raises(FairpathInputError, match=r"measure 'nde' was not estimated \(this decomposition has \['ctfde'\]\)"):
        result.estimate("nde")
    with pytest.raises(FairpathInputError, match=r"ψ term \(None, 0, 1\) needs the nested means"):
        result.psi(None, 0, 1)
    with pytest.raises(FairpathInputError, match=r"unknown measure\(s\) \['nd'\]"):
        decompose(sample.data, sample.sfm, measures=["nd"])


def test_eps_must_be_positive(sample):
    with pytest.raises(FairpathInputError, match=r"eps must lie in \(0, 0.5\)"):
        decompose(sample.data, sample.sfm, eps=0)


def test_constant_covariate(sample):
    data = sample.data.assign(z2=1)
    with pytest.raises(FairpathInputError, match="confounder \\(Z\\) column 'z2' is constant"):
        decompose(data, sample.sfm)


def test_constant_outcome(sample):
    with pytest.raises(FairpathInputError, match="outcome column 'y' is constant"):
        decompose(sample.data.assign(y=1.0), sample.sfm)


def test_unknown_method_learner_measure(sample):
    with pytest.raises(FairpathInputError, match="unknown method 'magic'"):
        decompose(sample.data, sample.sfm, method="magic")
    with pytest.raises(FairpathInputError, match="unknown learner 'magic'"):
        decompose(sample.data, sample.sfm, learner="magic")
    result = decompose(sample.data, sample.sfm, n_folds=2)
    with pytest.raises(FairpathInputError, match="unknown measure 'ctfxx'"):
        result.estimate("ctfxx")
    with pytest.raises(FairpathInputError, match="outcome 'other' was not decomposed"):
        result.estimate("tv", "other")


def test_data_must_be_a_dataframe(sample):
    with pytest.raises(FairpathInputError, match="must be a pandas DataFrame"):
        decompose(sample.data.to_numpy(), sample.sfm)


def test_same_levels():
    with pytest.raises(FairpathInputError, match="two different levels"):
        SFM(x="x", x0=1, x1=1, y="y")


def test_string_covariates_are_encoded():
    sample = make_binary_sfm(600, seed=1)
    data = sample.data.assign(z2=np.where(sample.data["z2"] > 0, "high", "low"), x=np.where(sample.data["x"] > 0, "b", "a"))
    sfm = SFM(x="x", x0="a", x1="b", z=["z1", "z2"], w=["w1", "w2"], y="y")
    result = decompose(data, sfm, n_folds=3)
    assert result.for_contrast().encoded["z"] == ["z1", "z2=low"]
    assert isinstance(pd.Series(result.estimate("tv").estimate).iloc[0], float)


# -- issue 11: API input that used to end in a traceback or a silent change ---------------------------

def test_sfm_given_as_a_dict(sample):
    with pytest.raises(FairpathInputError, match=r"sfm must be a fairpath\.causal\.SFM, got dict; build one with SFM\(\*\*sfm\)"):
        decompose(sample.data, sample.sfm.to_dict())


def test_learner_class_instead_of_an_instance(sample):
    from sklearn.linear_model import LinearRegression

    with pytest.raises(FairpathInputError, match=r"learner LinearRegression is a class; pass an instance such as LinearRegression\(\)"):
        decompose(sample.data, sample.sfm, learner=LinearRegression)


@pytest.mark.parametrize("options, message", [
    ({"n_folds": 2.0}, r"n_folds must be an integer, got 2\.0 \(float\); pass 2"),
    ({"seed": None}, "seed must be a non-negative integer, got None"),
    ({"seed": -1}, "seed must be an integer ≥ 0, got -1"),
    ({"n_boot": True}, r"n_boot must be an integer, got True \(bool\)"),
    ({"n_boot": 100_001}, r"n_boot must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
    ({"nboot1": 100_001}, r"nboot1 must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
    ({"n_rep": 10_001}, r"n_rep must be an integer ≤ 10,000 \(fairpath's bound\), got 10,001"),
    ({"trim": "false"}, r"trim must be true or false, got 'false' \(str\)"),
    ({"level": 95}, r"level must lie in \(0, 1\), got 95\.0"),
])
def test_argument_types(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        decompose(sample.data, sample.sfm, **options)


def test_integer_column_names():
    with pytest.raises(FairpathInputError, match=r"X column name must be a string, got 0 \(int\); give the DataFrame named columns"):
        SFM(x=0, x0=0, x1=1, z=[1], w=[2], y=3)


def test_numpy_input(sample):
    with pytest.raises(FairpathInputError, match=r"data must be a pandas DataFrame, got ndarray; wrap it as pandas\.DataFrame"):
        decompose(sample.data.to_numpy(), sample.sfm)


def test_a_predictor_named_by_one_string_is_one_column(sample):
    data = sample.data.assign(northpointe=sample.data["y"].to_numpy()[::-1])
    result = decompose(data, sample.sfm, "northpointe", learner="linear", n_folds=2)
    assert result.outcomes == ["y", "northpointe"]
    with pytest.raises(FairpathInputError, match=r"predictors must hold column names \(strings\), got 1 \(int\)"):
        decompose(data, sample.sfm, [1], learner="linear", n_folds=2)


def test_infinite_values_are_counted_per_column(sample):
    data = sample.data.copy()
    data.loc[:1, "w1"] = np.inf
    data.loc[:2, "z1"] = -np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('z1': 3, 'w1': 2\)"):
        decompose(data, sample.sfm, learner="linear")


def test_duplicated_column_names(sample):
    data = pd.concat([sample.data, sample.data[["w1"]]], axis=1)
    with pytest.raises(FairpathInputError, match=r"data has duplicated column name\(s\) \['w1'\]"):
        decompose(data, sample.sfm)


@pytest.mark.parametrize("options, message", [
    ({"n_rep": 0}, "n_rep must be an integer ≥ 1, got 0"),
    ({"n_rep": "five"}, "n_rep must be 'auto' or an integer ≥ 1, got 'five'"),
    ({"n_rep": 2, "method": "medDML"}, r"n_rep=2: method 'medDML' takes its uncertainty from its own refits \(nboot1\)"),
    ({"n_rep": 2, "n_boot": 50}, r"n_rep=2 aggregates influence-function intervals over splits; set n_boot=0"),
])
def test_repeated_cross_fitting_options(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        decompose(sample.data, sample.sfm, **options)


@pytest.mark.parametrize("options, message", [
    ({"n_boot": 1}, r"n_boot must be 0 \(no interval\) or an integer ≥ 2, got 1: one draw gives a zero-width interval"),
    ({"n_boot": 100_001}, "n_boot must be an integer ≤ 100,000 \\(fairpath's bound\\), got 100,001"),
    ({"method": "medDML", "nboot2": 1}, "nboot2 must be an integer ≥ 2, got 1"),
    ({"seed": 2**32}, "seed must be an integer ≤ 4294967295, got 4294967296"),
])
def test_draws_and_seed_bounds(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        decompose(sample.data, sample.sfm, progress=False, **options)


def test_dirty_numeric_mediator_is_refused_not_coded_as_categories(sample):
    data = sample.data.astype({"w1": object})
    data.loc[[4, 9, 30], "w1"] = "?"
    with pytest.raises(FairpathInputError, match=r"column 'w1' holds numbers in 297 of 300 non-missing cells and the non-numeric token\(s\) '\?' \(3x\), "
                                                 r"the first in row 4 \(data row 5, line 6 of a CSV file with a header\); read as categories"):
        decompose(data, sample.sfm, progress=False)


def test_extreme_finite_value_is_refused_before_the_learners_overflow(sample):
    data = sample.data.copy()
    data.loc[12, "z1"] = 1e308
    with pytest.raises(FairpathInputError, match=r"column 'z1' holds 1 value\(s\) beyond ±1e\+50 \(e\.g\. 1e\+308, first in row 12"):
        decompose(data, sample.sfm, learner="linear", progress=False)


def test_one_question_mark_in_compas_priors_is_refused(tmp_path):
    """The issue's case: one ``?`` made ``priors`` categories coded in text order (Ctf-DE of Northpointe +0.0016 -> +0.0458)."""
    from fairpath._io import read_table
    from fairpath.datasets import load_compas

    compas = load_compas()
    path = tmp_path / "compas.csv"
    compas.data.astype({"priors": object}).assign(priors=lambda d: d["priors"].where(d.index != 100, "?")).to_csv(path, index=False)
    with pytest.raises(FairpathInputError, match=r"column 'priors' holds numbers in 7213 of 7214 non-missing cells and the non-numeric token\(s\) '\?' \(1x\), "
                                                 r"the first in row 100 \(data row 101, line 102 of a CSV file with a header\)"):
        decompose(read_table(path), compas.sfm, predictors=["northpointe"], progress=False)
    assert read_table(path, na_values="?")["priors"].isna().sum() == 1


# -- a part of an intersection X in another role (issue 41) -------------------------------------------

@pytest.fixture(scope="module")
def people():
    rng = np.random.default_rng(0)
    n = 400
    return pd.DataFrame({"race": rng.choice(["a", "b"], n), "sex": rng.choice(["f", "m"], n), "age": rng.normal(size=n),
                         "w": rng.normal(size=n), "y": rng.integers(0, 2, n), "score": rng.random(n)})


def _part_of_x(role: str, source: str) -> str:
    return re.escape(f"column 'sex' is part of X ('race/sex', the intersection of ['race', 'sex']) and also {role}; each column may "
                     "play one role: X's levels hold the values of 'sex', so X and 'sex' cannot be told apart (at a fixed 'sex' X "
                     f"cannot vary) and no effect of X can be estimated. Remove 'sex' from {source}, or take it out of X's "
                     "intersection. (If 'race/sex' is one column, not an intersection, rename it without '/'.)")


@pytest.mark.parametrize("roles, role, source", [({"z": ["sex", "age"]}, "Z (a confounder)", "Z"),
                                                 ({"w": ["w", "sex"]}, "W (a mediator)", "W"),
                                                 ({"y": "sex"}, "Y (the outcome)", "Y")])
def test_a_part_of_x_in_another_role_is_refused(people, roles, role, source):
    """Z = sex with X = race/sex: Z decides X (P(x | z) near 0 or 1), yet the audit had reported a 'significant' direct effect."""
    data, x = combine_attributes(people, ["race", "sex"])
    with pytest.raises(FairpathInputError, match="^" + _part_of_x(role, source) + "$"):
        SFM(**{"x": x, "x0": "a/f", "x1": None, "z": ["age"], "w": ["w"], "y": "y", **roles})


def test_a_part_of_x_as_a_predictor_is_refused(people):
    data, x = combine_attributes(people, ["race", "sex"])
    sfm = SFM(x=x, x0="a/f", x1=None, z=["age"], w=["w"], y="y")
    assert sfm.x_parts == ("race", "sex") and SFM(x="race", x0="a", x1="b", y="y").x_parts == ()
    with pytest.raises(FairpathInputError, match="^" + _part_of_x("a predictor", "the predictors") + "$"):
        decompose(data, sfm, predictors=["score", "sex"])
