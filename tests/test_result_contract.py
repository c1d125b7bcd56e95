"""Every result class keeps one contract (see ``fairpath._results``), checked over all of them at once.

``PLOT_WITHOUT_AX`` lists the classes whose ``plot`` does not yet take ``ax=None`` (they draw several
panels, or take other arguments first); a class leaves the list when it conforms, and a new result
class must conform or be listed here with its reason.
"""

from __future__ import annotations

import importlib
import inspect
import json

import numpy as np
import pandas as pd
import pytest

from fairpath._results import ResultMixin
from fairpath.repair import ConstrainedPath, FrontierResult

PUBLIC_PACKAGES = ("causal", "parity", "repair", "reproduce", "text", "text.debias")
PLOT_WITHOUT_AX = {
    "CompasStudy": "a study draws several figures (Figures 5 and 6)",
    "CensusStudy": "a study draws several figures (Figure 9 panels)",
    "PredictiveParity": "two panels: plot(axes=None)",
    "CookbookResult": "one panel per pathway",
    "AuditResult": "one panel per pathway",
    "FrontierResult": "two panels (iPPM and AUC against SPM)",
    "ConstrainedPath": "two panels (effects and accuracy against λ)",
    "LinearCheck": "two panels",
    "Theorem1Study": "the paper's two figures",
    "FairnessResult": "plot(k=10) first",
    "TextAuditResult": "plot(scorer=None) first",
    "DebiasStudyResult": "plot(scorer='vader') first",
}


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


def test_the_contract_covers_every_public_result_class():
    names = {cls.__name__ for cls in RESULT_CLASSES}
    assert {"CausalDecomposition", "AuditResult", "PPMDecomposition", "FrontierResult", "FairnessResult"} <= names
    assert set(PLOT_WITHOUT_AX) <= names  # no stale exemption


@pytest.mark.parametrize("cls", RESULT_CLASSES, ids=lambda cls: cls.__name__)
def test_every_result_class_offers_the_contract_methods(cls):
    for method in ("to_frame", "to_dict", "to_json", "summary", "save", "_repr_html_"):
        assert callable(getattr(cls, method, None)), f"{cls.__name__} lacks {method}()"
    assert len(inspect.signature(cls.save).parameters) >= 2, f"{cls.__name__}.save takes the output folder"
    plot = getattr(cls, "plot", None)
    if plot is not None and cls.__name__ not in PLOT_WITHOUT_AX:
        parameter = inspect.signature(plot).parameters.get("ax")
        assert parameter is not None and parameter.default is None, f"{cls.__name__}.plot must take ax=None"


def _path_result() -> ConstrainedPath:
    path = pd.DataFrame({"lambda": [0.0, 1.0, np.inf], "DE": [0.1, 0.02, 0.0], "IE": [0.2, 0.1, 0.05],
                         "SE": [0.05, 0.04, 0.04], "violation": [0.25, 0.07, 0.0], "loss": [0.5, 0.52, 0.55],
                         "auc": [0.8, 0.78, 0.75]})
    return ConstrainedPath(path, {"DE": 0.0, "IE": 0.05, "SE": 0.04}, 1.0, 0.1, ["IE", "SE"])


def _frontier_result() -> FrontierResult:
    runs = pd.DataFrame({"point": ["adapt none", "adapt none"], "kind": ["adaptation"] * 2, "bn_set": ["none"] * 2,
                         "seed": [0, 1], "spm": [0.01, 0.03], "ippm": [0.2, 0.25], "auc": [0.7, 0.72], "ippm_bins": [10, 10]})
    return FrontierResult(runs, {"repeats": 2, "quantile": 0.68})


@pytest.mark.parametrize("make", [_path_result, _frontier_result], ids=["ConstrainedPath", "FrontierResult"])
def test_the_shared_behaviour_on_real_results(make, tmp_path):
    result = make()
    assert isinstance(result.summary(), str) and result.summary() == repr(result)
    paths = result.save(tmp_path / "out")
    assert json.loads(paths["results"].read_text()) == json.loads(result.to_json())
    pd.testing.assert_frame_equal(pd.read_csv(paths["table"]), result.to_frame(), check_dtype=False)
    assert result._repr_html_().startswith("<table")
    assert type(result.plot()).__name__ == "Figure"
