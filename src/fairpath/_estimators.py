"""What fairpath's estimators add to scikit-learn's protocol: a not-fitted error that is also a
:class:`FairpathInputError`, and the old ``seed`` keyword kept as a deprecated alias of ``random_state``."""

from __future__ import annotations

import warnings

from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from fairpath._exceptions import FairpathInputError


class FairpathNotFittedError(FairpathInputError, NotFittedError):
    """An estimator used before ``fit``: both a :class:`FairpathInputError` and scikit-learn's ``NotFittedError``."""


def check_fitted(estimator, attributes: str | list[str]) -> None:
    """scikit-learn's ``check_is_fitted`` with fairpath's error type and a message saying what to do."""
    try:
        check_is_fitted(estimator, attributes, msg="this %(name)s is not fitted yet; call fit first")
    except NotFittedError as error:
        raise FairpathNotFittedError(str(error)) from None


def resolve_random_state(estimator) -> int:
    """The estimator's ``random_state``, or its deprecated ``seed`` when a caller still gives that."""
    if estimator.seed is None:
        return estimator.random_state
    warnings.warn(
        f"{type(estimator).__name__}(seed=...) is deprecated; use random_state=... (the same integer)",
        DeprecationWarning,
        stacklevel=4,  # the caller of fit, above fit and its parameter check (fairpath._validation.validate_params)
    )
    return estimator.seed
