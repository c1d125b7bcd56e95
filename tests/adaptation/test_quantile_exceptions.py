"""Bad quantile engines are refused by name."""

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.adaptation import make_engine


def test_unknown_engine_name():
    with pytest.raises(FairpathInputError, match=r"unknown quantile engine 'qrnn'; choose one of \['forest', 'linear'\]"):
        make_engine("qrnn", seed=0)


def test_engine_object_without_the_interface():
    class HalfEngine:
        def fit(self, features, target):
            return self

    with pytest.raises(FairpathInputError, match="needs a ranks\\(\\) method; HalfEngine has none"):
        make_engine(HalfEngine(), seed=0)
