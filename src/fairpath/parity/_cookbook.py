"""The Business Necessity Cookbook (Plečko & Bareinboim, Algorithm 1) as a statistical procedure.

For each causal pathway P ∈ {DE, IE, SE} and each predictor ŷ:
- P in the business-necessity set BN: H0: Ctf-P(ŷ) = Ctf-P(y), tested on the paired difference
  (its SE comes from the per-row pseudo-outcome differences);
- P not in BN: H0: Ctf-P(ŷ) = 0.
The three p-values of a predictor are Holm-adjusted (family-wise error ≤ alpha per predictor); with a protected
attribute of K levels (a decomposition of several contrasts) every contrast is tested and Holm runs over its contrasts ×
pathways, 3·(K − 1) tests per predictor against the reference.
A test is *not estimable* when its contrast is left out of the decomposition's family (flagged not estimable: most of
its rows lack overlap) or its tested quantity's estimate or SE is not finite: it is left out of the Holm family and
shows nothing (it is never a violation), and a predictor none of whose tests is estimable has the status NOT ESTIMABLE.
Rejecting shows a violation. Not rejecting shows nothing by itself, so an optional equivalence test
(two one-sided tests, margin δ, also Holm-adjusted) can certify |tested quantity| < δ.
Every test is computed by the tested quantity's :class:`~fairpath._stats.Estimate` (``p_value``,
``equivalence_p``): the decomposition's ``estimate`` or its paired ``difference``.
"""

from __future__ import annotations

import dataclasses

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fairpath._exceptions import FairpathInputError  # noqa: E402
from fairpath._validation import Columns, Optional, Probability, Real, check_columns_arg, check_comparable_scales, validate_params  # noqa: E402
from fairpath._results import ResultMixin, result_class, interval_bars, panel_axes, result_frame  # noqa: E402
from fairpath._stats import equivalence_p_value, holm, p_clause  # noqa: E402
from fairpath._vocabulary import MEASURE_OF_PATHWAY, PATHWAY_NAMES, PATHWAYS, parse_bn  # noqa: E402

DOCTRINE = {"DE": "disparate treatment", "IE": "disparate impact", "SE": "disparate impact"}

VIOLATION, NO_EVIDENCE, CERTIFIED, NOT_ESTIMABLE = "violation", "no evidence of violation", "certified", "not estimable"
VERDICT_COLOURS = {VIOLATION: "#d64545", NO_EVIDENCE: "#f0b429", CERTIFIED: "#3ebd93", NOT_ESTIMABLE: "#9aa5b1", "outcome": "#486581"}


@validate_params({"margin": Real(0.0, None, open_low=True)})
def tost_p_value(estimate: float, se: float, margin: float) -> float:
    """Two one-sided tests of H0: |θ| ≥ margin against H1: |θ| < margin (normal approximation); an
    :class:`~fairpath._stats.Estimate` computes the same as ``equivalence_p(margin)``."""
    return equivalence_p_value(estimate, se, margin)


def _tested_quantity(pathway: str, predictor: str, outcome: str, in_bn: bool) -> str:
    measure = f"Ctf-{pathway}"
    return f"{measure}({predictor}) − {measure}({outcome})" if in_bn else f"{measure}({predictor})"


def verdict_p(row) -> tuple[str, float]:
    """The p-value of the claim a verdict makes, with its name: the equivalence test's Holm p for
    "certified", the difference (or zero) test's Holm p for "violation" and "no evidence"."""
    if row["verdict"] == CERTIFIED:
        return "TOST Holm p", float(row["tost_p_holm"])
    return "Holm p", float(row["p_holm"])


def verdict_line(row) -> str:
    """``verdict (name p = value)``: the verdict with the p-value of the claim it makes (none for a test not estimable)."""
    if row["verdict"] == NOT_ESTIMABLE:
        return NOT_ESTIMABLE
    name, p = verdict_p(row)
    return f"{row['verdict']} ({p_clause(name, p)})"


def _claim(row: dict, alpha: float, margin: float | None, estimable: bool = True) -> str:
    claim = _pathway_claim(row, alpha, margin)
    if not estimable:
        claim += (" The decomposition is flagged not estimable (most rows lack overlap between the groups), "
                  "so no pathway can be certified from these data.")
    return claim


