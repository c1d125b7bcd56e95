"""How strong a hidden confounder must be to change a Cookbook verdict (fairpath.parity._robustness): the strength at
which the interval its Holm step reads reaches the null (a violation) or the margin (a certified pathway)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fairpath.causal import SFM
from fairpath.causal._sensitivity import confidence_bounds, sensitivity_items
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm
from fairpath.parity import audit
from fairpath.parity._cookbook import CERTIFIED, NO_EVIDENCE, VIOLATION


def _check(result):
    """Every verdict's strength against its own definition: below it the claim holds, at it the bounds touch the null."""
    bounds = result.sensitivity()
    verdicts = bounds.verdicts
    assert len(verdicts) == len(result.cookbook.tests)
    checked = set()
    for row, test in zip(verdicts.itertuples(), result.cookbook.tests.itertuples()):
        assert (row.predictor, row.pathway, row.verdict) == (test.predictor, test.pathway, test.verdict)
        if row.verdict not in (VIOLATION, CERTIFIED):
            assert np.isnan(row.robustness_value) and "nothing a confounder could take away" in row.claim
            continue
        contrast = getattr(test, "contrast", result.contrasts[0])
        subject = f"{test.predictor} − {result.cookbook.outcome}" if test.in_bn else test.predictor
        item = sensitivity_items(result.decomposition.decompositions[contrast])[0][(subject, test.measure)]
        r = row.robustness_value
        assert 0 < r < 1
        at, before = confidence_bounds(item, r, row.holm_level), confidence_bounds(item, 0.98 * r, row.holm_level)
        if row.verdict == VIOLATION:
            assert min(abs(at[0]), abs(at[1])) == pytest.approx(0.0, abs=1e-8)
            assert before[0] > 0 or before[1] < 0
            # at no confounding the Holm step's interval is the test's own: it excludes 0 exactly when Holm rejects
            low, high = confidence_bounds(item, 0.0, row.holm_level)
            assert (low > 0 or high < 0) and test.p_holm < result.cookbook.alpha
        else:
            margin = result.cookbook.margin
            assert max(abs(at[0]), abs(at[1])) == pytest.approx(margin, abs=1e-8)
            assert -margin < before[0] and before[1] < margin
        checked.add(row.verdict)
    return checked


def test_each_verdict_changes_where_its_holm_interval_reaches_the_null_or_the_margin():
    sample = make_binary_sfm(3000, seed=1)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = audit(data, sample.sfm, ["oracle"], "SE", learner="linear", seed=1, progress=False, margin=0.1, n_boot=20)
    assert _check(result) == {VIOLATION, CERTIFIED}
    summary = result.sensitivity().summary()
    assert "Cookbook verdicts: the confounding strength that would change each" in summary
    assert "oracle, SE: certified: no longer certified under a confounder of strength" in summary


def test_every_contrast_of_k_levels_and_no_evidence():
    sample = make_multilevel_sfm(2400, seed=3, levels=3)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data), noise=np.random.default_rng(0).random(2400))
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = audit(data, sfm, ["oracle", "noise"], "DE,IE,SE", learner="linear", seed=1, progress=False, n_rep=1, n_boot=20)
    checked = _check(result)
    assert VIOLATION in checked and NO_EVIDENCE in set(result.sensitivity().verdicts["verdict"])
    assert set(result.sensitivity().verdicts["contrast"]) == set(result.contrasts)
