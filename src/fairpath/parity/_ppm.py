"""Predictive parity measures: the PPM per bin of a predictor, the integrated PPM, SPM and AUC.

PPM(b) = E[Y | x1, ŷ ∈ b] − E[Y | x0, ŷ ∈ b]. Bins are quantiles of ŷ computed once on the whole
sample, as in the paper's code: ``n_bins - 1`` cut points at probabilities 1/n_bins, ..., and
bins closed on the right, (c_k, c_{k+1}], with −∞ and +∞ outside. Tied cut points leave empty
intervals, which are dropped, so ties merge bins (the COMPAS decile score gives 9 bins, not 10).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fairpath._sfm import check_binary_sfm
from fairpath._exceptions import FairpathInputError  # noqa: E402
from fairpath._validation import ColumnName, Draws, Frame, Integer, Probability, Real, Seed, check_choice, validate_params  # noqa: E402
from fairpath._results import ResultMixin, result_class, confint_frame, estimate_row, interval_bars, panel_axes, result_frame  # noqa: E402
from fairpath._stats import Estimate, z_value  # noqa: E402
from fairpath.causal import SFM, prepare_data  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Bins:
    """Bin membership of every row (``codes``, 0-based) and a readable label per bin."""

    codes: np.ndarray
    labels: list[str]
    lower: np.ndarray  # left edge (exclusive) of each bin; the level itself for a binary predictor
    upper: np.ndarray  # right edge (inclusive)

    @property
    def n_bins(self) -> int:
        return len(self.labels)


@validate_params({"n_bins": Integer(2)})
def quantile_bins(score, n_bins: int = 10) -> Bins:
    """Bins of ``score``: its two levels when binary, otherwise right-closed quantile bins (see module doc)."""
    score = np.asarray(score, dtype=float)
    levels = np.unique(score)
    if len(levels) <= 2:
        codes = np.searchsorted(levels, score)
        return Bins(codes, [f"ŷ = {level:g}" for level in levels], levels.copy(), levels.copy())
    cuts = np.quantile(score, np.arange(1, n_bins) / n_bins)
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    # side="left" gives the interval (edges[k-1], edges[k]] for k = the returned index.
    raw = np.searchsorted(edges, score, side="left") - 1
    occupied, codes = np.unique(raw, return_inverse=True)
    lower, upper = edges[occupied], edges[occupied + 1]
    labels = [f"({lo:.3g}, {hi:.3g}]" for lo, hi in zip(lower, upper)]
    return Bins(codes.astype(np.intp), labels, lower, upper)


def _cell_means(codes: np.ndarray, group: np.ndarray, values: np.ndarray, weights: np.ndarray, n_bins: int):
    """Weighted mean of ``values`` and the weight total in every (bin, group) cell: arrays (n_bins, 2)."""
    cell = codes * 2 + group
    total = np.bincount(cell, weights=weights, minlength=2 * n_bins).reshape(n_bins, 2)
    sums = np.bincount(cell, weights=weights * values, minlength=2 * n_bins).reshape(n_bins, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / total, total


def _auc_from_ranks(y: np.ndarray, score: np.ndarray) -> float:
    from scipy.stats import rankdata  # scipy.stats takes half a second to import: on first use

    ranks = rankdata(score)
    positive = y == 1
    n_pos, n_neg = positive.sum(), (~positive).sum()
    if n_pos == 0 or n_neg == 0:
        return np.nan
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@dataclasses.dataclass
class _Prepared:
    y: np.ndarray
    score: np.ndarray
    group: np.ndarray  # 0 for x0, 1 for x1
    n_excluded: int


def _prepare(data: pd.DataFrame, sfm, predictor: str) -> _Prepared:
    # Only X, Y and the predictor matter here; the causal core's checks name the column at fault.
    check_binary_sfm(sfm, "predictive_parity")
    reduced = SFM(x=sfm.x, x0=sfm.x0, x1=sfm.x1, y=sfm.y)
    outcomes = [sfm.y] if predictor == sfm.y else [sfm.y, predictor]
    prepared = prepare_data(data, reduced, outcomes)
    return _Prepared(prepared.outcomes[sfm.y], prepared.outcomes[predictor], prepared.x.astype(np.intp), prepared.n_excluded)


@result_class
class PredictiveParity(ResultMixin):
    """Predictive parity of one predictor: PPM per bin, iPPM (unweighted and weighted), SPM and AUC.

    Attributes
    ----------
    bins : DataFrame, one row per bin: label, edges, counts, E[Y] and mean ŷ per group, the PPM gap and its CI.
    ippm : Estimate of the unweighted mean of the bin gaps (the paper's iPPM).
    ippm_weighted : Estimate of the gaps weighted by each bin's share of rows.
    spm : Estimate of E[ŷ | x1] − E[ŷ | x0] (the total variation of the predictor).
    auc : Estimate of the AUC of ŷ for Y, or None when Y is not binary.
    n_boot_incomplete : bootstrap draws in which some (bin, group) cell was empty; their iPPM
        averages the bins that remained.
    """

    predictor: str
    outcome: str
    bins: pd.DataFrame
    ippm: Estimate
    ippm_weighted: Estimate
    spm: Estimate
    auc: Estimate | None
    n: int
    n_excluded: int
    n_boot_incomplete: int
    settings: dict

    def measures(self) -> dict[str, Estimate]:
        found = {"ippm": self.ippm, "ippm_weighted": self.ippm_weighted, "spm": self.spm}
        if self.auc is not None:
            found["auc"] = self.auc
        return found

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: subject (the predictor), measure, estimate, se, ci_low, ci_high, level."""
        return result_frame([estimate_row(self.predictor, name, est) for name, est in self.measures().items()])

    @validate_params({"level": Probability()})
    def confint(self, level: float = 0.95) -> pd.DataFrame:
        """Every measure's percentile interval at ``level`` from its kept bootstrap draws: subject (the predictor),
        measure, estimate, ci_low, ci_high, level."""
        return confint_frame((({"subject": self.predictor, "measure": name}, est) for name, est in self.measures().items()), level)

    @validate_params({"null": Real()})
    def p_value(self, measure: str, *, null: float = 0.0) -> float:
        """Two-sided p-value of H0: ``measure`` (ippm, ippm_weighted, spm, auc) equals ``null``, by the bootstrap draws
        (:meth:`Estimate.p_value`: p < α exactly when the percentile interval at 1 − α excludes ``null``)."""
        measures = self.measures()
        return measures[check_choice("measure", measure, measures)].p_value(null)

    def to_dict(self) -> dict:
        return {
            "predictor": self.predictor,
            "outcome": self.outcome,
            "measures": {name: est.to_dict() for name, est in self.measures().items()},
            "bins": self.bins.to_dict(orient="records"),
            "n": self.n,
            "n_excluded": self.n_excluded,
            "n_boot_incomplete": self.n_boot_incomplete,
            "settings": self.settings,
        }

    def _repr_fields(self) -> dict:
        return {"predictor": self.predictor, "outcome": self.outcome, "bins": len(self.bins)}

    def summary(self) -> str:
        auc = f", AUC = {self.auc.estimate:.3f}" if self.auc is not None else ""
        return (
            f"PredictiveParity({self.predictor!r} for {self.outcome!r}, {len(self.bins)} bins): "
            f"iPPM = {self.ippm.estimate:.4f} [{self.ippm.ci_low:.4f}, {self.ippm.ci_high:.4f}], "
            f"SPM = {self.spm.estimate:.4f}{auc}"
        )

    def plot(self, ax=None):
        """Two panels: the PPM gap per bin with its CI, and calibration (E[Y] against mean ŷ) by group;
        on ``ax`` (a sequence of two axes) when given."""

        def make():
            from fairpath.report import new_figure, styled

            with styled():
                return new_figure(1, 2, figsize=(9.0, 3.8))

        fig, axes = panel_axes(ax, 2, make)
        plot_ppm_bins(self, axes[0])
        plot_calibration(self, axes[1])
        fig.tight_layout()
        return fig


def plot_ppm_bins(result: PredictiveParity, ax) -> None:
    from fairpath.report import legend_below

    bins = result.bins
    positions = np.arange(len(bins))
    centre, half = interval_bars(bins["ci_low"], bins["ci_high"])
    ax.bar(positions, bins["gap"], color="#829ab1", edgecolor="#243b53")
    ax.errorbar(positions, centre, yerr=half, fmt="none", ecolor="#102a43", capsize=3)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.axhline(result.ippm.estimate, color="#b42318", linestyle="--", label=f"iPPM = {result.ippm.estimate:.3f}")
    ax.set_xticks(positions, bins["bin"], rotation=45, ha="right", fontsize=9)
    ax.set_ylabel("PPM: E[Y | x1, bin] − E[Y | x0, bin]", fontsize=10)
    ax.set_title(f"Predictive parity per bin of {result.predictor}", fontsize=11)
    legend_below(ax, fontsize=10)


def plot_calibration(result: PredictiveParity, ax) -> None:
    from fairpath.report import legend_below

    bins = result.bins
    labels = result.settings["group_labels"]
    binary = result.settings.get("binary_y", False)
    for group, colour in (("x0", "#2f80ed"), ("x1", "#f2994a")):
        ax.plot(bins[f"mean_pred_{group}"], bins[f"mean_y_{group}"], marker="o", color=colour, label=labels[group])
        if binary:
            low, high = wilson_interval(bins[f"mean_y_{group}"].to_numpy(), bins[f"n_{group}"].to_numpy(), result.settings["level"])
            ax.fill_between(bins[f"mean_pred_{group}"], low, high, color=colour, alpha=0.18, linewidth=0)
    low = np.nanmin(bins[["mean_pred_x0", "mean_pred_x1", "mean_y_x0", "mean_y_x1"]].to_numpy())
    high = np.nanmax(bins[["mean_pred_x0", "mean_pred_x1", "mean_y_x0", "mean_y_x1"]].to_numpy())
    ax.plot([low, high], [low, high], color="grey", linestyle=":", linewidth=1, label="ŷ = E[Y]")
    ax.set_xlabel(f"mean {result.predictor} in bin", fontsize=10)
    ax.set_ylabel(f"mean {result.outcome} in bin", fontsize=10)
    ax.set_title("Calibration by group" + (f" ({result.settings['level']:.0%} bands)" if binary else ""), fontsize=11)
    legend_below(ax, fontsize=10, ncol=3)


def wilson_interval(share: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion ``share`` observed in ``n`` trials (coverage near nominal
    also for small n and shares near 0 or 1, unlike the Wald interval)."""
    z = z_value(level)
    n = np.asarray(n, dtype=float)
    centre = (share + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(share * (1 - share) / n + z**2 / (4 * n**2))
    return centre - half, centre + half


def _check_cells(bins: Bins, group: np.ndarray, sfm, predictor: str) -> np.ndarray:
    counts = np.bincount(bins.codes * 2 + group, minlength=2 * bins.n_bins).reshape(bins.n_bins, 2)
    for k, label in enumerate(bins.labels):
        for g, level in ((0, sfm.x0), (1, sfm.x1)):
            if counts[k, g] == 0:
                raise FairpathInputError(
                    f"bin {label} of predictor {predictor!r} has no rows with {sfm.x} = {level!r} "
                    f"({counts[k, 1 - g]} rows in the other group), so its PPM gap is undefined; "
                    "use fewer bins (n_bins)"
                )
    return counts


@validate_params({"data": Frame(), "predictor": ColumnName(), "n_bins": Integer(2), "n_boot": Draws(), "level": Probability(), "seed": Seed()})
def predictive_parity(
    data: pd.DataFrame,
    sfm,
    predictor: str,
    *,
    n_bins: int = 10,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> PredictiveParity:
    """Predictive parity of the column ``predictor`` for the outcome ``sfm.y`` between ``sfm.x1`` and ``sfm.x0``.

    Bootstrap (``n_boot`` row resamples, seeded) gives percentile CIs for every bin gap, the iPPM, the
    SPM and the AUC; the bins stay those of the whole sample.
    """
    prepared = _prepare(data, sfm, predictor)
    y, score, group = prepared.y, prepared.score, prepared.group
    bins = quantile_bins(score, n_bins)
    counts = _check_cells(bins, group, sfm, predictor)
    binary_y = bool(np.isin(y, (0.0, 1.0)).all()) and len(np.unique(y)) == 2
    n = len(y)
    share = counts.sum(axis=1) / n

    def statistics(weights: np.ndarray) -> np.ndarray:
        mean_y, total = _cell_means(bins.codes, group, y, weights, bins.n_bins)
        gaps = mean_y[:, 1] - mean_y[:, 0]
        bin_share = total.sum(axis=1) / total.sum()
        group_total = total.sum(axis=0)
        score_sums = np.bincount(group, weights=weights * score, minlength=2)
        spm = score_sums[1] / group_total[1] - score_sums[0] / group_total[0]
        present = ~np.isnan(gaps)
        weighted = np.sum(gaps[present] * bin_share[present]) / bin_share[present].sum()
        return np.concatenate([gaps, [np.nanmean(gaps), weighted, spm]])

    point = statistics(np.ones(n))
    rng = np.random.default_rng(seed)
    draws = np.empty((n_boot, len(point)))
    auc_draws = np.empty(n_boot)
    for b in range(n_boot):
        rows = rng.integers(0, n, n)
        draws[b] = statistics(np.bincount(rows, minlength=n).astype(float))
        auc_draws[b] = _auc_from_ranks(y[rows], score[rows]) if binary_y else np.nan
    n_incomplete = int(np.isnan(draws[:, : bins.n_bins]).any(axis=1).sum())
    if n_incomplete:
        warnings.warn(
            f"{n_incomplete} of {n_boot} bootstrap draws left some (bin, group) cell of {predictor!r} empty; "
            "their iPPM averages the remaining bins",
            stacklevel=3,  # the caller of predictive_parity, above its parameter check
        )

    def estimate(j: int) -> Estimate:
        column = draws[:, j]
        return Estimate.from_draws(point[j], column[~np.isnan(column)], level)

    gap_estimates = [estimate(k) for k in range(bins.n_bins)]
    mean_y, _ = _cell_means(bins.codes, group, y, np.ones(n), bins.n_bins)
    mean_pred, _ = _cell_means(bins.codes, group, score, np.ones(n), bins.n_bins)
    table = pd.DataFrame(
        {
            "bin": bins.labels,
            "lower": bins.lower,
            "upper": bins.upper,
            "share": share,
            "n_x0": counts[:, 0],
            "n_x1": counts[:, 1],
            "mean_y_x0": mean_y[:, 0],
            "mean_y_x1": mean_y[:, 1],
            "mean_pred_x0": mean_pred[:, 0],
            "mean_pred_x1": mean_pred[:, 1],
            "gap": [e.estimate for e in gap_estimates],
            "ci_low": [e.ci_low for e in gap_estimates],
            "ci_high": [e.ci_high for e in gap_estimates],
        }
    )
    auc = None
    if binary_y:
        from sklearn.metrics import roc_auc_score

        auc = Estimate.from_draws(roc_auc_score(y, score), auc_draws, level)
    settings = {
        "n_bins_requested": n_bins,
        "n_bins": bins.n_bins,
        "n_boot": n_boot,
        "level": level,
        "seed": seed,
        "binning": "two levels" if len(np.unique(score)) <= 2 else "right-closed quantile bins, ties merged",
        "group_labels": {"x0": f"{sfm.x} = {sfm.x0}", "x1": f"{sfm.x} = {sfm.x1}"},
        "binary_y": bool(binary_y),
    }
    return PredictiveParity(
        predictor=predictor,
        outcome=sfm.y,
        bins=table,
        ippm=estimate(bins.n_bins),
        ippm_weighted=estimate(bins.n_bins + 1),
        spm=estimate(bins.n_bins + 2),
        auc=auc,
        n=n,
        n_excluded=prepared.n_excluded,
        n_boot_incomplete=n_incomplete,
        settings=settings,
    )
