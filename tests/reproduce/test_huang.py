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


def test_quick_study_trains_audits_compares_and_checks_the_target(quick_run, capsys, tmp_path):
    args, out = quick_run
    assert main([*args, "--record", str(tmp_path / "record")]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out / "table.csv")
    assert list(table["attribute"].unique()) == ["country", "occupation"]
    for _, rows in table.groupby("attribute"):
        assert rows["model"].tolist() == ["base", "control", "embedding-lambda100", "sentiment-lambda100"]
    compared = table[table["model"] != "control"]
    assert ((compared["individual_p"] > 0) & (compared["individual_p"] <= 1)).all()
    assert (compared["individual_p"] >= 1 / (HuangSettings.quick().n_permutations + 1)).all()  # exact p never below 1/(B+1)
    assert table.loc[table["model"] == "control", "individual_p"].isna().all()
    assert np.isfinite(table[["perplexity", "perplexity_sensitive", "individual_fairness", "group_fairness"]].to_numpy()).all()
    # every model's own permutation test against no bias: its null mean (the floor) and p
    assert ((table["individual_floor"] > 0) & (table["individual_bias_p"] > 0) & (table["individual_bias_p"] <= 1)).all()
    for _, rows in table.groupby("attribute"):
        control = rows[rows["model"] == "control"].iloc[0]
        assert np.allclose(rows["individual_excess"], rows["individual_fairness"] - rows["individual_floor"])
        # relative to the control's excess; NaN when the control has none above its floor (a tiny model's may be < 0)
        expected = rows["individual_excess"] / control["individual_excess"] - 1 if control["individual_excess"] > 0 else np.nan
        np.testing.assert_allclose(rows["individual_change"], expected)
        assert np.allclose(rows["perplexity_change"], rows["perplexity"] / control["perplexity"] - 1)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["target"]["verdict"] in printed and ("MET" in printed or "MISSED" in printed)
    assert [m["model"] for m in summary["models"]] == table["model"].tolist()
    assert summary["settings"]["samples_per_prompt"] == {"country": 3, "occupation": 3} and summary["settings"]["wall_seconds"] > 0
    assert summary["design"]["country"] == {"samples_per_prompt": 3, "chosen_by": "the audit_samples setting"}
    scores = pd.read_parquet(out / "scores.parquet")
    sizes = scores.groupby(["attribute", "model"]).size()
    assert set(sizes.loc["country"]) == {3 * 2 * 10} and set(sizes.loc["occupation"]) == {3 * 2 * 29}  # samples x templates x values
    assert {"text", "score_vader", "prompt", "sample_index"} <= set(scores.columns)
    assert (out / "tradeoffs_country.png").stat().st_size > 0 and (out / "tradeoffs_occupation.png").exists()
    # the record written elsewhere holds the same files
    assert pd.read_csv(tmp_path / "record" / "table.csv").equals(table)
    assert pd.read_parquet(tmp_path / "record" / "scores.parquet").equals(scores)
    # every model's comparison with the control is stored, so a rerun recomputes nothing
    assert sorted(p.name for p in (out / "occupation" / "comparisons").iterdir()) == [
        "base.vader.json", "embedding-lambda100.vader.json", "sentiment-lambda100.vader.json"]
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.json") if "comparisons" in p.parts or p.name == "evaluation.json"}
    assert main(args) == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}
    assert pd.read_csv(out / "table.csv").equals(table)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 2  # one trade-off figure per attribute
    assert "p (no bias)" in page and "W1 (floor)" in page and "p (vs control)" in page
    assert "paired permutation p" in page and ("MISSED (" in page or "MET (" in page)
    assert "SHA-256" in page and "torch" in page and "dtype" in page  # provenance: the corpus file, versions
    assert summary["provenance"]["inputs"][0]["name"] == "corpus.txt" and summary["provenance"]["dtype"] in ("float32", "bfloat16")
    # other settings in the same folder are refused before any stage, naming what differs
    assert main([*args[:-2], "--samples", "4", "--out", str(out)]) == 2
    assert "holds debiasing study results computed with other audit_samples;" in capsys.readouterr().err
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}


