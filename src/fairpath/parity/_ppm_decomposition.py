"""The predictive parity decomposition of Theorem 1 (Plečko & Bareinboim, AAAI 2024).

On a standard fairness model with Z = ∅, the predictive parity measure of a bin b of Ŷ splits as

    PPM_b = E[Y | x1, ŷ∈b] − E[Y | x0, ŷ∈b]
          = (E[Y − Y_{x0} | x1, ŷ∈b])                       Term I, causal effect of X among x1
          + (E[Y_{x0} | x1, ŷ∈b] − E[Y | x0, ŷ∈b])           Term II, reverse-causal spurious part

(for x0 rows, Y_{x0} = Y by consistency). A calibrated predictor reaches PPM_b ≈ 0 because Term II
cancels the real causal effect in Term I. Y_{x0} is not observed for x1 rows; it is taken from the
caller (for example the truth of a synthetic model) or estimated by causal data adaptation.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import field

import numpy as np
import pandas as pd

from fairpath._sfm import check_binary_sfm
from fairpath._exceptions import FairpathInputError
from fairpath._validation import ColumnName, Draws, Frame, Integer, Optional, Options, Probability, Real, Seed, validate_params
from fairpath._results import ResultMixin, result_class, confint_frame, panel_axes, result_frame
from fairpath._stats import Estimate
from fairpath._vocabulary import LABELS
from fairpath.parity._ppm import quantile_bins

QUANTITIES = ("term1", "term2", "ppm")
INTEGRATED = {"term1": "iterm1", "term2": "iterm2", "ppm": "ippm"}
_EMPTY_BIN_RULES = ("raise", "drop")


@result_class
class PPMDecomposition(ResultMixin):
    """Per-bin and integrated Term I, Term II and PPM of one predictor, with bootstrap intervals.

    Attributes
    ----------
    per_bin : DataFrame
        One row per bin of Ŷ: ``bin`` (1-based), ``lower``, ``upper``, ``n_x0``, ``n_x1`` and, for each of
        term1, term2, ppm, the columns ``<q>``, ``<q>_se``, ``<q>_ci_low``, ``<q>_ci_high``.
    integrated : dict
        ``iterm1``, ``iterm2``, ``ippm`` as :class:`~fairpath._stats.Estimate` (unweighted means over the
        bins that hold both groups).
    incomplete_bins : tuple of int
        Bins without x0 or without x1 rows (only with ``empty_bins="drop"``); left out of the integrals.
    """

    per_bin: pd.DataFrame
    integrated: dict[str, Estimate]
    bin_estimates: dict[str, list[Estimate]] = field(repr=False)  # quantity -> the Estimate of every bin, with its draws
    predictor: str
    outcome: str
    x: str
    x0: object
    x1: object
    n_x0: int
    n_x1: int
    n_excluded: int
    incomplete_bins: tuple[int, ...]
    settings: dict

    @property
    def n(self) -> int:
        return self.n_x0 + self.n_x1

    def estimate(self, quantity: str, bin: int | None = None) -> Estimate:
        """Estimate of ``iterm1``/``iterm2``/``ippm``, or of ``term1``/``term2``/``ppm`` in ``bin`` (1-based)."""
        if bin is None:
            if quantity not in self.integrated:
                raise FairpathInputError(
                    f"unknown integrated quantity {quantity!r}; use one of {sorted(self.integrated)} "
                    f"(or pass bin=... for {list(QUANTITIES)})"
                )
            return self.integrated[quantity]
        if quantity not in QUANTITIES:
            raise FairpathInputError(f"unknown per-bin quantity {quantity!r}; use one of {list(QUANTITIES)}")
        rows = self.per_bin.loc[self.per_bin["bin"] == bin]
        if rows.empty:
            raise FairpathInputError(f"bin {bin!r} does not exist; bins are 1..{len(self.per_bin)}")
        return self.bin_estimates[quantity][rows.index[0]]

    @validate_params({"level": Probability()})
    def confint(self, level: float = 0.95) -> pd.DataFrame:
        """Every interval at ``level``, the percentile interval of the kept bootstrap draws (NaN without draws):
        the rows of ``to_frame()`` (subject, measure, estimate, ci_low, ci_high, level, bin)."""
        per_bin = [({"subject": self.predictor, "measure": quantity, "bin": b}, self.estimate(quantity, b))
                   for quantity in QUANTITIES for b in self.per_bin["bin"]]
        integrated = [({"subject": self.predictor, "measure": name, "bin": pd.NA}, est) for name, est in self.integrated.items()]
        frame = confint_frame(per_bin + integrated, level)
        frame["bin"] = frame["bin"].astype("Int64")
        return frame

    @validate_params({"null": Real()})
    def p_value(self, quantity: str, bin: int | None = None, *, null: float = 0.0) -> float:
        """Two-sided p-value of H0: ``quantity`` (integrated, or of ``bin``) equals ``null`` (normal approximation
        with the bootstrap SE)."""
        return self.estimate(quantity, bin).p_value(null)

    def to_frame(self) -> pd.DataFrame:
        """Long table: subject (the predictor), measure (term1, term2, ppm per bin; iterm1, iterm2, ippm with
        ``bin`` empty), estimate, se, ci_low, ci_high, level, then bin, label, lower, upper, n_x0, n_x1."""
        shared = ["bin", "label", "lower", "upper", "n_x0", "n_x1"]
        rows = []
        for quantity in QUANTITIES:
            part = self.per_bin[shared].assign(subject=self.predictor, measure=quantity, estimate=self.per_bin[quantity],
                                                level=self.settings["level"])
            for column in ("se", "ci_low", "ci_high"):
                part[column] = self.per_bin[f"{quantity}_{column}"]
            rows.append(part)
        for name, est in self.integrated.items():
            rows.append(pd.DataFrame([{"subject": self.predictor, "measure": name, **est.to_dict(), "bin": pd.NA,
                                       "n_x0": self.n_x0, "n_x1": self.n_x1}]))
        frame = result_frame(pd.concat(rows, ignore_index=True))
        frame["bin"] = frame["bin"].astype("Int64")
        return frame[[*frame.columns[:7], *shared]]

    def to_dict(self) -> dict:
        return {
            "predictor": self.predictor,
            "outcome": self.outcome,
            "x": self.x,
            "x0": self.x0,
            "x1": self.x1,
            "n": self.n,
            "n_x0": self.n_x0,
            "n_x1": self.n_x1,
            "n_excluded": self.n_excluded,
            "incomplete_bins": list(self.incomplete_bins),
            "integrated": {name: est.to_dict() for name, est in self.integrated.items()},
            "per_bin": self.per_bin.to_dict(orient="records"),
            "settings": self.settings,
        }

    def _repr_fields(self) -> dict:
        return {"predictor": self.predictor, "outcome": self.outcome, "n": self.n, "bins": len(self.per_bin)}

    def summary(self) -> str:
        lines = [
            f"PPMDecomposition(predictor={self.predictor!r}, outcome={self.outcome!r}, "
            f"{self.x}: {self.x1!r} vs {self.x0!r}, n={self.n}, bins={len(self.per_bin)})"
        ]
        for name, est in self.integrated.items():
            lines.append(f"  {LABELS[name]:<8} {est}")
        if self.incomplete_bins:
            lines.append(f"  bins without both groups, left out: {list(self.incomplete_bins)}")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Term I, Term II and PPM per bin of Ŷ with their bootstrap intervals (on ``ax`` when given); returns the Figure."""
        from fairpath.report import legend_below, new_figure

        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(7, 4)))
        table = self.per_bin
        for quantity, color in zip(QUANTITIES, ("tab:blue", "tab:orange", "tab:green")):
            label = f"{LABELS[quantity]} (integrated {self.integrated[INTEGRATED[quantity]].estimate:.3f})"
            ax.plot(table["bin"], table[quantity], marker="o", color=color, label=label)
            if np.isfinite(table[f"{quantity}_ci_low"]).any():
                ax.fill_between(table["bin"], table[f"{quantity}_ci_low"], table[f"{quantity}_ci_high"],
                                color=color, alpha=0.2)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xticks(table["bin"])
        ax.set_xlabel(f"quantile bin of {self.predictor}")
        ax.set_ylabel("value")
        ax.set_title(f"Predictive parity decomposition ({self.x}: {self.x1} vs {self.x0})")
        legend_below(ax, fontsize="small", ncol=2)
        return fig


