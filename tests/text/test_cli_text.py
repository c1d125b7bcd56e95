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
    assert "report.html" in printed.out and "individual" in printed.out
    assert "3 values x 2 templates x 3 samples" in printed.err
    results = json.loads((out / "result.json").read_text())
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


NEGATIVE = ["is a terrible, awful place.", "is miserable and hopeless.", "is full of horrible violence."]
POSITIVE = ["is a wonderful, happy place.", "is full of great, friendly people.", "is a beautiful success."]


def _logged_generations(path, negative_value=None, per_prompt=12):
    """A logged-generations CSV on spec_file's prompts: ``per_prompt`` continuations of each prompt, half negative and
    half positive (one per prompt: negative and positive in turn), except ``negative_value``'s, which are all negative."""
    rows, mixed = [], [*NEGATIVE, *POSITIVE]
    for t, template in enumerate(["{country} is", "People from {country} are"]):
        for v, value in enumerate(["Chile", "Italy", "Iran"]):
            texts = NEGATIVE if value == negative_value else mixed
            start = 3 * t + v if per_prompt == 1 else 0
            rows += [{"template": template, "value": value, "continuation": texts[(start + i) % len(texts)]} for i in range(per_prompt)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _score_args(samples, spec, out, *extra):
    return ["text", "score", str(samples), "--attribute", str(spec), "--scorers", "vader", "--no-quality",
            "--out", str(out), *extra]


def test_fail_on_violation_exits_3_on_a_biased_log_and_0_on_an_unbiased_one(spec_file, tmp_path, capsys):
    biased = _logged_generations(tmp_path / "biased.csv", negative_value="Iran")
    assert main(_score_args(biased, spec_file, tmp_path / "biased", "--fail-on", "violation")) == 3
    printed = capsys.readouterr()
    assert "verdict: 2 of 2 scorer/metric tests reject" in printed.out
    assert "fairpath: failing (--fail-on violation, exit 3): vader individual fairness; vader group fairness" in printed.err
    assert json.loads((tmp_path / "biased" / "result.json").read_text())["summary"][0]["significant"]  # written first
    assert main(_score_args(biased, spec_file, tmp_path / "biased-never")) == 0  # --fail-on never is the default
    unbiased = _logged_generations(tmp_path / "unbiased.csv")
    assert main(_score_args(unbiased, spec_file, tmp_path / "unbiased", "--fail-on", "violation")) == 0
    assert "failing" not in capsys.readouterr().err


def test_text_score_of_one_continuation_per_prompt_reports_individual_fairness_not_testable(spec_file, tmp_path, capsys):
    logged = _logged_generations(tmp_path / "logged.csv", per_prompt=1)
    assert main(_score_args(logged, spec_file, tmp_path / "out", "--fail-on", "violation")) == 0
    printed = capsys.readouterr().out
    assert "vader      individual_fairness" in printed and "not testable here: one continuation per prompt" in printed
    assert "no test could reject here: all 2 scorer/metric tests are not testable" in printed
    summary = json.loads((tmp_path / "out" / "result.json").read_text())["summary"]
    assert summary[0]["p_holm"] is None and summary[0]["holm_family"] == 0 and "at least 2 continuations" in summary[0]["not_testable"]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "2 of 2 tests are not testable here (vader individual fairness: one continuation per prompt" in page
    assert page.count("sample at least 2 continuations per prompt") == 1  # the headline; the table gives the gist
    assert "not testable: one continuation per prompt" in page and "(why: above)" in page


@pytest.mark.model
def test_text_score_quality_flags_reach_s_s_and_s_s_c(spec_file, tmp_path, capsys):
    logged = _logged_generations(tmp_path / "logged.csv", per_prompt=3)
    args = [a for a in _score_args(logged, spec_file, tmp_path / "out") if a != "--no-quality"]
    assert main([*args, "--quality-per-prompt", "2", "--similarity-threshold", "0.25", "--context-threshold", "0.3"]) == 0
    quality = json.loads((tmp_path / "out" / "result.json").read_text())["quality"]
    n_prompts = len(pd.read_csv(logged)[["template", "value"]].drop_duplicates())
    assert quality["quality_per_prompt"] == 2 and quality["n_quality_samples"] == 2 * n_prompts
    assert quality["similarity_threshold"] == {"value": 0.25, "source": "given"}
    assert quality["context_threshold"] == {"value": 0.3, "source": "given"}
    assert "S.S. " in capsys.readouterr().out and "S.S.c" in (tmp_path / "out" / "report.html").read_text()


def _text_parser(command: str):
    import argparse

    from fairpath.cli import build_parser

    def children(parser):
        return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))

    return children(children(build_parser())["text"])[command]


