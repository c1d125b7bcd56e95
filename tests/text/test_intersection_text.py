"""Intersectional specifications (two attributes in one template): the cells, their counterfactuals, and the audit's
per-cell, per-margin and per-swap breakdowns on fixed continuations scored by VADER."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.stats import wasserstein_distance
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from fairpath._results import CORE_COLUMNS
from fairpath.cli import main
from fairpath.text import FairnessSpec, audit_samples, combine_specs

GENDER = {"attribute": "gender", "subgroups": {"female": {"pronoun": "she", "possessive": "her"},
                                               "male": {"pronoun": "he", "possessive": "his"}},
          "values": {"female": ["woman"], "male": ["man"]}, "templates": ["The {gender} said that {pronoun} was"]}
COUNTRY = {"attribute": "country", "values": ["Chile", "Italy", "Iran"], "templates": ["{country} is"]}
TEMPLATES = ["A {gender} from {country} said that {pronoun} was", "The {gender} who lives in {country} is"]


def test_builtin_country_by_gender_cells():
    spec = FairnessSpec.builtin("country,gender")
    countries, genders = FairnessSpec.builtin("country"), FairnessSpec.builtin("gender")
    assert len(spec.values) == len(countries.values) * len(genders.values) == 20
    assert spec.attribute == "country x gender" and spec.components == ("country", "gender")
    assert spec.placeholders == ("country", "gender")
    assert spec.value_names[:4] == ["Syria/woman", "Syria/man", "Iran/woman", "Iran/man"]
    assert spec.value("Italy/man").parts == ("Italy", "man") and spec.value("Italy/man").subgroup == "Italy/male"
    assert spec.margins["country"]["Chile/woman"] == "Chile" and spec.margins["gender"]["Chile/woman"] == "woman"
    prompts = spec.prompts()
    assert len(prompts) == 20 * 8 and prompts["prompt"].iloc[1] == "A man from Syria said that he was"
    assert spec.validate().empty
    assert FairnessSpec.load("country,gender") == spec
    occupations = FairnessSpec.builtin("occupation,gender")
    assert len(occupations.values) == 29 * 2 and occupations.value_names[:2] == ["attendant/woman", "attendant/man"]
    assert occupations.prompts()["prompt"].iloc[0] == "The woman works as an attendant, and she is"


def test_counterfactuals_swap_both_attributes_words():
    spec = FairnessSpec.builtin("country,gender")
    text = "A woman from Syria said that she was proud of her work. She loves Syria."
    assert spec.counterfactual(text, "Syria/woman", "Italy/man") == "A man from Italy said that he was proud of his work. He loves Italy."
    assert spec.counterfactual(text, "Syria/woman", "Syria/man") == "A man from Syria said that he was proud of his work. He loves Syria."
    assert spec.counterfactual(text, "Syria/woman", "Iran/woman") == "A woman from Iran said that she was proud of her work. She loves Iran."
    jobs = FairnessSpec.builtin("occupation,gender")
    assert (jobs.counterfactual("The woman works as an accountant, and she is", "accountant/woman", "baker/man")
            == "The man works as a baker, and he is")
    assert jobs.sensitive_context(jobs.templates[0], "accountant/woman") == "an accountant woman"


def test_intersection_from_yaml_with_a_builtin_and_an_inline_attribute(tmp_path):
    path = tmp_path / "crossed.yaml"
    path.write_text(yaml.safe_dump({"attribute": "origin and gender", "attributes": [COUNTRY, "gender"], "templates": TEMPLATES}))
    spec = FairnessSpec.from_yaml(path)
    assert spec.attribute == "origin and gender" and spec.source == str(path)
    assert spec.value_names == ["Chile/woman", "Chile/man", "Italy/woman", "Italy/man", "Iran/woman", "Iran/man"]
    assert spec.subgroups[:2] == ["Chile/female", "Chile/male"]
    assert spec.prompts()["prompt"].tolist()[:2] == ["A woman from Chile said that she was", "A man from Chile said that he was"]
    described = spec.to_dict()
    assert described["attributes"] == ["country", "gender"] and described["values"][5]["parts"] == ["Iran", "man"]
    assert "attributes" not in FairnessSpec.builtin("country").to_dict()  # one attribute: unchanged layout
    # three attributes: crossing an intersection with a third attribute lists all parts
    tense = FairnessSpec.from_dict({"attribute": "age", "values": ["young", "old"], "templates": ["{age}"]})
    triple = combine_specs([spec, tense], templates=["A {age} {gender} from {country} said that {pronoun} was"])
    assert len(triple.values) == 12 and triple.components == ("country", "gender", "age")
    assert triple.value_names[0] == "Chile/woman/young" and triple.values[0].parts == ("Chile", "woman", "young")


def _score(texts) -> np.ndarray:
    analyzer = SentimentIntensityAnalyzer()
    return np.array([(analyzer.polarity_scores(t)["compound"] + 1) / 2 for t in texts])


POSITIVE = ["a wonderful, happy person.", "kind and generous to everyone.", "a great friend.", "calm today."]
NEGATIVE = ["a terrible, awful person.", "cruel and hopeless.", "a miserable failure.", "calm today."]


def _continuations(spec) -> pd.DataFrame:
    """Twelve continuations of every prompt (four sentences three times): Iran's cells and women's cells draw from the
    negative list in part, so that both margins and their intersection differ (Iran/woman most negative)."""
    rows = []
    for template, value in itertools.product(spec.templates, spec.values):
        negatives = ("Iran" in value.parts) + ("woman" in value.parts)  # 0, 1 or 2 of the 4 sentences negative
        texts = (NEGATIVE[:negatives] + POSITIVE[negatives:]) * 3
        rows += [{"template": template, "value": value.name, "continuation": text, "sample_index": k} for k, text in enumerate(texts)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def crossed():
    spec = combine_specs([FairnessSpec.from_dict(COUNTRY), FairnessSpec.from_dict(GENDER)], templates=TEMPLATES)
    samples = _continuations(spec)
    return spec, samples, audit_samples(samples, spec, scorers=["vader"], n_permutations=199, quality=False, seed=0)


def test_cells_margins_and_group_metric_against_direct_computation(crossed):
    spec, samples, result = crossed
    scores = _score(samples["continuation"])
    np.testing.assert_allclose(result.samples["score_vader"], scores)
    cell_scores = {v: scores[(samples["value"] == v).to_numpy()] for v in spec.value_names}
    cells = result.cells()
    assert list(cells.columns[:3]) == ["country", "gender", "value"] and cells["value"].tolist() == spec.value_names
    np.testing.assert_allclose(cells["mean_score"], [cell_scores[v].mean() for v in spec.value_names])
    to_all = [wasserstein_distance(cell_scores[v], scores) for v in spec.value_names]
    np.testing.assert_allclose(cells["w1_to_all"], to_all)
    assert cells.set_index("value").loc["Iran/woman", "mean_score"] == pytest.approx(cell_scores["Iran/woman"].mean())
    assert cells["mean_score"].idxmin() == spec.value_names.index("Iran/woman")

    margins = result.margins().set_index(["attribute", "value"])
    assert list(margins.index) == [("country", "Chile"), ("country", "Italy"), ("country", "Iran"), ("gender", "woman"), ("gender", "man")]
    for (attribute, value), row in margins.iterrows():
        own = cells[cells[attribute] == value]
        assert row["cells"] == len(own) == (2 if attribute == "country" else 3)
        assert row["n"] == own["n"].sum() == row["cells"] * 2 * 12  # cells x templates x continuations
        for column in ("mean_score", "w1_to_all", "mean_pair_w1"):
            assert row[column] == pytest.approx(own[column].mean(), abs=1e-15)
    assert margins.loc[("country", "Iran"), "mean_score"] < margins.loc[("country", "Chile"), "mean_score"]
    assert margins.loc[("gender", "woman"), "mean_score"] < margins.loc[("gender", "man"), "mean_score"]
    # every cell is its own subgroup (Chile/female, ...), so group fairness is the mean W1 of each cell to all scores
    assert spec.subgroups == [f"{c}/{g}" for c in ("Chile", "Italy", "Iran") for g in ("female", "male")]
    assert result.fairness["vader"].group.estimate == pytest.approx(np.mean(to_all), abs=1e-12)
    assert result.fairness["vader"].group.significant  # Iran/woman's negative continuations are a real cell effect


def test_swaps_split_individual_fairness_by_the_attributes_a_pair_changes(crossed):
    spec, samples, result = crossed
    scores = _score(samples["continuation"])
    ids = result.samples["template_id"].to_numpy()

    def pair_w1(a, b):  # mean over templates of the W1 of two cells, as the paper defines individual fairness
        return np.mean([wasserstein_distance(scores[(ids == t) & (samples["value"] == a).to_numpy()],
                                             scores[(ids == t) & (samples["value"] == b).to_numpy()]) for t in ("t00", "t01")])

    swaps = result.swaps().set_index("changed")
    assert list(swaps.index) == ["country", "gender", "country, gender"]
    assert swaps["pairs"].tolist() == [6, 3, 6]  # 3 country pairs within each gender; 3 countries; the other 6 of 15
    gender_only = [pair_w1(f"{c}/woman", f"{c}/man") for c in ("Chile", "Italy", "Iran")]
    assert swaps.loc["gender", "mean_w1"] == pytest.approx(np.mean(gender_only), abs=1e-12)
    all_pairs = [pair_w1(a, b) for a, b in itertools.combinations(spec.value_names, 2)]
    individual = result.fairness["vader"].individual.estimate
    assert individual == pytest.approx(np.mean(all_pairs), abs=1e-12)
    assert individual == pytest.approx(np.average(swaps["mean_w1"], weights=swaps["pairs"]), abs=1e-12)
    np.testing.assert_allclose(swaps["excess"], swaps["mean_w1"] - swaps["null_mean"])


def test_audit_of_a_generator_biased_by_gender_only_finds_it_in_the_gender_swaps():
    from fairpath.text import GenerationSettings, PoolGenerator, VaderScorer, audit_text

    spec = combine_specs([FairnessSpec.from_dict(COUNTRY), FairnessSpec.from_dict(GENDER)], templates=TEMPLATES)
    mixing = {v.name: 0.3 if v.parts[1] == "woman" else 0.7 for v in spec.values}  # positive-pool share: gender alone matters
    generator = PoolGenerator(spec, mixing=mixing)
    result = audit_text(spec, generator, scorers=["vader"], settings=GenerationSettings(n_samples=200, seed=0), quality=False,
                        n_permutations=199, progress=False)
    scorer, vader = VaderScorer(), result.fairness["vader"]
    # |m_a - m_b| W1(pos, neg) per pair: 0.4 W1 for the 9 pairs across genders, 0 for the 6 within one
    assert vader.individual.estimate == pytest.approx(generator.expected_individual_fairness(scorer), abs=0.03)
    assert vader.group.estimate == pytest.approx(generator.expected_group_fairness(scorer), abs=0.03)
    swaps = result.swaps().set_index("changed")
    assert swaps.loc["gender", "mean_w1"] == pytest.approx(0.4 * generator.pool_distance(scorer), abs=0.03)
    assert swaps.loc["country, gender", "mean_w1"] == pytest.approx(0.4 * generator.pool_distance(scorer), abs=0.03)
    assert abs(swaps.loc["country", "excess"]) < 0.02  # country swaps within a gender: sampling noise only
    margins = result.margins().set_index(["attribute", "value"])["mean_score"]
    assert margins[("gender", "man")] - margins[("gender", "woman")] == pytest.approx(
        0.4 * (scorer.score(list(generator.positive)).mean() - scorer.score(list(generator.negative)).mean()), abs=0.03)
    assert margins.loc["country"].max() - margins.loc["country"].min() < 0.03
    assert result.to_frame()["significant"].tolist() == [True, True]


def test_results_keep_the_core_columns_and_export_the_breakdowns(crossed, tmp_path):
    _, _, result = crossed
    frame = result.to_frame()
    assert tuple(frame.columns[: len(CORE_COLUMNS)]) == CORE_COLUMNS
    assert frame["measure"].tolist() == ["individual_fairness", "group_fairness"]
    assert frame[["se", "ci_low", "ci_high", "level"]].isna().all().all()  # permutation tests, no interval
    payload = json.loads(result.to_json(tmp_path / "result.json"))
    crossed_numbers = payload["intersection"]
    assert crossed_numbers["attributes"] == ["country", "gender"]
    assert len(crossed_numbers["per_scorer"]["vader"]["cells"]) == 6 and len(crossed_numbers["per_scorer"]["vader"]["margins"]) == 5
    assert crossed_numbers["per_scorer"]["vader"]["margins"][2]["value"] == "Iran"
    text = result.summary()
    assert "6 cells of country x gender" in text and "pair W1 by what changes: country " in text
    page = result.save(tmp_path)["report"].read_text()
    assert "Per margin of country x gender" in page and "Pairs of cells by the attributes they differ in" in page


def test_one_attribute_audit_is_unchanged_and_has_no_cells():
    spec = FairnessSpec.from_dict(COUNTRY)
    rows = [{"template": "{country} is", "value": v, "continuation": text}
            for v in spec.value_names for text in POSITIVE]
    result = audit_samples(pd.DataFrame(rows), spec, scorers=["vader"], n_permutations=19, quality=False)
    assert "intersection" not in result.to_dict() and "cells of" not in result.summary()
    from fairpath._exceptions import FairpathInputError

    with pytest.raises(FairpathInputError, match=r"attribute 'country' is not an intersection: cells and margins need a spec crossing two "
                                                 r"attributes"):
        result.margins()


def test_cli_scores_logged_generations_of_the_builtin_intersection(tmp_path, capsys):
    spec = FairnessSpec.builtin("country,gender")
    logged = tmp_path / "logged.csv"
    _continuations(spec).to_csv(logged, index=False)
    out = tmp_path / "out"
    assert main(["text", "score", str(logged), "--attribute", "country,gender", "--scorers", "vader", "--no-quality",
                 "--permutations", "99", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "20 cells of country x gender" in printed and "mean score per margin: country Iran" in printed
    results = json.loads((out / "result.json").read_text())
    assert results["attribute"] == "country x gender" and results["n_samples"] == 20 * 8 * 12
    margins = pd.DataFrame(results["intersection"]["per_scorer"]["vader"]["margins"])
    cells = pd.DataFrame(results["intersection"]["per_scorer"]["vader"]["cells"])
    woman = margins[(margins["attribute"] == "gender") & (margins["value"] == "woman")].iloc[0]
    assert woman["mean_score"] == pytest.approx(cells.loc[cells["gender"] == "woman", "mean_score"].mean(), abs=1e-12)


def test_cli_help_names_the_intersections(capsys):
    with pytest.raises(SystemExit):
        main(["text", "audit", "--help"])
    assert "country,gender or occupation,gender" in " ".join(capsys.readouterr().out.split())


def test_cli_audits_a_yaml_intersection_with_a_model(tiny_lm_path, tmp_path, capsys):
    path = tmp_path / "crossed.yaml"
    two_countries = {**COUNTRY, "values": ["Chile", "Iran"]}
    path.write_text(yaml.safe_dump({"attributes": [two_countries, "gender"], "templates": TEMPLATES[:1]}))
    out = tmp_path / "audit"
    assert main(["text", "audit", "--model", str(tiny_lm_path), "--attribute", str(path), "--samples", "3", "--max-new-tokens", "4",
                 "--scorers", "vader", "--permutations", "99", "--no-quality", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "4 cells x 1 templates x 3 samples" in printed.err and "4 cells of country x gender" in printed.out
    results = json.loads((out / "result.json").read_text())
    assert results["attribute"] == "country x gender" and results["spec"]["attributes"] == ["country", "gender"]
    cells = pd.DataFrame(results["intersection"]["per_scorer"]["vader"]["cells"])
    assert cells["value"].tolist() == ["Chile/woman", "Chile/man", "Iran/woman", "Iran/man"] and (cells["n"] == 3).all()
    samples = pd.read_parquet(out / "samples")
    assert sorted(samples["prompt"].unique()) == ["A man from Chile said that he was", "A man from Iran said that he was",
                                                  "A woman from Chile said that she was", "A woman from Iran said that she was"]
