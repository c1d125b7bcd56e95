"""One encoder of table columns into numbers for the learners, used by every layer that fits models.

Numeric and boolean columns pass as floats. Every other column is categorical: its categories are
learned by ``fit`` (a categorical dtype's own order, else the sorted text labels) and encoded as
indicators (one per category but the first, the reference) when there are at most
``max_one_hot_levels`` of them, else as integer codes 0, 1, …. New rows get the training rows'
columns, and a category ``fit`` never saw is refused with the column's name rather than coded as
something else.

The adaptation's transport coding (``fairpath.adaptation``: codes ordered by the outcome's mean,
decoded back after the quantile map) is a different map, kept there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._validation import is_numeric_column

# Up to this many categories a column becomes indicators; beyond, integer codes (tree learners split
# on codes well, and indicators of hundreds of levels cost too much memory).
MAX_ONE_HOT_LEVELS = 10


def _labels(values: pd.Series) -> pd.Series:
    return values if isinstance(values.dtype, pd.CategoricalDtype) else values.astype(str)


class CategoryEncoder:
    """Numbers for a learner from ``columns`` of a table (see the module docstring).

    ``max_one_hot_levels``: 0 codes every categorical column (for trees), ``math.inf`` gives
    indicators always (for linear models); ``what`` names the model in the unseen-category error.
    """

    def __init__(self, columns, max_one_hot_levels: float = MAX_ONE_HOT_LEVELS, what: str = "the model"):
        self.columns = list(columns)
        self.max_one_hot_levels = max_one_hot_levels
        self.what = what

    def fit(self, frame: pd.DataFrame) -> "CategoryEncoder":
        self.categories_ = {}
        for column in self.columns:
            values = frame[column]
            if is_numeric_column(values):
                continue
            labels = _labels(values)
            if isinstance(labels.dtype, pd.CategoricalDtype):
                self.categories_[column] = [str(c) for c in labels.cat.categories]
            else:
                self.categories_[column] = sorted(labels.unique())
        self.feature_names_ = [name for column in self.columns for name in self._names(column)]
        return self

    def _one_hot(self, column: str) -> bool:
        return len(self.categories_[column]) <= self.max_one_hot_levels

    def _names(self, column: str) -> list[str]:
        if column not in self.categories_ or not self._one_hot(column):
            return [column]
        return [f"{column}={level}" for level in self.categories_[column][1:]]

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        blocks = [self._encode(frame[column], column) for column in self.columns]
        return np.hstack(blocks) if blocks else np.empty((len(frame), 0))

    def fit_transform(self, frame: pd.DataFrame) -> np.ndarray:
        return self.fit(frame).transform(frame)

    def _encode(self, values: pd.Series, column: str) -> np.ndarray:
        if column not in self.categories_:
            return values.to_numpy(dtype=float)[:, None]
        known = self.categories_[column]
        # Each distinct label is looked up once, then the codes are gathered (a dict map per cell took
        # a third of preparing a 200,000-row table).
        distinct_codes, distinct = pd.factorize(_labels(values), use_na_sentinel=False)
        lookup = {label: code for code, label in enumerate(known)}
        labels = [str(label) for label in distinct]
        unseen = sorted({label for label in labels if label not in lookup})
        if unseen:
            raise FairpathInputError(
                f"column {column!r} has categories {unseen[:10]} that {self.what} never saw in training "
                f"(known: {known[:10]}); refit on data that contains them or recode them"
            )
        codes = np.array([lookup[label] for label in labels], dtype=int)[distinct_codes]
        if self._one_hot(column):
            return np.eye(len(known))[codes][:, 1:]
        return codes.astype(float)[:, None]

