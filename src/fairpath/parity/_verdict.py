"""Verdicts in words: what the Cookbook found for a predictor, and what its predictive parity means.

Effects and the iPPM of a 0/1 outcome are differences of probabilities, so they are said in
percentage points (pp) of the outcome; those of any other outcome in the outcome's own units.

Predictive parity is judged with Theorem 1 (Plečko & Bareinboim, AAAI 2024): within a bin b of ŷ,

    PPM_b = E[Y − Y_{x0} | x1, ŷ∈b]  (Term I: the outcome's causal effect among x1)
          + E[Y_{x0} | x1, ŷ∈b] − E[Y | x0, ŷ∈b]  (Term II).

A calibrated predictor needs Term II to cancel Term I, which only a predictor that keeps the
pathways the outcome's disparity flows through can do. So with BN = ∅ a causally fair predictor
cannot in general be calibrated across groups whenever Y itself differs by group, while with
BN = {DE, IE, SE} ŷ may approach the Bayes predictor E[Y | x, z, w], which is calibrated: predictive
and statistical parity are reconciled only as BN grows to hold those pathways (the paper's Figure 6).
"""

from __future__ import annotations

from fairpath._stats import p_clause
from fairpath._vocabulary import PATHWAY_NAMES, PATHWAYS
from fairpath.parity._cookbook import CERTIFIED, NOT_ESTIMABLE, VIOLATION


def bn_text(bn) -> str:
    return "{" + ", ".join(bn) + "}" if bn else "∅"


def amount(value: float, percent: bool) -> str:
    """A difference in the outcome's units: percentage points for a 0/1 outcome."""
    return f"{100 * value:+.1f} pp" if percent else f"{value:+.4f}"


def interval(low: float, high: float, level: float, percent: bool) -> str:
    if percent:
        return f"[{level:.0%} CI {100 * low:+.1f}, {100 * high:+.1f} pp]"
    return f"[{level:.0%} CI {low:+.4f}, {high:+.4f}]"


def _with_interval(estimate, percent: bool) -> str:
    """``+4.5 pp [95% CI +1.2, +7.8 pp]`` from an Estimate or a dict / row with the same fields."""
    get = estimate.get if isinstance(estimate, dict) else lambda name: getattr(estimate, name)
    return f"{amount(get('estimate'), percent)} {interval(get('ci_low'), get('ci_high'), get('level'), percent)}"


def verdict_sentence(cookbook, predictor: str, *, percent: bool) -> str:
    """The Cookbook's finding for ``predictor`` in one sentence: ``predictor: STATUS under BN = ...: finding``."""
    return f"{predictor}: {cookbook.overall[predictor]['status']} under BN = {bn_text(cookbook.bn)}: {verdict_finding(cookbook, predictor, percent=percent)}"


