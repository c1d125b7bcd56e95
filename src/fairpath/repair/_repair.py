"""``repair``: fair twins and a fair predictor for a BN set, with a verdict on held-out rows.

The fair predictor (:class:`FairPredictor`) is fitted on every row: its adapted data, fair twins and
out-of-fold scores are the outputs. To judge it honestly, the same recipe is fitted again on a share
``1 − holdout`` of the rows (split stratified by X) and scored on the rest, as is the unconstrained
predictor (the same learner on X and the covariates it uses) and, when asked, the constrained-learning
predictor. On the held-out rows:

- verdict: the Business Necessity Cookbook (:func:`fairpath.parity.audit`) of the fair predictor on
  the held-out rows' fair twins, where its pathways run (as in the paper and :meth:`FairPredictor.audit`),
  and of the other predictors on the observed rows. The outcome's effects differ between the two, so
  each is labelled with its data;
- cost: AUC and log loss (R² and RMSE for a continuous outcome) of every predictor for the observed outcome;
- predictive parity: every predictor's iPPM for the observed outcome, judged with Theorem 1
  (:mod:`fairpath.parity._verdict`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier
from sklearn.metrics import log_loss, mean_squared_error, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split

from fairpath._io import save_figure, write_csv, replaces_outputs
from fairpath._results import ReadOnly, ResultMixin, interval_bars, panel_axes, result_frame, write_json
from fairpath._validation import (
    Boolean, Draws, Frame, Integer, Optional, Options, Probability, Real, Seed, check_columns_present, check_fit_group_sizes, check_frame,
    validate_params,
)
from fairpath._vocabulary import RESOLVING_ROLE, Engine, Reference, parse_bn
from fairpath.adaptation import CausalGraph, graph_from_sfm
from fairpath._sfm import check_binary_sfm
from fairpath._exceptions import FairpathInputError
from fairpath.parity import audit, quantile_bins
from fairpath.repair._constrained import ConstrainedLearner
from fairpath.repair._predictor import TWIN_LABEL, FairPredictor, default_forest, feature_encoder

FAIR, UNCONSTRAINED, CONSTRAINED = "fair", "unconstrained", "constrained"
# Accuracy measures (key, label, whether larger is better) of a 0/1 outcome and of a continuous one.
_ACCURACY = {True: (("auc", "AUC"), ("log_loss", "log loss")), False: (("r2", "R²"), ("rmse", "RMSE"))}
HELD_OUT_TWINS = f"held-out rows, {TWIN_LABEL}"
HELD_OUT_OBSERVED = "held-out rows, observed"


class RepairResult(ResultMixin):
    """The fair predictor for a BN set, its outputs, and its verdict, cost and predictive parity on held-out rows.

    Attributes
    ----------
    predictor : the :class:`FairPredictor` fitted on every row; ``constrained`` the
        :class:`ConstrainedLearner` fitted on every row, or None.
    bn : the BN set the predictor is judged under.
    tables : dict file name -> DataFrame: adapted_train.csv, fair_twins.csv, scores.csv (out-of-fold
        scores of every row), and adapted_test.csv, test_scores.csv, constrained_path.csv when computed.
    held_out_ : the held-out rows' X, Y and every predictor's score (from the fits on the other rows).
    accuracy_ : one row per predictor and accuracy measure on the held-out rows.
    audit_ : the fair predictor's :class:`~fairpath.parity.AuditResult` on the held-out rows' fair twins.
    baseline_audit_ : the unconstrained (and constrained) predictors' audit on the observed held-out rows.
    settings : every setting of the call, with its provenance.
    """

    sfm = ReadOnly()
    bn = ReadOnly()
    predictor = ReadOnly()
    constrained = ReadOnly()
    tables = ReadOnly()
    held_out_ = ReadOnly()
    accuracy_ = ReadOnly()
    audit_ = ReadOnly()
    baseline_audit_ = ReadOnly()
    settings = ReadOnly()

    def __init__(self, sfm, bn, predictor, constrained, tables, held_out_, accuracy_, audit_, baseline_audit_, settings):
        self.sfm = sfm
        self.bn = bn
        self.predictor = predictor
        self.constrained = constrained
        self.tables = tables
        self.held_out_ = held_out_
        self.accuracy_ = accuracy_
        self.audit_ = audit_
        self.baseline_audit_ = baseline_audit_
        self.settings = settings

    @property
    def binary(self) -> bool:
        return self.audit_.percent

    @property
    def status(self) -> str:
        """SUCCESS or FAIL: the fair predictor's Cookbook verdict on the held-out rows."""
        return self.audit_.status[FAIR]

    @property
    def parity_(self) -> dict:
        """Every predictor's :class:`~fairpath.parity.PredictiveParity` on the held-out rows."""
        return {**self.audit_.parity_, **self.baseline_audit_.parity_}

    def accuracy(self, predictor: str, measure: str) -> float:
        rows = self.accuracy_[(self.accuracy_["predictor"] == predictor) & (self.accuracy_["measure"] == measure)]
        return float(rows["estimate"].iloc[0])

    def verdict_lines(self) -> list[str]:
        """What was found, first: the fair predictor's verdict with the p of its claim, what it costs in
        accuracy, its predictive parity beside the unconstrained predictor's and what the BN set implies
        for it (Theorem 1), then the other predictors' verdicts."""
        n = len(self.held_out_)
        lines = [f"Repaired predictor ({FAIR}: a learner on the fair twins), judged on {n:,} held-out rows: {self.audit_.verdict_line(FAIR)}",
                 self.cost_sentence(), self.audit_.parity_line(FAIR, original=self.parity_[UNCONSTRAINED])]
        if self.constrained is not None:
            lines.append(self.baseline_audit_.parity_line(CONSTRAINED, original=self.parity_[UNCONSTRAINED]))
        lines.append(self.audit_.bn_parity_line())
        lines += [f"For comparison, on the observed held-out rows: {self.baseline_audit_.verdict_line(p)}" for p in self.baseline_audit_.predictors]
        return lines

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
        """Accuracy on the held-out rows (no intervals), then both audits' estimates and Cookbook tests; the
        column ``data`` names the rows each was measured on, and the outcome's subject says it too."""
        frames = [self.accuracy_.rename(columns={"predictor": "subject"}).assign(data=HELD_OUT_OBSERVED)]
        for result, data in ((self.audit_, HELD_OUT_TWINS), (self.baseline_audit_, HELD_OUT_OBSERVED)):
            frame = pd.concat([result.to_frame(), result.cookbook_.to_frame()], ignore_index=True)
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
            "held_out": {"n": len(self.held_out_), "holdout": self.settings["holdout"]},
            "accuracy": self.accuracy_.to_dict(orient="records"),
            "audit": self.audit_.to_dict(),
            "baseline_audit": self.baseline_audit_.to_dict(),
            "settings": self.settings,
        }
        if self.constrained is not None:
            found["constrained"] = self.constrained.path_result().to_dict()
        return found

    def _repr_fields(self) -> dict:
        return {"bn": list(self.bn), "held_out": len(self.held_out_), "status": self.status}

    def summary(self) -> str:
        adapter = self.predictor.adapter_
        lines = [*self.verdict_lines(), f"RepairResult for {self.sfm}, BN = {list(self.bn)}",
                 f"adapted {adapter.order_} (resolving: {adapter.resolving_ or 'none'}); TV of {self.sfm.y}: "
                 f"{_tv(adapter.train_, self.sfm):.4f} -> {_tv(adapter.adapted_train_, self.sfm):.4f} after adaptation (all rows)"]
        for row in self.accuracy_.itertuples():
            lines.append(f"  {row.predictor:<14} {row.measure:<9} {row.estimate:.4f} (held-out rows)")
        lines += [self.audit_.cookbook_.summary(), self.baseline_audit_.cookbook_.summary()]
        if self.constrained is not None:
            lines.append(self.constrained.path_result().summary())
        lines += [f"note: {note}" for note in (*self.audit_.notes_, *self.baseline_audit_.notes_)]
        return "\n".join(lines)

    def plot(self, ax=None):
        """Every predictor on the held-out rows: iPPM with its interval (left), accuracy (right, AUC or R²);
        on ``ax`` (a sequence of two axes) when given."""
        from fairpath.report import SERIES_COLOURS, subplots

        fig, (left, right) = panel_axes(ax, 2, lambda: subplots(1, 2, width=9.0, height=3.4))
        names = list(self.parity_)
        positions = np.arange(len(names))[::-1]
        for pos, name, colour in zip(positions, names, SERIES_COLOURS):
            ippm = self.parity_[name].ippm_
            centre, half = interval_bars(ippm.ci_low, ippm.ci_high)
            left.errorbar(centre, pos, xerr=half, fmt="none", ecolor=colour, capsize=4)
            left.plot(ippm.estimate, pos, "o", color=colour)
        left.axvline(0, color="black", linewidth=0.8)
        left.set_yticks(positions, names)
        level = self.parity_[FAIR].ippm_.level
        left.set_xlabel(f"iPPM with its {level:.0%} CI (0: equally calibrated)")
        left.set_title("Predictive parity (held-out rows)")
        measure, label = _ACCURACY[self.binary][0]
        right.barh(positions, [self.accuracy(name, measure) for name in names], color=SERIES_COLOURS[: len(names)])
        right.set_yticks(positions, names)
        right.set_xlabel(label)
        right.set_title(f"Accuracy (held-out rows): {label}")
        fig.tight_layout()
        return fig

    @replaces_outputs
    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write the tables (CSV), held_out.csv, result.csv (``to_frame()``), repair.json (``to_dict()``),
        constrained_path.png when computed and report.html to ``out_dir``; return their paths."""
        from fairpath.repair._report import write_repair_report
        from fairpath.report import styled

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {name: out / name for name in self.tables}
        for name, frame in self.tables.items():
            write_csv(frame, paths[name])
        paths["held_out"] = out / "held_out.csv"
        write_csv(self.held_out_, paths["held_out"])
        paths["table"] = out / "result.csv"
        write_csv(self.to_frame(), paths["table"])
        paths["results"] = write_json(self.to_dict(), out / "repair.json")
        if self.constrained is not None:
            with styled():
                paths["constrained_path"] = save_figure(self.constrained.path_result().plot(), out / "constrained_path.png", bbox_inches="tight")
        paths["report"] = write_repair_report(self, out / "report.html")
        return paths


def _tv(frame: pd.DataFrame, sfm) -> float:
    group = frame[sfm.x] == sfm.x1
    return float(frame.loc[group, sfm.y].mean() - frame.loc[~group, sfm.y].mean())


def _scores(model, data: pd.DataFrame) -> np.ndarray:
    """Probabilities of a binary outcome, predicted values of a continuous one."""
    return model.predict_proba(data)[:, 1] if hasattr(model, "classes_") else model.predict(data)


def bn_of_resolving(sfm, resolving) -> list[str]:
    """The BN set that resolving columns keep: each pathway whose role columns (Z for SE, W for IE) all resolve."""
    resolving = set(resolving)
    return [p for p, role in RESOLVING_ROLE.items() if getattr(sfm, role) and set(getattr(sfm, role)) <= resolving]


def _accuracy_rows(name: str, y: np.ndarray, scores: np.ndarray, binary: bool) -> list[dict]:
    if binary:
        values = {"auc": roc_auc_score(y, scores), "log_loss": log_loss(y, np.clip(scores, 1e-15, 1 - 1e-15), labels=[0, 1])}
    else:
        values = {"r2": r2_score(y, scores), "rmse": float(np.sqrt(mean_squared_error(y, scores)))}
    return [{"predictor": name, "measure": measure, "estimate": float(value)} for measure, value in values.items()]


def _split(data: pd.DataFrame, sfm, holdout: float, n_folds: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fitting and held-out rows of the verdict, stratified by X; each part must allow the fits it serves."""
    fitting, held = train_test_split(data, test_size=holdout, stratify=data[sfm.x], random_state=seed)
    for part, rows in (("fitting", fitting), ("held-out", held)):
        counts = {level: int((rows[sfm.x] == level).sum()) for level in (sfm.x0, sfm.x1)}
        check_fit_group_sizes(counts, sfm.x, n_folds, purpose=f"in the {part} part of the verdict (holdout={holdout})")
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
        tables["test_scores.csv"] = test[[c for c in (sfm.x, sfm.y) if c in test.columns]].assign(fair_score=_scores(predictor, test))
    if constrained is not None:
        tables["constrained_path.csv"] = constrained.path_result().to_frame()
        scores["constrained_score"] = _scores(constrained, data)
    tables["scores.csv"] = scores
    return tables