def _pathway_claim(row: dict, alpha: float, margin: float | None) -> str:
    pathway, tested = row["pathway"], row["tested"]
    where = f"the {PATHWAY_NAMES[pathway]} pathway ({row['doctrine']})"
    if row["verdict"] == VIOLATION:
        if row["in_bn"]:
            return (
                f"Shown ({p_clause('Holm p', row['p_holm'])} < {alpha}): {tested} ≠ 0. Business necessity permits {where}, "
                "but the predictor does not transmit the outcome's effect along it."
            )
        return (
            f"Shown ({p_clause('Holm p', row['p_holm'])} < {alpha}): {tested} ≠ 0. The predictor transmits an effect along "
            f"{where}, which business necessity does not permit."
        )
    if row["verdict"] == CERTIFIED:
        target = "the outcome's effect" if row["in_bn"] else "no effect"
        detected = (
            f" A non-zero value is also detected ({p_clause('Holm p', row['p_holm'])}), but it is smaller than the margin."
            if row["rejected"]
            else ""
        )
        return (
            f"Certified (equivalence test, {p_clause('Holm p', row['tost_p_holm'])} < {alpha}): |{tested}| < {margin:g}; "
            f"the predictor transmits {target} along {where} within the margin.{detected}"
        )
    if margin is None:
        hint = " Give a margin δ for an equivalence test."
    else:
        hint = f" Equivalence within ±{margin:g} was not shown ({p_clause('Holm p', row['tost_p_holm'])})."
    return (
        f"Not rejected ({p_clause('Holm p', row['p_holm'])}): no evidence that {tested} ≠ 0 along {where}. "
        f"This is absence of evidence, not a proof of equality.{hint}"
    )


