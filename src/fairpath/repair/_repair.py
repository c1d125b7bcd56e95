"""``repair``: fair twins and a fair predictor for a BN set, with a verdict on held-out rows.

The fair predictor (:class:`FairPredictor`) is fitted on every row: its adapted data, fair twins and
out-of-fold scores are the outputs. To judge it honestly, the same recipe is fitted again on a share
``1 − holdout`` of the rows (split stratified by X, with every category in the fitting share: ``_split``)
and scored on the rest, as is the unconstrained predictor (the same learner on X and the covariates it
uses) and, when asked, the constrained-learning predictor. On the held-out rows:

- verdict: the Business Necessity Cookbook (:func:`fairpath.parity.audit`) of the fair predictor on
  the held-out rows' fair twins, where its pathways run (as in the paper and :meth:`FairPredictor.audit`),
  and of the other predictors on the observed rows. The outcome's effects differ between the two, so
  each is labelled with its data. Beside it, the same predictor's verdict in sample (the fair twins of
  the rows it was fitted on, with their out-of-fold scores), so the report shows whether fairness
  carried over to rows the predictor never saw;
- cost: AUC and log loss (R² and RMSE for a continuous outcome) of every predictor for the observed outcome,
  with percentile intervals from bootstrap draws of the held-out rows;
- predictive parity: every predictor's iPPM for the observed outcome, judged with Theorem 1
  (:mod:`fairpath.parity._verdict`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.model_selection import train_test_split

from fairpath._io import save_figure, write_csv
from fairpath._results import ResultMixin, result_class, interval_bars, panel_axes, result_frame
from fairpath._validation import (
    Boolean, Draws, Frame, Integer, Optional, Options, Probability, Real, Seed, check_columns_present, check_fit_group_sizes, check_frame,
    is_numeric_column, validate_params,
)
from fairpath._vocabulary import RESOLVING_ROLE, Engine, Reference, parse_bn
from fairpath.adaptation import CausalGraph, graph_from_sfm
from fairpath._sfm import SFM, check_binary_sfm
from fairpath._stats import Estimate
from fairpath._exceptions import FairpathInputError
from fairpath.parity import AuditResult, audit, quantile_bins
from fairpath.repair._constrained import ConstrainedLearner
from fairpath.repair._predictor import TWIN_LABEL, FairPredictor, default_forest, feature_encoder

FAIR, UNCONSTRAINED, CONSTRAINED = "fair", "unconstrained", "constrained"
# Accuracy measures (key, label, whether larger is better) of a 0/1 outcome and of a continuous one.
_ACCURACY = {True: (("auc", "AUC"), ("log_loss", "log loss")), False: (("r2", "R²"), ("rmse", "RMSE"))}
# Bootstrap draws of the held-out rows behind each accuracy's interval: on 7,500 rows its limits move by about
# 0.001 AUC between seeds.
ACCURACY_DRAWS = 200
HELD_OUT_TWINS = f"held-out rows, {TWIN_LABEL}"
HELD_OUT_OBSERVED = "held-out rows, observed"
IN_SAMPLE_TWINS = f"fitting rows, {TWIN_LABEL}"


@result_class
class RepairResult(ResultMixin):
    """The fair predictor for a BN set, its outputs, and its verdict, cost and predictive parity on held-out rows.

    Attributes
    ----------
    predictor : the :class:`FairPredictor` fitted on every row; ``constrained`` the
        :class:`ConstrainedLearner` fitted on every row, or None.
    bn : the BN set the predictor is judged under.
    tables : dict file name -> DataFrame: adapted_train.csv, fair_twins.csv, scores.csv (out-of-fold
        scores of every row), and adapted_test.csv, test_scores.csv, constrained_path.csv when computed.
    held_out : the held-out rows' X, Y and every predictor's score (from the fits on the other rows).
    accuracy_table : one row per predictor and accuracy measure on the held-out rows.
    audit : the fair predictor's :class:`~fairpath.parity.AuditResult` on the held-out rows' fair twins.
    in_sample_audit : the same predictor's audit on the fair twins of the rows it was fitted on (their
        out-of-fold scores): beside ``audit``, whether its fairness carried over to rows it never saw.
    baseline_audit : the unconstrained (and constrained) predictors' audit on the observed held-out rows.
    settings : every setting of the call, with its provenance.
    """

    sfm: SFM
    bn: list[str]
    predictor: FairPredictor
    constrained: ConstrainedLearner | None
    tables: dict[str, pd.DataFrame]
    held_out: pd.DataFrame
    accuracy_table: pd.DataFrame
    audit: AuditResult
    in_sample_audit: AuditResult
    baseline_audit: AuditResult
    settings: dict

    @property
    def binary(self) -> bool:
        return self.audit.percent

    @property
    def status(self) -> str:
        """SUCCESS or FAIL: the fair predictor's Cookbook verdict on the held-out rows."""
        return self.audit.status[FAIR]

    @property
    def parity(self) -> dict:
        """Every predictor's :class:`~fairpath.parity.PredictiveParity` on the held-out rows."""
        return {**self.audit.for_contrast().parity, **self.baseline_audit.for_contrast().parity}

    def accuracy(self, predictor: str, measure: str) -> float:
        rows = self.accuracy_table[(self.accuracy_table["predictor"] == predictor) & (self.accuracy_table["measure"] == measure)]
        return float(rows["estimate"].iloc[0])

    @property
    def accuracy_measures(self) -> tuple[tuple[str, str], ...]:
        """(key, label) of each accuracy measure: AUC and log loss of a 0/1 outcome, R² and RMSE of a continuous one."""
        return _ACCURACY[self.binary]

    def verdict_lines(self) -> list[str]:
        """What was found, first: the fair predictor's verdict with the p of its claim, what it costs in
        accuracy, its predictive parity beside the unconstrained predictor's and what the BN set implies
        for it (Theorem 1), then the other predictors' verdicts."""
        n = len(self.held_out)
        lines = [f"Repaired predictor ({FAIR}: a learner on the fair twins), judged on {n:,} held-out rows: {self.audit.verdict_line(FAIR)}",
                 f"In sample, on the fair twins of the {self.settings['n'] - n:,} rows it was fitted on (out-of-fold scores): "
                 f"{self.in_sample_audit.verdict_line(FAIR)}", self.carry_over_sentence(),
                 self.cost_sentence(), self.audit.for_contrast().parity_line(FAIR, original=self.parity[UNCONSTRAINED])]
        if self.constrained is not None:
            lines.append(self.baseline_audit.for_contrast().parity_line(CONSTRAINED, original=self.parity[UNCONSTRAINED]))
        lines.append(self.audit.for_contrast().bn_parity_line())
        lines += [f"For comparison, on the observed held-out rows: {self.baseline_audit.verdict_line(p)}" for p in self.baseline_audit.predictors]
        return lines

    def carry_over_sentence(self) -> str:
        """Whether the verdict on the rows the predictor was fitted on held on the rows it never saw."""
        held, fitted = self.status, self.in_sample_audit.status[FAIR]
        if held == fitted:
            return f"The verdict carried over: {held} in sample and on the held-out rows."
        return f"The verdict did not carry over: {fitted} in sample, {held} on the held-out rows."

    def cost_sentence(self) -> str:
        """The change in accuracy of the repaired predictor(s) against the unconstrained one, in words."""
        parts = []
        for predictor in [FAIR, *([CONSTRAINED] if self.constrained is not None else [])]:
            changes = []
            for measure, label in _ACCURACY[self.binary]:
                before, after = self.accuracy(UNCONSTRAINED, measure), self.accuracy(predictor, measure)
                verb = "falls" if after < before else "rises" if after > before else "stays"
                changes.append(f"{label} {verb} from {before:.3f} to {after:.3f} ({after - before:+.3f})".replace("(-", "(−"))
            parts.append(f"{predictor}: {', '.join(changes)}")
        return (f"Cost against the {UNCONSTRAINED} predictor (the same learner on X and the covariates), on the held-out rows: "
                + "; ".join(parts) + ".")

    def to_frame(self) -> pd.DataFrame:
        """Accuracy on the held-out rows (bootstrap intervals), then both audits' estimates and Cookbook tests; the
        column ``data`` names the rows each was measured on, and the outcome's subject says it too."""
        frames = [self.accuracy_table.rename(columns={"predictor": "subject"}).assign(data=HELD_OUT_OBSERVED)]
        for result, data in ((self.audit, HELD_OUT_TWINS), (self.in_sample_audit, IN_SAMPLE_TWINS), (self.baseline_audit, HELD_OUT_OBSERVED)):
            frame = pd.concat([result.to_frame(), result.cookbook.to_frame()], ignore_index=True)
            frame["subject"] = frame["subject"].replace({self.sfm.y: f"{self.sfm.y} ({data})"})
            frames.append(frame.assign(data=data))
        return result_frame(pd.concat(frames, ignore_index=True))

    def to_dict(self) -> dict:
        adapter = self.predictor.adapter_
        found = {
            "verdict": self.verdict_lines(),
            "status": self.status,
            "sfm": self.sfm.to_dict(),
            "bn": list(self.bn),
            "graph": adapter.graph.to_dict(),
            "resolving": adapter.resolving_,
            "adapted": adapter.order_,
            "tv_outcome": _tv(adapter.train_, self.sfm),
            "tv_adapted_outcome": _tv(adapter.adapted_train_, self.sfm),
            "held_out": {"n": len(self.held_out), "holdout": self.settings["holdout"]},
            "accuracy": self.accuracy_table.to_dict(orient="records"),
            "audit": self.audit.to_dict(),
            "in_sample_audit": self.in_sample_audit.to_dict(),
            "baseline_audit": self.baseline_audit.to_dict(),
            "settings": self.settings,
        }
        if self.constrained is not None:
            found["constrained"] = self.constrained.path_result().to_dict()
        return found

    def _repr_fields(self) -> dict:
        return {"bn": list(self.bn), "held_out": len(self.held_out), "status": self.status}

    def summary(self) -> str:
        adapter = self.predictor.adapter_
        lines = [*self.verdict_lines(), f"RepairResult for {self.sfm}, BN = {list(self.bn)}",
                 f"adapted {adapter.order_} (resolving: {adapter.resolving_ or 'none'}); TV of {self.sfm.y}: "
                 f"{_tv(adapter.train_, self.sfm):.4f} -> {_tv(adapter.adapted_train_, self.sfm):.4f} after adaptation (all rows)"]
        for row in self.accuracy_table.itertuples():
            lines.append(f"  {row.predictor:<14} {row.measure:<9} {row.estimate:.4f} [{row.level:.0%} CI {row.ci_low:.4f}, {row.ci_high:.4f}] (held-out rows)")
        lines += [f"Held-out rows, {TWIN_LABEL}:", self.audit.cookbook.summary(), f"Fitting rows, {TWIN_LABEL}:",
                  self.in_sample_audit.cookbook.summary(), "Held-out rows, observed:", self.baseline_audit.cookbook.summary()]
        if self.constrained is not None:
            lines.append(self.constrained.path_result().summary())
        notes = dict.fromkeys((*self.audit.notes, *self.in_sample_audit.notes, *self.baseline_audit.notes))
        lines += [f"note: {note}" for note in notes]
        return "\n".join(lines)

    def plot(self, ax=None):
        """Every predictor on the held-out rows, a point with its interval: iPPM (left) and accuracy, AUC or R²
        (right, on an axis zoomed to the intervals: bars from 0 would hide differences of a hundredth); at most
        five ticks a panel, so their labels never run together. On ``ax`` (a sequence of two axes) when given."""
        from matplotlib.ticker import MaxNLocator

        from fairpath.report import SERIES_COLOURS, subplots

        fig, (left, right) = panel_axes(ax, 2, lambda: subplots(1, 2, width=9.0, height=3.4))
        names = list(self.parity)
        positions = np.arange(len(names))[::-1]
        measure, label = self.accuracy_measures[0]
        accuracy = self.accuracy_table[self.accuracy_table["measure"] == measure].set_index("predictor")
        for pos, name, colour in zip(positions, names, SERIES_COLOURS):
            ippm = self.parity[name].ippm
            _point_with_interval(left, pos, ippm.estimate, ippm.ci_low, ippm.ci_high, colour)
            _point_with_interval(right, pos, *accuracy.loc[name, ["estimate", "ci_low", "ci_high"]], colour)
        left.axvline(0, color="black", linewidth=0.8)
        for panel in (left, right):
            panel.set_yticks(positions, names)
            panel.set_ylim(-0.5, len(names) - 0.5)
            panel.xaxis.set_major_locator(MaxNLocator(nbins=4))
        right.tick_params(axis="y", labelleft=False)  # the rows of the left panel
        left.set_xlabel(f"iPPM (outcome units), {self.parity[FAIR].ippm.level:.0%} CI\n0: equally calibrated")
        left.set_title("Predictive parity (held-out rows)")
        right.set_xlabel(f"{label}, {accuracy['level'].iloc[0]:.0%} CI (bootstrap)\nhigher is better")
        right.set_title(f"Accuracy (held-out rows): {label}")
        fig.tight_layout()
        return fig

    def _save_files(self, out: Path) -> dict[str, Path]:
        """The tables (CSV), held_out.csv and constrained_path.png when computed."""
        from fairpath.report import styled

        paths = {name: write_csv(frame, out / name) for name, frame in self.tables.items()}
        paths["held_out"] = write_csv(self.held_out, out / "held_out.csv")
        if self.constrained is not None:
            with styled():
                paths["constrained_path"] = save_figure(self.constrained.path_result().plot(), out / "constrained_path.png", bbox_inches="tight")
        return paths

    def _write_report(self, path: Path) -> Path:
        from fairpath.repair._report import write_repair_report

        return write_repair_report(self, path)

