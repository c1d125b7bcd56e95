"""audit(predictor_functions=...): passed to the decomposition, recorded and said in the notes."""

from __future__ import annotations

import numpy as np

from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit


def _never_reads_x(frame):
    return 1 / (1 + np.exp(-(frame["z1"] + frame["z2"] + 0.5 * frame["w1"] - 0.5 * frame["w2"])))


def test_audit_passes_the_functions_and_says_so():
    sample = make_binary_sfm(1500, seed=4)
    data, sfm = sample.data.assign(blind=_never_reads_x(sample.data)), sample.sfm
    result = audit(data, sfm, ["blind"], "SE", predictor_functions={"blind": _never_reads_x}, learner="linear", n_boot=20,
                   progress=False)
    assert result.settings["known_means"] == ["blind"]
    assert any("E[Ŷ | x, z, w] of blind evaluated from the predictor's function" in note for note in result.notes)
    de = result.cookbook.tests.set_index(["predictor", "pathway"]).loc[("blind", "DE")]
    assert de["estimate"] == 0.0 and de["verdict"] != "violation"
