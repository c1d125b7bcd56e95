"""Every command that writes a result is "call the API, print, save(out)": its folder holds the three files every result
saves (report.html, result.json, result.csv), and result.csv is the API's ``to_frame()`` for the same call."""

import json
import warnings

import pandas as pd
import pytest
from frames import as_read

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm

ROLES = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("save_contract") / "data.csv"
    sample = make_binary_sfm(600, seed=0)
    sample.data.assign(score=sample.outcome_mean(sample.data)).to_csv(path, index=False)
    return path


def _api(command: str, data: pd.DataFrame):
    from fairpath.causal import SFM, decompose
    from fairpath.parity import audit
    from fairpath.repair import frontier, repair

    sfm = SFM(x="x", x0=0, x1=1, z=["z1", "z2"], w=["w1", "w2"], y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if command == "decompose":
            return decompose(data, sfm, ["score"], learner="linear", n_rep=1, seed=0, progress=False)
        if command == "audit":
            return audit(data, sfm, ["score"], "SE", learner="linear", n_boot=20, n_rep=1, seed=0, progress=False)
        if command == "repair":
            return repair(data[sfm.columns], sfm, bn="SE", engine="linear", n_boot=20, audit_learner="linear", seed=0, progress=False)
        return frontier(data[sfm.columns], sfm, ["none", "Z"], repeats=1, engine="linear", constrained=False, seed=0, progress=False)


COMMANDS = {
    "decompose": ["decompose", "{data}", *ROLES, "--predictor", "score", "--learner", "linear", "--n-rep", "1"],
    "audit": ["audit", "{data}", *ROLES, "--predictor", "score", "--bn", "SE", "--learner", "linear", "--bootstrap", "20",
              "--n-rep", "1"],
    "repair": ["repair", "{data}", *ROLES, "--bn", "SE", "--engine", "linear", "--n-boot", "20", "--audit-learner", "linear"],
    "frontier": ["frontier", "{data}", *ROLES, "--bn-sets", "none,Z", "--repeats", "1", "--engine", "linear", "--no-constrained"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_saves_what_the_api_returns(command, data_file, tmp_path, capsys):
    out = tmp_path / command
    argv = [str(data_file) if part == "{data}" else part for part in COMMANDS[command]]
    assert main([*argv, "--seed", "0", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert {"report.html", "result.json", "result.csv"} <= {path.name for path in out.iterdir()}
    expected = _api(command, pd.read_csv(data_file))
    pd.testing.assert_frame_equal(pd.read_csv(out / "result.csv"), as_read(expected.to_frame()), check_dtype=False)
    saved = json.loads((out / "result.json").read_text())
    assert saved.keys() == expected.to_dict().keys()
    assert str(out / "result.json") in printed or f"{out}/" in printed  # the command says where it saved
