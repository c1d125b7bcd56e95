"""Counterfactual sentiment fairness: exact Wasserstein-1 distances, the paper's individual and group
fairness, bootstrap intervals, the sampling noise floor, and per-value and per-pair breakdowns.

Individual fairness (Huang et al., 2020) is the mean over templates and unordered pairs of distinct
values of W1 between the score distributions of the two filled prompts; group fairness is the mean
over subgroups of W1 between the subgroup's pooled scores and the whole evaluation set's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin
from fairpath._stats import Estimate

_REQUIRED = ("template_id", "value", "subgroup")


# ----------------------------------------------------------------------------------------------
# Wasserstein-1
def _quantile_grid(samples: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Quantile functions of several samples on the union of their steps: values (K x G) and widths (G).

    W1 between two of them is the width-weighted sum of absolute differences of their rows.
    """
    sizes = [len(s) for s in samples]
    breaks = np.unique(np.concatenate([np.arange(1, n + 1) / n for n in sizes] + [[0.0]]))
    widths = np.diff(breaks)
    middles = (breaks[:-1] + breaks[1:]) / 2
    rows = [np.sort(s)[np.minimum((middles * n).astype(np.int64), n - 1)] for s, n in zip(samples, sizes)]
    return np.vstack(rows), widths


def wasserstein1(u, v) -> float:
    """Exact W1 between the empirical distributions of ``u`` and ``v`` (sizes may differ)."""
    u, v = np.asarray(u, dtype=float).ravel(), np.asarray(v, dtype=float).ravel()
    if not len(u) or not len(v):
        raise FairpathInputError(f"W1 needs two non-empty samples, got sizes {len(u)} and {len(v)}")
    if len(u) == len(v):
        return float(np.abs(np.sort(u) - np.sort(v)).mean())
    quantiles, widths = _quantile_grid([u, v])
    return float(np.abs(quantiles[0] - quantiles[1]) @ widths)


def pairwise_wasserstein1(samples: list) -> np.ndarray:
    """Symmetric K x K matrix of exact W1 between every pair of samples, vectorised."""
    samples = [np.asarray(s, dtype=float).ravel() for s in samples]
    if any(not len(s) for s in samples):
        raise FairpathInputError("pairwise W1 needs non-empty samples")
    if len({len(s) for s in samples}) == 1:
        ordered = np.sort(np.vstack(samples), axis=1)
        return np.stack([np.abs(row - ordered).mean(axis=1) for row in ordered])
    quantiles, widths = _quantile_grid(samples)
    return np.stack([np.abs(row - quantiles) @ widths for row in quantiles])


# ----------------------------------------------------------------------------------------------
# The evaluation design: one score array per (template, value) cell
@dataclass
class _Design:
    templates: list[str]
    values: list[str]
    subgroup_of: dict[str, str]
    cells: list[list[np.ndarray]]  # [template][value] -> scores

    @property
    def subgroups(self) -> list[str]:
        return list(dict.fromkeys(self.subgroup_of[v] for v in self.values))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, score: str) -> "_Design":
        missing = [c for c in (*_REQUIRED, score) if c not in frame.columns]
        if missing:
            raise FairpathInputError(f"score table lacks column(s) {missing}; it needs {list(_REQUIRED)} and {score!r}")
        if frame[score].isna().any():
            raise FairpathInputError(f"column {score!r} has {int(frame[score].isna().sum())} missing scores; score every sample")
        templates = list(pd.unique(frame["template_id"]))
        values = list(pd.unique(frame["value"]))
        if len(values) < 2:
            raise FairpathInputError(f"the score table has {len(values)} value(s) {values}; fairness needs at least two")
        subgroups = frame.groupby("value", sort=False)["subgroup"].unique()
        conflicting = [v for v, groups in subgroups.items() if len(groups) > 1]
        if conflicting:
            raise FairpathInputError(f"values {conflicting} appear with several subgroups; each value belongs to one subgroup")
        grouped = {key: group[score].to_numpy(float) for key, group in frame.groupby(["template_id", "value"], sort=False)}
        absent = [f"{t}/{v}" for t in templates for v in values if (t, v) not in grouped]
        if absent:
            raise FairpathInputError(f"no samples for template/value {absent[:5]} ({len(absent)} in all); every template needs every value")
        cells = [[grouped[(t, v)] for v in values] for t in templates]
        return cls(templates, values, {v: g[0] for v, g in subgroups.items()}, cells)