@result_class
class CookbookResult(ResultMixin):
    """Verdicts of the Business Necessity Cookbook for one or more predictors.

    Attributes
    ----------
    tests : DataFrame, one row per predictor and pathway (tested quantity, estimate, CI, raw and
        Holm-adjusted p-values, equivalence test, verdict and the claim it makes).
    overall : dict predictor -> {"status": "SUCCESS" | "FAIL" | "NOT ESTIMABLE" (no test estimable), "claim": ...,
        "reasons": [...]}.
    """

    bn: list[str]
    alpha: float
    margin: float
    outcome: str
    tests: pd.DataFrame
    overall: dict
    outcome_effects: dict
    estimable: bool = True
    adjusted_in: str | None = None  # a contrast's tests (for_contrast): the family they were adjusted in

    @property
    def predictors(self) -> list[str]:
        return list(self.overall)

    def to_frame(self) -> pd.DataFrame:
        """``tests`` with the core columns first: subject (the predictor), measure (the tested quantity, see
        column ``tested``: ``<measure>_difference``, the paired difference to the outcome, for a pathway in BN;
        the effect itself outside), its estimate, se, CI and level; then pathway, hypotheses, p-values, verdicts."""
        tests = self.tests.rename(columns={"predictor": "subject"})
        tests["measure"] = [f"{m}_difference" if in_bn else m for m, in_bn in zip(tests["measure"], tests["in_bn"])]
        return result_frame(tests)

    @property
    def contrasts(self) -> list[str]:
        """The contrasts tested (empty for one binary contrast)."""
        return list(dict.fromkeys(self.tests["contrast"])) if "contrast" in self.tests else []

    def for_contrast(self, contrast: str) -> "CookbookResult":
        """The tests of one contrast, with their p-values adjusted over every contrast, and that contrast's verdicts."""
        if contrast not in self.contrasts:
            raise FairpathInputError(f"no contrast {contrast!r}; the contrasts are {self.contrasts}")
        tests = self.tests[self.tests["contrast"] == contrast].reset_index(drop=True)
        overall = {p: _overall(tests[tests["predictor"] == p].to_dict("records"), self.margin) for p in self.predictors}
        estimable = self.estimable and not (tests["verdict"] == NOT_ESTIMABLE).all()
        return dataclasses.replace(self, tests=tests, overall=overall, outcome_effects=self.outcome_effects[contrast],
                                   estimable=estimable, adjusted_in=self.multiplicity)

    @property
    def multiplicity(self) -> str:
        if not self.contrasts:
            return "Holm over the three pathway tests of each predictor"
        if self.adjusted_in is not None:
            return self.adjusted_in
        tested = self.tests[self.tests["verdict"] != NOT_ESTIMABLE].groupby("predictor").size().reindex(self.predictors, fill_value=0)
        if tested.min() == len(self.tests) // len(self.predictors):
            return f"Holm over the {tested.min()} contrast × pathway tests of each predictor"
        sizes = f"{tested.min()}" if tested.min() == tested.max() else f"{tested.min()} to {tested.max()}"
        return f"Holm over the {sizes} estimable contrast × pathway tests of each predictor; {NOT_ESTIMABLE} ones left out"

    def to_dict(self) -> dict:
        return {
            "bn": list(self.bn),
            "alpha": self.alpha,
            "margin": self.margin,
            "multiplicity": self.multiplicity,
            "estimable": self.estimable,
            "outcome": self.outcome,
            "outcome_effects": self.outcome_effects,
            "tests": self.tests.to_dict(orient="records"),
            "overall": self.overall,
        }

    def _repr_fields(self) -> dict:
        return {"bn": list(self.bn), "alpha": self.alpha, "status": {p: o["status"] for p, o in self.overall.items()}}

    def summary(self) -> str:
        bn = "{" + ", ".join(self.bn) + "}" if self.bn else "∅"
        lines = [f"Business Necessity Cookbook, BN = {bn}, alpha = {self.alpha} ({self.multiplicity})"]
        if not self.estimable:
            lines.append("  NOT ESTIMABLE: most rows lack overlap between the groups; nothing is certified")
        for predictor, overall in self.overall.items():
            lines.append(f"  {predictor}: {overall['status']} ({overall['claim']})")
            for _, row in self.tests[self.tests["predictor"] == predictor].iterrows():
                where = f"{row['contrast']}: " if "contrast" in row else ""
                lines.append(
                    f"    {where}{row['pathway']} [{'in BN' if row['in_bn'] else 'not in BN'}] {row['tested']} = "
                    f"{row['estimate']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]: {verdict_line(row)}"
                )
        return "\n".join(lines)

    def plot(self, ax=None):
        """Tested quantity with its CI per pathway and predictor, coloured by verdict: one panel per pathway
        (DE, IE, SE), on ``ax`` (a sequence of three axes) when given."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
        from matplotlib.ticker import MaxNLocator

        from fairpath.report import new_figure, styled

        labels = [f"{p} [{c}]" for p in self.predictors for c in self.contrasts] if self.contrasts else self.predictors
        tests = self.tests.assign(row=[f"{p} [{c}]" for p, c in zip(self.tests["predictor"], self.tests["contrast"])]
                                   if self.contrasts else self.tests["predictor"])
        predictors = labels

        def make():
            with styled():
                return new_figure(1, len(PATHWAYS), figsize=(9.0, 2.2 + 0.5 * len(predictors)), sharey=True)

        fig, axes = panel_axes(ax, len(PATHWAYS), make)
        for panel, pathway in zip(axes, PATHWAYS):
            rows = tests[tests["pathway"] == pathway].set_index("row").loc[predictors]
            positions = np.arange(len(predictors))[::-1]  # first predictor on top, as in the other figures
            for pos, (_, row) in zip(positions, rows.iterrows()):
                centre, half = interval_bars(row["ci_low"], row["ci_high"])
                panel.errorbar(centre, pos, xerr=half, fmt="none", ecolor=VERDICT_COLOURS[row["verdict"]], capsize=4)
                panel.plot(row["estimate"], pos, "o", color=VERDICT_COLOURS[row["verdict"]])
            panel.axvline(0, color="black", linewidth=0.8)
            if self.margin is not None:
                panel.axvspan(-self.margin, self.margin, color="#3ebd93", alpha=0.12)
            in_bn = pathway in self.bn
            panel.set_title(f"{pathway}: {'Ctf(ŷ) − Ctf(y)' if in_bn else 'Ctf(ŷ)'}\n({'in BN' if in_bn else 'not in BN'})", fontsize=11)
            panel.set_yticks(positions, predictors, fontsize=10)
            panel.xaxis.set_major_locator(MaxNLocator(3))  # few ticks: labels of three narrow panels must not collide
            panel.tick_params(axis="x", labelsize=10)
        shown = (VIOLATION, NO_EVIDENCE, CERTIFIED) + ((NOT_ESTIMABLE,) if (self.tests["verdict"] == NOT_ESTIMABLE).any() else ())
        handles = [Line2D([], [], marker="o", linestyle="", color=VERDICT_COLOURS[v], label=v) for v in shown]
        if self.margin is not None:
            handles.append(Patch(color="#3ebd93", alpha=0.25, label=f"equivalence margin ±δ = ±{self.margin:g}"))
        if ax is not None:  # the caller's figure keeps its layout: the legend goes into the last panel
            axes[-1].legend(handles=handles, fontsize=8, frameon=False)
            return fig
        fig.legend(handles=handles, loc="lower center", ncol=2, fontsize=10, frameon=False)
        fig.tight_layout(rect=(0, 0.22 if len(predictors) < 4 else 0.14, 1, 1))
        return fig


def _pathway_of(row: dict) -> str:
    """The pathway, with its contrast when several levels were tested: ``DE`` or ``DE for black``."""
    return f"{row['pathway']} for {row['contrast']}" if "contrast" in row else row["pathway"]


def _overall(rows: list[dict], margin: float | None) -> dict:
    if all(r["verdict"] == NOT_ESTIMABLE for r in rows):
        return {"status": "NOT ESTIMABLE", "claim": "no test is estimable, so nothing is shown or certified",
                "reasons": [r["claim"] for r in rows]}
    violations = [r for r in rows if r["verdict"] == VIOLATION]
    if violations:
        reasons = [
            f"{_pathway_of(r)} ({r['doctrine']}): {'differs from the outcome' if r['in_bn'] else 'non-zero effect not permitted by BN'}"
            for r in violations
        ]
        return {"status": "FAIL", "claim": "violation shown on " + ", ".join(_pathway_of(r) for r in violations), "reasons": reasons}
    if margin is not None and all(r["verdict"] == CERTIFIED for r in rows):
        return {"status": "SUCCESS", "claim": f"certified on every pathway within ±{margin:g}", "reasons": [r["claim"] for r in rows]}
    return {
        "status": "SUCCESS",
        "claim": "no violation shown (not a proof of compliance)",
        "reasons": [r["claim"] for r in rows],
    }


def _not_estimable(row: dict, left_out: dict) -> str:
    """Why ``row``'s test is not estimable, or "" when it is."""
    if row.get("contrast") in left_out:
        return f"contrast {row['contrast']!r} is not estimable: {left_out[row['contrast']]}"
    if not (np.isfinite(row["estimate"]) and np.isfinite(row["se"])):
        return f"{row['tested']}: estimate or SE not finite"
    return ""