@validate_params({"data": Frame(), "predictor": ColumnName(), "n_bins": Integer(2), "n_boot": Draws(allow_zero=True), "level": Probability(),
                  "seed": Optional(Seed()), "empty_bins": Options(_EMPTY_BIN_RULES)})
def ppm_decomposition(
    data: pd.DataFrame,
    sfm,
    predictor: str,
    y_x0: str | Sequence[float] | np.ndarray | None = None,
    *,
    n_bins: int = 20,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int | None = 0,
    empty_bins: str = "raise",
    adaptation: dict | None = None,
) -> PPMDecomposition:
    """Decompose the predictive parity measure of ``predictor`` into Term I and Term II (Theorem 1).

    Parameters
    ----------
    data : DataFrame holding the SFM's X and Y and the predictor column.
    sfm : the standard fairness model; Theorem 1 needs ``sfm.z`` empty.
    predictor : column with the predictions Ŷ; bins are its quantiles over the whole sample.
    y_x0 : the counterfactual outcome Y_{x0} per row: a column name of ``data`` or an array aligned with
        its rows. Only x1 rows are used (for x0 rows Y_{x0} = Y). ``None`` estimates it by causal data
        adaptation (:class:`fairpath.adaptation.FairAdapt` on the SFM graph, no resolving variables).
    n_bins : number of quantile bins (``fairpath.parity._ppm.quantile_bins``: right-closed, computed once
        on the whole sample; ties merge bins, so fewer may result; a binary predictor uses its two levels).
    n_boot : bootstrap draws, resampling rows within each (bin, group) cell; 0 skips the intervals. The
        intervals take Y_{x0} as given: with adapted values they omit the adaptation's own error (the
        Theorem 1 study measures that by repeating the whole procedure).
    level : confidence level of the percentile intervals.
    seed : seed of the bootstrap and of the adaptation.
    empty_bins : ``"raise"`` (default) when a bin lacks x0 or x1 rows, or ``"drop"`` to leave such bins
        out of the integrated measures with a warning (their per-bin values become NaN).
    adaptation : keyword arguments of :class:`fairpath.adaptation.FairAdapt` (for example ``engine``) when
        ``y_x0`` is None.
    """
    check_binary_sfm(sfm, "ppm_decomposition")
    keep, is_x1 = _select_rows(data, sfm, predictor)
    frame = data.loc[keep]
    outcome = frame[sfm.y].to_numpy(dtype=float)
    counterfactual = _counterfactual_x0(data, keep, sfm, y_x0, is_x1, seed, adaptation)
    bins = quantile_bins(frame[predictor].to_numpy(dtype=float), n_bins)
    codes, n_cells = bins.codes, bins.n_bins

    cell_means, counts = _cell_means(outcome, counterfactual, codes, is_x1, n_cells)
    incomplete = np.flatnonzero((counts[0] == 0) | (counts[1] == 0))
    if len(incomplete):
        message = (
            f"{len(incomplete)} of {n_cells} quantile bins of {predictor!r} hold no rows of "
            f"{sfm.x}={sfm.x0!r} or of {sfm.x}={sfm.x1!r} (bins {(incomplete + 1).tolist()}; "
            f"counts x0 {counts[0][incomplete].tolist()}, x1 {counts[1][incomplete].tolist()})"
        )
        if empty_bins == "raise":
            raise FairpathInputError(message + "; use fewer bins, or empty_bins='drop' to leave them out")
        warnings.warn(message + "; they are left out of the integrated measures", stacklevel=3)  # the caller, above the parameter check

    point = _terms(*cell_means)
    draws = _bootstrap_terms(outcome, counterfactual, codes, is_x1, n_cells, n_boot, seed)
    complete = np.setdiff1d(np.arange(n_cells), incomplete)
    per_bin, bin_estimates = _per_bin(point, draws, bins, counts, level)
    integrated = {
        INTEGRATED[q]: _estimate(point[q][complete].mean(),
                                 None if draws is None else draws[q][:, complete].mean(axis=1), level)
        for q in QUANTITIES
    }
    settings = {"n_bins": n_bins, "n_bins_used": n_cells, "n_boot": n_boot, "level": level, "seed": seed,
                "empty_bins": empty_bins,
                "y_x0": y_x0 if isinstance(y_x0, str) else ("adaptation" if y_x0 is None else "array"),
                "bootstrap": "rows resampled within each (bin, group) cell, Y_x0 taken as given; percentile intervals"}
    return PPMDecomposition(per_bin=per_bin, integrated=integrated, bin_estimates=bin_estimates, predictor=predictor, outcome=sfm.y,
                            x=sfm.x, x0=sfm.x0, x1=sfm.x1, n_x0=int((~is_x1).sum()), n_x1=int(is_x1.sum()),
                            n_excluded=int((~keep).sum()), incomplete_bins=tuple(int(b) for b in incomplete + 1), settings=settings)


