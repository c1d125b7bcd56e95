"""How strong an unobserved confounder would have to be to change a Cookbook verdict (issue 39; the bounds:
:mod:`fairpath.causal._sensitivity`).

Holm's procedure rejects a predictor's j-th smallest p (of m estimable tests) when p < α/(m − j + 1), that is when
the interval at level 1 − α/(m − j + 1) excludes the null. A violation therefore stops being shown, the other tests
held as they are, when the confidence bounds at its Holm step's level reach 0 under a confounder of strength
r = cf_y = cf_d (ρ = 1): the verdict's robustness value. A certified pathway (TOST at its Holm step, α' = α/(m − j + 1):
the interval at 1 − 2α' inside ±δ) stops being certified when those bounds reach ±δ. "No evidence" has nothing a
confounder could take away (bounds only widen), and a test not estimable claims nothing: both NaN.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairpath.parity._cookbook import CERTIFIED, NOT_ESTIMABLE, VIOLATION


def _holm_levels(p_values: pd.Series, alpha: float, sides: int) -> pd.Series:
    """Each test's level at its Holm step: 1 − sides·α/(m − j + 1), j its rank among the m p-values."""
    m = len(p_values)
    ranks = p_values.rank(method="first").astype(int)  # 1 … m
    return 1 - sides * alpha / (m - ranks + 1)


def verdict_robustness(cookbook, bounds) -> pd.DataFrame:
    """Per Cookbook test: its verdict, the level of the interval its Holm step reads, and the confounding strength at which
    the verdict would change (NaN where a confounder can take nothing away); ``bounds`` the decomposition's
    :class:`~fairpath.causal.SensitivityResult`."""
    outcome = cookbook.outcome
    rows = []
    for predictor, tests in cookbook.tests.groupby("predictor", sort=False):
        judged = tests[tests["verdict"] != NOT_ESTIMABLE]  # the Holm family
        zero_levels = _holm_levels(judged["p_value"], cookbook.alpha, 1)
        tost_levels = _holm_levels(judged["tost_p"], cookbook.alpha, 2) if cookbook.margin is not None else None
        for index, test in tests.iterrows():
            where = {"measure": test["measure"], "subject": f"{predictor} − {outcome}" if test["in_bn"] else predictor,
                     "contrast": test.get("contrast", bounds.contrasts[0])}
            level, strength = float("nan"), float("nan")
            if test["verdict"] == VIOLATION:
                level = float(zero_levels[index])
                strength = bounds.strength_to_change(**where, level=level)
            elif test["verdict"] == CERTIFIED:
                level = float(tost_levels[index])
                strength = bounds.strength_to_change(**where, level=level, margin=cookbook.margin)
            row = {**({"contrast": test["contrast"]} if "contrast" in tests else {}), "predictor": predictor,
                   "pathway": test["pathway"], "tested": test["tested"], "verdict": test["verdict"], "holm_level": level,
                   "robustness_value": strength}
            rows.append({**row, "claim": _claim(row)})
    return pd.DataFrame(rows)


def _claim(row: dict) -> str:
    """One verdict's robustness in words."""
    where = f" ({row['contrast']})" if "contrast" in row else ""
    head = f"{row['predictor']}, {row['pathway']}{where}: {row['verdict']}"
    if np.isnan(row["robustness_value"]):
        return f"{head}: nothing a confounder could take away"
    what = "no longer shown" if row["verdict"] == VIOLATION else "no longer certified"
    if row["robustness_value"] == 0:
        return f"{head}: its Holm step's {row['holm_level']:.2%} interval of {row['tested']} already decides it at the edge"
    return (f"{head}: {what} under a confounder of strength {row['robustness_value']:.1%} (cf_y = cf_d, rho = 1; its Holm "
            f"step reads the {row['holm_level']:.2%} interval of {row['tested']})")


def robustness_sections(cookbook, decomposition) -> list:
    """The report's section on the verdicts' robustness (none where the decomposition's intervals come from draws)."""
    contrasts = getattr(decomposition, "decompositions", {"": decomposition})
    if any(fit.draws is not None for d in contrasts.values() for fit in d.fits.values()):
        return []
    bounds = decomposition.sensitivity()
    return [bounds.with_verdicts(verdict_robustness(cookbook, bounds)).verdict_section()]