def _point_with_interval(panel, position: float, estimate: float, low: float, high: float, colour: str) -> None:
    centre, half = interval_bars(low, high)
    panel.errorbar(centre, position, xerr=half, fmt="none", ecolor=colour, capsize=4)
    panel.plot(estimate, position, "o", color=colour)


def _tv(frame: pd.DataFrame, sfm) -> float:
    group = frame[sfm.x] == sfm.x1
    return float(frame.loc[group, sfm.y].mean() - frame.loc[~group, sfm.y].mean())


def _constrained_scores(model: ConstrainedLearner, data: pd.DataFrame) -> np.ndarray:
    """Probabilities of a binary outcome, predicted values of a continuous one."""
    return model.predict_proba(data)[:, 1] if hasattr(model, "classes_") else model.predict(data)


def bn_of_resolving(sfm, resolving) -> list[str]:
    """The BN set that resolving columns keep: each pathway whose role columns (Z for SE, W for IE) all resolve."""
    resolving = set(resolving)
    return [p for p, role in RESOLVING_ROLE.items() if getattr(sfm, role) and set(getattr(sfm, role)) <= resolving]


def _accuracy_values(y: np.ndarray, scores: np.ndarray, binary: bool) -> dict[str, float]:
    """AUC (from the scores' ranks, as the Mann–Whitney statistic) and log loss of a 0/1 outcome, R² and RMSE of
    a continuous one: scikit-learn's values, in plain numpy, as the bootstrap computes them hundreds of times (a
    scikit-learn metric's input checks took 20 ms a call)."""
    if binary:
        positive = y == 1
        n_positive, n_negative = int(positive.sum()), int((~positive).sum())
        auc = (rankdata(scores)[positive].sum() - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)
        probability = np.clip(scores, 1e-15, 1 - 1e-15)
        return {"auc": float(auc), "log_loss": float(-np.mean(np.where(positive, np.log(probability), np.log(1 - probability))))}
    squared = (y - scores) ** 2
    return {"r2": float(1 - squared.sum() / ((y - y.mean()) ** 2).sum()), "rmse": float(np.sqrt(squared.mean()))}


