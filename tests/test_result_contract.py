"""Every result class keeps one contract (see ``fairpath._results``), checked over all of them at once.

The class-level checks run over every public result class; the instance checks over a real, small
instance of every class but the COMPAS and Census studies (their quick runs: tests/reproduce).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pickle
import warnings
from pathlib import Path

import matplotlib
import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from frames import as_read
from huang_tables import debias_study, huang_result

from fairpath._exceptions import FairpathInputError
from fairpath._results import CORE_COLUMNS, ResultMixin
from fairpath.datasets import make_appendix_a2, make_binary_sfm
from fairpath.text import compare_models, counterfactual_fairness

PUBLIC_PACKAGES = ("causal", "parity", "repair", "reproduce", "text", "text.debias", "llm")
# Panels a plot draws: plot(ax=...) then takes a sequence of that many axes (one Axes when 1).
# A decomposition of several contrasts draws the forest plot (four panels); of one contrast, its bars (one panel).
PANELS = {"RepairResult": 2, "PredictiveParity": 2, "CookbookResult": 3, "AuditResult": 4, "ContrastAudit": 4, "FrontierResult": 2,
          "ConstrainedPath": 2, "DebiasStudyResult": 2, "Theorem1Result": 2, "HuangResult": 4, "CausalDecomposition[K=3]": 4,
          "AuditResult[K=3]": 4}


def _result_classes() -> list[type]:
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(f"fairpath.{package}")
        for name in module.__all__:
            getattr(module, name)  # lazy names load their modules too
    found, stack = {}, list(ResultMixin.__subclasses__())
    while stack:
        cls = stack.pop()
        found[cls.__name__] = cls
        stack.extend(cls.__subclasses__())
    return [found[name] for name in sorted(found)]


RESULT_CLASSES = _result_classes()


def _shape_faults(cls) -> list[str]:
    """How a class departs from the one shape (``fairpath._results.result_class``): a frozen dataclass compared by
    identity, built by keyword only, its public fields without scikit-learn's trailing underscore."""
    if not dataclasses.is_dataclass(cls):
        return ["not a dataclass"]
    params, fields = cls.__dataclass_params__, dataclasses.fields(cls)
    faults = [f"{flag} is not {wanted}" for flag, wanted in (("frozen", True), ("eq", False), ("repr", False))
              if getattr(params, flag) is not wanted]
    faults += [f"field {f.name} is not keyword-only" for f in fields if f.init and not f.kw_only]
    faults += [f"field {f.name} ends in an underscore" for f in fields if f.name.endswith("_")]
    positional = [name for name, p in inspect.signature(cls).parameters.items() if p.kind is not p.KEYWORD_ONLY]
    return faults + [f"the constructor takes {positional} by position" for _ in positional[:1]]


def test_the_contract_covers_every_public_result_class():
    names = {cls.__name__ for cls in RESULT_CLASSES}
    assert {"CausalDecomposition", "ContrastDecomposition", "AuditResult", "ContrastAudit", "PPMDecomposition", "FrontierResult",
            "FairnessResult"} <= names
    assert {name.split("[")[0] for name in PANELS} <= names and len(names) >= 15


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda cls: cls.__name__)
def test_every_result_class_offers_the_contract(cls):
    for method in ("to_frame", "to_dict", "to_json", "summary", "save", "_repr_html_", "plot"):
        assert callable(getattr(cls, method, None)), f"{cls.__name__} lacks {method}()"
    assert cls.summary is not ResultMixin.summary and cls.to_frame is not ResultMixin.to_frame
    assert cls.__repr__ is ResultMixin.__repr__, f"{cls.__name__} must keep the one-line repr"
    assert len(inspect.signature(cls.save).parameters) >= 2, f"{cls.__name__}.save takes the output folder"
    parameter = inspect.signature(cls.plot).parameters.get("ax")
    assert parameter is not None and parameter.default is None, f"{cls.__name__}.plot must take ax=None"
    others = [p for name, p in inspect.signature(cls.plot).parameters.items() if name not in ("self", "ax")]
    assert all(p.kind is p.KEYWORD_ONLY for p in others), f"{cls.__name__}.plot: options after ax are keyword-only"
    assert not _shape_faults(cls), f"{cls.__name__}: {_shape_faults(cls)}"


