"""The report of ``fairpath reproduce huang``: the trade-off figure and the HTML page (beside its study)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath._results import panel_axes
from fairpath.report import Section, format_p, provenance_lines, write_report

_BASE = "base"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct (its 4-bit GGUF weights de-quantized)"
_SCORER_NAMES = {"": "VADER", "textblob_": "TextBlob"}

EXPLANATION = (
    "<p><strong>What is measured.</strong> Each model continues the same prompts (a template filled with each value of the "
    "attribute); VADER and TextBlob score the sentiment of every continuation. The <em>spread</em> is the standard deviation, "
    "across the attribute's values, of the mean sentiment within a template, averaged over templates and debiased for "
    "sampling noise: it does not depend on the number of samples per prompt, it is in score units, and it reads 0 (\"at "
    "the noise floor\") when sampling explains every difference. Its interval is a percentile bootstrap over the samples "
    "of each prompt, at the level shown. Every model is compared with the <em>untouched base</em>, the pretrained model the "
    "paper's claim is about: the change is the model's spread relative to the base's, and p the one-sided paired "
    "permutation p of a lower spread (model labels permuted among the samples of each prompt), Holm-adjusted over the "
    "attribute's regularized models. The <em>controls</em> (λ = 0, trained exactly like the regularized models without "
    "the fairness loss) show what fine-tuning alone does. Huang et al.'s own measure, the W1 between the values' score "
    "distributions, is given too, with its audit's verdict and the smallest excess over its noise floor the audit could "
    "have detected. Perplexity is measured on held-out samples of the base from prompts never used for training; S.S. "
    "and S.S.c are shares of continuations similar to their prompt (changes in points of 100).</p>")


def tradeoff_figure(rows: pd.DataFrame, attribute: str, ax=None):
    """The individual spread (VADER, then TextBlob) with its interval against perplexity and S.S.: the base (star), the
    controls (squares), each regularized model (one colour per regularizer, λ and training seed annotated); on ``ax``
    (four axes: VADER against perplexity and S.S., then TextBlob) when given."""
    from fairpath.report import legend_below, styled, subplots

    with styled():  # the report's fonts for every text of the figure, not only its axes
        fig, panels = panel_axes(ax, 4, lambda: subplots(2, 2, height=8.0))
        level = rows["spread_level"].iloc[0]
        for i, (prefix, scorer) in enumerate(_SCORER_NAMES.items()):
            for j, (quality, quality_label) in enumerate((("perplexity", "perplexity on held-out base samples"), ("ss", "S.S."))):
                ax = panels[2 * i + j]
                groups = [("base model", rows[rows["model"] == _BASE], {"marker": "*", "markersize": 13, "color": "black"}),
                          ("control (λ = 0)", rows[(rows["regularizer"] == "none") & (rows["model"] != _BASE)],
                           {"marker": "s", "color": "#829ab1"})]
                groups += [(f"{regularizer} regularization", group, {"marker": "o"})
                           for regularizer, group in rows[rows["regularizer"] != "none"].groupby("regularizer", sort=False)]
                for label, group, style in groups:
                    if group.empty or group[quality].isna().all():
                        continue
                    spread = group[f"{prefix}individual_spread"].to_numpy()
                    errors = [spread - group[f"{prefix}individual_spread_low"].to_numpy(),
                              group[f"{prefix}individual_spread_high"].to_numpy() - spread]
                    ax.errorbar(group[quality], spread, yerr=errors, linestyle="none", capsize=2, label=label, **style)
                    for r in group[group["model"] != _BASE].to_dict(orient="records"):
                        ax.annotate(f"λ={r['lambda']:g} s{r['seed']:.0f}", (r[quality], r[f"{prefix}individual_spread"]),
                                    textcoords="offset points", xytext=(4, 3), fontsize=8)
                ax.margins(x=0.15)  # room for the labels of the outermost points inside the panel
                ax.set_xlabel(quality_label)
                ax.set_ylabel(f"{scorer} spread across values ({level:.0%} interval)")
        fig.suptitle(f"{attribute}: spread of mean sentiment across values (lower is fairer) against quality")
        fig.tight_layout()
        # one legend for the four panels, under the lower row (inside a panel it covered the points)
        legend_below(panels[2], handles=panels[0].get_legend_handles_labels()[0], ncol=4, across_figure=True)
    return fig


def _spread_cell(row, prefix: str) -> str:
    spread, low, high = (row[f"{prefix}individual_spread{end}"] for end in ("", "_low", "_high"))
    shown = "0 (noise floor)" if spread <= 0 else f"{spread:.4f}"
    return f"{shown} [{low:.4f}, {high:.4f}]"


def _change(value) -> str:
    return "" if pd.isna(value) else f"{100 * value:+.1f}%"


def _p(value) -> str:
    return "" if pd.isna(value) else format_p(value)


def _tables(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The spread table (both scorers, against the base), Huang et al.'s W1 with the audits' verdicts, and the quality
    table of one attribute, display-formatted; the base's row says it is the reference."""
    is_base = rows["model"] == _BASE
    level = f"{rows['spread_level'].iloc[0]:.0%}"
    columns = {"model": rows["model"]}
    for prefix, scorer in _SCORER_NAMES.items():
        columns |= {f"{scorer} spread [{level}]": [_spread_cell(r, prefix) for r in rows.to_dict(orient="records")],
                    f"{scorer} change vs base": ["reference" if b else _change(v) for b, v in zip(is_base, rows[f"{prefix}individual_change_vs_base"])],
                    f"{scorer} p (lower)": [_p(v) for v in rows[f"{prefix}individual_p_vs_base"]]}
        if not prefix:
            columns["VADER Holm p"] = [_p(v) for v in rows["individual_p_holm_vs_base"]]
    columns |= {"group spread change (VADER)": ["reference" if b else _change(v) for b, v in zip(is_base, rows["group_change_vs_base"])],
                "group p (lower)": [_p(v) for v in rows["group_p_vs_base"]]}
    spreads = pd.DataFrame(columns)
    w1 = pd.DataFrame({"model": rows["model"],
                       "individual W1 (floor)": [f"{v:.4f} ({f:.4f})" for v, f in zip(rows["individual_fairness"], rows["individual_floor"])],
                       "p (no bias)": [_p(v) for v in rows["individual_bias_p"]],
                       "audit verdict": rows["individual_verdict"],
                       "group W1 (floor)": [f"{v:.4f} ({f:.4f})" for v, f in zip(rows["group_fairness"], rows["group_floor"])],
                       "group verdict": rows["group_verdict"]})
    def points(values, errors):
        return ["reference" if b else "" if pd.isna(v) else f"{v:+.1f} (SE {e:.1f})" for b, v, e in zip(is_base, values, errors)]

    quality = pd.DataFrame({"model": rows["model"], "perplexity": rows["perplexity"].map("{:.2f}".format),
                            "perplexity change": ["reference" if b else _change(v) for b, v in zip(is_base, rows["perplexity_change_vs_base"])],
                            "perplexity (sensitive)": rows["perplexity_sensitive"].map("{:.2f}".format),
                            "S.S.": rows["ss"].map("{:.3f}".format), "S.S. change": points(rows["ss_change_points_vs_base"], rows["ss_change_se_points_vs_base"]),
                            "S.S.c": rows["ssc"].map("{:.3f}".format), "S.S.c change": points(rows["ssc_change_points_vs_base"], rows["ssc_change_se_points_vs_base"])})
    return spreads, w1, quality.replace("nan", "not measured")