def _accuracy_rows(name: str, y: np.ndarray, scores: np.ndarray, binary: bool, *, level: float, seed: int) -> list[dict]:
    """Every accuracy measure of ``scores`` for ``y`` with its standard error and percentile interval at ``level``
    from ``ACCURACY_DRAWS`` bootstrap draws of the rows (seeded by ``seed``, so every predictor of one call gets the
    same draws; a 0/1 outcome's draws keep each class's count, so AUC is defined in each)."""
    rng = np.random.default_rng(seed)
    strata = [np.flatnonzero(y == value) for value in np.unique(y)] if binary else [np.arange(len(y))]
    draws = []
    for _ in range(ACCURACY_DRAWS):
        rows = np.concatenate([rng.choice(stratum, len(stratum)) for stratum in strata])
        draws.append(_accuracy_values(y[rows], scores[rows], binary))
    return [{"predictor": name, "measure": measure,
             **Estimate.from_draws(value, [draw[measure] for draw in draws], level).to_dict()}
            for measure, value in _accuracy_values(y, scores, binary).items()]


def _split(data: pd.DataFrame, sfm, holdout: float, n_folds: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fitting and held-out rows of the verdict; each part must allow the fits it serves.

    The rows are split by ``train_test_split`` stratified by X (a share ``holdout`` held out, seeded by ``seed``);
    then every category of a categorical Z or W column whose rows all fell in the held-out part (a category of
    one row, say) is brought into the fitting part (:func:`_fit_every_category`). So the fitted adaptation and
    learners know every category of the data, and the held-out rows are judged on categories the predictors
    were fitted on, as a new row of a known category would be. The number of rows held out, and of each level
    of X among them, stay as split (but for a row that finds no fitting row to swap with, which then leaves the
    held-out part); where every category already lies in the fitting part, the split is the plain stratified
    one. The held-out part holds somewhat fewer rows of rare categories than a random share would: a category
    of one row is always fitted on, never judged.
    """
    fitting, held = train_test_split(np.arange(len(data)), test_size=holdout, stratify=data[sfm.x], random_state=seed)
    categorical = [c for c in (*sfm.z, *sfm.w) if not is_numeric_column(data[c])]
    fitting, held = _fit_every_category(data, sfm.x, categorical, fitting, held, seed)
    fitting, held = data.iloc[fitting], data.iloc[held]
    for part, rows in (("fitting", fitting), ("held-out", held)):
        counts = {level: int((rows[sfm.x] == level).sum()) for level in (sfm.x0, sfm.x1)}
        check_fit_group_sizes(counts, sfm.x, n_folds, purpose=f"in the {part} part of the verdict (holdout={holdout})")
    return fitting, held


def _fit_every_category(data: pd.DataFrame, x: str, columns: list[str], fitting: np.ndarray, held: np.ndarray,
                        seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the fitting and held-out rows, changed so that every category of ``columns`` has a fitting row.

    For each category with held-out rows only (columns in order, categories in order of appearance), one of its
    held-out rows, drawn with ``seed``, swaps places with a fitting row of the same level of X whose every
    category keeps another fitting row (drawn too); where there is no such row, the held-out row moves alone.
    """
    rng = np.random.default_rng(seed)
    fitting, held = fitting.copy(), held.copy()
    codes = {column: pd.factorize(data[column])[0] for column in columns}
    in_fitting = np.zeros(len(data), dtype=bool)
    in_fitting[fitting] = True
    counts = {column: np.bincount(codes[column][fitting], minlength=codes[column].max() + 1) for column in columns}
    group = data[x].to_numpy()

    def move(row: int, step: int) -> None:
        in_fitting[row] = step > 0
        for column in columns:
            counts[column][codes[column][row]] += step

    for column in columns:
        for category in np.flatnonzero(counts[column] == 0):
            if counts[column][category]:  # brought in with an earlier category's row
                continue
            arriving = rng.choice(np.flatnonzero((codes[column] == category) & ~in_fitting))
            candidates = np.flatnonzero(in_fitting & (group == group[arriving]))
            move(arriving, +1)
            spare = np.all([counts[c][codes[c][candidates]] >= 2 for c in columns], axis=0)
            if spare.any():
                leaving = rng.choice(candidates[spare])
                move(leaving, -1)
                held[held == arriving], fitting[fitting == leaving] = leaving, arriving
            else:
                held, fitting = held[held != arriving], np.append(fitting, arriving)
    return fitting, held


def _complete_bins(held_out: pd.DataFrame, sfm, names: list[str], n_bins: int) -> int:
    """The most quantile bins, at most ``n_bins``, in which every predictor's bins all hold both groups: a
    score that separates the groups (the unconstrained one uses X) leaves a bin of one group, whose PPM
    gap is undefined, so the bins are reduced one at a time for all predictors alike."""
    group = (held_out[sfm.x] == sfm.x1).to_numpy(dtype=np.intp)
    for bins in range(n_bins, 1, -1):
        complete = True
        for name in names:
            codes = quantile_bins(held_out[name].to_numpy(), bins).codes
            cells = np.bincount(codes * 2 + group, minlength=2 * (codes.max() + 1)).reshape(-1, 2)
            complete = complete and bool((cells > 0).all())
        if complete:
            return bins
    raise FairpathInputError(f"the held-out scores of {names} separate the groups of {sfm.x!r} so well that even 2 bins "
                             "hold a bin of one group only: predictive parity is undefined there; use more data or a larger holdout")


def _unconstrained_scores(fitting: pd.DataFrame, held: pd.DataFrame, sfm, features: list[str], learner, binary: bool, seed: int) -> np.ndarray:
    """The same learner as the fair predictor's on X and the covariates it uses, fitted on ``fitting``."""
    columns = [sfm.x, *features]
    encoder = feature_encoder(columns).fit(fitting)
    model = clone(learner) if learner is not None else default_forest(binary, seed)
    model.fit(encoder.transform(fitting), fitting[sfm.y].to_numpy())
    features_held = encoder.transform(held)
    return model.predict_proba(features_held)[:, 1] if binary and is_classifier(model) else model.predict(features_held)


def _outputs(data: pd.DataFrame, sfm, predictor: FairPredictor, test: pd.DataFrame | None, constrained) -> dict[str, pd.DataFrame]:
    """The files of the predictors fitted on every row: adapted data, twins, out-of-fold scores, test rows, λ path."""
    adapter = predictor.adapter_
    scores = data[[sfm.x, sfm.y]].assign(fair_score=predictor.oof_scores_)
    tables = {"adapted_train.csv": adapter.adapted_train_, "fair_twins.csv": adapter.fair_twins()}
    if test is not None:
        tables["adapted_test.csv"] = adapter.transform(test)
        tables["test_scores.csv"] = test[[c for c in (sfm.x, sfm.y) if c in test.columns]].assign(fair_score=predictor.scores(test))
    if constrained is not None:
        tables["constrained_path.csv"] = constrained.path_result().to_frame()
        scores["constrained_score"] = _constrained_scores(constrained, data)
    tables["scores.csv"] = scores
    return tables


def _held_out_scores(data: pd.DataFrame, sfm, recipe: dict, judged: list[str], constrained: bool, holdout: float, seed: int):
    """The held-out rows, the fair predictor refitted on the others, its held-out rows' fair twins with its scores,
    and every predictor's held-out scores."""
    fitting, held = _split(data, sfm, holdout, recipe["n_folds"], seed)
    predictor = FairPredictor(sfm, **recipe).fit(fitting)
    twins = predictor.twin_frame(held, column=FAIR).reset_index(drop=True)
    scores = held[[sfm.x, sfm.y]].assign(**{FAIR: twins[FAIR].to_numpy()})
    scores[UNCONSTRAINED] = _unconstrained_scores(fitting, held, sfm, predictor.features_, recipe["learner"], predictor.binary_, seed)
    if constrained:
        scores[CONSTRAINED] = _constrained_scores(ConstrainedLearner(sfm, bn=judged, random_state=seed).fit(fitting), held)
    return held, predictor, twins, scores.reset_index(drop=True)


@validate_params({
    "data": Frame(), "reference": Options(("x0", "x1")), "constrained": Boolean(), "holdout": Probability(), "alpha": Probability(),
    "margin": Optional(Real(0.0, None, open_low=True)), "level": Probability(), "n_bins": Integer(2), "n_boot": Draws(), "n_folds": Integer(2),
    "seed": Seed(), "progress": Boolean(),
})
def repair(data: pd.DataFrame, sfm, *, bn="none", resolving=None, graph: CausalGraph | None = None, test: pd.DataFrame | None = None,
           reference: Reference = "x1", engine: Engine | object = "forest", learner=None, constrained: bool = False,
           holdout: float = 0.3, alpha: float = 0.05, margin: float | None = None, level: float = 0.95, n_bins: int = 10,
           n_boot: int = 200, audit_learner=None, n_folds: int = 5, seed: int = 0, provenance: dict | None = None,
           progress: bool = False) -> RepairResult:
    """Fair twins and a fair predictor for the BN set ``bn`` (or the ``resolving`` columns), with its verdict,
    accuracy cost and predictive parity on held-out rows (see the module docstring).

    ``graph``, ``reference``, ``engine``, ``learner`` and ``n_folds`` go to :class:`FairPredictor`; ``test``:
    new rows to transform and score with the predictor fitted on every row; ``constrained``: also fit the
    constrained-learning predictor. ``holdout``: share of rows held out for the verdict. ``alpha``,
    ``margin``, ``level``, ``n_bins``, ``n_boot``, ``n_folds`` and ``audit_learner`` (the decomposition's
    learner) go to :func:`fairpath.parity.audit`. Every random step is seeded by ``seed``.
    """
    from fairpath.report import api_call, provenance as make_provenance

    sfm = check_binary_sfm(sfm, "repair")
    check_columns_present(data, sfm.columns)
    graph = graph if graph is not None else graph_from_sfm(sfm)
    if test is not None:
        check_frame(test, "test data")
        check_columns_present(test, [c for c in graph.nodes if c != sfm.y], "the test data")
    judged = list(parse_bn(bn)) if resolving is None else bn_of_resolving(sfm, resolving)
    data = data[sfm.columns]
    recipe = dict(bn=bn, resolving=resolving, graph=graph, reference=reference, engine=engine, learner=learner, n_folds=n_folds, random_state=seed)
    predictor = FairPredictor(sfm, **recipe).fit(data)
    full_constrained = ConstrainedLearner(sfm, bn=judged, random_state=seed).fit(data) if constrained else None
    # Everything is computed before anything is written: a failure (say, in test) leaves no partial outputs.
    tables = _outputs(data, sfm, predictor, test, full_constrained)
    held, judged_predictor, twins, held_out = _held_out_scores(data, sfm, recipe, judged, constrained, holdout, seed)
    others = [c for c in (UNCONSTRAINED, CONSTRAINED) if c in held_out]
    y = held_out[sfm.y].to_numpy()
    accuracy = pd.DataFrame([row for name in (FAIR, *others)
                             for row in _accuracy_rows(name, y, held_out[name].to_numpy(), predictor.binary_, level=level, seed=seed)])

    in_sample = judged_predictor.twin_frame(column=FAIR).reset_index(drop=True)
    bins = min(_complete_bins(held_out, sfm, [FAIR, *others], n_bins), _complete_bins(in_sample, sfm, [FAIR], n_bins))
    options = dict(alpha=alpha, margin=margin, level=level, n_bins=bins, n_boot=n_boot, learner=audit_learner, n_folds=n_folds,
                   seed=seed, progress=progress)
    fair_audit = audit(twins, sfm, [FAIR], judged, data_label=HELD_OUT_TWINS, **options)
    in_sample_audit = audit(in_sample, sfm, [FAIR], judged, data_label=IN_SAMPLE_TWINS, **options)
    baseline_audit = audit(held.reset_index(drop=True).join(held_out[others]), sfm, others, judged, data_label=HELD_OUT_OBSERVED, **options)
    settings = {"bn": bn if isinstance(bn, str) else list(bn), "resolving": resolving, "reference": reference, "engine": str(engine),
                "learner": "forest" if learner is None else type(learner).__name__, "constrained": constrained, "holdout": holdout,
                "alpha": alpha, "margin": margin, "level": level, "n_bins": n_bins, "n_bins_used": options["n_bins"], "n_boot": n_boot, "n_folds": n_folds,
                "audit_learner": fair_audit.settings["learner"], "seed": seed, "n": len(data), "n_held_out": len(held_out),
                "provenance": provenance or make_provenance(call=api_call("fairpath.repair.repair", data, bn=bn, seed=seed), seed=seed)}
    return RepairResult(sfm=sfm, bn=judged, predictor=predictor, constrained=full_constrained, tables=tables, held_out=held_out,
                        accuracy_table=accuracy, audit=fair_audit, in_sample_audit=in_sample_audit, baseline_audit=baseline_audit, settings=settings)