# -- real instances ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def audited():
    from fairpath.parity import audit

    sample = make_binary_sfm(800, seed=2)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data))
    with warnings.catch_warnings():  # a few rows with an extreme propensity: not what is tested here
        warnings.simplefilter("ignore")
        return audit(data, sample.sfm, ["oracle"], "SE", learner="linear", n_folds=2, n_boot=20, seed=1, progress=False)


@pytest.fixture(scope="module")
def audited_levels():
    """An audit of every level of a three-level X (its decomposition is the CausalDecomposition instance)."""
    from fairpath.causal import SFM
    from fairpath.datasets import make_multilevel_sfm
    from fairpath.parity import audit

    sample = make_multilevel_sfm(1200, seed=2, levels=3)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data))
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(data, sfm, ["oracle"], "DE,IE,SE", learner="linear", n_folds=2, n_boot=20, n_rep=1, seed=1, progress=False)


def _score_table(seed: int, shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"template_id": f"t{t}", "value": value, "subgroup": group, "score": float(score)}
            for t in range(3) for value, group in (("a", "g1"), ("b", "g1"), ("c", "g2"))
            for score in rng.beta(2 + shift * (value == "a"), 2, size=8)]
    return pd.DataFrame(rows)


def _ppm_decomposition():
    from fairpath.parity import ppm_decomposition

    sample = make_appendix_a2(600, seed=3)
    data = sample.data.assign(y_hat=sample.outcome_mean(sample.data), y_x0=sample.potential_outcomes["y_x0"].to_numpy())
    return ppm_decomposition(data, sample.sfm, "y_hat", "y_x0", n_bins=4, n_boot=20)


def _frontier():
    from fairpath.repair import FrontierResult

    runs = pd.DataFrame({"point": ["adapt none", "adapt none", "unconstrained"], "kind": ["adaptation"] * 2 + ["unconstrained"],
                         "bn_set": ["none", "none", "-"], "seed": [0, 1, 0], "spm": [0.01, 0.03, 0.2],
                         "ippm": [0.2, 0.25, 0.02], "auc": [0.7, 0.72, 0.74], "ippm_bins": [10, 10, 10]})
    return FrontierResult(runs=runs, settings={"repeats": 2, "quantile": 0.68})


def _constrained_path():
    from fairpath.repair import ConstrainedPath

    path = pd.DataFrame({"lambda": [0.0, 1.0, np.inf], "DE": [0.1, 0.02, 0.0], "IE": [0.2, 0.1, 0.05],
                         "SE": [0.05, 0.04, 0.04], "violation": [0.25, 0.07, 0.0], "loss": [0.5, 0.52, 0.55],
                         "auc": [0.8, 0.78, 0.75]})
    return ConstrainedPath(path=path, targets={"DE": 0.0, "IE": 0.05, "SE": 0.04}, chosen=1.0, tolerance=0.1, bn=["IE", "SE"])


def _repair():
    from sklearn.linear_model import LogisticRegression

    from fairpath.repair import repair

    sample = make_binary_sfm(500, seed=4)
    with warnings.catch_warnings():  # empty bootstrap cells of the unconstrained score: not what is tested here
        warnings.simplefilter("ignore")
        return repair(sample.data, sample.sfm, bn="SE", engine="linear", learner=LogisticRegression(max_iter=1000),
                      audit_learner="linear", n_boot=20, seed=0)


def _text_audit():
    from fairpath.text import FairnessSpec, GenerationSettings, audit_text
    from fairpath.text._controlled import PoolGenerator

    spec = FairnessSpec.from_dict({"attribute": "country", "values": {"north": ["A", "B"], "south": ["C", "D"]},
                                   "templates": ["I am from {country}.", "People from {country} are"]})
    return audit_text(spec, PoolGenerator(spec, mixing={"A": 0.8}), scorers=["vader"], settings=GenerationSettings(n_samples=6),
                      quality=False, n_permutations=19, progress=False)


def _linear_check():
    from fairpath.reproduce import check_linear_case

    return check_linear_case(n=800, seed=0)


