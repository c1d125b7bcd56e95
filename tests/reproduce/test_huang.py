"""``fairpath reproduce huang --quick`` end to end on a tiny random model (the real study is in benchmarks/)."""

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from fairpath._exceptions import FairpathInputError  # noqa: E402
from fairpath.cli import main  # noqa: E402
from fairpath.reproduce import HuangSettings  # noqa: E402
from fairpath.reproduce._huang import _spec, target_check  # noqa: E402
from fairpath.text._testing import make_tiny_causal_lm  # noqa: E402

MOODS = ["was wonderful, happy and great", "had a lovely, excellent day", "was terrible, awful and sad",
         "felt horrible, angry and hurt", "went out on Monday"]
CORPUS = ([f"The trip to {c} {m}." for c in ("Syria", "Iceland", "Chile", "Italy") for m in MOODS]
          + [f"The {j} {m}." for j in ("nurse", "baker", "lawyer", "farmer") for m in MOODS]
          + ["The weather is mild today.", "Trains run late on Sundays."])


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("huang")
    model = make_tiny_causal_lm(folder / "tiny-lm", seed=0)
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(CORPUS))
    out = folder / "out"
    args = ["reproduce", "huang", "--quick", "--model", str(model), "--corpus", str(corpus), "--no-quality",
            "--samples", "3", "--device", "cpu", "--out", str(out)]
    return args, out


def test_quick_study_trains_audits_compares_and_checks_the_target(quick_run, capsys):
    args, out = quick_run
    assert main(args) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out / "table.csv")
    assert list(table["attribute"].unique()) == ["country", "occupation"]
    for _, rows in table.groupby("attribute"):
        assert rows["model"].tolist() == ["base", "embedding-lambda100", "sentiment-lambda100"]
    trained = table[table["model"] != "base"]
    assert ((trained["individual_p"] > 0) & (trained["individual_p"] <= 1)).all()
    assert (trained["individual_p"] >= 1 / (HuangSettings.quick().n_permutations + 1)).all()  # exact p never below 1/(B+1)
    assert np.isfinite(table[["perplexity", "perplexity_sensitive", "individual", "group"]].to_numpy()).all()
    # every model's own permutation test against no bias: its null mean (the floor) and p
    assert ((table["individual_floor"] > 0) & (table["individual_own_p"] > 0) & (table["individual_own_p"] <= 1)).all()
    assert ((table["group_floor"] > 0) & (table["group_own_p"] > 0) & (table["group_own_p"] <= 1)).all()
    assert np.allclose(trained["individual_change"],
                       trained["individual"].to_numpy() / table.loc[table["model"] == "base", "individual"].repeat(2).to_numpy() - 1)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["target"]["verdict"] in printed and ("MET" in printed or "MISSED" in printed)
    assert (out / "tradeoffs_country.png").stat().st_size > 0 and (out / "tradeoffs_occupation.png").exists()
    # every model's comparison is stored, so a rerun recomputes nothing
    assert sorted(p.name for p in (out / "occupation" / "comparisons").iterdir()) == ["embedding-lambda100.json", "sentiment-lambda100.json"]
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.json") if "comparisons" in p.parts or p.name == "evaluation.json"}
    assert main(args) == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}
    assert pd.read_csv(out / "table.csv").equals(table)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 2  # one trade-off figure per attribute
    assert "p (no bias)" in page and "W1 (floor)" in page
    assert "paired permutation p" in page and ("MISSED by every model" in page or "MET by" in page)
    assert "SHA-256" in page and "torch" in page and "dtype" in page  # provenance: the corpus file, versions
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["inputs"][0]["name"] == "corpus.txt" and summary["provenance"]["dtype"] == "float32"
    # other settings in the same folder are refused before any stage, naming what differs
    assert main([*args[:-2], "--samples", "4", "--out", str(out)]) == 2
    assert "holds a debiasing study computed with other ['audit_samples']" in capsys.readouterr().err
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}


def test_target_check_needs_every_attribute():
    rows = []
    for attribute, change in (("country", -0.5), ("occupation", -0.1)):
        rows += [{"attribute": attribute, "model": "base", "individual_change": 0.0, "individual_p": np.nan,
                  "perplexity_change": 0.0, "ss_points": 0.0},
                 {"attribute": attribute, "model": "embedding-lambda10", "individual_change": change, "individual_p": 0.001,
                  "perplexity_change": 0.05, "ss_points": -1.0}]
    check = target_check(pd.DataFrame(rows))
    assert not check["met"] and check["lines"][0].startswith("missed by embedding-lambda10")
    assert "occupation: individual -10.0% (paired p = 0.001)" in check["lines"][0]
    rows[3]["individual_change"] = -0.4
    assert target_check(pd.DataFrame(rows))["models_meeting"] == ["embedding-lambda10"]


def test_templates_must_be_positive_and_cut_every_attribute(capsys):
    with pytest.raises(FairpathInputError, match=r"templates must be at least 1 \(got 0\)"):
        HuangSettings(templates=0)
    with pytest.raises(SystemExit) as exited:  # refused while parsing, as the console script exits
        main(["reproduce", "huang", "--templates", "0", "--out", "unused"])
    assert exited.value.code == 2 and "--templates must be an integer ≥ 1, got 0" in capsys.readouterr().err
    assert [len(_spec(a, 3).templates) for a in ("country", "occupation")] == [3, 3]
    assert _spec("country", None).templates == _spec("country", 99).templates  # None or too many: all of them
