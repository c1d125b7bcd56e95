"""Bad arguments to the synthetic models."""

from __future__ import annotations

import pytest

from fairpath import FairpathInputError
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm
from fairpath.datasets._synthetic import MultilevelSFM


@pytest.mark.parametrize("levels, message", [(7, "levels must be an integer ≤ 6 (fairpath's bound), got 7"),
                                             (1, "levels must be an integer ≥ 2, got 1"),
                                             (4.0, "levels must be an integer, got 4.0 (float); pass 4")])
def test_levels_out_of_range(levels, message):
    with pytest.raises(FairpathInputError, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        make_multilevel_sfm(10, seed=0, levels=levels)
    with pytest.raises(FairpathInputError, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        MultilevelSFM(levels)


def test_truth_for_refuses_levels_the_model_lacks():
    sample = make_multilevel_sfm(10, seed=0, levels=3)
    with pytest.raises(FairpathInputError, match=r"^x1=3 is not a level of X; the model's levels are 0 to 2$"):
        sample.truth_for(0, 3)
    with pytest.raises(FairpathInputError, match=r"^x0=-1 is not a level of X; the model's levels are 0 to 2$"):
        sample.truth_for(-1, 1)
    with pytest.raises(FairpathInputError, match=r"^x0 and x1 are both level 2; a contrast compares two different levels$"):
        sample.truth_for(2, 2)
    with pytest.raises(FairpathInputError, match=r"^x1 must be an integer, got 1.0 \(float\); pass 1$"):
        sample.truth_for(0, 1.0)
    with pytest.raises(FairpathInputError, match=r"^x1=2 is not a level of X; the model's levels are 0 to 1$"):
        make_binary_sfm(10, seed=0).truth_for(0, 2)