def _theorem1_study():
    """The study object over small Figure 7 and 8 tables (its tasks are run in tests/reproduce)."""
    from fairpath.reproduce import Theorem1Settings, Theorem1Result

    settings = Theorem1Settings(n_grid=(300, 600), n_reps=2, per_bin_n=600, per_bin_reps=3, n_bins=5)
    figure7 = pd.DataFrame([{"quantity": q, "n": n, "mean": mean, "sd": 0.05, "mean_abs": abs(mean), "mean_true_y_x0": mean,
                             "mean_bayes_predictor": 0.01, "sd_excess_over_bayes": 0.02, "n_reps": 2}
                            for q, mean in (("ippm", 0.02), ("iterm1", 1.7), ("iterm2", -1.68)) for n in settings.n_grid])
    figure8 = pd.DataFrame({"bin": range(1, 6), "term1_mean": 1.7, "term1_sd": 0.1, "term1_true_mean": 1.72, "n_reps": 3,
                            "within_2sd": True})
    return Theorem1Result(figure7=figure7, figure8=figure8, linear=_linear_check(), settings=settings, seconds=1.0,
                          compute_seconds=1.0, n_tasks_run=0, out=Path("theorem1"))


def _llm_audit():
    from scripted_decider import ScriptedDecider

    from fairpath.llm import llm_audit

    sample = make_binary_sfm(600, seed=5)
    decider = ScriptedDecider(lambda x, z, w: 0.3 + 0.1 * x + 0.1 * w[:, 1] + 0.15 * np.tanh(z[:, 0]))
    with warnings.catch_warnings():  # a few rows with an extreme propensity: not what is tested here
        warnings.simplefilter("ignore")
        return llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=decider, learner="linear", n_bins=4, n_boot=20,
                         progress=False)


MAKERS = {
    "CausalDecomposition": lambda audited: audited.decomposition,
    "ContrastDecomposition": lambda audited: audited.decomposition.for_contrast(),
    "SensitivityResult": lambda audited: audited.decomposition.sensitivity(cf_y=0.02, cf_d=0.05),
    "PredictiveParity": lambda audited: audited.for_contrast().parity["oracle"],
    "CookbookResult": lambda audited: audited.cookbook,
    "AuditResult": lambda audited: audited,
    "ContrastAudit": lambda audited: audited.for_contrast(),
    "PPMDecomposition": lambda _: _ppm_decomposition(),
    "FrontierResult": lambda _: _frontier(),
    "RepairResult": lambda _: _repair(),
    "ConstrainedPath": lambda _: _constrained_path(),
    "LinearCheck": lambda _: _linear_check(),
    "FairnessResult": lambda _: counterfactual_fairness(_score_table(0, shift=3.0), scorer="beta", n_permutations=19),
    "ModelComparison": lambda _: compare_models(_score_table(0, shift=3.0), _score_table(1), scorer="beta", n_permutations=19),
    "TextAuditResult": lambda _: _text_audit(),
    "DebiasStudyResult": lambda _: debias_study(),
    "HuangResult": lambda _: huang_result(),
    "Theorem1Result": lambda _: _theorem1_study(),
    "LLMAuditResult": lambda _: _llm_audit(),
}
LEVEL_MAKERS = {"AuditResult[K=3]": lambda levels: levels, "CausalDecomposition[K=3]": lambda levels: levels.decomposition}


@pytest.fixture(params=sorted([*MAKERS, *LEVEL_MAKERS]))
def result(request, audited, audited_levels):
    if request.param in LEVEL_MAKERS:
        return LEVEL_MAKERS[request.param](audited_levels)
    return MAKERS[request.param](audited)


def _panels(result) -> int:
    name = type(result).__name__
    return PANELS.get(f"{name}[K=3]" if getattr(result, "single", True) is False else name, 1)


def test_every_class_without_a_real_instance_here_is_a_paper_study():
    assert {cls.__name__ for cls in RESULT_CLASSES} - set(MAKERS) == {"CompasResult", "CensusResult"}


def test_to_frame_starts_with_the_core_columns_and_states_levels_only_beside_intervals(result):
    frame = result.to_frame()
    assert tuple(frame.columns[: len(CORE_COLUMNS)]) == CORE_COLUMNS and len(frame)
    assert frame["subject"].notna().all() and frame["measure"].notna().all()
    interval = frame["ci_low"].notna() & frame["ci_high"].notna()
    assert frame.loc[~interval, "level"].isna().all()
    assert ((frame.loc[interval, "level"] > 0) & (frame.loc[interval, "level"] < 1)).all()
    inside = frame[interval]  # an estimate is never shown beside an interval that does not hold it
    assert ((inside["ci_low"] <= inside["estimate"] + 1e-12) & (inside["estimate"] <= inside["ci_high"] + 1e-12)).all()