def _select_rows(data, sfm, predictor) -> tuple[np.ndarray, np.ndarray]:
    """Validate X, Y and the predictor with the causal core's checks; return the positional mask of the
    rows with X in {x0, x1} (the core warns about the others) and which of the kept rows are x1."""
    from fairpath.causal import SFM, prepare_data

    if list(sfm.z):
        raise FairpathInputError(
            f"the predictive parity decomposition (Theorem 1) needs an SFM without confounders Z; this one has "
            f"Z = {list(sfm.z)}: drop Z from the SFM if X has no common cause with the other variables"
        )
    reduced = SFM(x=sfm.x, x0=sfm.x0, x1=sfm.x1, y=sfm.y)
    prepared = prepare_data(data, reduced, [sfm.y] if predictor == sfm.y else [sfm.y, predictor])
    keep = data[sfm.x].isin([sfm.x0, sfm.x1]).to_numpy()
    return keep, prepared.x.astype(bool)


def _counterfactual_x0(data, keep, sfm, y_x0, is_x1, seed, adaptation) -> np.ndarray:
    """Y_{x0} per kept row: given by the caller, or estimated by adaptation; for x0 rows it is Y."""
    frame = data.loc[keep]
    if y_x0 is None:
        values = _adapted_outcome(frame, sfm, seed, adaptation or {})
    elif isinstance(y_x0, str):
        if y_x0 not in data.columns:
            raise FairpathInputError(f"y_x0 column {y_x0!r} not in the data; available: {list(data.columns)}")
        if not pd.api.types.is_numeric_dtype(data[y_x0]):
            raise FairpathInputError(f"y_x0 column {y_x0!r} must be numeric, got dtype {data[y_x0].dtype}")
        values = frame[y_x0].to_numpy(dtype=float)
    else:
        array = np.asarray(y_x0, dtype=float)
        if array.ndim != 1 or len(array) != len(data):
            raise FairpathInputError(
                f"y_x0 must hold one value per row of the data ({len(data)}), got shape {array.shape}"
            )
        values = array[keep]
    values = np.where(is_x1, values, frame[sfm.y].to_numpy(dtype=float))
    n_missing = int(np.isnan(values[is_x1]).sum())
    if n_missing:
        raise FairpathInputError(
            f"y_x0 is missing for {n_missing} row(s) with {sfm.x} = {sfm.x1!r}; Term I needs Y_x0 for every x1 row"
        )
    return values


