"""fairpath's omitted-variable-bias bounds against DoubleML's ``sensitivity_analysis`` on the case both express
(issue 39): a binary X with covariates Z and no mediator, where fairpath's TE is DoubleML's IRM ATE and fairpath's ETT
(the effect on the x0 group) is minus DoubleML's ATTE with the x0 group treated.

    pip install doubleml   # not a fairpath dependency: only this comparison needs it
    python benchmarks/compare_doubleml_sensitivity.py [--n 20000] [--seed 0] [--cf-y 0.03] [--cf-d 0.03]

Both tools use the same learners (linear and logistic regression, 5 folds, one split); their folds differ, so
their numbers agree to the sampling error of the fits, not exactly. What is compared:

* σ², the residual variance of the outcome regression: one definition in both.
* ν², the Riesz representer's second moment. DoubleML's representers also carry the observed group means (the ATE's
  1(X=1)/p − 1(X=0)/(1−p) holds E[Y·1(X=1)] − E[Y·1(X=0)], which no confounder biases); fairpath's hold only the
  unidentified part. In the population ν²(DoubleML) − ν²(fairpath) is exactly 3 for the ATE and 1/P(x0) for the
  ATTE; the bias bound √(cf_y·C²·σ²ν²) of one confounder is the same in both, only the parameter cf_d is relative
  to a different ν². So fairpath's bounds at (cf_y, cf_d) are compared with DoubleML's at (cf_y, cf_d′), where
  C′² = C²·ν²/ν²′ (C² = cf_d/(1 − cf_d)), and DoubleML's one-sided level (1 + ℓ)/2 against fairpath's two-sided ℓ.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.linear_model import LinearRegression, LogisticRegression

from fairpath.causal import SFM, decompose
from fairpath.causal._sensitivity import group_elements, kind_groups


def draw(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    x = (rng.random(n) < expit(-0.2 + z @ np.array([0.6, -0.4, 0.3]))).astype(int)
    y = 1.0 * x + z @ np.array([0.5, 0.3, -0.4]) + rng.standard_normal(n)
    return pd.DataFrame({"x": x, "z1": z[:, 0], "z2": z[:, 1], "z3": z[:, 2], "y": y})


def fairpath_elements(result, measure: str) -> tuple[float, float]:
    """σ² and ν² of the measure's one confounded regression part (first split)."""
    pseudo = result.for_contrast().fits["y"].pseudo
    (kind, terms), = kind_groups(measure, pseudo.share, pseudo.has_w).items()
    residual, riesz = group_elements(pseudo, kind, terms)
    return float(residual.mean()), float(riesz.mean())


def doubleml_fit(data: pd.DataFrame, treated: np.ndarray, score: str, seed: int):
    import doubleml

    frame = data.assign(d=treated.astype(int))
    dml_data = doubleml.DoubleMLData(frame, y_col="y", d_cols="d", x_cols=["z1", "z2", "z3"])
    np.random.seed(seed)  # DoubleML draws its folds from NumPy's global state
    model = doubleml.DoubleMLIRM(dml_data, ml_g=LinearRegression(), ml_m=LogisticRegression(max_iter=1000), n_folds=5,
                                 score=score)
    return model.fit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cf-y", type=float, default=0.03)
    parser.add_argument("--cf-d", type=float, default=0.03)
    parser.add_argument("--level", type=float, default=0.95)
    args = parser.parse_args()
    started = time.perf_counter()
    data = draw(args.n, args.seed)
    sfm = SFM(x="x", x0=0, x1=1, z=["z1", "z2", "z3"], w=[], y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(data, sfm, learner="linear", measures=("ett", "te"), n_rep=1, seed=args.seed, progress=False)
    bounds = result.sensitivity(cf_y=args.cf_y, cf_d=args.cf_d, level=args.level)
    p0 = float(np.mean(data["x"] == 0))
    rows = []
    # (fairpath measure, DoubleML score, treated indicator, sign: fairpath = sign × DoubleML, population ν² gap)
    for measure, score, treated, sign, gap in (("te", "ATE", data["x"] == 1, 1.0, 3.0), ("ett", "ATTE", data["x"] == 0, -1.0, 1 / p0)):
        dml = doubleml_fit(data, treated.to_numpy(), score, args.seed)
        sigma2, nu2 = fairpath_elements(result, measure)
        dml_sigma2 = float(np.squeeze(dml.sensitivity_elements["sigma2"]))
        dml_nu2 = float(np.squeeze(dml.sensitivity_elements["nu2"]))
        c2 = args.cf_d / (1 - args.cf_d) * nu2 / dml_nu2
        dml.sensitivity_analysis(cf_y=args.cf_y, cf_d=c2 / (1 + c2), rho=1.0, level=(1 + args.level) / 2)
        params = dml.sensitivity_params
        mine = bounds.row(measure)
        theta = sorted(sign * float(np.squeeze(params["theta"][side])) for side in ("lower", "upper"))
        ci = sorted(sign * float(np.squeeze(params["ci"][side])) for side in ("lower", "upper"))
        rows.append({
            "fairpath": measure, "DoubleML": score, "estimate": mine.estimate, "DoubleML estimate": sign * float(dml.coef[0]),
            "se": mine.se, "DoubleML se": float(dml.se[0]), "sigma2": sigma2, "DoubleML sigma2": dml_sigma2,
            "nu2": nu2, "DoubleML nu2": dml_nu2, "nu2 gap": dml_nu2 - nu2, "population gap": gap,
            "bound_low": mine.bound_low, "DoubleML theta lower": theta[0], "bound_high": mine.bound_high, "DoubleML theta upper": theta[1],
            "ci_low": mine.ci_low, "DoubleML ci lower": ci[0], "ci_high": mine.ci_high, "DoubleML ci upper": ci[1],
            "rv": mine.robustness_value, "DoubleML rv (its cf_d)": float(np.squeeze(params["rv"])),
        })
    table = pd.DataFrame(rows).set_index("fairpath").T
    print(f"n = {args.n}, seed {args.seed}, cf_y = {args.cf_y}, cf_d = {args.cf_d} (fairpath's), level {args.level}")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"wall time {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
