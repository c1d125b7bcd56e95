"""Bad input to the sensitivity bounds: each error names the parameter, value or measure and what to do."""

from __future__ import annotations

import warnings

import matplotlib.pyplot as plt
import pytest

from fairpath import FairpathInputError
from fairpath.causal import confounder_benchmarks, decompose
from fairpath.datasets import make_binary_sfm


@pytest.fixture(scope="module")
def result():
    sample = make_binary_sfm(800, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return decompose(sample.data, sample.sfm, learner="linear", seed=0, n_rep=1, progress=False)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("cf_y", 1.0, r"cf_y must lie in \[0, 1\), got 1.0"), ("cf_d", 1.0, r"cf_d must lie in \[0, 1\), got 1.0"),
    ("cf_y", -0.1, r"cf_y must lie in \[0, 1\), got -0.1"), ("rho", 1.5, r"rho must lie in \[0, 1\], got 1.5"),
    ("level", 1.0, r"level must lie in \(0, 1\)"), ("cf_d", float("nan"), "cf_d must lie in .* got nan"),
    ("cf_y", "a lot", "cf_y must be a number, got 'a lot'"),
])
def test_strengths_out_of_range_are_refused(result, option, value, message):
    with pytest.raises(FairpathInputError, match=message):
        result.sensitivity(**{option: value})
    with pytest.raises(FairpathInputError, match=message):
        result.for_contrast().sensitivity(**{option: value})


def test_strengths_are_keyword_only(result):
    with pytest.raises(TypeError):
        result.sensitivity(0.1, 0.1)


def test_a_bootstrap_decomposition_is_refused_with_the_remedy():
    sample = make_binary_sfm(600, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        booted = decompose(sample.data, sample.sfm, learner="linear", seed=0, n_boot=20, progress=False, measures=("tv", "ctfde"))
    with pytest.raises(FairpathInputError, match=r"influence function.*n_boot 20.*method='debiasing' and n_boot=0"):
        booted.sensitivity()


def test_unknown_rows_and_unplottable_measures_are_named(result):
    bounds = result.sensitivity()
    with pytest.raises(FairpathInputError, match=r"no row for measure 'nde'.*measures \["):
        bounds.row("nde")
    with pytest.raises(FairpathInputError, match="no row for measure 'ctfde', subject 'score'"):
        bounds.row("ctfde", "score")
    with pytest.raises(FairpathInputError, match="TV is an observed difference, which no confounder changes"):
        bounds.plot(measure="tv")
    plt.close("all")


def test_benchmarks_name_what_they_cannot_refit(result):
    sample = make_binary_sfm(800, seed=0)
    with pytest.raises(FairpathInputError, match=r"covariates \['y'\] are not Z or W columns of the model; use any of "
                                                 r"\['z1', 'z2', 'w1', 'w2'\]"):
        confounder_benchmarks(result, sample.data, ["y"])
    with pytest.raises(FairpathInputError, match=r"covariates names no column: name Z or W columns \(\['z1', 'z2', 'w1', 'w2'\]\)"):
        confounder_benchmarks(result, sample.data, [])
    with pytest.raises(FairpathInputError, match=r"covariates name \['z1'\] more than once"):
        confounder_benchmarks(result, sample.data, ["z1", "w1", "z1"])
    with pytest.raises(FairpathInputError, match=r"data gives contrast '1' 700 rows, the decomposition analysed 800: "
                                                 "pass the table it was fitted on"):
        confounder_benchmarks(result, sample.data.iloc[:700], ["z1"])
    with pytest.raises(FairpathInputError, match="data"):
        confounder_benchmarks(result, "data.csv")
    marks = confounder_benchmarks(result, sample.data, ["z1"])
    with pytest.raises(FairpathInputError, match=r"benchmarks lacks column\(s\) \['cf_d'\]: pass the table confounder_benchmarks"):
        result.sensitivity(benchmarks=marks.drop(columns="cf_d"))
    with pytest.raises(FairpathInputError, match=r"benchmarks name \(contrast, subject, measure\) \[\('1', 'score', 'ctfde'\), "):
        result.sensitivity(benchmarks=marks.assign(subject="score"))
    with pytest.raises(FairpathInputError, match="benchmarks"):
        result.sensitivity(benchmarks="marks.csv")
    with pytest.raises(FairpathInputError, match=r"benchmarks column 'cf_d' must hold shares in \[0, 1\); got '1.5' \(row 0\)"):
        result.sensitivity(benchmarks=marks.assign(cf_d=1.5))
    with pytest.raises(FairpathInputError, match=r"benchmarks column 'cf_y' must hold shares in \[0, 1\); got 'x'"):
        result.sensitivity(benchmarks=marks.assign(cf_y="x"))


def test_benchmarks_need_the_learner_by_name():
    from sklearn.linear_model import LinearRegression

    sample = make_binary_sfm(600, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        custom = decompose(sample.data, sample.sfm, learner=LinearRegression(), seed=0, n_rep=1, progress=False,
                           measures=("tv", "ctfde"))
    with pytest.raises(FairpathInputError, match=r"needs its learner by name \('stack', 'gbm', 'rf', 'linear'\).*LinearRegression"):
        confounder_benchmarks(custom, sample.data)