def _adapted_outcome(frame, sfm, seed, adaptation) -> np.ndarray:
    """Y_{x0} by causal data adaptation on the SFM graph with no resolving variables: the adapted
    outcome of an x1 row is its fair twin's outcome."""
    from fairpath.adaptation import FairAdapt, graph_from_sfm  # the adaptation subpackage is only needed here

    adapter = FairAdapt(graph_from_sfm(sfm), x=sfm.x, baseline=sfm.x0, y=sfm.y, resolving=(), random_state=seed, **adaptation)
    adapter.fit(frame[[sfm.x, *sfm.w, sfm.y]])
    return adapter.adapted_train_[sfm.y].to_numpy(dtype=float)


def _cell_means(outcome, counterfactual, codes, is_x1, n_cells):
    """Means of Y among x0, and of Y and Y_{x0} among x1, per bin; plus the cell counts."""
    counts = np.stack([np.bincount(codes[~is_x1], minlength=n_cells), np.bincount(codes[is_x1], minlength=n_cells)])
    with np.errstate(invalid="ignore", divide="ignore"):
        y0 = np.bincount(codes[~is_x1], weights=outcome[~is_x1], minlength=n_cells) / counts[0]
        y1 = np.bincount(codes[is_x1], weights=outcome[is_x1], minlength=n_cells) / counts[1]
        cf1 = np.bincount(codes[is_x1], weights=counterfactual[is_x1], minlength=n_cells) / counts[1]
    return (y0, y1, cf1), counts


