"""fairpath: causal fairness audits of predictors and sentiment-bias audits of language models.

The package is built in layers; a module imports its own layer and lower ones only, and across
packages only public names (``tests/test_layers.py`` enforces both). Lowest first:

1. core: ``fairpath._*.py`` (exceptions, statistics, results, vocabulary, I/O, validation, progress,
   parallel backends, run folders, the Standard Fairness Model, the measures' algebra, the learners)
   and ``fairpath.report`` (self-contained HTML reports);
2. ``fairpath.causal``: the counterfactual decomposition;
3. ``fairpath.datasets``: COMPAS / Census loaders and synthetic SFMs with known effects. They are
   built on the core's SFM and measures and used only by the layers above (studies, demo, tests),
   so the estimators never depend on example data;
4. ``fairpath.adaptation``: causal graphs, ``FairAdapt`` (fair twins) and the quantile engines;
5. ``fairpath.parity``: predictive parity, its decomposition, the Business Necessity Cookbook, the audit;
6. ``fairpath.repair``: fair and constrained predictors and the SPM–iPPM–AUC frontier;
7. ``fairpath.text``: counterfactual sentiment-bias audits of language models (independent of 2–6);
8. ``fairpath.llm``: language models as decision-makers, audited with the causal decomposition (joins 5 and 7);
9. ``fairpath.reproduce``: the papers' studies, which may use any layer below;
10. ``fairpath.cli``: the command line.
"""

from fairpath._exceptions import FairpathInputError
from fairpath._version import __version__

__all__ = ["__version__", "FairpathInputError", "Estimate"]


def __getattr__(name: str):
    # Estimate's module loads numpy: on first access, so that ``import fairpath.cli`` (and ``fairpath --help``)
    # stays light. Every other name of the package lives in its subpackages.
    if name == "Estimate":
        from fairpath._stats import Estimate

        return Estimate
    raise AttributeError(f"module 'fairpath' has no attribute {name!r}")