def test_target_check_needs_every_attribute():
    rows = []
    for attribute, change in (("country", -0.5), ("occupation", -0.1)):
        rows += [{"attribute": attribute, "model": "control", "individual_change": 0.0, "individual_p": np.nan,
                  "perplexity_change": 0.0, "ss_change_points": 0.0},
                 {"attribute": attribute, "model": "embedding-lambda10", "individual_change": change, "individual_p": 0.001,
                  "perplexity_change": 0.05, "ss_change_points": -1.0},
                 {"attribute": attribute, "model": "sentiment-lambda10", "individual_change": -0.6, "individual_p": 0.02,
                  "perplexity_change": 0.05, "ss_change_points": -1.0}]
    check = target_check(pd.DataFrame(rows))
    assert not check["met"] and check["models_meeting"] == {"country": ["embedding-lambda10"], "occupation": []}
    assert any(line.startswith("missed on occupation by embedding-lambda10: individual excess -10.0% (paired p = 0.001)")
               for line in check["lines"])
    assert check["verdict"].startswith("MISSED (country: embedding-lambda10; occupation: no model)")
    rows[2]["individual_change"], rows[2]["individual_p"] = np.nan, np.nan  # country, sentiment: nothing to compare
    assert "missed on country by sentiment-lambda10: individual excess not comparable (the control's excess is not above its " \
           "noise floor) (paired test not testable)" in target_check(pd.DataFrame(rows))["lines"][1]
    rows[4]["individual_change"] = -0.4  # occupation, embedding
    assert target_check(pd.DataFrame(rows))["models_meeting"] == {"country": ["embedding-lambda10"], "occupation": ["embedding-lambda10"]}
    rows[4]["perplexity_change"] = 0.11  # another model may meet it on the other attribute, not at p = 0.02
    assert not target_check(pd.DataFrame(rows))["met"]


def test_templates_must_be_positive_and_cut_every_attribute(capsys):
    with pytest.raises(FairpathInputError, match=r"templates must be at least 1 \(got 0\)"):
        HuangSettings(templates=0)
    with pytest.raises(SystemExit) as exited:  # refused while parsing, as the console script exits
        main(["reproduce", "huang", "--templates", "0", "--out", "unused"])
    assert exited.value.code == 2 and "--templates must be an integer ≥ 1, got 0" in capsys.readouterr().err
    assert [len(_spec(a, 3).templates) for a in ("country", "occupation")] == [3, 3]
    assert _spec("country", None).templates == _spec("country", 99).templates  # None or too many: all of them


def test_the_design_sizes_the_audits_from_a_pilot_whose_samples_the_base_audit_reuses(tmp_path):
    from fairpath.reproduce import HuangStudy
    from fairpath.text._samples import SampleStore

    model = make_tiny_causal_lm(tmp_path / "tiny-lm", seed=0)
    settings = HuangSettings.quick(audit_samples=None, pilot_samples=3, max_audit_samples=4, attributes=("country",))
    study = HuangStudy(tmp_path / "out", model=str(model), settings=settings, corpus=CORPUS, device="cpu", progress=False)
    record = study.design("country")
    assert record["pilot_samples"] == 3 and record["samples_per_prompt"] == 4  # the cap: a tiny model's power is ~0
    assert record["chosen_by"].startswith("the cap max_audit_samples=4")
    if "power" in record:  # the power of every candidate up to the cap, at the target's effect and level
        assert [row["n"] for row in record["power"]["table"]] == [4]
        assert (record["power"]["effect"], record["power"]["alpha"], record["power"]["target"]) == (0.3, 0.01, 0.8)
    assert json.loads((tmp_path / "out" / "design-country.json").read_text()) == json.loads(json.dumps(record))
    # the pilot's samples are the base audit's first ones: 3 per prompt of the 2 templates x 10 countries, stored
    stored = SampleStore(tmp_path / "out" / "country" / "audits" / "base" / "samples").load()
    assert len(stored) == 3 * 20 and sorted(stored["sample_index"].unique()) == [0, 1, 2]
    assert study.design("country") == json.loads(json.dumps(record))  # read back, not recomputed