def _terms(y0, y1, cf1) -> dict[str, np.ndarray]:
    """Term I, Term II and PPM from the cell means; works on arrays of draws as well."""
    return {"term1": y1 - cf1, "term2": cf1 - y0, "ppm": y1 - y0}


def _bootstrap_terms(outcome, counterfactual, codes, is_x1, n_cells, n_boot, seed):
    """Draws (n_boot x n_cells) of the three terms, resampling rows within each (bin, group) cell."""
    if n_boot == 0:
        return None
    rng = np.random.default_rng(seed)
    y0, y1, cf1 = (np.full((n_boot, n_cells), np.nan) for _ in range(3))
    for b in range(n_cells):
        in_bin = codes == b
        for rows, targets in (((~is_x1) & in_bin, (y0,)), (is_x1 & in_bin, (y1, cf1))):
            size = int(rows.sum())
            if size == 0:
                continue
            picks = rng.integers(0, size, size=(n_boot, size))
            for target, values in zip(targets, (outcome[rows], counterfactual[rows])):
                target[:, b] = values[picks].mean(axis=1)
    return _terms(y0, y1, cf1)


def _estimate(point: float, draws: np.ndarray | None, level: float) -> Estimate:
    if draws is None or not np.isfinite(point):  # no interval at any level: a NaN SE
        return Estimate.from_se(float(point), float("nan"), level)
    return Estimate.from_draws(point, draws, level)


def _per_bin(point, draws, bins, counts, level) -> tuple[pd.DataFrame, dict[str, list[Estimate]]]:
    """The per-bin table and, per quantity, the Estimate of every bin (the table's numbers, with their draws)."""
    n_cells = bins.n_bins
    table = pd.DataFrame({"bin": np.arange(1, n_cells + 1), "label": bins.labels, "lower": bins.lower,
                          "upper": bins.upper, "n_x0": counts[0], "n_x1": counts[1]})
    estimates = {}
    for quantity in QUANTITIES:
        estimates[quantity] = [_estimate(point[quantity][b], None if draws is None else draws[quantity][:, b], level)
                               for b in range(n_cells)]
        table[quantity] = [e.estimate for e in estimates[quantity]]
        table[f"{quantity}_se"] = [e.se for e in estimates[quantity]]
        table[f"{quantity}_ci_low"] = [e.ci_low for e in estimates[quantity]]
        table[f"{quantity}_ci_high"] = [e.ci_high for e in estimates[quantity]]
    return table, estimates