def powered_need(record: dict) -> str:
    """What a design with the target power would need, from ``HuangStudy.audit_power``'s record ('' when it had that power
    or the record does not say)."""
    power, need = record.get("power_vs_base"), record.get("powered_samples_per_prompt")
    if power is None or "power_by_samples" not in record or not power < record["power_target"]:
        return ""
    by_samples = {int(n): p for n, p in record["power_by_samples"].items()}  # JSON keys are text
    if need is None:
        return f"; even {max(by_samples)} samples per prompt would fall short of {record['power_target']:.1f}"
    below = [n for n in by_samples if n < need]
    before = f", {max(below)} {by_samples[max(below)]:.2f}" if below else ""
    return f"; {need} samples per prompt would reach power {by_samples[need]:.2f}{before}"


def _choice_text(record: dict) -> str:
    """How the pilot's held-apart half and the sizing audit (``HuangStudy._size_again``) sized the study."""
    if not record.get("power"):
        return ""
    sizing = record.get("sizing")
    if not sizing:
        return f" (on the pilot's held-apart half: {record['pilot_power']:.2f})"
    first = sizing["samples_per_prompt"]
    pilot = f" (the pilot's held-apart half chose {first} samples per prompt with power {record['pilot_power']:.2f}; "
    if "power_at_first" not in sizing:
        return pilot + f"a sizing audit of the base at {first} (seed {sizing['seed']}) could not size a fall: {sizing['note']})"
    return (pilot + f"a sizing audit of the base at {first} (seed {sizing['seed']}) gave it {sizing['power_at_first']:.2f}, "
            f"{record['samples_per_prompt']} {sizing['power_at_chosen']:.2f})")


