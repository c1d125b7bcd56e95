"""The aggregation of per-row contributions over cross-fitting splits (Chernozhukov et al. 2018, the mean version),
shared by the decomposition's estimates and the sensitivity bounds."""

from __future__ import annotations

import numpy as np


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))


def over_splits(row_sets: list[np.ndarray]) -> tuple[float, float]:
    """Estimate and SE over cross-fitting splits: the mean θ of the θ_s, and √mean(se_s² + (θ_s − θ)²)."""
    if len(row_sets) == 1:
        return _mean_se(row_sets[0])
    estimates, ses = np.array([_mean_se(rows) for rows in row_sets]).T
    estimate = float(estimates.mean())
    return estimate, float(np.sqrt(np.mean(ses ** 2 + (estimates - estimate) ** 2)))
