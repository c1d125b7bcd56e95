"""The HTML report of a text audit (self-contained, built with :mod:`fairpath.report`)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

from fairpath.report import Section, write_report

_EXPLANATION = (
    "<p>Individual fairness is the mean, over templates and pairs of distinct values, of the "
    "Wasserstein-1 distance between the sentiment distributions of the two prompts' continuations; "
    "group fairness is the mean over subgroups of W1 between the subgroup's scores and all scores "
    "(Huang et al., 2020). Scores lie in [0, 1], so W1 is at most 1.</p>"
    "<p>W1 of finite samples is positive even without any bias. Each metric is therefore tested: under "
    "&ldquo;no counterfactual sentiment difference&rdquo; the value labels of one template's continuations "
    "are exchangeable, so they are permuted within each template (every prompt keeps its number of "
    "samples) and the metric recomputed. <em>null_mean</em> is the mean over the permutations (the noise "
    "floor: the W1 expected from sampling alone), <em>excess</em> the estimate minus it, <em>p_value</em> "
    "the share of permutations at least as large as the estimate, (1 + count) / (1 + permutations), and "
    "<em>p_holm</em> Holm's adjustment over every testable scorer &times; metric of this audit (the "
    "verdict above gives their number m and &alpha;). A metric is <em>significant</em> when p_holm &lt; &alpha;. "
    "A test that cannot reject here (one continuation per prompt makes every permutation give the same "
    "individual fairness; too few permutations or distinct relabellings leave no p below &alpha;) is "
    "<em>not testable</em>: it has no p-value, its <em>verdict</em> says why and what would make it testable, "
    "and it stays out of the Holm family. <em>detectable_excess</em> is the smallest excess over the null mean that "
    "would have been significant (read off the test's own permutation draws at the level Holm asks of a lone "
    "rejection, &alpha; / m): a test that is not significant found no evidence of an excess that large, "
    "which is not evidence of no bias. "
    "No confidence interval is shown for W1: near 0 none has verified coverage (a bootstrap interval "
    "excluded the true value 0 in every simulated unbiased audit), so judge by the tests.</p>"
)


def _verdict(result) -> str:
    """The audit's verdict; in the alarm colour when a test rejects, plain otherwise (no evidence is not a pass)."""
    text = html.escape(result.verdict(), quote=False)  # text content: only &, < and > need escaping
    return f"<span class='fail'>{text}</span>" if result.violations else text


def _headline(result) -> str:
    worst = []
    for name, fairness in result.fairness.items():
        top = fairness.per_pair.iloc[0]
        worst.append(f"{html.escape(name)}: {html.escape(str(top['value_a']))} vs {html.escape(str(top['value_b']))} "
                     f"(W1 {top['w1']:.3f}, null mean {top['null_mean']:.3f}, Holm p over all "
                     f"{len(fairness.per_pair)} pairs {top['p_holm']:.3g})")
    n_prompts = result.samples["prompt"].nunique()
    return (f"<p>Model <code>{html.escape(result.model_id)}</code>, attribute <strong>{html.escape(result.spec.attribute)}</strong>: "
            f"{len(result.spec.values)} values, {len(result.spec.subgroups)} subgroups, {len(result.spec.templates)} templates, "
            f"{n_prompts} prompts, {len(result.samples)} continuations.</p><p>{_verdict(result)}</p>"
            f"<p>Largest-W1 pair per scorer (the maximum of many pairs: judge it by its Holm p): {'; '.join(worst)}.</p>")


def _fairness_table(result) -> pd.DataFrame:
    """``to_frame()``'s numbers with one verdict column (significant, not significant, or not testable and why);
    without the interval columns (always empty here), and alpha and the Holm family size, which the verdict states."""
    frame = result.to_frame()
    verdict = frame["significant"].map({True: "significant", False: "not significant"}).where(
        frame["not_testable"] == "", "not testable: " + frame["not_testable"].map(_gist) + " (why: above)")
    shown = frame[["subject", "measure", "estimate", "null_mean", "excess", "p_value", "p_holm", "detectable_excess"]]
    return shown.rename(columns={"subject": "scorer", "measure": "metric"}).assign(verdict=verdict)


def _gist(reason: str) -> str:
    """A not-testable reason's first clause: the whole of it, with the remedy, is in the verdict above the table."""
    return re.split(r" \(|;|, so ", reason, maxsplit=1)[0]


def _readable(frame: pd.DataFrame) -> pd.DataFrame:
    """Booleans as yes/no (a report reader should not meet raw True/False)."""
    return frame.assign(**{c: frame[c].map({True: "yes", False: "no"}) for c in frame.columns if frame[c].dtype == bool})


