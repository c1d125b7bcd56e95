"""Generated checks of every public function and class that declares its parameters (as scikit-learn's
test_public_functions): each declared parameter gets the values its constraint refuses (wrong types, out of
range, nan/inf, unknown choices), and each must raise FairpathInputError naming that parameter.

A public callable that takes one of the scalar settings in ``SCALAR_NAMES`` must declare it, so a new public
function cannot skip the shared checks unnoticed.
"""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._validation import ColumnName, Columns, Frame, Optional, Seed, Text

PACKAGES = ("fairpath", "fairpath.causal", "fairpath.datasets", "fairpath.adaptation", "fairpath.parity", "fairpath.repair",
            "fairpath.report", "fairpath.reproduce", "fairpath.text", "fairpath.text.debias", "fairpath.llm")

# Settings that are numbers, flags or choices wherever they appear: a public callable taking one declares it.
SCALAR_NAMES = {"seed", "random_state", "n_folds", "n_boot", "nboot1", "nboot2", "n_rep", "n_bins", "level", "alpha", "margin", "eps",
                "holdout", "quantile", "repeats", "n_permutations", "n_jobs", "workers", "quick", "progress", "selection_rate",
                "n_samples", "batch_size", "max_new_tokens", "temperature", "top_p", "top_k", "steps", "learning_rate"}

# Records that fairpath builds and returns (their fields are computed, not given), and the audit's settings record,
# whose values load_config / AuditConfig.from_mapping check with audit()'s own declared constraints.
NOT_ENTRY_POINTS = {"fairpath.Estimate", "fairpath.parity.CookbookResult", "fairpath.text.FairnessResult", "fairpath.text.ModelComparison",
                    "fairpath.text.PermutationTest", "fairpath.reproduce.LinearCheck", "fairpath.parity.AuditConfig",
                    "fairpath.text.SpreadComparison", "fairpath.text.SpreadEstimate", "fairpath.text.SpreadPower",
                    "fairpath.text.SpreadTest", "fairpath.text.ValueSpread"}

# Valid values for required parameters whose constraint the call checks before the one under test.
EXAMPLES = {Frame: pd.DataFrame({"a": [1.0, 2.0]}), ColumnName: "a", Columns: [], Text: "a", Seed: 0}


def _public():
    seen = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, (np.ufunc,)) and id(obj) not in seen:
                seen[id(obj)] = (f"{package}.{name}", obj)
    return sorted(seen.values(), key=lambda item: item[0])


PUBLIC = _public()


def _constraints(obj) -> dict:
    declared = getattr(obj, "parameter_constraints", None)
    if declared is None and inspect.isclass(obj):
        declared = getattr(obj.__init__, "parameter_constraints", None)
    return dict(declared or {})


def _signature(obj) -> inspect.Signature:
    return inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)


def _cases():
    for qualname, obj in PUBLIC:
        constraints = _constraints(obj)
        for parameter, constraint in constraints.items():
            for bad in constraint.invalid():
                yield pytest.param(obj, parameter, bad, id=f"{qualname}-{parameter}-{bad!r}")


CASES = list(_cases())


def _required(obj, skip: str) -> dict:
    """Arguments for the parameters without a default: a valid value where one is declared, else a placeholder
    (the declared parameters are checked before the body reads anything)."""
    constraints = _constraints(obj)
    arguments = {}
    for name, parameter in _signature(obj).parameters.items():
        if name in ("self", skip) or parameter.default is not inspect.Parameter.empty or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        constraint = constraints.get(name)
        constraint = constraint.inner if isinstance(constraint, Optional) else constraint
        arguments[name] = EXAMPLES.get(type(constraint))
    return arguments


def _call(obj, parameter: str, value) -> None:
    arguments = {**_required(obj, parameter), parameter: value}
    made = obj(**arguments)
    if inspect.isclass(obj) and hasattr(obj, "parameter_constraints") and hasattr(obj, "fit"):  # an estimator: checked by fit
        fit_parameters = [p for p in inspect.signature(made.fit).parameters.values() if p.default is inspect.Parameter.empty
                          and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        made.fit(*[None] * len(fit_parameters))


def test_cases_are_generated():
    # one case per refused value of every declared parameter: the count shows when a declaration goes missing
    assert len(CASES) >= 500, len(CASES)


@pytest.mark.parametrize("obj, parameter, value", CASES)
def test_refused_values_name_the_parameter(obj, parameter, value):
    with pytest.raises(FairpathInputError) as error:
        _call(obj, parameter, value)
    assert re.search(rf"(?<![\w-]){re.escape(parameter)}(?![\w-])", str(error.value)), str(error.value)


@pytest.mark.parametrize("qualname, obj", [pytest.param(q, o, id=q) for q, o in PUBLIC if q not in NOT_ENTRY_POINTS])
def test_scalar_settings_are_declared(qualname, obj):
    try:
        parameters = set(_signature(obj).parameters)
    except (TypeError, ValueError):  # a builtin without a signature
        return
    undeclared = sorted((parameters & SCALAR_NAMES) - set(_constraints(obj)))
    assert not undeclared, f"{qualname} takes {undeclared} without declaring them (fairpath._validation.validate_params)"
