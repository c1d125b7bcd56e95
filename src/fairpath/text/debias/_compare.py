"""Paired comparison of two models' counterfactual fairness on the same prompts.

Both models are sampled on the same prompts with the same per-sample random streams (sample ``i``
of a prompt uses the same uniforms in every model), so continuation ``i`` of a prompt under model A
and under model B form a pair. Under the null hypothesis that both models give every prompt the
same score distribution, the two members of every pair are exchangeable; the test flips the model
labels of each pair independently with probability 1/2 and recomputes the difference in individual
(and group) fairness. The two-sided p-value is ``(1 + #{|null| >= |observed|}) / (1 + n_permutations)``,
which is exact (its size never exceeds the level) for any number of permutations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError

_KEYS = ["template_id", "value", "sample_index"]


@dataclass(frozen=True)
class PairedComparison:
    """Fairness of models A and B, their differences (A − B; positive: B is fairer) and two-sided p-values."""

    individual_a: float
    individual_b: float
    individual_difference: float
    individual_p: float
    group_a: float
    group_b: float
    group_difference: float
    group_p: float
    n_pairs: int
    n_permutations: int

    def to_dict(self) -> dict:
        return asdict(self)


def _cells(samples_a: pd.DataFrame, samples_b: pd.DataFrame, score: str):
    """Scores as [template, value, sample] arrays for A and B, aligned pair by pair, and the subgroup of each value."""
    for name, frame in (("A", samples_a), ("B", samples_b)):
        missing = [c for c in (*_KEYS, "subgroup", score) if c not in frame.columns]
        if missing:
            raise FairpathInputError(f"samples of model {name} lack column(s) {missing}; give scored audit samples")
    a = samples_a.set_index(_KEYS)[score].sort_index()
    b = samples_b.set_index(_KEYS)[score].sort_index()
    if not a.index.equals(b.index) or a.index.has_duplicates:
        raise FairpathInputError(
            "the two models were not sampled on the same (template, value, sample_index) rows; audit both with the "
            "same specification and number of samples"
        )
    templates, values = a.index.levels[0], a.index.levels[1]
    counts = a.groupby(level=[0, 1]).size()
    if counts.nunique() != 1 or len(counts) != len(templates) * len(values):
        raise FairpathInputError("every template and value needs the same number of samples for a paired test")
    shape = (len(templates), len(values), int(counts.iloc[0]))
    cells_a, cells_b = a.to_numpy(float).reshape(shape), b.to_numpy(float).reshape(shape)
    subgroup_of = samples_a.drop_duplicates("value").set_index("value")["subgroup"]
    return cells_a, cells_b, subgroup_of.loc[list(values)].to_numpy()


def _individual(cells: np.ndarray) -> np.ndarray:
    """Average individual fairness of [..., template, value, sample] scores (equal sample counts)."""
    ordered = np.sort(cells, axis=-1)
    pairwise = np.abs(ordered[..., :, None, :] - ordered[..., None, :, :]).mean(axis=-1).mean(axis=-3)
    upper = np.triu_indices(cells.shape[-2], k=1)
    return pairwise[..., upper[0], upper[1]].mean(axis=-1)


def _group(cells: np.ndarray, subgroups: np.ndarray) -> np.ndarray:
    """Average group fairness of [..., template, value, sample] scores: mean over subgroups of
    W1(subgroup's scores, all scores), from one sort (the integral of the two CDFs' difference)."""
    names = list(dict.fromkeys(subgroups))
    if len(names) < 2:
        return np.full(cells.shape[:-3], np.nan)
    flat = cells.reshape(*cells.shape[:-3], -1)
    per_value = np.repeat(np.unique(subgroups, return_inverse=True)[1], cells.shape[-1])
    labels = np.broadcast_to(np.tile(per_value, cells.shape[-3]), flat.shape)
    order = np.argsort(flat, axis=-1)
    steps = np.diff(np.take_along_axis(flat, order, axis=-1), axis=-1)
    labels = np.take_along_axis(labels, order, axis=-1)[..., :-1]
    all_cdf = np.arange(1, flat.shape[-1]) / flat.shape[-1]
    per_template = cells.shape[-3] * cells.shape[-1]  # samples of one value over all templates
    distances = [(np.abs(np.cumsum(labels == k, axis=-1) / ((subgroups == g).sum() * per_template) - all_cdf) * steps).sum(axis=-1)
                 for k, g in enumerate(np.unique(subgroups))]
    return np.mean(distances, axis=0)


def _p_value(observed: float, null: np.ndarray) -> float:
    if np.isnan(observed):
        return float("nan")
    # a relative tolerance keeps permutations that reproduce the observed split from losing to rounding
    exceed = np.abs(null) >= np.abs(observed) * (1 - 1e-9) - 1e-12
    return float((1 + exceed.sum()) / (1 + len(null)))


def paired_fairness_test(samples_a: pd.DataFrame, samples_b: pd.DataFrame, score: str = "score",
                         n_permutations: int = 999, seed: int = 0, chunk: int = 50) -> PairedComparison:
    """Paired permutation test of the difference in individual and group fairness between two models.

    ``samples_a`` and ``samples_b``: scored samples of both models (columns ``template_id``, ``value``,
    ``subgroup``, ``sample_index`` and ``score``) on the same prompts and sample indices.
    """
    if int(n_permutations) < 1:
        raise FairpathInputError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    cells_a, cells_b, subgroups = _cells(samples_a, samples_b, score)
    rng = np.random.default_rng(seed)
    individual_a, individual_b = float(_individual(cells_a)), float(_individual(cells_b))
    group_a, group_b = float(_group(cells_a, subgroups)), float(_group(cells_b, subgroups))
    null_individual, null_group = [], []
    for start in range(0, n_permutations, chunk):
        flips = rng.random((min(chunk, n_permutations - start), *cells_a.shape)) < 0.5
        swapped_a, swapped_b = np.where(flips, cells_b, cells_a), np.where(flips, cells_a, cells_b)
        null_individual.append(_individual(swapped_a) - _individual(swapped_b))
        null_group.append(_group(swapped_a, subgroups) - _group(swapped_b, subgroups))
    return PairedComparison(
        individual_a=individual_a, individual_b=individual_b, individual_difference=individual_a - individual_b,
        individual_p=_p_value(individual_a - individual_b, np.concatenate(null_individual)),
        group_a=group_a, group_b=group_b, group_difference=group_a - group_b,
        group_p=_p_value(group_a - group_b, np.concatenate(null_group)),
        n_pairs=int(cells_a.size), n_permutations=int(n_permutations),
    )