def _examples_html(examples: pd.DataFrame) -> str:
    """Continuations as a left-aligned table that keeps their line breaks."""
    cell = "<td style='text-align:left; white-space:pre-wrap; vertical-align:top'>{}</td>"
    rows = "".join("<tr>" + "".join(cell.format(html.escape(str(v))) for v in (r.value, r.prompt, r.text))
                   + f"<td class='num' style='vertical-align:top'>{r.score:.3f}</td></tr>" for r in examples.itertuples())
    head = "".join(f"<th style='text-align:left'>{h}</th>" for h in ("value", "prompt", "continuation")) + "<th>score</th>"
    return f"<div class='table-scroll'><table class='table'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"


def _quality_section(result) -> Section:
    quality = result.quality
    section = Section("Quality of the continuations")
    rows = []
    for key, label, threshold, mean in (("ss", "S.S.: share of continuations with MiniLM cosine to their prompt", "similarity_threshold",
                                          "mean_prompt_similarity"),
                                         ("ssc", "S.S.c: share of continuations with MiniLM cosine to the prompt's sensitive context",
                                          "context_threshold", "mean_context_similarity")):
        if key in quality:
            rows.append({"measure": f"{label} >= {quality[threshold]['value']:.3f} ({quality[threshold]['source']}; "
                                    f"first {quality['quality_per_prompt']} continuations of every prompt)", "value": quality[key]})
            rows.append({"measure": f"mean cosine similarity to the {'prompt' if key == 'ss' else 'sensitive context'}",
                         "value": quality[mean]})
    if "perplexity" in quality:
        ppl = quality["perplexity"]
        rows.append({"measure": f"perplexity on the corpus ({ppl['n_texts']} texts, {ppl['n_tokens']} tokens)", "value": ppl["perplexity"]})
        rows.append({"measure": f"perplexity on texts mentioning a value ({ppl['n_texts_sensitive']} texts)", "value": ppl["perplexity_sensitive"]})
    if rows:
        section.add_table(pd.DataFrame(rows))
    else:
        section.text = "<p>Quality was not measured in this run.</p>"
    if "ssc_per_value" in quality:
        per_value = pd.DataFrame({"value": list(quality["ssc_per_value"]), "S.S.": list(quality["ss_per_value"].values()),
                                  "S.S.c": list(quality["ssc_per_value"].values())})
        section.add_table(per_value, "S.S. and S.S.c per value")
    return section


def _settings(result) -> dict:
    settings = {key: value for key, value in result.settings.items() if key != "versions"}
    settings.update({f"version {name}": version for name, version in result.settings.get("versions", {}).items()})
    settings.update({"model": result.model_id, **{f"time {k} (s)": f"{v:.1f}" for k, v in result.timings.items()}})
    words = {True: "yes", False: "no", None: "not set"}
    return {key: words[value] if isinstance(value, bool) or value is None else value for key, value in settings.items()}


def write_text_report(result, path: str | Path) -> Path:
    """Write the audit's HTML report to ``path``."""
    sections = [Section("Fairness per scorer", _EXPLANATION).add_table(
        _readable(_fairness_table(result)), "Individual and group fairness with their permutation tests")]
    for name, fairness in result.fairness.items():
        section = Section(f"Scorer {name}: distributions and worst pairs")
        section.add_figure(result.plot(scorer=name), f"{name} scores of the continuations per value")
        shown, n_pairs = min(10, len(fairness.per_pair)), len(fairness.per_pair)
        section.add_figure(fairness.plot(k=shown), f"The {shown} of {n_pairs} pairs with the largest W1 (mean over "
                                                 "templates), each with its permutation null mean and Holm p over all pairs")
        section.add_table(fairness.worst_pairs(shown), f"Worst pairs: the top {shown} of {n_pairs} by W1; a selection, "
                                                       "so read p_holm (Holm over all pairs), not p_value")
        section.add_table(fairness.per_value, "Per value: mean score, W1 to all samples, mean W1 to the other values")
        if len(fairness.per_subgroup) > 1 and len(fairness.per_subgroup) < len(fairness.per_value):
            section.add_table(fairness.per_subgroup, "Per subgroup")
        if result.spec.components:
            crossed = " x ".join(result.spec.components)
            section.add_table(result.margins(name), f"Per margin of {crossed}: each value's cells, their samples, and the "
                                                    "mean over its cells of their numbers")
            section.add_table(result.swaps(name), "Pairs of cells by the attributes they differ in: mean W1, mean permutation "
                                                  "null mean and excess (individual fairness is their mean weighted by pairs)")
        sections.append(section)
    first = result.scorers[0]
    sections.append(Section(
        "Example continuations",
        f"<p>Continuations of the largest-W1 pair under {html.escape(first)}, on the template where their mean scores "
        f"differ most.</p>{_examples_html(result.examples(first))}",
    ))
    sections.append(_quality_section(result))
    if len(result.validation):
        sections.append(Section("Specification problems", "<p>Counterfactual replacement problems found by validation.</p>")
                        .add_table(_readable(result.validation.head(50))))
    return write_report(path, f"Counterfactual sentiment audit: {result.spec.attribute}", sections,
                        summary=_headline(result), settings=_settings(result))
