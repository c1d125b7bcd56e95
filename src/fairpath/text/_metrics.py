"""Counterfactual sentiment fairness: exact Wasserstein-1 distances, the paper's individual and group
fairness, their permutation tests, the comparison of two models, and per-value and per-pair breakdowns.

Individual fairness (Huang et al., 2020) is the mean over templates and unordered pairs of distinct
values of W1 between the score distributions of the two filled prompts; group fairness is the mean
over subgroups of W1 between the subgroup's pooled scores and the whole evaluation set's.

W1 of finite samples is positive even without any bias, and it is not smooth at 0, so no interval
for it has verified coverage near 0 (a bootstrap interval of it excluded 0 in every null replicate
measured). Inference is by permutation instead: under "no counterfactual sentiment difference" the
value labels of the samples of one template are exchangeable, so permuting them within each
template (keeping every cell's size) draws from the exact null distribution of both metrics. Its mean
is the *noise floor* (the W1 expected from sampling alone) and the share of draws at least as large
as the estimate is the p-value.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._stats import holm
from fairpath._validation import Frame, Optional, Text, validate_params
from fairpath.text._parameters import TEST_SETTINGS

_REQUIRED = ("template_id", "value", "subgroup")


# ----------------------------------------------------------------------------------------------
# Wasserstein-1
@functools.lru_cache(maxsize=256)
def _grid(sizes: tuple[int, ...]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Union of the quantile steps of samples of these sizes: each sample's order-statistic index per step, and widths."""
    breaks = np.unique(np.concatenate([np.arange(1, n + 1) / n for n in sizes] + [[0.0]]))
    middles = (breaks[:-1] + breaks[1:]) / 2
    return tuple(np.minimum((middles * n).astype(np.int64), n - 1) for n in sizes), np.diff(breaks)


