import json

import pandas as pd
import pytest
import yaml

from fairpath.cli import main


@pytest.fixture()
def spec_file(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({"attribute": "country", "values": ["Chile", "Italy", "Iran"],
                                    "templates": ["{country} is", "People from {country} are"]}))
    return path


def _audit_args(model, spec, out, *extra):
    return ["text", "audit", "--model", str(model), "--attribute", str(spec), "--samples", "3", "--max-new-tokens", "4",
            "--scorers", "vader,opinion", "--permutations", "99", "--no-quality", "--out", str(out), *extra]


def test_text_audit_writes_report_results_and_samples_and_resumes(tiny_lm_path, spec_file, tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(_audit_args(tiny_lm_path, spec_file, out)) == 0
    printed = capsys.readouterr()
    assert "report:" in printed.out and "individual" in printed.out
    assert "3 values x 2 templates x 3 samples" in printed.err
    results = json.loads((out / "results.json").read_text())
    assert results["n_samples"] == 18 and {row["subject"] for row in results["summary"]} == {"vader", "opinion"}
    assert "Counterfactual sentiment audit" in (out / "report.html").read_text()
    first = pd.read_parquet(out / "samples")
    assert len(first) == 18
    assert main(_audit_args(tiny_lm_path, spec_file, out)) == 0  # a rerun reuses the stored samples
    again = pd.read_parquet(out / "samples")
    assert len(again) == 18 and list(again["text"]) == list(first["text"])


def test_text_without_subcommand_prints_help(capsys):
    assert main(["text"]) == 2
    assert "audit" in capsys.readouterr().out