def verdict_finding(cookbook, predictor: str, *, percent: bool) -> str:
    """What the verdict rests on, with the p of its claim: the violations shown (each with its Holm p),
    every pathway certified (the largest TOST Holm p), or no violation shown (the smallest Holm p,
    which is not a proof of compliance); each test not estimable is named with why, and left out."""
    tests = cookbook.tests[cookbook.tests["predictor"] == predictor]
    left_out = tests[tests["verdict"] == NOT_ESTIMABLE]
    why = "".join(f" {claim}" for claim in dict.fromkeys(left_out["claim"]))
    if len(left_out) == len(tests):
        return f"no test is estimable, so nothing is shown or certified.{why}"
    caveat = ("" if cookbook.estimable else " The decomposition is not estimable (the groups barely overlap), so nothing is certified.") + why
    tests = tests[tests["verdict"] != NOT_ESTIMABLE]
    violations = tests[tests["verdict"] == VIOLATION]
    if len(violations) and "contrast" in tests:  # every level of X: the violations per contrast, their numbers in the matrix
        shown = "; ".join(f"{contrast}: " + ", ".join(f"{row.pathway} ({p_clause('Holm p', row.p_holm)})" for row in rows.itertuples())
                          for contrast, rows in violations.groupby("contrast", sort=False))
        return (f"a violation is shown at α = {cookbook.alpha} in {len(violations)} of {len(tests)} contrast × pathway tests: "
                f"{shown}.{caveat}")
    if len(violations):
        shown = "; ".join(
            f"{row.tested} = {_with_interval(row, percent)} on the {PATHWAY_NAMES[row.pathway]} pathway, "
            f"{'which BN permits but the predictor does not reproduce' if row.in_bn else 'which BN does not permit'} "
            f"({p_clause('Holm p', row.p_holm)})"
            for row in violations.itertuples()
        )
        return f"a violation is shown at α = {cookbook.alpha}: {shown}.{caveat}"
    if cookbook.margin is not None and left_out.empty and (tests["verdict"] == CERTIFIED).all():
        return (f"every pathway is certified within ±{amount(cookbook.margin, percent).lstrip('+')} "
                f"({p_clause('largest TOST Holm p', tests['tost_p_holm'].max())} < α = {cookbook.alpha}).{caveat}")
    return (f"no violation is shown ({p_clause('smallest Holm p', tests['p_holm'].min())} ≥ α = {cookbook.alpha}); "
            f"this is absence of evidence, not a proof of compliance.{caveat}")


def parity_sentence(parity, *, percent: bool, original=None) -> str:
    """The predictor's iPPM with its interval and level; beside ``original``'s (another PredictiveParity
    on the same rows) when given, with the change in distance from 0 said as a gain or a loss."""
    text = (f"Predictive parity of {parity.predictor}: iPPM = {_with_interval(parity.ippm, percent)} "
            "(0: equally calibrated in both groups)")
    if original is None:
        return text + "."
    change = abs(parity.ippm.estimate) - abs(original.ippm.estimate)
    direction = "further from 0, a loss in predictive parity" if change > 0 else "closer to 0, a gain in predictive parity"
    return (f"{text}, against {_with_interval(original.ippm, percent)} for {original.predictor}: "
            f"{amount(abs(change), percent).lstrip('+')} {direction} (point estimates on the same rows).")


def bn_parity_sentence(bn, outcome: str, outcome_effects: dict, *, data_label: str, percent: bool) -> str:
    """What the business-necessity set implies for predictive parity (Theorem 1, see the module doc),
    naming the removed pathways whose effect on the outcome (measured on the ``data_label`` rows) is
    shown (its interval excludes 0)."""
    removed = [p for p in PATHWAYS if p not in bn]
    if not removed:
        return (f"BN = {bn_text(bn)} keeps every pathway, so a compliant predictor may approach the Bayes predictor "
                f"E[{outcome} | x, z, w], which is calibrated in both groups: predictive parity can hold (Theorem 1, Figure 6).")
    effects = ", ".join(f"Ctf-{p}({outcome}) = {_with_interval(outcome_effects[p], percent)}" for p in removed)
    flowing = [p for p in removed if outcome_effects[p]["ci_low"] > 0 or outcome_effects[p]["ci_high"] < 0]
    if not flowing:
        return (f"BN = {bn_text(bn)} removes {', '.join(removed)}, but the outcome's effects there ({data_label}) are not shown to differ "
                f"from 0 ({effects}), so by Theorem 1 removing them need not cost predictive parity.")
    return (f"BN = {bn_text(bn)} removes {', '.join(removed)}, and the outcome's own disparity ({data_label}) flows through "
            f"{', '.join(flowing)} ({effects}): by Theorem 1 (PPM = Term I, the outcome's causal effect, + Term II) a "
            "predictor without these pathways cannot in general be calibrated across groups, so a predictive-parity gap is "
            "the expected price; predictive and statistical parity are reconciled only when BN holds the pathways the "
            "outcome's disparity flows through (BN = {DE, IE, SE}: ŷ close to the Bayes predictor, Figure 6).")