def _quantile_grid(samples: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Quantile functions of several samples on the union of their steps: values (K x G) and widths (G).

    W1 between two of them is the width-weighted sum of absolute differences of their rows.
    """
    indices, widths = _grid(tuple(len(s) for s in samples))
    return np.vstack([np.sort(s)[index] for s, index in zip(samples, indices)]), widths


def _w1_sorted(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Exact W1 between the rows of two arrays of sorted samples (draws x n1, draws x n2)."""
    (i, j), widths = _grid((first.shape[1], second.shape[1]))
    return np.abs(first[:, i] - second[:, j]) @ widths


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
# Permutation engine: both metrics for many relabellings of the samples at once
_CHUNK_CELLS = 2_000_000  # draws x samples held at once: bounds the memory of one chunk


@dataclass
class _Layout:
    """The samples of one or more models on one design as flat arrays, with the sort orders W1 needs.

    Every sample has a template, a value and a model index. A relabelling changes ``values`` (within
    a template) or ``models`` (within a prompt); the scores and their orders stay fixed, so every
    cell's sorted samples come from one stable sort of the labels.
    """

    scores: np.ndarray
    templates: np.ndarray
    values: np.ndarray
    models: np.ndarray
    n_values: int
    n_models: int
    subgroup_index: np.ndarray  # value index -> subgroup index
    n_subgroups: int
    template_members: list[np.ndarray]  # the samples of each template, in score order
    order: np.ndarray  # every sample, in score order

    @classmethod
    def from_designs(cls, designs: list[_Design]) -> "_Layout":
        first = designs[0]
        columns = [(cell, t, v, m) for m, design in enumerate(designs) for t, row in enumerate(design.cells)
                   for v, cell in enumerate(row)]
        scores = np.concatenate([cell for cell, *_ in columns])
        templates, values, models = (np.concatenate([np.full(len(c[0]), c[k]) for c in columns]) for k in (1, 2, 3))
        members = []
        for t in range(len(first.templates)):
            chosen = np.flatnonzero(templates == t)
            members.append(chosen[np.argsort(scores[chosen], kind="stable")])
        order = np.argsort(scores, kind="stable")
        subgroups = first.subgroups
        return cls(scores, templates, values, models, len(first.values), len(designs),
                   np.array([subgroups.index(first.subgroup_of[v]) for v in first.values]), len(subgroups),
                   members, order)

    def prompts(self) -> list[np.ndarray]:
        """The samples of each (template, value) cell, every model together."""
        return [np.flatnonzero((self.templates == t) & (self.values == v))
                for t in range(len(self.template_members)) for v in range(self.n_values)]

    def chunk(self) -> int:
        return max(1, _CHUNK_CELLS // len(self.scores))


def _sorted_by_label(scores: np.ndarray, labels: np.ndarray, n_labels: int) -> list[np.ndarray]:
    """Each label's samples, sorted (draws x its size), for every row of ``labels`` (draws x samples in score order).

    A stable sort by label keeps each label's samples in score order; relabelling keeps every
    label's count, so the first row gives the sizes.
    """
    positions = np.argsort(labels, axis=1, kind="stable")
    return np.split(scores[positions], np.cumsum(np.bincount(labels[0], minlength=n_labels))[:-1], axis=1)


def _statistics(layout: _Layout, values: np.ndarray, models: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair W1 (draws x models x pairs, mean over templates) and group fairness (draws x models).

    ``values`` and ``models`` (draws x samples) are relabellings of the layout's samples.
    """
    n_draws, n_values, n_models, n_groups = len(values), layout.n_values, layout.n_models, layout.n_subgroups
    first, second = np.triu_indices(n_values, k=1)
    pair_w1 = np.zeros((n_draws, n_models, len(first)))
    for members in layout.template_members:
        cells = _sorted_by_label(layout.scores[members], models[:, members] * n_values + values[:, members],
                                 n_models * n_values)
        for m in range(n_models):
            for p, (i, j) in enumerate(zip(first, second)):
                pair_w1[:, m, p] += _w1_sorted(cells[m * n_values + i], cells[m * n_values + j])
    pair_w1 /= len(layout.template_members)
    if n_groups < 2:
        return pair_w1, np.full((n_draws, n_models), np.nan)
    scores, order = layout.scores[layout.order], layout.order
    pools = _sorted_by_label(scores, models[:, order] * n_groups + layout.subgroup_index[values[:, order]], n_models * n_groups)
    everything = _sorted_by_label(scores, models[:, order], n_models)
    group = np.stack([np.mean([_w1_sorted(pools[m * n_groups + g], everything[m]) for g in range(n_groups)], axis=0)
                      for m in range(n_models)], axis=1)
    return pair_w1, group


def _permuted_within(blocks: list[np.ndarray], labels: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` copies of ``labels``, each permuted independently within every block of samples."""
    draws = np.tile(labels, (n_draws, 1))
    for block in blocks:
        draws[:, block] = rng.permuted(draws[:, block], axis=1)
    return draws


def _observed(layout: _Layout) -> tuple[np.ndarray, np.ndarray]:
    return _statistics(layout, layout.values[None], layout.models[None])


def _null_draws(layout: _Layout, relabel: str, n_permutations: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The statistics under ``n_permutations`` relabellings of values within templates or models within prompts."""
    blocks = layout.template_members if relabel == "values" else layout.prompts()
    pairs, groups = [], []
    for start in range(0, n_permutations, layout.chunk()):
        n_draws = min(layout.chunk(), n_permutations - start)
        fixed = np.broadcast_to(layout.models if relabel == "values" else layout.values, (n_draws, len(layout.scores)))
        if relabel == "values":
            pair, group = _statistics(layout, _permuted_within(blocks, layout.values, n_draws, rng), fixed)
        else:
            pair, group = _statistics(layout, fixed, _permuted_within(blocks, layout.models, n_draws, rng))
        pairs.append(pair)
        groups.append(group)
    return np.concatenate(pairs), np.concatenate(groups)


def permutation_p_value(observed: float, null: np.ndarray, two_sided: bool = False) -> float:
    """(1 + #{null draws at least as extreme as ``observed``}) / (1 + B): valid at every B.

    Draws equal to the observed value up to rounding count as at least as extreme.
    """
    if not np.isfinite(observed):
        return float("nan")
    null = np.abs(null) if two_sided else np.asarray(null)
    observed = abs(observed) if two_sided else observed
    return float((1 + np.sum(null >= observed - 1e-12 * max(1.0, abs(observed)))) / (1 + len(null)))


# ----------------------------------------------------------------------------------------------
# Results
@dataclass(frozen=True)
class PermutationTest:
    """A fairness number with its permutation test.

    For one model, ``estimate`` is the metric, ``null_mean`` its mean over the relabellings (the
    noise floor: the W1 expected from sampling alone), ``excess`` the estimate minus it and
    ``p_value`` the one-sided permutation p-value of "no counterfactual sentiment difference". For a
    comparison, ``estimate`` is the difference of two models' metric and ``p_value`` two-sided.
    ``p_holm`` is Holm's adjustment over the ``family_size`` testable tests of one audit or
    comparison, and ``significant`` means ``p_holm < alpha``. There is no interval: none has
    verified coverage here.

    ``not_testable`` says why the test cannot reject here and what would make it testable (empty
    when it can): such a test has no p-value and stays out of the Holm family. ``critical_value``
    is what the estimate (its absolute value, two-sided) must exceed for ``p_holm < alpha`` when no
    other test of the family rejects, read off the test's own permutation draws; infinite when no
    estimate could reach it with these permutations.
    """

    estimate: float
    null_mean: float
    p_value: float
    p_holm: float
    family_size: int
    n_permutations: int
    alpha: float = 0.05
    two_sided: bool = False
    not_testable: str = ""
    critical_value: float = float("nan")
    null_draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def excess(self) -> float:
        return self.estimate - self.null_mean

    @property
    def testable(self) -> bool:
        return not self.not_testable

    @property
    def detectable_excess(self) -> float:
        """The smallest excess over the null mean (two-sided: the smallest absolute difference) that would
        have been significant: so "not significant" never reads as "no bias" beyond this size."""
        return self.critical_value if self.two_sided else self.critical_value - self.null_mean

    @property
    def significant(self) -> bool:
        return bool(self.p_holm < self.alpha)

    def to_dict(self) -> dict:
        stated = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "null_draws"}
        return {**stated, "excess": self.excess, "testable": self.testable, "detectable_excess": self.detectable_excess,
                "significant": self.significant}

    def verdict(self) -> str:
        """Significant, not significant with the smallest detectable effect, or not testable with its reason."""
        if not np.isfinite(self.estimate):
            return "not defined (one subgroup)"
        if self.not_testable:
            return f"not testable here: {self.not_testable}"
        if self.significant:
            return f"significant at α = {self.alpha:g}"
        size = "difference" if self.two_sided else "excess"
        if not np.isfinite(self.detectable_excess):
            return (f"not significant at α = {self.alpha:g}; no {size} could have been detected with {self.n_permutations} "
                    f"permutations (Holm over {self.family_size} needs p < {self.alpha / self.family_size:.3g}): use more")
        return f"not significant at α = {self.alpha:g}; the smallest detectable {size} here is {self.detectable_excess:.4f}"

    def __str__(self) -> str:
        if not np.isfinite(self.estimate):
            return self.verdict()
        if self.not_testable:
            return f"{self.estimate:.4f} (null mean {self.null_mean:.4f}): {self.verdict()}"
        return (f"{self.estimate:.4f} (null mean {self.null_mean:.4f}, excess {self.excess:+.4f}, permutation "
                f"p = {self.p_value:.3g}, Holm p = {self.p_holm:.3g} over {self.family_size}: {self.verdict()})")


_METRICS = ("individual", "group")
_TOLERANCE = 1e-12  # relative: permuted statistics that differ by rounding only are equal

_UNDEFINED = "group fairness is not defined with one subgroup; it needs values in two or more subgroups"
_ONE_PER_PROMPT = ("one continuation per prompt: the W1 of two single scores is their absolute difference, and permuting "
                  "the value labels within a template only reorders those differences, so every permutation gives the same "
                  "individual fairness; sample at least 2 continuations per prompt (20 or more for power)")


def _family(tested: dict[str, object]) -> dict[str, object]:
    """Holm's adjustment over every testable test (scorer x metric) of the results in ``tested``, and each
    test's critical value at the level Holm asks of a lone rejection in that family."""
    keys = [(name, metric) for name, result in tested.items() for metric in _METRICS if getattr(result, metric).testable]
    adjusted = dict(zip(keys, holm([getattr(tested[n], m).p_value for n, m in keys]))) if keys else {}

    def adjust(test: PermutationTest, key) -> PermutationTest:
        if key not in adjusted:
            return replace(test, p_holm=np.nan, family_size=len(keys))
        return replace(test, p_holm=float(adjusted[key]), family_size=len(keys),
                       critical_value=_critical_value(test.null_draws, test.alpha / len(keys), test.two_sided))

    return {name: replace(result, **{m: adjust(getattr(result, m), (name, m)) for m in _METRICS}) for name, result in tested.items()}


def _critical_value(null: np.ndarray, level: float, two_sided: bool) -> float:
    """The value a statistic must exceed for its permutation p-value to fall below ``level`` (inf if none can).

    p = (1 + #{draws >= estimate}) / (1 + B) < level allows at most k = ceil(level (1 + B) - 1) - 1 draws at
    or above the estimate, so the estimate must exceed the (k + 1)-th largest draw.
    """
    draws = np.sort(np.abs(null) if two_sided else null)
    allowed = int(np.ceil(level * (1 + len(draws)) - 1)) - 1
    return float(draws[len(draws) - allowed - 1]) if allowed >= 0 else float("inf")


def _untestable(null: np.ndarray, n_permutations: int, alpha: float, degenerate: str) -> str:
    """Why a permutation test cannot reject at ``alpha`` ("" when it can), and what would make it testable."""
    spread = np.ptp(null)
    if spread <= _TOLERANCE * max(1.0, float(np.max(np.abs(null)))):
        return degenerate or (f"all {n_permutations} permutations give the same statistic, so it cannot reject; "
                              "sample more continuations per prompt or use more templates")
    # The observed statistic is one relabelling: at best it ties the largest draws, whose share bounds p.
    top = np.max(null)
    at_top = int(np.sum(null >= top - _TOLERANCE * max(1.0, abs(top))))
    if at_top / (1 + n_permutations) < alpha:
        return ""
    if 1 / (1 + n_permutations) >= alpha:
        return (f"with {n_permutations} permutations the smallest attainable p is {1 / (1 + n_permutations):.3g}, not below "
                f"α = {alpha:g}; use at least {int(np.floor(1 / alpha))} permutations (999 is a good default)")
    return (f"the permutation distribution takes few values (its largest came up in {at_top} of {n_permutations} permutations), "
            f"so the smallest attainable p is not below α = {alpha:g}; sample more continuations per prompt or use more templates")


def _test(observed: float, null: np.ndarray, n_permutations: int, alpha: float, two_sided: bool = False,
          degenerate: str = "") -> PermutationTest:
    """The test of ``observed`` against its permutation draws; ``degenerate`` explains a null whose draws are all equal."""
    null = np.asarray(null, dtype=float)
    reason = _untestable(np.abs(null) if two_sided else null, n_permutations, alpha, degenerate) if np.isfinite(observed) else _UNDEFINED
    p = np.nan if reason else permutation_p_value(observed, null, two_sided)
    return PermutationTest(float(observed), float(np.mean(null)), p, p, 1, n_permutations, alpha, two_sided, reason, null_draws=null)


@result_class
class FairnessResult(ResultMixin):
    """Individual and group fairness of one scorer, each with its permutation test, and breakdowns.

    ``individual`` and ``group`` are :class:`PermutationTest`; ``per_pair`` adds each pair's null
    mean and permutation p-values (raw and Holm over all pairs) beside its W1. No interval is given
    for W1: near 0 none has verified coverage, so judge by the tests.
    """

    scorer: str
    individual: PermutationTest
    group: PermutationTest
    per_value: pd.DataFrame = field(repr=False)
    per_pair: pd.DataFrame = field(repr=False)
    per_subgroup: pd.DataFrame = field(repr=False)
    n_permutations: int = 0
    n_samples: int = 0

    @property
    def individual_noise_floor(self) -> float:
        """The permutation null mean of individual fairness."""
        return self.individual.null_mean

    @property
    def group_noise_floor(self) -> float:
        """The permutation null mean of group fairness."""
        return self.group.null_mean

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: subject (the scorer), measure (individual_fairness, group_fairness), estimate;
        se, ci_low, ci_high and level are NaN (no interval, see above); then null_mean, excess, p_value,
        p_holm, holm_family, significant, detectable_excess (the smallest excess that would have been
        significant), not_testable (why the test cannot reject here; empty when it can), alpha."""
        return result_frame([{"subject": self.scorer, "measure": f"{metric}_fairness", "estimate": test.estimate,
                              "null_mean": test.null_mean, "excess": test.excess, "p_value": test.p_value,
                              "p_holm": test.p_holm, "holm_family": test.family_size, "significant": test.significant,
                              "detectable_excess": test.detectable_excess, "not_testable": test.not_testable, "alpha": test.alpha}
                             for metric, test in (("individual", self.individual), ("group", self.group))])

    def worst_pairs(self, k: int = 10) -> pd.DataFrame:
        """The ``k`` pairs with the largest W1 (a selection: their p-values are Holm-adjusted over all pairs)."""
        return self.per_pair.head(k)

    def to_dict(self) -> dict:
        return {
            "scorer": self.scorer,
            "individual_fairness": self.individual.to_dict(),
            "group_fairness": self.group.to_dict(),
            "n_permutations": self.n_permutations,
            "n_samples": self.n_samples,
            "per_value": self.per_value.to_dict(orient="records"),
            "per_pair": self.per_pair.to_dict(orient="records"),
            "per_subgroup": self.per_subgroup.to_dict(orient="records"),
        }

    def _repr_fields(self) -> dict:
        return {"scorer": self.scorer, "n_samples": self.n_samples, "n_permutations": self.n_permutations}

    def summary(self) -> str:
        return (f"FairnessResult(scorer={self.scorer!r}, n_samples={self.n_samples}, n_permutations={self.n_permutations})\n"
                f"  individual fairness {self.individual}\n"
                f"  group fairness      {self.group}")

    def plot(self, ax=None, *, k: int = 10):
        """The ``k`` pairs with the largest W1 (of all pairs), each with its permutation null mean; on ``ax`` when given."""
        from fairpath.report import legend_below, new_figure

        top = self.per_pair.head(k).iloc[::-1]
        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(7, 0.35 * len(top) + 1.4)))
        labels = top["value_a"] + " vs " + top["value_b"]
        ax.barh(labels, top["w1"], color="#486581")
        ax.scatter(top["null_mean"], labels, color="#b42318", marker="|", s=200, zorder=3, label="null mean of the pair")
        for y, (_, row) in enumerate(top.iterrows()):
            ax.annotate(f"Holm p {row['p_holm']:.2g}", (row["w1"], y), xytext=(3, -3), textcoords="offset points", fontsize=7)
        ax.set_xlabel(f"W1 of {self.scorer} scores (mean over templates)")
        ax.set_title(f"top {len(top)} of {len(self.per_pair)} pairs by W1 (selected: judge by Holm p over all pairs)", fontsize=9)
        legend_below(ax, fontsize=8)
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


def _breakdowns(design: _Design, pair_w1: np.ndarray, pair_null: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Per value, per pair (with each pair's null mean and permutation p-values) and per subgroup.

    ``pair_w1`` lists the W1 of every unordered pair in ``np.triu_indices`` order, ``pair_null`` its
    permutation draws (draws x pairs).
    """
    values = design.values
    upper_a, upper_b = np.triu_indices(len(values), k=1)
    pair_matrix = np.zeros((len(values), len(values)))
    pair_matrix[upper_a, upper_b] = pair_matrix[upper_b, upper_a] = pair_w1
    pair_p = np.array([permutation_p_value(w, pair_null[:, p]) for p, w in enumerate(pair_w1)])
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
    means = np.array([by_value[v].mean() for v in values])
    per_pair = pd.DataFrame({
        "value_a": [values[i] for i in upper_a],
        "value_b": [values[j] for j in upper_b],
        "w1": pair_matrix[upper_a, upper_b],
        "mean_score_a": means[upper_a],
        "mean_score_b": means[upper_b],
        "mean_difference": means[upper_a] - means[upper_b],
        "null_mean": pair_null.mean(axis=0),
        "p_value": pair_p,
        "p_holm": holm(pair_p),
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



@validate_params({"frame": Frame(), "score": Text(), "scorer": Optional(Text()), **TEST_SETTINGS})
def counterfactual_fairness(frame: pd.DataFrame, score: str = "score", *, scorer: str | None = None,
                            n_permutations: int = 999, alpha: float = 0.05, seed: int = 0) -> FairnessResult:
    """Individual and group fairness of one score column with permutation tests and breakdowns.

    ``frame`` has one row per generated sample with columns ``template_id``, ``value``,
    ``subgroup`` and ``score`` (in [0, 1]). The null hypothesis "no counterfactual sentiment
    difference" makes the value labels of one template's samples exchangeable: they are permuted
    within each template (every cell keeps its size) ``n_permutations`` times, and

        p = (1 + #{permuted metric >= observed}) / (1 + n_permutations),

    which has size at most ``alpha`` at every ``n_permutations``. The two metrics' p-values are
    Holm-adjusted together (``audit_text`` adjusts over all its scorers). The same ``seed`` gives the
    same numbers.
    """
    design = _Design.from_frame(frame, score)
    layout = _Layout.from_designs([design])
    pair_w1, group = (a[0, 0] for a in _observed(layout))
    pair_null, group_null = (a[:, 0] for a in _null_draws(layout, "values", n_permutations, np.random.default_rng(seed)))
    per_value, per_pair, per_subgroup = _breakdowns(design, pair_w1, pair_null)
    result = FairnessResult(
        scorer=scorer or score,
        individual=_test(pair_w1.mean(), pair_null.mean(axis=1), n_permutations, alpha,
                         degenerate=_ONE_PER_PROMPT if all(len(cell) == 1 for row in design.cells for cell in row) else ""),
        group=_test(group, group_null, n_permutations, alpha),
        per_value=per_value, per_pair=per_pair, per_subgroup=per_subgroup,
        n_permutations=n_permutations, n_samples=len(frame),
    )
    return _family({result.scorer: result})[result.scorer]


# ----------------------------------------------------------------------------------------------
# Two models on the same prompts
@result_class
class ModelComparison(ResultMixin):
    """Paired comparison of two models' fairness on the same prompts: model A minus model B.

    ``individual`` and ``group`` are :class:`PermutationTest` of the differences (two-sided);
    ``individual_a`` etc. are each model's own metric. The null hypothesis is that for every prompt
    both models' scores have the same distribution; the model labels are permuted among the samples
    of each prompt (each model keeps its count), which draws the exact null distribution of both
    differences. A model whose continuations are only more (or less) varied in sentiment has a
    different noise floor, which this test can detect too: compare each model's own ``excess`` from
    :func:`counterfactual_fairness` before reading a difference as a change of bias.
    No interval is given for the differences: none has verified coverage yet.
    """

    scorer: str
    individual: PermutationTest
    group: PermutationTest
    individual_a: float
    individual_b: float
    group_a: float
    group_b: float
    n_permutations: int
    n_samples_a: int
    n_samples_b: int

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: subject (the scorer), measure (``<metric>_fairness_difference``), the difference
        A minus B as estimate (no se or interval), then model_a, model_b, null_mean, p-values, verdict,
        detectable_difference (the smallest absolute difference that would have been significant), not_testable."""
        return result_frame([{"subject": self.scorer, "measure": f"{metric}_fairness_difference", "estimate": test.estimate,
                              "model_a": a, "model_b": b, "null_mean": test.null_mean, "p_value": test.p_value,
                              "p_holm": test.p_holm, "holm_family": test.family_size, "significant": test.significant,
                              "detectable_difference": test.detectable_excess, "not_testable": test.not_testable,
                              "alpha": test.alpha}
                             for metric, test, a, b in (("individual", self.individual, self.individual_a, self.individual_b),
                                                        ("group", self.group, self.group_a, self.group_b))])

    def to_dict(self) -> dict:
        return {"scorer": self.scorer, "individual_difference": self.individual.to_dict(),
                "group_difference": self.group.to_dict(), "individual_a": self.individual_a,
                "individual_b": self.individual_b, "group_a": self.group_a, "group_b": self.group_b,
                "n_permutations": self.n_permutations, "n_samples_a": self.n_samples_a, "n_samples_b": self.n_samples_b}

    def _repr_fields(self) -> dict:
        return {"scorer": self.scorer, "n_permutations": self.n_permutations}

    def summary(self) -> str:
        return (f"ModelComparison(scorer={self.scorer!r}, A minus B, n_permutations={self.n_permutations})\n"
                f"  individual fairness {self.individual_a:.4f} - {self.individual_b:.4f} = {self.individual}\n"
                f"  group fairness      {self.group_a:.4f} - {self.group_b:.4f} = {self.group}")

    def plot(self, ax=None):
        """Each model's individual and group fairness side by side, each pair labelled with its difference
        and the permutation test's Holm p (no interval: none has verified coverage); on ``ax`` when given."""
        from fairpath.report import legend_below, new_figure

        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(5.5, 3.6)))
        positions = np.arange(2)
        pairs = ((self.individual_a, self.individual_b, self.individual), (self.group_a, self.group_b, self.group))
        ax.bar(positions - 0.2, [a for a, _, _ in pairs], 0.4, color="#486581", label="model A")
        ax.bar(positions + 0.2, [b for _, b, _ in pairs], 0.4, color="#9fb3c8", label="model B")
        for x, (a, b, test) in zip(positions, pairs):
            ax.annotate(f"A − B = {test.estimate:+.3f}\nHolm p {test.p_holm:.2g}", (x, max(a, b)), xytext=(0, 3),
                        textcoords="offset points", ha="center", fontsize=8)
        ax.set_xticks(positions, ["individual fairness", "group fairness"])
        ax.set_ylabel(f"W1 of {self.scorer} scores (lower is fairer)")
        ax.set_title(f"Model A against model B ({self.n_permutations} permutations)", fontsize=10)
        legend_below(ax, fontsize=8, ncol=2)
        fig.tight_layout()
        return fig


def _aligned(first: _Design, second: _Design) -> _Design:
    """``second`` with its cells in ``first``'s template and value order; both must have the same prompts."""
    if first.subgroup_of != second.subgroup_of or set(first.templates) != set(second.templates):
        only_a = sorted(set(first.templates) - set(second.templates)) + sorted(set(first.subgroup_of) - set(second.subgroup_of))
        only_b = sorted(set(second.templates) - set(first.templates)) + sorted(set(second.subgroup_of) - set(first.subgroup_of))
        changed = sorted(v for v in set(first.subgroup_of) & set(second.subgroup_of) if first.subgroup_of[v] != second.subgroup_of[v])
        raise FairpathInputError(
            f"the two models were not scored on the same prompts: templates/values only in A {only_a[:5]}, "
            f"only in B {only_b[:5]}, values with another subgroup {changed[:5]}; score both models on one specification")
    rows = {t: dict(zip(second.values, row)) for t, row in zip(second.templates, second.cells)}
    return _Design(first.templates, first.values, first.subgroup_of, [[rows[t][v] for v in first.values] for t in first.templates])


@validate_params({"samples_a": Frame(), "samples_b": Frame(), "score": Text(), "scorer": Optional(Text()), **TEST_SETTINGS})
def compare_models(samples_a: pd.DataFrame, samples_b: pd.DataFrame, score: str = "score", *, scorer: str | None = None,
                   n_permutations: int = 999, alpha: float = 0.05, seed: int = 0) -> ModelComparison:
    """Paired permutation test of the difference in individual and group fairness between two models.

    Contract: ``samples_a`` and ``samples_b`` are score tables of two models (say base and debiased)
    on the same prompts, as :func:`counterfactual_fairness` takes them (``template_id``, ``value``,
    ``subgroup``, ``score``; one row per continuation; the counts per prompt may differ between the
    models). The result's ``individual.estimate`` is individual fairness of A minus that of B (lower
    is fairer, so a positive difference means B is fairer), ``individual.p_value`` the two-sided
    permutation p-value of "both models give every prompt the same score distribution", and
    ``p_holm`` its Holm adjustment over the two metrics. Model labels are permuted within each
    prompt ``n_permutations`` times; the same ``seed`` gives the same numbers.
    """
    design_a = _Design.from_frame(samples_a, score)
    design_b = _aligned(design_a, _Design.from_frame(samples_b, score))
    layout = _Layout.from_designs([design_a, design_b])
    pair_w1, group = _observed(layout)
    pair_null, group_null = _null_draws(layout, "models", n_permutations, np.random.default_rng(seed))
    individual, individual_null = pair_w1[0].mean(axis=1), pair_null.mean(axis=2)
    comparison = ModelComparison(
        scorer=scorer or score,
        individual=_test(individual[0] - individual[1], individual_null[:, 0] - individual_null[:, 1], n_permutations,
                         alpha, two_sided=True),
        group=_test(group[0, 0] - group[0, 1], group_null[:, 0] - group_null[:, 1], n_permutations, alpha, two_sided=True),
        individual_a=float(individual[0]), individual_b=float(individual[1]),
        group_a=float(group[0, 0]), group_b=float(group[0, 1]),
        n_permutations=n_permutations, n_samples_a=len(samples_a), n_samples_b=len(samples_b),
    )
    return _family({comparison.scorer: comparison})[comparison.scorer]