def test_text_results_have_no_interval_on_w1(audited):
    """Huang et al.'s W1 has no interval with verified coverage; the debias study's between-value spread has one."""
    for name in ("FairnessResult", "ModelComparison", "DebiasStudyResult"):
        frame = MAKERS[name](audited).to_frame()
        w1 = frame[~frame["measure"].str.endswith("_spread")]
        assert frame[["se", "ci_low", "ci_high", "level"]].isna().all().all() if name != "DebiasStudyResult" else \
            w1[["se", "ci_low", "ci_high", "level"]].isna().all().all(), name


def test_repr_is_one_line_and_summary_the_readable_text(result):
    text = repr(result)
    assert "\n" not in text and text.startswith(f"{type(result).__name__}(") and text.endswith(")")
    first = result.to_frame().iloc[0]
    assert f"{first['subject']} {first['measure']}={first['estimate']:.4g}" in text
    summary = result.summary()
    assert isinstance(summary, str) and summary and summary != text


def test_save_writes_the_three_files_then_the_declared_ones(result, tmp_path):
    out = tmp_path / "out"
    paths = result.save(out) if type(result).__name__ != "HuangResult" else result.save(out, force=True)
    assert [paths[name] for name in ("result", "table", "report")] == [out / "result.json", out / "result.csv", out / "report.html"]
    assert all(path.exists() for path in paths.values()) and len(set(paths.values())) == len(paths)
    assert json.loads(paths["result"].read_text()) == json.loads(result.to_json())
    written = as_read(result.to_frame())  # to_frame() as CSV holds it (types aside)
    pd.testing.assert_frame_equal(pd.read_csv(paths["table"]), written)
    page = paths["report"].read_text(encoding="utf-8")
    assert page.lower().startswith("<!doctype html>") and "</html>" in page
    listed = json.loads((out / ".fairpath-outputs.json").read_text())["files"]  # what the next save replaces
    assert set(listed) >= {str(path.relative_to(out)) for path in paths.values()}
    assert "<" in result._repr_html_()


def test_no_result_class_keeps_a_writer_beside_save():
    for cls in RESULT_CLASSES:
        assert not [name for name in ("write_report", "write_record") if hasattr(cls, name)], cls.__name__


def test_plot_returns_a_figure_and_draws_on_given_axes(result):
    figure = result.plot()
    assert isinstance(figure, matplotlib.figure.Figure)
    plt.close(figure)
    panels = _panels(result)
    given, axes = plt.subplots(1, panels)
    drawn = result.plot(ax=axes)
    assert drawn is given and all(ax.has_data() for ax in np.atleast_1d(axes))
    plt.close(given)
    wrong, too_many = plt.subplots(1, panels + 1)
    with pytest.raises(FairpathInputError, match=f"this plot draws {panels} panel"):
        result.plot(ax=too_many)
    plt.close(wrong)


def test_plots_and_reports_leave_the_backend_and_pyplot_alone(result, tmp_path):
    """Every plot method and save (its report and figures) draw without selecting or changing the user's backend;
    no figure is left for pyplot to keep."""
    user_backend = matplotlib.get_backend()
    matplotlib.use("svg")  # not what fairpath would pick, so that a plot setting its own backend is seen
    try:
        methods = sorted(name for name in dir(result) if name.startswith("plot") and callable(getattr(result, name)))
        figures = [getattr(result, name)() for name in methods]
        kwargs = {"force": True} if type(result).__name__ == "HuangResult" else {}
        assert result.save(tmp_path / "out", **kwargs)["report"].exists()
        assert matplotlib.get_backend() == "svg", f"{type(result).__name__}: {methods} or save changed the backend"
        assert figures and all(isinstance(figure, matplotlib.figure.Figure) for figure in figures)
        assert plt.get_fignums() == [], f"{type(result).__name__}: a figure left open in pyplot"
    finally:
        plt.close("all")
        matplotlib.use(user_backend)


def test_public_data_is_read_only_and_results_pickle(result):
    for field in dataclasses.fields(result):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, field.name, None)
    again = pickle.loads(pickle.dumps(result))
    pd.testing.assert_frame_equal(again.to_frame(), result.to_frame())