def _pair_matrix(design_cells: list[list[np.ndarray]]) -> np.ndarray:
    """Mean over templates of the value-by-value W1 matrix."""
    return np.mean([pairwise_wasserstein1(row) for row in design_cells], axis=0)


def _individual(pair_matrix: np.ndarray) -> float:
    upper = np.triu_indices(pair_matrix.shape[0], k=1)
    return float(pair_matrix[upper].mean())


def _pools(cells: list[list[np.ndarray]], values: list[str], keys: list[str], key_of: dict[str, str]) -> dict[str, np.ndarray]:
    return {key: np.concatenate([row[i] for row in cells for i, v in enumerate(values) if key_of[v] == key]) for key in keys}


def _distances_to_all(cells, values, keys, key_of) -> np.ndarray:
    """Exact W1 of each key's pooled samples to all samples, from one sort of all samples.

    Both CDFs are step functions on the sorted pooled scores; W1 is the integral of their absolute
    difference, so one cumulative count per key gives every distance.
    """
    key_index = {key: k for k, key in enumerate(keys)}
    scores = np.concatenate([cell for row in cells for cell in row])
    labels = np.concatenate([np.full(len(cell), key_index[key_of[v]]) for row in cells for v, cell in zip(values, row)])
    order = np.argsort(scores)  # ties need no order: their steps are zero
    steps = np.diff(scores[order])
    labels = labels[order]
    sizes = np.bincount(labels, minlength=len(keys))
    all_cdf = np.arange(1, len(scores)) / len(scores)
    distances = []
    for k in range(len(keys)):
        key_cdf = np.cumsum(labels[:-1] == k) / sizes[k]
        distances.append(np.abs(key_cdf - all_cdf) @ steps)
    return np.array(distances)


def _group(design: _Design, cells) -> float:
    if len(design.subgroups) < 2:
        return float("nan")
    return float(_distances_to_all(cells, design.values, design.subgroups, design.subgroup_of).mean())


# ----------------------------------------------------------------------------------------------
# Results
@dataclass
class FairnessResult(ResultMixin):
    """Individual and group fairness of one scorer, with bootstrap intervals and noise floors.

    The noise floor is the value each metric takes, on average, when both sides come from the
    same prompt (split halves, rescaled to the real sample sizes): W1 of finite samples is biased
    upwards, so only the excess over the floor indicates bias. The noise upper bound is the
    ``level`` quantile of the metric over random splits (a permutation null): an estimate above it
    is unlikely from sampling alone. Intervals are basic bootstrap intervals for the W1 of the
    underlying distributions, centred on the bias-corrected estimate ``2 t - mean(bootstrap t)``;
    the estimate itself is the paper's plug-in value. Near the noise floor W1 is not smooth and
    intervals are unreliable: judge there by ``above_noise``.
    """

    scorer: str
    individual: Estimate
    group: Estimate
    individual_noise_floor: float
    group_noise_floor: float
    individual_noise_upper: float
    group_noise_upper: float
    individual_bias_corrected: float
    group_bias_corrected: float
    per_value: pd.DataFrame = field(repr=False)
    per_pair: pd.DataFrame = field(repr=False)
    per_subgroup: pd.DataFrame = field(repr=False)
    n_bootstrap: int = 0
    n_samples: int = 0

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for metric, estimate, corrected, floor, upper in (
            ("individual_fairness", self.individual, self.individual_bias_corrected, self.individual_noise_floor,
             self.individual_noise_upper),
            ("group_fairness", self.group, self.group_bias_corrected, self.group_noise_floor, self.group_noise_upper),
        ):
            rows.append({"scorer": self.scorer, "metric": metric, "estimate": estimate.estimate,
                         "bias_corrected": corrected, "se": estimate.se,
                         "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "noise_floor": floor,
                         "noise_upper": upper, "excess": estimate.estimate - floor,
                         "above_noise": bool(estimate.estimate > upper)})
        return pd.DataFrame(rows)

    def worst_pairs(self, k: int = 10) -> pd.DataFrame:
        return self.per_pair.head(k)

    def to_dict(self) -> dict:
        return {
            "scorer": self.scorer,
            "individual_fairness": self.individual.to_dict(),
            "group_fairness": self.group.to_dict(),
            "individual_noise_floor": self.individual_noise_floor,
            "group_noise_floor": self.group_noise_floor,
            "individual_noise_upper": self.individual_noise_upper,
            "individual_bias_corrected": self.individual_bias_corrected,
            "group_bias_corrected": self.group_bias_corrected,
            "group_noise_upper": self.group_noise_upper,
            "n_bootstrap": self.n_bootstrap,
            "n_samples": self.n_samples,
            "per_value": self.per_value.to_dict(orient="records"),
            "per_pair": self.per_pair.to_dict(orient="records"),
            "per_subgroup": self.per_subgroup.to_dict(orient="records"),
        }

    def __repr__(self) -> str:
        return (f"FairnessResult(scorer={self.scorer!r}, n_samples={self.n_samples})\n"
                f"  individual fairness {self.individual}  noise floor {self.individual_noise_floor:.4f}\n"
                f"  group fairness      {self.group}  noise floor {self.group_noise_floor:.4f}")

    def plot(self, k: int = 10):
        """Bar chart of the ``k`` pairs with the largest W1, with the individual noise floor."""
        import matplotlib.pyplot as plt

        top = self.per_pair.head(k).iloc[::-1]
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(top) + 1.2))
        ax.barh(top["value_a"] + " vs " + top["value_b"], top["w1"], color="#486581")
        ax.axvline(self.individual_noise_floor, color="#b42318", linestyle="--", label="noise floor")
        ax.set_xlabel(f"W1 of {self.scorer} scores (mean over templates)")
        ax.legend(loc="lower right")
        fig.tight_layout()
        return fig


