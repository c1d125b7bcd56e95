"""The HTML report of a text audit (self-contained, built with :mod:`fairpath.report`)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath.report import Section, write_report

_EXPLANATION = (
    "<p>Individual fairness is the mean, over templates and pairs of distinct values, of the "
    "Wasserstein-1 distance between the sentiment distributions of the two prompts' continuations; "
    "group fairness is the mean over subgroups of W1 between the subgroup's scores and all scores "
    "(Huang et al., 2020). Scores lie in [0, 1], so W1 is at most 1. Intervals are bootstrap "
    "(basic intervals: templates and samples within prompts resampled) for the W1 of the underlying "
    "distributions; they centre on the bias-corrected estimate. W1 of finite samples is positive even "
    "without any bias: the <em>noise floor</em> is its expected value from sampling alone (split halves "
    "of the same prompts, rescaled to the real sample sizes) and <em>noise_upper</em> its 95% bound over "
    "random splits; a metric is flagged <em>above_noise</em> when its estimate exceeds that bound. "
    "Close to the noise floor the intervals are unreliable (W1 is not smooth at 0): judge by above_noise.</p>"
)


def _headline(result) -> str:
    frame = result.to_frame()
    worst = []
    for name, fairness in result.fairness.items():
        top = fairness.per_pair.iloc[0]
        worst.append(f"{html.escape(name)}: {html.escape(str(top['value_a']))} vs {html.escape(str(top['value_b']))} "
                     f"(W1 {top['w1']:.3f})")
    above = frame[frame["above_noise"]]
    verdict = (f"<span class='fail'>{len(above)} of {len(frame)} metric/scorer combinations exceed what sampling alone "
               "produces (the upper bound of the noise floor)</span>" if len(above)
               else "<span class='pass'>every metric lies within the noise floor: no bias detectable at this sample size</span>")
    n_prompts = result.samples["prompt"].nunique()
    return (f"<p>Model <code>{html.escape(result.model_id)}</code>, attribute <strong>{html.escape(result.spec.attribute)}</strong>: "
            f"{len(result.spec.values)} values, {len(result.spec.subgroups)} subgroups, {len(result.spec.templates)} templates, "
            f"{n_prompts} prompts, {len(result.samples)} continuations.</p><p>{verdict}.</p>"
            f"<p>Worst pairs: {'; '.join(worst)}.</p>")


def _quality_section(result) -> Section:
    quality = result.quality
    section = Section("Quality of the continuations")
    rows = []
    if "ssc" in quality:
        rows.append({"measure": "S.S.c: share of continuations with MiniLM cosine >= 0.4 to the template prompt", "value": quality["ssc"]})
        rows.append({"measure": "mean cosine similarity to the prompt", "value": quality["mean_prompt_similarity"]})
    if "ss" in quality:
        rows.append({"measure": "S.S.: share of continuations of corpus prefixes with cosine >= 0.4", "value": quality["ss"]})
    if "perplexity" in quality:
        ppl = quality["perplexity"]
        rows.append({"measure": f"perplexity on the corpus ({ppl['n_texts']} texts, {ppl['n_tokens']} tokens)", "value": ppl["perplexity"]})
        rows.append({"measure": f"perplexity on texts mentioning a value ({ppl['n_texts_sensitive']} texts)", "value": ppl["perplexity_sensitive"]})
    if rows:
        section.add_table(pd.DataFrame(rows))
    else:
        section.text = "<p>Quality was not measured in this run.</p>"
    if "ssc_per_value" in quality:
        per_value = pd.DataFrame(list(quality["ssc_per_value"].items()), columns=["value", "S.S.c"])
        section.add_table(per_value, "S.S.c per value")
    return section


def write_text_report(result, path: str | Path) -> Path:
    """Write the audit's HTML report to ``path``."""
    sections = [Section("Fairness per scorer", _EXPLANATION).add_table(result.to_frame(), "Individual and group fairness")]
    for name, fairness in result.fairness.items():
        section = Section(f"Scorer {name}: distributions and worst pairs")
        section.add_figure(result.plot(name), f"{name} scores of the continuations per value")
        section.add_figure(fairness.plot(), "Pairs of values with the largest W1 (mean over templates)")
        section.add_table(fairness.worst_pairs(10), "Worst pairs")
        section.add_table(fairness.per_value, "Per value: mean score, W1 to all samples, mean W1 to the other values")
        if len(fairness.per_subgroup) > 1 and len(fairness.per_subgroup) < len(fairness.per_value):
            section.add_table(fairness.per_subgroup, "Per subgroup")
        sections.append(section)
    first = result.scorers[0]
    examples = result.examples(first)
    sections.append(Section(
        "Example continuations",
        f"<p>Continuations of the worst pair under {html.escape(first)}, on the template where their mean scores differ most.</p>",
    ).add_table(examples, float_format="{:.3f}"))
    sections.append(_quality_section(result))
    if len(result.validation):
        sections.append(Section("Specification problems", "<p>Counterfactual replacement problems found by validation.</p>")
                        .add_table(result.validation.head(50)))
    settings = {key: value for key, value in result.settings.items()}
    settings.update({"model": result.model_id, **{f"time {k} (s)": f"{v:.1f}" for k, v in result.timings.items()}})
    return write_report(path, f"Counterfactual sentiment audit: {result.spec.attribute}", sections,
                        summary=_headline(result), settings=settings)
