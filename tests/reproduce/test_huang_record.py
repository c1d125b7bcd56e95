"""The committed record of the Huang et al. (2020) study (reproductions/huang) recomputed from its own scores.

Every fairness figure of ``table.csv`` (each model's between-value spread with its interval, Huang et al.'s W1 with
its noise floor and own test, the paired p-values against the untouched base and their Holm adjustment, the changes
against the base) and the target check come back from ``scores.parquet`` with the settings of ``result.json``: the
record's numbers are what its continuations give, not typed in.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpath._stats import holm
from fairpath.text import compare_spread, counterfactual_fairness, value_spread
from fairpath.text._metrics import _family

RECORD = Path(__file__).resolve().parents[2] / "reproductions" / "huang"
SCORERS = {"": "score_vader", "textblob_": "score_textblob"}

pytestmark = pytest.mark.skipif(not (RECORD / "result.json").exists(), reason="no committed record")


@pytest.fixture(scope="module")
def record():
    summary = json.loads((RECORD / "result.json").read_text())
    return summary, pd.read_csv(RECORD / "table.csv"), pd.read_parquet(RECORD / "scores.parquet")


def _samples(scores, row):
    return scores[(scores["attribute"] == row["attribute"]) & (scores["model"] == row["model"])]


def test_the_summary_holds_every_field_of_the_record(record):
    summary, table, scores = record
    fields = {"attribute", "model", "regularizer", "lambda", "seed", "individual_spread", "individual_spread_low",
              "individual_spread_high", "spread_level", "individual_change_vs_base", "individual_p_vs_base",
              "individual_p_holm_vs_base", "group_change_vs_base", "group_p_vs_base", "textblob_individual_change_vs_base",
              "textblob_individual_p_vs_base", "textblob_group_p_vs_base", "individual_fairness", "individual_floor",
              "individual_verdict", "individual_detectable_excess", "perplexity", "perplexity_change_vs_base",
              "ss_change_points_vs_base", "ssc_change_points_vs_base", "ss_change_se_points_vs_base", "sentiment_head_accuracy", "sentiment_head_sentences",
              "sentiment_head_labels"}
    assert all(fields <= set(model) for model in summary["models"])
    assert {"samples_per_prompt", "templates", "dtype", "wall_seconds", "commit", "training_seeds"} <= set(summary["settings"])
    assert len(summary["settings"]["training_seeds"]) >= 2 and len(summary["models"]) == len(table)
    for attribute, rows in table.groupby("attribute"):
        design = summary["design"][attribute]
        power = design["power_vs_base"]
        assert (0 <= power <= 1) if power is not None else "power_note" in design
        assert design["pilot_seed"] != summary["settings"]["seed"]  # the study's samples are fresh
        if "sizing" in design:  # a sizing audit of its own seed, which only ever raises the pilot's choice
            assert design["sizing"]["seed"] not in (design["pilot_seed"], summary["settings"]["seed"])
            assert design["samples_per_prompt"] >= design["sizing"]["samples_per_prompt"]
        seeds = summary["settings"]["training_seeds"]
        assert {"base", *(f"control-seed{s}" for s in seeds)} <= set(rows["model"])
        regularized = rows[rows["regularizer"] != "none"]
        assert all(sorted(trained) == sorted(seeds) for trained in regularized.groupby(["regularizer", "lambda"])["seed"].apply(list))
        n = summary["settings"]["samples_per_prompt"][attribute]
        of = scores[scores["attribute"] == attribute]
        counts = of.groupby(["model", "prompt"]).size()
        assert (counts == n).all() and set(counts.index.get_level_values("model")) == set(rows["model"])
        assert sorted(of["value"].unique()) == sorted(design["values"])  # the values chosen on the pilot, nothing else
        assert (rows["sentiment_head_accuracy"].between(0.5, 1)).all() and "textblob" in rows["sentiment_head_labels"].iloc[0]


def test_spreads_and_w1_are_recomputed_from_the_committed_scores(record):
    summary, table, scores = record
    settings = summary["settings"]
    for row in table.to_dict(orient="records"):
        samples = _samples(scores, row)
        for prefix, score in SCORERS.items():
            spread = value_spread(samples, score=score, seed=settings["seed"]).individual
            assert spread.spread == pytest.approx(row[f"{prefix}individual_spread"], abs=1e-12)
            assert spread.spread_interval == pytest.approx((row[f"{prefix}individual_spread_low"], row[f"{prefix}individual_spread_high"]), abs=1e-12)
        # the audit's verdict: Holm over both scorers and both metrics, as fairpath.text.audit_text tests them
        result = _family({name: counterfactual_fairness(samples, score=score, n_permutations=settings["n_permutations"],
                                                        seed=settings["seed"]) for name, score in SCORERS.items()})[""]
        assert result.individual.estimate == pytest.approx(row["individual_fairness"], abs=1e-12)
        assert result.individual.null_mean == pytest.approx(row["individual_floor"], abs=1e-12)
        np.testing.assert_allclose(result.individual.p_value, row["individual_bias_p"], atol=1e-12)
        assert result.individual.verdict() == row["individual_verdict"]


def test_tests_against_the_base_are_recomputed_from_the_committed_scores(record):
    summary, table, scores = record
    settings = summary["settings"]
    for attribute, rows in table.groupby("attribute"):
        base = rows[rows["model"] == "base"].iloc[0]
        assert rows.loc[rows["model"] == "base", ["individual_change_vs_base", "perplexity_change_vs_base"]].isna().all().all()
        regularized = rows[rows["regularizer"] != "none"]
        best = regularized.sort_values("individual_change_vs_base").iloc[0]["model"]
        for row in regularized.to_dict(orient="records"):
            scorers = SCORERS.items() if row["model"] == best else [("", "score_vader")]  # TextBlob of the best: the time of a test
            for prefix, score in scorers:
                test = compare_spread(_samples(scores, base), _samples(scores, row), score=score,
                                      n_permutations=settings["comparison_permutations"], seed=settings["seed"]).individual
                assert test.p_value == pytest.approx(row[f"{prefix}individual_p_vs_base"], abs=1e-12)
                np.testing.assert_allclose(test.change, row[f"{prefix}individual_change_vs_base"], atol=1e-12)
        assert regularized["individual_p_holm_vs_base"].tolist() == pytest.approx(holm(regularized["individual_p_vs_base"]).tolist())
        others = rows[rows["model"] != "base"]
        assert np.allclose(others["perplexity_change_vs_base"], others["perplexity"] / base["perplexity"] - 1)
        assert np.allclose(others["ss_change_points_vs_base"], 100 * (others["ss"] - base["ss"]), equal_nan=True)
        # S.S. is a share over the quality_per_prompt first continuations of every prompt: the SE of a change
        n = settings["quality_per_prompt"] * scores.loc[scores["attribute"] == attribute, "prompt"].nunique()
        for measure in ("ss", "ssc"):
            se = 100 * np.sqrt((base[measure] * (1 - base[measure]) + others[measure] * (1 - others[measure])) / n)
            assert np.allclose(others[f"{measure}_change_se_points_vs_base"], se)


def test_the_verdict_is_recomputed_from_the_table(record):
    from fairpath.reproduce import HuangSettings
    from fairpath.reproduce._huang import target_check

    summary, table, _ = record
    names = set(HuangSettings.__dataclass_fields__)
    stored = {k: tuple(v) if isinstance(v, list) else v for k, v in summary["settings"].items() if k in names}
    check = target_check(table, summary["design"], HuangSettings(**stored))
    assert check["verdict"] == summary["target"]["verdict"] and check["claims"] == summary["target"]["claims"]