def test_text_audit_flags_show_and_use_the_generation_settings_defaults():
    import dataclasses

    from fairpath.text import GenerationSettings, audit_text

    defaults = {field.name: field.default for field in dataclasses.fields(GenerationSettings)}
    parser = _text_parser("audit")
    args = parser.parse_args(["--attribute", "country", "--out", "o"])
    flags = {"n_samples": "--samples", "max_new_tokens": "--max-new-tokens", "temperature": "--temperature", "top_p": "--top-p",
             "batch_size": "--batch-size"}
    assert {field: getattr(args, field) for field in flags} == {field: defaults[field] for field in flags}
    assert args.top_k is defaults["top_k"] is None
    audit_defaults = audit_text.__wrapped__.__kwdefaults__
    assert (args.seed, args.permutations, args.alpha, args.quality_per_prompt, args.scorers) == (
        audit_defaults["seed"], audit_defaults["n_permutations"], audit_defaults["alpha"], audit_defaults["quality_per_prompt"],
        ",".join(audit_defaults["scorers"]))
    assert _shown_help(parser, flags.values()) == {flag: f"(default: {defaults[field]})" for field, flag in flags.items()}


def _shown_help(parser, flags):
    """The "(default: …)" that `--help` shows for each of ``flags``."""
    formatter = parser._get_formatter()
    shown = {action.option_strings[0]: formatter._expand_help(action) for action in parser._actions if action.option_strings}
    return {flag: "(default:" + shown[flag].rsplit("(default:", 1)[1] for flag in flags}


def test_text_debias_flags_show_and_use_the_debias_config_defaults_and_choices():
    import dataclasses

    from fairpath.text.debias import DebiasConfig

    defaults = {field.name: field.default for field in dataclasses.fields(DebiasConfig)}
    parser = _text_parser("debias")
    args = parser.parse_args(["--attribute", "country", "--out", "o"])
    fields = ("steps", "batch_size", "learning_rate", "max_length", "method", "lora_rank", "pooling", "normalisation", "checkpoint_every", "seed")
    assert {field: getattr(args, field) for field in fields} == {field: defaults[field] for field in fields}
    assert (args.regularizer, args.layers, args.keep_first_token) == ("embedding", "-2,-1", False)
    choices = {action.dest: tuple(action.choices) for action in parser._actions if action.choices}
    assert choices["method"] == ("lora", "full") and choices["pooling"] == ("sensitive", "mean", "position")
    assert choices["normalisation"] == ("final_norm", "l2", "none")
    assert _shown_help(parser, ["--steps", "--learning-rate", "--normalisation", "--layers"]) == {
        "--steps": "(default: 100)", "--learning-rate": "(default: 0.0005)", "--normalisation": "(default: final_norm)",
        "--layers": "(default: -2,-1)"}


def test_text_debias_flags_show_and_use_the_debias_study_defaults():
    import inspect

    from fairpath.text.debias import DebiasStudy

    study = {name: parameter.default for name, parameter in inspect.signature(DebiasStudy).parameters.items()}
    parser = _text_parser("debias")
    args = parser.parse_args(["--attribute", "country", "--out", "o"])
    used = {"corpus_samples": args.corpus_samples, "corpus_max_new_tokens": args.corpus_max_new_tokens, "samples": args.samples,
            "max_new_tokens": args.max_new_tokens, "permutations": args.permutations, "model": args.model,
            "device": args.device, "dtype": args.dtype}
    assert used == {"corpus_samples": study["corpus_samples_per_prompt"], "corpus_max_new_tokens": study["corpus_max_new_tokens"],
                    "samples": study["audit_samples"], "max_new_tokens": study["audit_max_new_tokens"],
                    "permutations": study["n_permutations"], "model": study["model"], "device": study["device"],
                    "dtype": study["dtype"]}
    assert [float(lam) for lam in args.lambdas.split(",")] == list(study["lambdas"])
    assert args.scorers.split(",") == list(study["scorers"])
    assert _shown_help(parser, ["--samples", "--permutations"]) == {
        "--samples": f"(default: {study['audit_samples']})", "--permutations": f"(default: {study['n_permutations']})"}


def test_text_debias_has_no_bootstrap_alias_of_permutations(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["text", "debias", "--attribute", "country", "--out", "o", "--bootstrap", "99"])
    assert stopped.value.code == 2 and "unrecognized arguments: --bootstrap 99" in capsys.readouterr().err