def _design_text(design: dict) -> str:
    parts = []
    for attribute, record in design.items():
        values = ", ".join(record["values"]) if record.get("values") else "every value"
        text = (f"{attribute}: {values} ({record['selection']}); {record['samples_per_prompt']} samples per prompt, chosen by "
                f"{record['chosen_by']}")
        if "power_vs_base" in record:
            power = (f"power {record['power_vs_base']:.2f} (Monte Carlo SE {record['power_se']:.2f})"
                     if record["power_vs_base"] == record["power_vs_base"] else f"power not computable ({record['power_note']})")
            alone = (f"; VADER's test alone for one model {record['vader_power_vs_base']:.2f}" if "vader_power_vs_base" in record else "")
            text += (f"; {power} for the claim's tests ({record['power_claim']}), computed on the base's own audit{alone}"
                     f"{powered_need(record)}")
        text += _choice_text(record)
        parts.append(html.escape(text))
    return "<p>Design: " + "; ".join(parts) + ".</p>"


def write_huang_report(result, path) -> Path:
    """The HTML report: the verdict per attribute, the controls, the design, then per attribute the trade-off figure,
    the spread table against the base, Huang et al.'s W1 with the audits' verdicts and the quality table."""
    settings = result.settings
    model = DEFAULT_MODEL_NAME if settings["model"] == "default" else settings["model"]
    sizes = (f"{model}; {settings['audit_max_new_tokens']}-token continuations, "
             f"{'all' if settings['templates'] is None else 'the first ' + str(settings['templates'])} templates, "
             f"{settings['steps']} LoRA steps per model, λ ∈ {{{', '.join(f'{v:g}' for v in settings['lambdas'])}}}, "
             f"training seeds {', '.join(map(str, settings['training_seeds']))}, dtype {result.provenance.get('dtype', settings['dtype'])}")
    verdict = html.escape(result.target["verdict"])
    head = result.table.drop_duplicates("attribute")
    heads = "; ".join(f"{r['attribute']}: {r['sentiment_head_accuracy']:.2f} on held-out sentences, fitted on {r['sentiment_head_sentences']} "
                      f"labelled by {r['sentiment_head_labels']}" for r in head.to_dict(orient="records")
                      if pd.notna(r["sentiment_head_accuracy"]))
    summary = (f"<p>Huang et al. (2020)'s debiasing result rerun by fairpath against the untouched base: {html.escape(sizes)}. "
               f"Target: <strong>{verdict}</strong>.</p>" + _design_text(result.design)
               + (f"<p>Sentiment head accuracy: {html.escape(heads)}.</p>" if heads else "")
               + "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in result.target["lines"][:-1]) + "</ul>")
    sections = []
    for attribute, rows in result.table.groupby("attribute", sort=False):
        spreads, w1, quality = _tables(rows)
        section = Section(f"{attribute.capitalize()}: fairness against quality", EXPLANATION if not sections else "",
                          anchor=f"huang-{attribute}")
        section.add_figure(tradeoff_figure(rows, attribute),
                           "Each point is one model's audit with the interval of its spread: the base (star), the controls "
                           "(squares) and the regularized models, λ and training seed annotated.")
        section.add_table(spreads, "Between-value spread of mean sentiment against the untouched base: change and one-sided paired p")
        section.add_table(w1, "Huang et al.'s W1 (VADER) with each audit's own test: verdict and the smallest detectable excess")
        section.add_table(quality, "Generation quality against the base: perplexity, S.S. and S.S.c")
        sections.append(section)
    block = dict(provenance_lines(result.provenance)) if result.provenance else {}
    block.update({f"setting {k}": str(v) for k, v in settings.items()})
    block["time"] = f"{result.seconds:.0f} s this run (finished stages are loaded, not recomputed)"
    return write_report(path, "fairpath reproduce huang: Huang et al. (2020)'s debiasing result against the base", sections,
                        summary, block)
