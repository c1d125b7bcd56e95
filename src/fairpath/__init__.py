"""fairpath: causal fairness audits of predictors and sentiment-bias audits of language models."""

from fairpath._exceptions import FairpathInputError
from fairpath._stats import Estimate
from fairpath._version import __version__

__all__ = ["__version__", "FairpathInputError", "Estimate"]
