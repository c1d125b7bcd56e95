"""What fairpath's estimators add to scikit-learn's protocol: a not-fitted error that is also a
:class:`FairpathInputError`."""

from __future__ import annotations

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
