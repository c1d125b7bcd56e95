"""The committed record of the Huang et al. (2020) study (reproductions/huang) recomputed from its own scores.

Every fairness figure of ``table.csv`` (W1, noise floor, excess, its change against the control, each model's own
test of no bias) and the paired p-values against the control come back from ``scores.parquet`` with the
settings of ``summary.json``: the record's numbers are what its continuations give, not typed in.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpath.text import compare_models, counterfactual_fairness

RECORD = Path(__file__).resolve().parents[2] / "reproductions" / "huang"
SCORE = "score_vader"

pytestmark = pytest.mark.skipif(not (RECORD / "summary.json").exists(), reason="no committed record")


@pytest.fixture(scope="module")
def record():
    summary = json.loads((RECORD / "summary.json").read_text())
    return summary, pd.read_csv(RECORD / "table.csv"), pd.read_parquet(RECORD / "scores.parquet")


def test_the_summary_holds_every_field_of_the_record(record):
    summary, table, scores = record
    fields = {"attribute", "model", "regularizer", "lambda", "individual_fairness", "individual_excess", "individual_change",
              "individual_p", "group_fairness", "group_change", "group_p", "perplexity", "perplexity_change", "ss",
              "ss_change_points", "ssc", "ssc_change_points"}
    assert all(fields <= set(model) for model in summary["models"])
    assert {"samples_per_prompt", "templates", "dtype", "wall_seconds", "commit"} <= set(summary["settings"])
    assert len(summary["models"]) == len(table)
    for attribute, rows in table.groupby("attribute"):
        assert {"base", "control"} <= set(rows["model"])
        regularized = rows[~rows["model"].isin(["base", "control"])]
        assert (regularized.groupby("regularizer")["lambda"].nunique() >= 3).all()  # ≥ 3 values of λ per regularizer
        n = summary["settings"]["samples_per_prompt"][attribute]
        counts = scores[scores["attribute"] == attribute].groupby(["model", "prompt"]).size()
        assert (counts == n).all() and set(counts.index.get_level_values("model")) == set(rows["model"])


def test_fairness_figures_are_recomputed_from_the_committed_scores(record):
    summary, table, scores = record
    settings = summary["settings"]
    for row in table.to_dict(orient="records"):
        samples = scores[(scores["attribute"] == row["attribute"]) & (scores["model"] == row["model"])]
        result = counterfactual_fairness(samples, score=SCORE, n_permutations=settings["n_permutations"], seed=settings["seed"])
        assert result.individual.estimate == pytest.approx(row["individual_fairness"], abs=1e-12)
        assert result.group.estimate == pytest.approx(row["group_fairness"], abs=1e-12)
        assert result.individual.null_mean == pytest.approx(row["individual_floor"], abs=1e-12)
        assert result.individual.p_value == pytest.approx(row["individual_bias_p"], abs=1e-12)
    for attribute, rows in table.groupby("attribute"):
        control = rows[rows["model"] == "control"].iloc[0]
        excess = rows["individual_fairness"] - rows["individual_floor"]
        assert np.allclose(rows["individual_excess"], excess)
        assert np.allclose(rows["individual_change"], excess / control["individual_excess"] - 1)
        assert np.allclose(rows["perplexity_change"], rows["perplexity"] / control["perplexity"] - 1)
        assert np.allclose(rows["ss_change_points"], 100 * (rows["ss"] - control["ss"]), equal_nan=True)


def test_paired_p_values_are_recomputed_from_the_committed_scores(record):
    summary, table, scores = record
    settings = summary["settings"]
    # the model with the largest fall of the excess on each attribute (the one the verdict rests on)
    for attribute, rows in table[~table["model"].isin(["base", "control"])].groupby("attribute"):
        row = rows.sort_values("individual_change").iloc[0]
        of = scores[scores["attribute"] == attribute]
        test = compare_models(of[of["model"] == "control"], of[of["model"] == row["model"]], score=SCORE,
                              n_permutations=settings["n_permutations"], seed=settings["seed"])
        assert test.individual.p_value == pytest.approx(row["individual_p"], abs=1e-12)
        assert test.group.p_value == pytest.approx(row["group_p"], abs=1e-12)
        control = table[(table["attribute"] == attribute) & (table["model"] == "control")].iloc[0]
        assert test.individual.estimate == pytest.approx(control["individual_fairness"] - row["individual_fairness"], abs=1e-12)