def _held_out_scores(data: pd.DataFrame, sfm, recipe: dict, judged: list[str], constrained: bool, holdout: float, seed: int):
    """The held-out rows, the fair predictor refitted on the others, and every predictor's held-out scores."""
    fitting, held = _split(data, sfm, holdout, recipe["n_folds"], seed)
    predictor = FairPredictor(sfm, **recipe).fit(fitting)
    scores = held[[sfm.x, sfm.y]].assign(**{FAIR: _scores(predictor, held)})
    scores[UNCONSTRAINED] = _unconstrained_scores(fitting, held, sfm, predictor.features_, recipe["learner"], predictor.binary_, seed)
    if constrained:
        scores[CONSTRAINED] = _scores(ConstrainedLearner(sfm, judged, random_state=seed).fit(fitting), held)
    return held, predictor, scores.reset_index(drop=True)


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
    from fairpath.report import provenance as make_provenance

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
    full_constrained = ConstrainedLearner(sfm, judged, random_state=seed).fit(data) if constrained else None
    # Everything is computed before anything is written: a failure (say, in test) leaves no partial outputs.
    tables = _outputs(data, sfm, predictor, test, full_constrained)
    held, judged_predictor, held_out = _held_out_scores(data, sfm, recipe, judged, constrained, holdout, seed)
    others = [c for c in (UNCONSTRAINED, CONSTRAINED) if c in held_out]
    y = held_out[sfm.y].to_numpy()
    accuracy = pd.DataFrame([row for name in (FAIR, *others) for row in _accuracy_rows(name, y, held_out[name].to_numpy(), predictor.binary_)])

    options = dict(alpha=alpha, margin=margin, level=level, n_bins=_complete_bins(held_out, sfm, [FAIR, *others], n_bins), n_boot=n_boot, learner=audit_learner, n_folds=n_folds,
                   seed=seed, progress=progress)
    twins = judged_predictor.adapter_.transform(held).reset_index(drop=True).assign(**{FAIR: held_out[FAIR]})
    fair_audit = audit(twins, sfm, [FAIR], judged, data_label=HELD_OUT_TWINS, **options)
    baseline_audit = audit(held.reset_index(drop=True).join(held_out[others]), sfm, others, judged, data_label=HELD_OUT_OBSERVED, **options)
    settings = {"bn": bn if isinstance(bn, str) else list(bn), "resolving": resolving, "reference": reference, "engine": str(engine),
                "learner": "forest" if learner is None else type(learner).__name__, "constrained": constrained, "holdout": holdout,
                "alpha": alpha, "margin": margin, "level": level, "n_bins": n_bins, "n_bins_used": options["n_bins"], "n_boot": n_boot, "n_folds": n_folds,
                "audit_learner": fair_audit.settings["learner"], "seed": seed, "n": len(data), "n_held_out": len(held_out),
                "provenance": provenance or make_provenance(call=f"fairpath.repair.repair(<DataFrame {data.shape[0]} rows>, bn={bn!r}, seed={seed})", seed=seed)}
    return RepairResult(sfm, judged, predictor, full_constrained, tables, held_out, accuracy, fair_audit, baseline_audit, settings)
