"""Every level of X in one decomposition: estimates against the truth of each contrast, the binary output unchanged,
simultaneous intervals and adjusted p-values, pairs, and the result's tables."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.causal import SFM, CausalDecomposition, decompose
from fairpath.causal._data import prepare_data
from fairpath.datasets import make_confounded_sfm, make_multilevel_sfm
from fairpath._stats import z_value

MAIN = ("tv", "ctfde", "ctfie", "ctfse")
GOLDEN = Path(__file__).parent / "data" / "binary_decomposition_before_levels.json"


def _levels_sfm(sample) -> SFM:
    return SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")


@pytest.fixture(scope="module", params=[3, 4], ids=["K3", "K4"])
def fitted(request):
    sample = make_multilevel_sfm(6000, seed=7, levels=request.param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, _levels_sfm(sample), seed=3, measures=MAIN)
    return sample, result


def test_every_contrast_is_within_four_se_of_its_truth(fitted):
    sample, result = fitted
    assert isinstance(result, CausalDecomposition)
    assert result.contrasts == [str(k) for k in range(1, len(result.levels))]
    z_scores = []
    for contrast in result.contrasts:
        truth = sample.truth_for(0, int(contrast))
        for measure in MAIN:
            e = result.estimate(measure, contrast=contrast)
            z_scores.append((e.estimate - truth[measure]) / e.se)
    assert np.max(np.abs(z_scores)) < 4, z_scores
    assert abs(np.mean(z_scores)) < 1.5  # no shared bias across the contrasts


def test_each_contrast_is_the_binary_analysis_of_its_rows(fitted):
    sample, result = fitted
    for contrast in result.contrasts:
        one = result[contrast]
        assert one.sfm == SFM(x="x", x0=0, x1=int(contrast), z=sample.sfm.z, w=sample.sfm.w, y="y")
        counts = sample.data["x"].value_counts()
        assert one.counts["n_x0"] == counts[0] and one.counts["n_x1"] == counts[int(contrast)]
        assert one.counts["n"] + one.counts["n_excluded"] == len(sample.data)
        # TV is the difference of the two groups' means exactly
        y = sample.data["y"]
        assert one.estimate("tv").estimate == pytest.approx(y[sample.data["x"] == int(contrast)].mean() - y[sample.data["x"] == 0].mean(),
                                                             abs=1e-10)
        # and the decomposition identity holds within the contrast
        e = {m: one.estimate(m).estimate for m in MAIN}
        assert e["tv"] == pytest.approx(e["ctfde"] - e["ctfie"] - e["ctfse"], abs=1e-10)


def test_simultaneous_intervals_contain_the_marginal_ones_and_share_one_critical_value(fitted):
    _, result = fitted
    frame = result.to_frame()
    assert (frame["simultaneous_low"] < frame["ci_low"]).all() and (frame["simultaneous_high"] > frame["ci_high"]).all()
    assert (frame["p_simultaneous"] >= frame["p_value"] - 1e-15).all()
    for measure in MAIN:
        critical = result.critical_value(measure)
        k = len(result.contrasts)
        # between the marginal quantile and Bonferroni's over the contrasts
        assert z_value(0.95) < critical < z_value(1 - 0.05 / k) + 0.02
        rows = frame[frame["measure"] == measure]
        assert np.allclose((rows["simultaneous_high"] - rows["estimate"]) / rows["se"], critical)
    # on request at another level, and the same draws each time (seeded)
    assert result.critical_value("tv", level=0.9) < result.critical_value("tv")
    assert result.critical_value("tv") == result.critical_value("tv")
    wide = result.confint(0.99, simultaneous=True)
    assert list(wide.columns) == ["subject", "measure", "estimate", "ci_low", "ci_high", "level", "contrast"]
    assert (wide["level"] == 0.99).all() and len(wide) == len(frame)


def test_contrasts_that_share_the_reference_are_positively_correlated(fitted):
    _, result = fitted
    names, correlation = result._correlation("tv", "y")
    assert names == result.contrasts
    off = correlation[~np.eye(len(names), dtype=bool)]
    assert (off > 0.05).all() and (off < 0.9).all()
    assert np.allclose(np.diag(correlation), 1.0)


def test_with_two_levels_the_simultaneous_intervals_are_the_marginal_ones():
    sample = make_multilevel_sfm(3000, seed=2, levels=2)
    result = decompose(sample.data, _levels_sfm(sample), seed=1, measures=MAIN, n_rep=1)
    frame = result.to_frame()
    assert result.contrasts == ["1"]
    assert np.array_equal(frame["simultaneous_low"], frame["ci_low"]) and np.array_equal(frame["simultaneous_high"], frame["ci_high"])
    assert np.array_equal(frame["p_simultaneous"], frame["p_value"])
    binary = decompose(sample.data, sample.sfm, seed=1, measures=MAIN, n_rep=1)
    # the same fits; only the few rows clipped differ (the bounds apply to share-balanced propensities here)
    assert np.allclose(frame["estimate"], binary.to_frame()["estimate"], atol=1e-3 * frame["se"].min())


def test_a_binary_sfm_gives_the_output_it_gave_before_levels_existed():
    sample = make_confounded_sfm(800, seed=3)
    # its one contrast holds what the binary result was, beside the simultaneous interval (the marginal one)
    result = json.loads(decompose(sample.data, sample.sfm, seed=2, learner="linear", n_rep=2).to_json())["contrasts"]["1"]
    simultaneous = result.pop("simultaneous")
    assert simultaneous["y"]["ctfde"]["low"] == result["estimates"]["y"]["ctfde"]["ci_low"]
    result.pop("seconds")
    result["settings"].pop("provenance")
    # every key, count and text as frozen; every number to 12 digits (the last bits of a fit differ between CPUs' BLAS)
    got, frozen = _leaves(result), _leaves(json.loads(GOLDEN.read_text()))
    assert got.keys() == frozen.keys()
    numbers = [key for key, value in frozen.items() if isinstance(value, float)]
    assert {k: v for k, v in got.items() if k not in numbers} == {k: v for k, v in frozen.items() if k not in numbers}
    assert [got[k] for k in numbers] == pytest.approx([frozen[k] for k in numbers], rel=1e-12, abs=1e-15)


def _leaves(tree, path: str = "") -> dict:
    """A JSON tree as {path: leaf}, so that its numbers compare with a tolerance and everything else exactly."""
    if isinstance(tree, dict):
        return {key: leaf for name, value in tree.items() for key, leaf in _leaves(value, f"{path}/{name}").items()}
    if isinstance(tree, list):
        return {key: leaf for i, value in enumerate(tree) for key, leaf in _leaves(value, f"{path}[{i}]").items()}
    return {path: tree}


def test_pairs_compare_every_pair_and_their_tvs_add_up():
    sample = make_multilevel_sfm(4000, seed=4, levels=3)
    result = decompose(sample.data, _levels_sfm(sample), seed=2, measures=MAIN, contrasts="pairs", n_rep=1)
    assert result.contrasts == ["1", "2", "2 vs 1"]
    tv = {name: result.estimate("tv", contrast=name).estimate for name in result.contrasts}
    assert tv["2 vs 1"] == pytest.approx(tv["2"] - tv["1"], abs=1e-10)
    truth = sample.truth_for(1, 2)
    for measure in MAIN:
        e = result.estimate(measure, contrast="2 vs 1")
        assert abs(e.estimate - truth[measure]) < 4 * e.se


def test_the_tables_name_each_contrast(fitted, tmp_path):
    _, result = fitted
    frame = result.to_frame()
    assert list(frame.columns[:8]) == ["subject", "measure", "estimate", "se", "ci_low", "ci_high", "level", "contrast"]
    assert len(frame) == len(result.contrasts) * len(MAIN)
    payload = json.loads(result.to_json())
    assert list(payload["contrasts"]) == result.contrasts
    first = payload["contrasts"]["1"]
    assert first["sfm"]["x1"] == 1 and set(first["estimates"]["y"]) == set(MAIN)
    assert set(first["simultaneous"]["y"]["tv"]) == {"low", "high", "p"}
    assert payload["settings"]["levels"] == result.levels
    paths = result.save(tmp_path)
    report = paths["report"].read_text()
    assert 'class="table matrix"' in report and "Forest plot" in report and "tone-strong" in report
    assert "simultaneous" in result.summary() and len(result.headline()) == 2


def test_a_rare_level_is_not_flagged_or_clipped_for_its_rarity():
    """A level holding 1.5% of its pair's rows has raw propensities below eps = 0.01 almost everywhere; the bounds
    apply to the share-balanced propensities, so it overlaps and its counterfactual measures find their truth."""
    sample = make_multilevel_sfm(30000, seed=8, levels=3)
    rare = sample.data.index[sample.data["x"] == 2]
    keep = sample.data.drop(rare[int(0.015 * (sample.data["x"] == 0).sum()):])
    with pytest.warns(UserWarning, match=r"contrast '2': \d+ of \d+ rows \(0\.\d%\) have a share-balanced propensity outside"):
        result = decompose(keep, _levels_sfm(sample), seed=1, measures=MAIN, n_rep=1)
    assert result["2"].counts["n_x1"] / result["2"].counts["n"] < 0.02
    assert result["2"].estimable and result["2"].overlap["share_outside"] < 0.01  # raw propensities: nearly all below 0.01
    truth = sample.truth_for(0, 2)
    for measure in ("ctfde", "ctfie", "ctfse"):
        e = result.estimate(measure, contrast="2")
        assert abs(e.estimate - truth[measure]) < 4 * e.se


# -- a contrast that is not estimable ---------------------------------------------------------------------
def _separated(sample, *levels):
    """The sample with one more mediator per level in ``levels``: its indicator, which decides that level (perfect
    separation of its contrast with the reference) and nothing else."""
    data = sample.data.assign(**{f"sep{level}": (sample.data["x"] == level).astype(float) for level in levels})
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=[*sample.sfm.w, *(f"sep{level}" for level in levels)], y="y")
    return data, sfm


@pytest.fixture(scope="module")
def separated():
    sample = make_multilevel_sfm(2400, seed=11, levels=4)
    data, sfm = _separated(sample, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return data, sfm, decompose(data, sfm, seed=2, measures=MAIN, n_rep=1)


def test_a_separated_contrast_is_flagged_not_estimable_as_its_binary_analysis(separated):
    data, sfm, result = separated
    with pytest.warns(UserWarning, match=r"have a propensity outside \[0.01, 0.99\]: the groups barely overlap"):
        binary = decompose(data, SFM(x="x", x0=0, x1=3, z=sfm.z, w=sfm.w, y="y"), seed=2, measures=MAIN, n_rep=1)
    assert not binary.estimable and not result["3"].estimable
    assert result["3"].overlap["share_outside"] == binary.for_contrast().overlap["share_outside"] == 1.0
    assert result["3"].counts == binary.for_contrast().counts  # the same rows
    assert result["1"].estimable and result["2"].estimable
    assert result.not_estimable == {"3": "100% of its rows have a share-balanced propensity outside [0.01, 0.99]"}
    assert result.family == ["1", "2"] and result.estimable  # the family is estimable; contrast 3 is left out of it


def test_a_contrast_not_estimable_is_left_out_of_the_simultaneous_family(separated, tmp_path):
    _, _, result = separated
    remaining = dataclasses.replace(result, decompositions={name: result[name] for name in ("1", "2")},
                                    contrast_rows={name: result.contrast_rows[name] for name in ("1", "2")})
    frame = result.to_frame().set_index(["measure", "contrast"])
    for measure in MAIN:
        assert set(result.left_out(measure)) == {"3"}
        # the other contrasts' simultaneous intervals are those of the family without contrast 3, to the last digit
        assert result.critical_value(measure) == remaining.critical_value(measure) < z_value(1 - 0.05 / 3)
        assert result.simultaneous(measure)["1"] == remaining.simultaneous(measure)["1"]
        assert result.p_value(measure, contrast="2", simultaneous=True) == remaining.p_value(measure, contrast="2", simultaneous=True)
        assert np.isnan(frame.loc[(measure, "3"), ["simultaneous_low", "simultaneous_high", "p_simultaneous"]].astype(float)).all()
        assert np.isfinite(frame.loc[(measure, "3"), ["estimate", "ci_low", "ci_high", "p_value"]].astype(float)).all()  # marginal: kept
    note = ("contrast '3' is NOT ESTIMABLE (100% of its rows have a share-balanced propensity outside [0.01, 0.99]): left out of "
            "the family, so it has no simultaneous interval, adjusted p or Cookbook test")
    assert result.notes == [note]
    assert f"note: {note}" in result.summary() and "[3, NOT ESTIMABLE] y:" in result.summary()
    assert result.headline()[0] == note[0].upper() + note[1:] + "."
    payload = json.loads(result.to_json())
    assert payload["notes"] == [note] and payload["not_estimable"] == result.not_estimable and payload["estimable"] is True
    assert payload["contrasts"]["3"]["estimable"] is False and payload["contrasts"]["3"]["simultaneous"]["y"]["tv"] == {
        "low": None, "high": None, "p": None}
    cells = result.verdict_cells()
    assert list(cells.loc["3"]) == [("not estimable", "na")] * len(MAIN)
    assert all(tone != "na" for name in ("1", "2") for _, tone in cells.loc[name])
    assert "not estimable" in result.verdict_legend()["na"]
    page = result.save(tmp_path)["report"].read_text()
    assert page.count('<td class="tone-na">not estimable</td>') == len(MAIN) and page.count("<td>not estimable</td>") == len(MAIN)


def test_when_no_contrast_is_estimable_every_contrast_stays_in_the_family_as_in_a_binary_decomposition():
    sample = make_multilevel_sfm(1500, seed=12, levels=3)
    data, sfm = _separated(sample, 1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(data, sfm, seed=2, measures=["tv"], n_rep=1)
    assert not result.estimable and set(result.not_estimable) == {"1", "2"}
    assert result.family == result.contrasts and result.left_out("tv") == {}
    assert all(np.isfinite(bounds).all() for bounds in result.simultaneous("tv").values())
    assert result.notes[0].startswith("NOT ESTIMABLE: in every contrast most rows have a share-balanced propensity outside")


def test_a_propensity_of_exactly_one_stays_outside_the_bounds_once_share_balanced():
    from fairpath.causal._decompose import balance

    assert np.array_equal(balance(np.array([0.0, 1.0]), 0.2), [0.0, 1.0])  # 1 was inf / inf = NaN, which no bound counts
    assert balance(np.array([0.5]), 0.25)[0] == pytest.approx(0.8)


def test_a_learner_certain_of_the_level_flags_the_separated_contrast_as_the_binary_analysis_does():
    """A tree predicts propensities of exactly 0 and 1: once share-balanced, 1 was inf / inf = NaN, which no bound counts, so
    the separated contrast read as weak overlap (17% outside) and its NaN weights spoiled every measure but TV."""
    from sklearn.tree import DecisionTreeClassifier

    sample = make_multilevel_sfm(3000, seed=5, levels=3)
    data = sample.data.assign(sep=(sample.data["x"] == 0).astype(float), y=(sample.data["y"] > sample.data["y"].median()).astype(float))
    sfm = SFM(x="x", x0=2, x1=None, z=sample.sfm.z, w=[*sample.sfm.w, "sep"], y="y")
    options = {"seed": 1, "measures": MAIN, "n_rep": 1, "learner": DecisionTreeClassifier(max_depth=3)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(data, sfm, **options)
        binary = decompose(data, SFM(x="x", x0=2, x1=0, z=sfm.z, w=sfm.w, y="y"), **options)
    assert not binary.estimable and binary.for_contrast().overlap["share_outside"] == 1.0
    assert not result["0"].estimable and result["0"].overlap["share_outside"] == 1.0
    assert result.family == ["1"] and np.isfinite(result.to_frame().query("contrast == '1'")[["estimate", "simultaneous_low"]]).all().all()


# -- many levels: codes sized to them (issue 41: int8 codes wrapped past 128 levels) ----------------

@pytest.mark.parametrize("k", [1000, 40000])
def test_level_codes_hold_every_level(k):
    names = [f"{i:05d}" for i in range(k)]
    data = pd.DataFrame({"x": np.repeat(names, 2), "y": np.tile([0, 1], k)})
    prepared = prepare_data(data, SFM(x="x", x0="00000", x1=None, y="y"))
    assert list(prepared.levels) == names and prepared.x.tolist() == list(np.repeat(np.arange(k), 2))


def test_more_than_128_levels_are_decomposed():
    k, per = 130, 4
    rng = np.random.default_rng(0)
    names = [f"{i:03d}" for i in range(k)]  # leading zeros: 000 ... 129, text
    data = pd.DataFrame({"x": np.repeat(names, per), "y": rng.integers(0, 2, k * per)})
    result = decompose(data, SFM(x="x", x0="000", x1=None, y="y"), learner="linear", n_folds=2, n_rep=1, progress=False)
    assert result.contrasts == names[1:] and result.counts["per_level"] == dict.fromkeys(names, per)
    last = data[data["x"].isin(["000", "129"])]
    assert result.estimate("tv", contrast="129").estimate == pytest.approx(
        last.loc[last["x"] == "129", "y"].mean() - last.loc[last["x"] == "000", "y"].mean())


def test_the_same_calls_run_on_a_binary_and_a_k_level_decomposition():
    # binary X is the one-contrast case: estimate, difference, psi, combination, p_value and confint take contrast=
    # and simultaneous= on both, and a K-level one with one contrast needs no name
    sample = make_confounded_sfm(600, seed=4)
    data = sample.data.assign(score=sample.data["y"] + 0.1)
    binary = decompose(data, sample.sfm, ["score"], learner="linear", n_rep=1, seed=0, measures=MAIN)
    levels = decompose(data, SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y"), ["score"], learner="linear",
                       n_rep=1, seed=0, measures=MAIN)
    assert binary.contrasts == levels.contrasts == ["1"]
    for result in (binary, levels):
        est = result.estimate("ctfde", contrast="1")
        assert est == result.estimate("ctfde")
        assert result.p_value("ctfde", contrast="1", simultaneous=True) == result.p_value("ctfde") == est.p_value()
        assert result.difference("ctfde", "score", contrast="1").estimate == pytest.approx(
            result.estimate("ctfde", "score").estimate - est.estimate, abs=1e-12)
        assert result.psi(1, 1, 1, contrast="1").estimate == result.combination([(1, (1, 1, 1))]).estimate
        frame = result.confint(0.9, simultaneous=True).set_index(["subject", "measure"])
        assert frame.loc[("y", "ctfde"), "ci_high"] == pytest.approx(result.estimate("ctfde").confint(0.9)[1], rel=1e-9)
    with pytest.raises(FairpathInputError, match=r"no contrast '2': this decomposition has one, '1' \(x = 1 against 0\)"):
        binary.estimate("ctfde", contrast="2")