def _test_pathway(decomposition, predictor: str, outcome: str, pathway: str, in_bn: bool, margin) -> dict:
    """The test of one pathway: the paired difference to the outcome in BN, the effect itself outside."""
    measure = MEASURE_OF_PATHWAY[pathway]
    est = decomposition.difference(measure, outcome=predictor) if in_bn else decomposition.estimate(measure, outcome=predictor)
    required = f"Ctf-{pathway}({outcome})" if in_bn else "0"
    return {
        "predictor": predictor,
        "pathway": pathway,
        "measure": measure,
        "in_bn": in_bn,
        "doctrine": DOCTRINE[pathway],
        "null_hypothesis": f"Ctf-{pathway}({predictor}) = {required}",
        "tested": _tested_quantity(pathway, predictor, outcome, in_bn),
        "estimate": est.estimate,
        "se": est.se,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "level": est.level,
        "p_value": est.p_value(),
        "tost_p": est.equivalence_p(margin) if margin is not None else np.nan,
    }


def _judge(rows: list[dict], alpha: float, margin, estimable: bool = True, left_out: dict | None = None) -> None:
    """Holm-adjust a predictor's tests and give each its verdict and claim (in place).

    A decomposition flagged not estimable (no overlap) certifies nothing. A test of a contrast in ``left_out``
    ({contrast: why}, the contrasts out of the decomposition's family) or whose estimate or SE is not finite is not
    estimable: it is left out of the Holm family."""
    why = [_not_estimable(r, left_out or {}) for r in rows]
    for row, reason in zip(rows, why):
        if reason:
            row.update(p_holm=np.nan, tost_p_holm=np.nan, rejected=False, equivalent=False, verdict=NOT_ESTIMABLE,
                       verdict_p_name="Holm p", verdict_p=np.nan,
                       claim=f"Not estimable ({reason}): left out of the Holm family, so it shows nothing.")
    rows = [r for r, reason in zip(rows, why) if not reason]
    p_holm = holm([r["p_value"] for r in rows])
    tost_holm = holm([r["tost_p"] for r in rows]) if margin is not None else [np.nan] * len(rows)
    for row, p, p_tost in zip(rows, p_holm, tost_holm):
        row["p_holm"], row["tost_p_holm"] = float(p), float(p_tost)
        row["rejected"] = bool(p < alpha)
        row["equivalent"] = bool(margin is not None and p_tost < alpha and estimable)
        # With a margin, the user declared differences below δ acceptable: equivalence outranks a tiny
        # but significant difference.
        row["verdict"] = CERTIFIED if row["equivalent"] else VIOLATION if row["rejected"] else NO_EVIDENCE
        row["verdict_p_name"], row["verdict_p"] = verdict_p(row)
        row["claim"] = _claim(row, alpha, margin, estimable)


