"""`fairpath audit --fail-on`: the exit status a CI step reads."""

import numpy as np
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity._oracles import oracle_predictors


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    sample = make_binary_sfm(1200, seed=5)
    data = sample.data.join(oracle_predictors(sample, seed=5)[["oracle", "z_only"]])
    path = tmp_path_factory.mktemp("data") / "data.csv"
    data.assign(group=np.where(data["x"] == 1, "B", "A")).to_csv(path, index=False)
    return path


def _audit(data_file, predictor, out, *extra):
    return main(["audit", str(data_file), "--x", "group", "--x0", "A", "--x1", "B", "--z", "z1,z2", "--w", "w1,w2", "--y", "y",
                 "--predictor", predictor, "--bn", "SE", "--learner", "linear", "--bootstrap", "20", "--quiet",
                 "--out", str(out), *extra])


def test_fail_on_violation_exits_3_on_a_fail_verdict_and_0_otherwise(data_file, tmp_path, capsys):
    # (Without the flag the same FAIL exits 0: tests/parity/test_audit.py::test_audit_command_with_a_config_file.)
    # The oracle reads X directly (DE and IE outside BN = {SE}): a FAIL verdict.
    assert _audit(data_file, "oracle", tmp_path / "oracle", "--fail-on", "violation") == 3
    printed = capsys.readouterr()
    assert "oracle: FAIL" in printed.out and "fairpath: failing (--fail-on violation, exit 3): oracle: FAIL" in printed.err
    assert (tmp_path / "oracle" / "report.html").is_file()  # the results are written before the exit status
    assert _audit(data_file, "z_only", tmp_path / "z_only", "--fail-on", "violation") == 0  # SUCCESS
    assert "failing" not in capsys.readouterr().err
