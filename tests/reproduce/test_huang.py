"""``fairpath reproduce huang --quick`` end to end on a tiny random model (the real study is in benchmarks/)."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from fairpath._exceptions import FairpathInputError  # noqa: E402
from fairpath._stats import holm  # noqa: E402
from fairpath.cli import main  # noqa: E402
from fairpath.reproduce import HuangSettings  # noqa: E402
from fairpath.reproduce._huang import _spec, target_check  # noqa: E402
from tiny_models import make_tiny_causal_lm  # noqa: E402

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


def test_quick_study_trains_audits_tests_against_the_base_and_checks_the_target(quick_run, capsys, tmp_path):
    args, out = quick_run
    assert main([*args, "--record", str(tmp_path / "record")]) == 0
    printed = capsys.readouterr().out
    table = pd.read_csv(out / "table.csv")
    assert list(table["attribute"].unique()) == ["country", "occupation"]
    trained = [f"{model}-seed{seed}" for seed in (0, 1) for model in ("control", "embedding-lambda100", "sentiment-lambda100")]
    for _, rows in table.groupby("attribute"):
        assert rows["model"].tolist() == ["base", *trained]
    permutations = HuangSettings.quick().comparison_permutations
    compared = table[table["model"] != "base"]
    for prefix in ("", "textblob_"):  # both scorers, each model against the base; exact p never below 1/(B+1)
        p = compared[f"{prefix}individual_p_vs_base"]
        assert ((p >= 1 / (permutations + 1)) & (p <= 1)).all()
    assert table.loc[table["model"] == "base", ["individual_change_vs_base", "individual_p_vs_base", "perplexity_change_vs_base",
                                                "ss_change_points_vs_base"]].isna().all().all()  # nothing was done to the base
    assert np.isfinite(table[["perplexity", "perplexity_sensitive", "individual_fairness", "group_fairness"]].to_numpy()).all()
    # every model's own permutation test against no bias: its null mean (the floor), p and verdict
    assert ((table["individual_floor"] > 0) & (table["individual_bias_p"] > 0) & (table["individual_bias_p"] <= 1)).all()
    assert table["individual_verdict"].str.contains("significant|not testable").all()
    assert ((table["individual_spread_low"] <= table["individual_spread"]) & (table["individual_spread"] <= table["individual_spread_high"])).all()
    for _, rows in table.groupby("attribute"):
        base = rows[rows["model"] == "base"].iloc[0]
        regularized = rows[rows["regularizer"] != "none"]
        assert regularized["individual_p_holm_vs_base"].tolist() == pytest.approx(holm(regularized["individual_p_vs_base"]).tolist())
        assert rows.loc[rows["regularizer"] == "none", "individual_p_holm_vs_base"].isna().all()  # the controls are not in the claim
        others = rows[rows["model"] != "base"]
        assert np.allclose(others["perplexity_change_vs_base"], others["perplexity"] / base["perplexity"] - 1)
    summary = json.loads((out / "result.json").read_text())
    assert summary["target"]["verdict"] in printed and ("MET" in printed or "MISSED" in printed)
    assert [m["model"] for m in summary["models"]] == table["model"].tolist()
    assert summary["settings"]["samples_per_prompt"] == {"country": 3, "occupation": 3} and summary["settings"]["wall_seconds"] > 0
    design = summary["design"]["country"]
    assert {k: design[k] for k in ("values", "selection", "samples_per_prompt", "chosen_by", "pilot_power")} == {
        "values": None, "selection": "every value", "samples_per_prompt": 3, "chosen_by": "the audit_samples setting",
        "pilot_power": None}
    # the design's power, on the base's own audit: at Holm's first threshold over the 2 x 1 x 2 regularized models
    assert design["power_alpha"] == pytest.approx(0.01 / 4) and (design["power_vs_base"] is None) == ("power_note" in design)
    # of the claim: both scorers, for each training seed's model
    assert design["power_claim"].startswith("a 30% fall of the spread on both scorers in each of the 2 training seeds' models; "
                                            "vader p < 0.0025 (Holm's first threshold) and textblob p < 0.05 for every one")
    if design["power_vs_base"] is not None:
        assert design["power_vs_base"] <= design["vader_power_vs_base"] + 3 * design["power_se"]
    assert set(summary["target"]["controls"]["country"]) == {"control-seed0", "control-seed1"}
    scores = pd.read_parquet(out / "scores.parquet")
    sizes = scores.groupby(["attribute", "model"]).size()
    assert set(sizes.loc["country"]) == {3 * 2 * 10} and set(sizes.loc["occupation"]) == {3 * 2 * 29}  # samples x templates x values
    assert {"text", "score_vader", "score_textblob", "prompt", "sample_index"} <= set(scores.columns)
    assert (out / "tradeoffs_country.png").stat().st_size > 0 and (out / "tradeoffs_occupation.png").exists()
    # the record written elsewhere holds the same files
    assert pd.read_csv(tmp_path / "record" / "table.csv").equals(table)
    assert pd.read_parquet(tmp_path / "record" / "scores.parquet").equals(scores)
    # every model's test against the base is stored, so a rerun recomputes nothing
    assert sorted(p.name for p in (out / "occupation" / "comparisons").iterdir()) == sorted(
        f"{name}.{scorer}.{permutations}.json" for name in trained for scorer in ("vader", "textblob"))
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.json") if "comparisons" in p.parts or p.name == "evaluation.json"}
    assert main(args) == 0
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}
    assert pd.read_csv(out / "table.csv").equals(table)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 2  # one trade-off figure per attribute
    assert "VADER change vs base" in page and "TextBlob p (lower)" in page and "audit verdict" in page
    assert "untouched base" in page and ("MISSED (" in page or "MET (" in page)
    assert "SHA-256" in page and "torch" in page and "dtype" in page  # provenance: the corpus file, versions
    assert summary["provenance"]["inputs"][0]["name"] == "corpus.txt" and summary["provenance"]["dtype"] in ("float32", "bfloat16")
    # other settings in the same folder are refused before any stage, naming what differs
    assert main([*args[:-2], "--samples", "4", "--out", str(out)]) == 2
    assert "holds huang study results computed with other audit_samples;" in capsys.readouterr().err
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}


def _row(attribute, model, regularizer, lam, seed, change, p_holm, *, p_lower=None, p_second=0.01, perplexity=0.05):
    p_lower = p_holm / 2 if p_lower is None else p_lower
    return {"attribute": attribute, "model": model, "regularizer": regularizer, "lambda": lam, "seed": seed,
            "individual_change_vs_base": change, "individual_p_vs_base": p_lower, "individual_p_holm_vs_base": p_holm,
            "textblob_individual_change_vs_base": change, "textblob_individual_p_vs_base": p_second,
            "group_p_vs_base": 0.5, "textblob_group_p_vs_base": 0.5, "perplexity_change_vs_base": perplexity,
            "ss_change_points_vs_base": -1.0, "ss_change_se_points_vs_base": 2.0}


def test_target_check_asks_every_training_seed_and_says_what_an_unpowered_miss_is():
    rows = []
    for attribute, change in (("country", -0.5), ("occupation", -0.1)):
        for seed in (0, 1):
            rows += [_row(attribute, f"control-seed{seed}", "none", 0.0, seed, 0.05, np.nan, p_lower=0.4 + 0.58 * seed,
                          p_second=0.5, perplexity=0.01),
                     _row(attribute, f"embedding-lambda30-seed{seed}", "embedding", 30.0, seed, change, 0.004),
                     _row(attribute, f"sentiment-lambda30-seed{seed}", "sentiment", 30.0, seed, -0.6, 0.02)]
    design = {"country": {"power_vs_base": 0.3}, "occupation": {"power_vs_base": 0.5}}
    check = target_check(pd.DataFrame(rows), design, HuangSettings())
    assert check["models_meeting"] == {"country": ["embedding λ=30"], "occupation": []}
    assert check["claims"] == {"country": "shown", "occupation": "not shown, and the design's power was below 0.8: not a refutation"}
    assert not check["met"] and check["verdict"].startswith("MISSED (country: shown; occupation: not shown")
    assert any(line.startswith("misses on occupation: embedding-lambda30-seed0: VADER -10.0% vs base, one-sided p = 0.002, "
                               "Holm p = 0.004; TextBlob -10.0% vs base, one-sided p = 0.01") for line in check["lines"])
    # each miss names the conditions it misses on: sentiment's Holm p 0.02 is above 0.01
    assert sum(line.endswith("S.S. -1.0 points (SE 2.0) (misses on VADER change)") for line in check["lines"]) == 2
    assert sum(line.endswith("S.S. -1.0 points (SE 2.0) (misses on VADER Holm p)") for line in check["lines"]) == 4
    # an unpowered design says what a powered one would need (the power at 2 and 4 times the samples per prompt)
    def claim_line(attribute):
        return next(line for line in target_check(pd.DataFrame(rows), design, HuangSettings())["lines"]
                    if line.startswith(f"{attribute}: claim"))

    need = {"power_target": 0.8, "powered_samples_per_prompt": 256, "power_by_samples": {"64": 0.5, "128": 0.6, "256": 0.9}}
    design["occupation"] |= need
    assert claim_line("occupation").endswith("power of the design 0.50; 256 samples per prompt would reach power 0.90, 128 0.60)")
    design["occupation"] |= {"powered_samples_per_prompt": None, "power_by_samples": {"64": 0.5, "512": 0.7}}
    assert claim_line("occupation").endswith("; even 512 samples per prompt would fall short of 0.8)")
    design["country"] |= need
    assert claim_line("country").endswith("power of the design 0.30)")  # shown: what more power would need is beside the point
    design["occupation"]["power_vs_base"] = 0.85  # powered: no model meeting it refutes the claim
    check = target_check(pd.DataFrame(rows), design, HuangSettings())
    assert check["met"] and check["claims"]["occupation"] == "refuted with power"
    rows[4]["textblob_individual_p_vs_base"] = 0.2  # country, embedding, seed 1: TextBlob does not agree
    assert target_check(pd.DataFrame(rows), design, HuangSettings())["models_meeting"]["country"] == []
    rows[4]["textblob_individual_p_vs_base"] = 0.01
    assert target_check(pd.DataFrame(rows), design, HuangSettings(training_seeds=(0,)))["models_meeting"]["country"] == []
    # every model's spread tests pass but quality does not: an unpowered design says the miss is on quality
    quality = [dict(r, individual_change_vs_base=-0.6, individual_p_holm_vs_base=0.004, ss_change_points_vs_base=-16.0)
               if r["regularizer"] != "none" and r["attribute"] == "occupation" else r for r in rows]
    design["occupation"]["power_vs_base"] = 0.46
    lines = target_check(pd.DataFrame(quality), design, HuangSettings())["lines"]
    assert sum(line.endswith("S.S. -16.0 points (SE 2.0) (misses on S.S.)") for line in lines) == 4
    assert next(line for line in lines if line.startswith("occupation: claim not shown")).endswith(
        "every regularized model met the claim's spread tests and missed on quality (perplexity or S.S. beyond its bound), "
        "a miss the spread tests' power does not bear on")
    design["occupation"]["power_vs_base"] = 0.94  # powered: the refutation says it rests on quality
    lines = target_check(pd.DataFrame(quality), design, HuangSettings())["lines"]
    assert next(line for line in lines if line.startswith("occupation: claim refuted with power")).endswith(
        "power of the design 0.94); every regularized model met the claim's spread tests and missed on quality (perplexity "
        "or S.S. beyond its bound): the claim fails on quality, not on bias")
    # the controls: at the base when no test rejects (two-sided) and perplexity stays within 2%
    controls = target_check(pd.DataFrame(rows), design, HuangSettings())["controls"]["country"]
    assert controls["control-seed0"]["at_base"] and controls["control-seed0"]["two_sided_p"]["individual"] == pytest.approx(0.8)
    # seed 1's one-sided p of "lower" 0.98 is a two-sided p of 2 x (1 - 0.98 + 1/B) = 0.0402: a control that moved up
    assert not controls["control-seed1"]["at_base"]
    assert controls["control-seed1"]["two_sided_p"]["individual"] == pytest.approx(2 * (10001 / 10000 - 0.98))


def test_templates_must_be_positive_and_cut_every_attribute(capsys):
    with pytest.raises(FairpathInputError, match=r"templates must be at least 1 \(got 0\)"):
        HuangSettings(templates=0)
    with pytest.raises(SystemExit) as exited:  # refused while parsing, as the console script exits
        main(["reproduce", "huang", "--templates", "0", "--out", "unused"])
    assert exited.value.code == 2 and "--templates must be an integer ≥ 1, got 0" in capsys.readouterr().err
    assert [len(_spec(a, 3).templates) for a in ("country", "occupation")] == [3, 3]
    assert _spec("country", None).templates == _spec("country", 99).templates  # None or too many: all of them


def test_the_design_chooses_values_on_one_half_of_a_fresh_pilot_and_sizes_the_study_on_the_other(tmp_path):
    from fairpath.reproduce import HuangStudy
    from fairpath.reproduce._huang import select_values, value_deviations
    from fairpath.text._samples import SampleStore

    model = make_tiny_causal_lm(tmp_path / "tiny-lm", seed=0)
    settings = HuangSettings.quick(audit_samples=None, values_per_side=2, pilot_samples=4, max_audit_samples=4,
                                   attributes=("country",))
    study = HuangStudy(tmp_path / "out", model=str(model), settings=settings, corpus=CORPUS, device="cpu", progress=False)
    record = study.design("country")
    # the pilot: its own seed and folder, 4 samples per prompt of the 2 templates x 10 countries
    pilot = SampleStore(tmp_path / "out" / "pilot-country" / "audits" / "base" / "samples").load()
    assert len(pilot) == 4 * 20 and sorted(pilot["sample_index"].unique()) == [0, 1, 2, 3]
    assert record["pilot_seed"] == settings.seed + 1 and set(pilot["seed"]) == {settings.seed + 1}
    # the values: the 2 lowest and 2 highest on samples 0-1, which the power calculation does not see
    assert len(record["values"]) == 4 and record["selection"].startswith("the 2 values with the lowest and the 2 with the highest")
    deviations = pd.Series(record["pilot_deviations"]).sort_values(kind="stable")
    assert sorted(record["values"]) == sorted([*deviations.index[:2], *deviations.index[-2:]])
    assert record["samples_per_prompt"] == 4 and record["chosen_by"].startswith("the cap max_audit_samples")
    assert json.loads((tmp_path / "out" / "design-country.json").read_text()) == json.loads(json.dumps(record))
    assert study.design("country") == json.loads(json.dumps(record))  # read back, not recomputed
    # the study then audits the chosen values only, with the study's seed: fresh samples
    spec = study.debias_study("country", values=record["values"], audit_samples=4).spec
    assert sorted(spec.value_names) == sorted(record["values"]) and study.debias_study("country", values=None, audit_samples=4).seed == 0
    frame = pd.DataFrame({"template_id": ["t0"] * 4 + ["t1"] * 4, "value": ["a", "b", "c", "d"] * 2,
                          "score_vader": [0.1, 0.5, 0.9, 0.3, 0.2, 0.4, 1.0, 0.2]})
    assert value_deviations(frame).round(3).to_dict() == {"a": -0.3, "d": -0.2, "b": 0.0, "c": 0.5}
    assert select_values(frame, 1) == ["a", "c"]
    with pytest.raises(FairpathInputError, match=r"values_per_side=3 needs 6 values but the attribute has 4"):
        select_values(frame, 3)


def test_a_pilot_choice_below_the_cap_is_checked_and_raised_on_a_sizing_audit_with_its_own_seed(tmp_path):
    from fairpath.reproduce import HuangStudy
    from fairpath.reproduce._huang_report import _choice_text
    from fairpath.text._samples import SampleStore

    model = make_tiny_causal_lm(tmp_path / "tiny-lm", seed=0)
    settings = HuangSettings.quick(audit_samples=None, values_per_side=2, pilot_samples=4, max_audit_samples=64,
                                   attributes=("country",))
    study = HuangStudy(tmp_path / "out", model=str(model), settings=settings, corpus=CORPUS, device="cpu", progress=False)
    values = ["Iceland", "Chile", "Italy", "Syria"]
    sized = study._size_again("country", values, 4)
    # the sizing audit: the chosen values at the pilot's choice, seed + 2 (fresh against the pilot's seed + 1 and the study's)
    scores = SampleStore(tmp_path / "out" / "sizing-country" / "audits" / "base" / "samples").load()
    assert sorted(scores["value"].unique()) == sorted(values) and set(scores["seed"]) == {settings.seed + 2}
    assert len(scores) == 4 * 2 * 4 and sized["sizing"]["seed"] == settings.seed + 2
    # a random tiny model's TextBlob spread is at the noise floor: the pilot's choice stands, and the record says why
    assert "samples_per_prompt" not in sized and "no spread above the noise floor" in sized["sizing"]["note"]
    record = {"power": {"n": [4]}, "pilot_power": 0.9, "samples_per_prompt": 4, **sized}
    assert _choice_text(record) == (f" (the pilot's held-apart half chose 4 samples per prompt with power 0.90; a sizing audit of the "
                                    f"base at 4 (seed {settings.seed + 2}) could not size a fall: {sized['sizing']['note']})")
    # a base with a real spread on both scorers: the smallest of 24, 32, 40, 48, 64 (the pilot's choice, then the
    # candidates up to the cap) with the claim's power 0.95 (planned above the target's 0.8), as the same simulation says
    rng = np.random.default_rng(7)
    effects = rng.normal(0, 0.2, (10, 6))
    frame = spread_frame(effects, 24, seed=1).assign(score_textblob=spread_frame(effects, 24, seed=2)["score_vader"].to_numpy())
    analysis = study.claim_power(frame, [24, 32, 40, 48, 64], target=0.95)
    power = analysis.table.set_index("n")["power"]
    sized = study.size_on(frame, 24)
    assert analysis.chosen_n == 64 and power[24] < 0.8 < power[48] < 0.95, power.to_dict()  # seeded: the study grows to 64
    assert sized["samples_per_prompt"] == 64 and sized["chosen_by"] == "power 0.95 on the sizing audit"
    assert sized["sizing"]["power_at_first"] == power[24] and sized["sizing"]["power_at_chosen"] == power[64] >= 0.95
    record = {"power": {"n": [24]}, "pilot_power": 0.9, **sized, "sizing": {"seed": 2, **sized["sizing"]}}
    assert _choice_text(record) == (f" (the pilot's held-apart half chose 24 samples per prompt with power 0.90; a sizing audit of the "
                                    f"base at 24 (seed 2) gave it {power[24]:.2f}, {analysis.chosen_n} {power[analysis.chosen_n]:.2f})")
    # bad input is refused, naming what is wrong, never recorded as a spread at the noise floor
    with pytest.raises(FairpathInputError, match=r"score table lacks column\(s\) \['score_vader'\]"):
        study.size_on(frame.drop(columns="score_vader"), 24)
    with pytest.raises(FairpathInputError, match=r"base_scores must be a pandas DataFrame, got str"):
        study.size_on("scores.csv", 24)
    with pytest.raises(FairpathInputError, match=r"first must be an integer( ≥ 1)?, got "):
        study.size_on(frame, 0)
    capped = HuangStudy(tmp_path / "out", settings=replace(settings, max_audit_samples=32), progress=False).size_on(frame, 24)
    assert capped["samples_per_prompt"] == 32 and capped["sizing"]["power_at_chosen"] == power[32] < 0.8
    assert capped["chosen_by"] == "the cap max_audit_samples=32 (power below 0.95 on the sizing audit)"


def spread_frame(effects: np.ndarray, per_prompt: int, seed: int) -> pd.DataFrame:
    """VADER-like scores around 0.2 + effects[template, value] with SD 0.4, ``per_prompt`` per prompt."""
    rng = np.random.default_rng(seed)
    cells = [(t, v) for t in range(effects.shape[0]) for v in range(effects.shape[1]) for _ in range(per_prompt)]
    return pd.DataFrame({"template_id": [f"t{t}" for t, _ in cells], "value": [f"v{v}" for _, v in cells],
                         "subgroup": [f"v{v}" for _, v in cells], "sample_index": [i % per_prompt for i in range(len(cells))],
                         "score_vader": [0.2 + effects[t, v] + rng.normal(0, 0.4) for t, v in cells]})