@validate_params({"predictors": Optional(Columns()), "alpha": Probability(), "margin": Optional(Real(0.0, None, open_low=True))})
def business_necessity_cookbook(decomposition, bn=(), predictors=None, *, alpha: float = 0.05, margin: float | None = None) -> CookbookResult:
    """Run Algorithm 1 on a fitted decomposition (:func:`fairpath.causal.decompose` with predictors).

    Parameters
    ----------
    decomposition : a :class:`~fairpath.causal.CausalDecomposition` holding the outcome and the predictor columns (with
        several contrasts every contrast is tested and ``tests`` gets a ``contrast`` column), or one contrast's
        :class:`~fairpath.causal.ContrastDecomposition`.
    bn : the business-necessity set, pathways among "DE", "IE", "SE" (string "SE,IE" or iterable).
    predictors : predictor columns to judge (default: every outcome of the decomposition except Y).
    alpha : family-wise error level per predictor (Holm over the three pathway tests, or over contrasts × pathways).
    margin : δ > 0 for the equivalence tests; None runs only the tests for violations.
    """
    bn = parse_bn(bn)
    contrasts = getattr(decomposition, "decompositions", {decomposition.sfm.x1: decomposition})  # a ContrastDecomposition: itself
    first = next(iter(contrasts.values()))
    if len(contrasts) == 1:  # one contrast: tested as itself, with no contrast axis
        contrasts = None
    outcome = decomposition.outcomes[0]
    predictors = list(decomposition.outcomes[1:]) if predictors is None else check_columns_arg("predictors", predictors)
    missing = [p for p in predictors if p not in decomposition.outcomes[1:]]
    if missing:
        raise FairpathInputError(
            f"predictor(s) {missing} are not in the decomposition (its predictors: {list(decomposition.outcomes[1:])}); "
            "pass them to decompose(..., predictors=[...])"
        )
    if not predictors:
        raise FairpathInputError("no predictor to judge: pass predictors to decompose(..., predictors=[...])")
    for predictor in predictors:
        check_comparable_scales(outcome, first.fits[outcome].pseudo.y, predictor, first.fits[predictor].pseudo.y)
    tested = {None: decomposition} if contrasts is None else contrasts

    def effects(d):
        return {p: d.estimate(MEASURE_OF_PATHWAY[p], outcome=outcome).to_dict() for p in PATHWAYS}

    outcome_effects = effects(decomposition) if contrasts is None else {name: effects(d) for name, d in contrasts.items()}
    estimable = bool(getattr(decomposition, "estimable", True))
    left_out = {} if contrasts is None else {name: decomposition.not_estimable[name] for name in contrasts
                                             if name not in decomposition.family}
    all_rows, overall = [], {}
    for predictor in predictors:
        rows = [{**({} if name is None else {"contrast": name}), **_test_pathway(d, predictor, outcome, pathway, pathway in bn, margin)}
                for name, d in tested.items() for pathway in PATHWAYS]
        _judge(rows, alpha, margin, estimable, left_out)
        overall[predictor] = _overall(rows, margin)
        all_rows.extend(rows)
    return CookbookResult(bn=bn, alpha=alpha, margin=margin, outcome=outcome, tests=pd.DataFrame(all_rows), overall=overall,
                          outcome_effects=outcome_effects, estimable=estimable)