def individual_fairness(frame: pd.DataFrame, score: str = "score") -> float:
    """Average Individual Fairness: mean W1 over templates and unordered pairs of distinct values."""
    design = _Design.from_frame(frame, score)
    return _individual(_pair_matrix(design.cells))


def group_fairness(frame: pd.DataFrame, score: str = "score") -> float:
    """Average Group Fairness: mean over subgroups of W1(subgroup's scores, all scores); NaN with one subgroup."""
    design = _Design.from_frame(frame, score)
    return _group(design, design.cells)


def _bootstrap(design: _Design, n_bootstrap: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Metrics on resamples of templates (with replacement) and of samples within each prompt."""
    n_templates = len(design.templates)
    individual, group = np.empty(n_bootstrap), np.empty(n_bootstrap)
    for b in range(n_bootstrap):
        chosen = rng.integers(n_templates, size=n_templates)
        cells = [[cell[rng.integers(len(cell), size=len(cell))] for cell in design.cells[t]] for t in chosen]
        individual[b] = _individual(_pair_matrix(cells))
        group[b] = _group(design, cells)
    return individual, group


def _basic_interval(estimate: float, draws: np.ndarray, level: float) -> Estimate:
    """Basic (bias-reflecting) bootstrap interval, clipped at 0.

    W1 of finite samples is biased upwards and resampling adds the same bias again, so percentile
    intervals sit above the estimate; reflecting the draws around it, [2t - q_high, 2t - q_low],
    removes that bias and targets the W1 of the underlying distributions.
    """
    low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return Estimate(float(estimate), float(np.std(draws, ddof=1)), float(max(0.0, 2 * estimate - high)),
                    float(max(0.0, 2 * estimate - low)), level)


def _bias_corrected(estimate: float, draws: np.ndarray) -> float:
    return float(max(0.0, 2 * estimate - np.mean(draws))) if np.isfinite(estimate) else float("nan")


def _noise_floor(design: _Design, n_splits: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Metrics when both sides are halves of the same prompts (or subgroup), rescaled to the real sizes.

    W1 between independent samples of sizes m and n from one distribution scales as
    sqrt(1/m + 1/n); a subgroup of size N_g compared with the whole set of size N that contains it
    scales as sqrt(1/N_g - 1/N).
    """
    if any(len(cell) < 2 for row in design.cells for cell in row):
        return np.full(1, np.nan), np.full(1, np.nan)
    everything_size = sum(len(cell) for row in design.cells for cell in row)
    group_sizes = {g: sum(len(row[i]) for row in design.cells for i, v in enumerate(design.values) if design.subgroup_of[v] == g)
                   for g in design.subgroups}
    individual_draws, group_draws = [], []
    for _ in range(n_splits):
        halves_a, halves_b, cell_terms = [], [], []
        for row in design.cells:
            row_a, row_b = [], []
            for cell in row:
                shuffled = rng.permutation(cell)
                half = len(cell) // 2
                a, b = shuffled[:half], shuffled[half:]
                row_a.append(a)
                row_b.append(b)
                scale = np.sqrt((2 / len(cell)) / (1 / len(a) + 1 / len(b)))
                cell_terms.append(wasserstein1(a, b) * scale)
            halves_a.append(row_a)
            halves_b.append(row_b)
        individual_draws.append(np.mean(cell_terms))
        if len(design.subgroups) >= 2:
            pools_a = _pools(halves_a, design.values, design.subgroups, design.subgroup_of)
            pools_b = _pools(halves_b, design.values, design.subgroups, design.subgroup_of)
            terms = []
            for g in design.subgroups:
                scale = np.sqrt((1 / group_sizes[g] - 1 / everything_size) / (1 / len(pools_a[g]) + 1 / len(pools_b[g])))
                terms.append(wasserstein1(pools_a[g], pools_b[g]) * scale)
            group_draws.append(np.mean(terms))
    return np.array(individual_draws), np.array(group_draws) if group_draws else np.full(1, np.nan)


def _breakdowns(design: _Design, pair_matrix: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    values = design.values
    by_value = {v: np.concatenate([row[i] for row in design.cells]) for i, v in enumerate(values)}
    to_all = _distances_to_all(design.cells, values, values, {v: v for v in values})
    off_diagonal = (pair_matrix.sum(axis=1)) / (len(values) - 1)
    per_value = pd.DataFrame({
        "value": values,
        "subgroup": [design.subgroup_of[v] for v in values],
        "n": [len(by_value[v]) for v in values],
        "mean_score": [by_value[v].mean() for v in values],
        "w1_to_all": to_all,
        "mean_pair_w1": off_diagonal,
    }).sort_values("mean_pair_w1", ascending=False, ignore_index=True)
    upper_a, upper_b = np.triu_indices(len(values), k=1)
    means = np.array([by_value[v].mean() for v in values])
    per_pair = pd.DataFrame({
        "value_a": [values[i] for i in upper_a],
        "value_b": [values[j] for j in upper_b],
        "w1": pair_matrix[upper_a, upper_b],
        "mean_score_a": means[upper_a],
        "mean_score_b": means[upper_b],
        "mean_difference": means[upper_a] - means[upper_b],
    }).sort_values("w1", ascending=False, ignore_index=True)
    subgroups = design.subgroups
    pools = _pools(design.cells, values, subgroups, design.subgroup_of)
    per_subgroup = pd.DataFrame({
        "subgroup": subgroups,
        "n": [len(pools[g]) for g in subgroups],
        "mean_score": [pools[g].mean() for g in subgroups],
        "w1_to_all": _distances_to_all(design.cells, values, subgroups, design.subgroup_of),
    })
    return per_value, per_pair, per_subgroup


def counterfactual_fairness(frame: pd.DataFrame, score: str = "score", scorer: str | None = None,
                            n_bootstrap: int = 200, level: float = 0.95, n_splits: int = 20,
                            seed: int = 0) -> FairnessResult:
    """Individual and group fairness of one score column with intervals, noise floors and breakdowns.

    ``frame`` has one row per generated sample with columns ``template_id``, ``value``,
    ``subgroup`` and ``score`` (in [0, 1]). The bootstrap resamples templates and, within each
    prompt, samples; the same ``seed`` gives the same numbers.
    """
    if n_bootstrap < 2:
        raise FairpathInputError(f"n_bootstrap must be at least 2, got {n_bootstrap}")
    design = _Design.from_frame(frame, score)
    rng = np.random.default_rng(seed)
    pair_matrix = _pair_matrix(design.cells)
    individual_draws, group_draws = _bootstrap(design, n_bootstrap, rng)
    individual_null, group_null = _noise_floor(design, n_splits, rng)
    group_point = _group(design, design.cells)
    individual_point = _individual(pair_matrix)
    group_estimate = (_basic_interval(group_point, group_draws, level) if np.isfinite(group_point)
                      else Estimate(float("nan"), float("nan"), float("nan"), float("nan"), level))
    per_value, per_pair, per_subgroup = _breakdowns(design, pair_matrix)
    return FairnessResult(
        scorer=scorer or score,
        individual=_basic_interval(individual_point, individual_draws, level),
        group=group_estimate,
        individual_noise_floor=float(np.mean(individual_null)),
        group_noise_floor=float(np.mean(group_null)),
        individual_noise_upper=float(np.quantile(individual_null, level)),
        individual_bias_corrected=_bias_corrected(individual_point, individual_draws),
        group_bias_corrected=_bias_corrected(group_point, group_draws),
        group_noise_upper=float(np.quantile(group_null, level)),
        per_value=per_value,
        per_pair=per_pair,
        per_subgroup=per_subgroup,
        n_bootstrap=n_bootstrap,
        n_samples=len(frame),
    )
