"""Hand-made debias studies and Huang records for the contract, report and escaping tests.

The numbers are made up; the tables are not: they go through ``DebiasStudyResult.table``, ``attribute_table``
and ``target_check``, so every column the reports read is the one the study writes.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath.report import provenance
from fairpath.reproduce import HuangSettings
from fairpath.reproduce._huang import HuangResult, attribute_table, target_check
from fairpath.text.debias import DebiasStudyResult

# (model, regularizer, lambda, training seed, VADER spread, one-sided p of a lower spread than the base's, perplexity, S.S.)
MODELS = (("base", "none", np.nan, np.nan, 0.026, np.nan, 52.0, 0.60),
          ("control-seed0", "none", 0.0, 0, 0.027, 0.55, 52.1, 0.61),
          ("embedding-lambda30-seed0", "embedding", 30.0, 0, 0.008, 0.0004, 53.2, 0.62),
          ("sentiment-lambda30-seed0", "sentiment", 30.0, 0, 0.012, 0.003, 52.9, 0.60))


def evaluation(model: str, regularizer: str, lam: float, seed: float, spread: float, *, scorer: str = "vader",
               perplexity: float = 20.0, ss: float = 0.6) -> dict:
    """One row of ``DebiasStudyResult.evaluations``."""
    return {"model": model, "regularizer": regularizer, "lam": lam, "seed": seed, "scorer": scorer,
            "individual": 0.05 + spread, "individual_noise_floor": 0.04, "individual_p_value": 0.01,
            "individual_detectable_excess": 0.012, "individual_verdict": "significant at α = 0.05",
            "group": 0.02 + spread / 2, "group_noise_floor": 0.015, "group_p_value": 0.03, "group_detectable_excess": 0.01,
            "group_verdict": "significant at α = 0.05", "individual_spread": spread, "individual_spread_low": 0.6 * spread,
            "individual_spread_high": 1.4 * spread + 0.002, "group_spread": spread / 2, "group_spread_low": 0.3 * spread,
            "group_spread_high": 0.7 * spread + 0.002, "spread_level": 0.95, "perplexity": perplexity,
            "perplexity_sensitive": perplexity + 3, "ss": ss, "ssc": ss - 0.1, "path": model}


def debias_study(attribute: str = "country", models=MODELS) -> DebiasStudyResult:
    """A study of ``models`` scored by VADER and TextBlob (TextBlob's spreads 1.5 times VADER's, its p twice)."""
    evaluations, comparisons, scores = [], [], []
    for model, regularizer, lam, seed, spread, p, perplexity, ss in models:
        for scorer, scale in (("vader", 1.0), ("textblob", 1.5)):
            evaluations.append(evaluation(model, regularizer, lam, seed, scale * spread, scorer=scorer, perplexity=perplexity, ss=ss))
            if model != "base":
                change = spread / models[0][4] - 1
                comparisons.append({"model": model, "scorer": scorer, "n_permutations": 9999, "individual_change": change,
                                    "individual_p": min(1.0, scale * p), "group_change": change, "group_p": min(1.0, 2 * scale * p)})
        scores.append({"model": model, "prompt": f"{attribute} prompt", "sample_index": 0, "text": "a text", "score_vader": 0.1,
                       "score_textblob": 0.0})
    head = {"heldout_accuracy": 0.81, "n_train": 400, "n_heldout": 100, "labelled_by": "VADER where TextBlob agrees in sign"}
    return DebiasStudyResult(attribute=attribute, evaluations=pd.DataFrame(evaluations), comparisons=pd.DataFrame(comparisons),
                             scores=pd.DataFrame(scores), sentiment_head=head)


def huang_result(folder: str | Path = "huang", *, attributes=("country", "occupation"), models=MODELS, model: str = "model",
                 chosen_by: str = "the cap max_audit_samples=64 (power below 0.8)") -> HuangResult:
    """A record of ``attributes`` (each a :func:`debias_study`) with its design and target check."""
    settings = HuangSettings(templates=3, training_seeds=(0,), lambdas=(30.0,))
    tables = [attribute_table(debias_study(attribute, models), 10).assign(attribute=attribute) for attribute in attributes]
    table = pd.concat(tables, ignore_index=True)
    table = table[["attribute", *[c for c in table.columns if c != "attribute"]]]
    design = {attribute: {"values": ["Denmark", "Iraq"], "selection": "the 1 value with the lowest and the 1 with the highest",
                          "samples_per_prompt": 64, "chosen_by": chosen_by, "pilot_power": 0.4, "power_vs_base": 0.55,
                          "power_se": 0.02, "power_effect": 0.3, "power_alpha": 0.0025,
                          "power_claim": "a 30% fall of the spread on both scorers in each of the 1 training seeds' models",
                          "vader_power_vs_base": 0.8, "base_spread_by_scorer": {"vader": 0.026, "textblob": 0.011}}
              for attribute in attributes}
    stored = {**asdict(settings), "dtype": "bfloat16", "model": model, "samples_per_prompt": {a: 64 for a in attributes}}
    return HuangResult(table=table, target=target_check(table, design, settings), settings=stored, design=design, out=Path(folder), seconds=12.0,
                       provenance=provenance(seed=settings.seed, dtype="bfloat16", packages=("torch",)))
