"""A language model as the decision-maker, audited with the causal decomposition and checked by exact interventions.

Public contract
---------------
``llm_audit(data, sfm, prompt, bn="SE", *, backend=None, x_mode="both", store=None, batch_size=64, samples=10,
seed=0, level=0.95, alpha=0.05, margin=None, learner=None, n_folds=5, n_rep="auto", n_bins=10, n_boot=200, contrasts="reference",
title=None, provenance=None, progress=True) -> LLMAuditResult``
    Renders every row with :class:`~fairpath.llm.DecisionPrompt` ``prompt`` (X mentioned with the row's own
    value and with every other level of X, and X withheld), scores the prompts with ``backend`` (the local
    SmolLM2 by default; :func:`~fairpath.llm.score_prompts`), and audits the model's scores as predictors
    (``llm_mentioned`` and/or ``llm_withheld``, by ``x_mode``: "mentioned", "withheld" or "both") with
    :func:`fairpath.parity.audit` under ``bn``. Beside the audit:

    - **pathways**: per contrast, predictor and measure (TV, Ctf-DE, Ctf-IE, Ctf-SE) the world's effect
      (on Y), the model's, and their paired difference Ctf(ŷ) − Ctf(y) with its p (Holm over the three
      pathways of a predictor and contrast), read as *amplifies*, *dampens*, *reverses* or *adds* the
      world's disparity when the difference is shown at ``alpha``, "no change shown" otherwise;
    - **exact**: for the rows of each contrast's x0, the mean of f(x1's mention) − f(x0's mention), the same
      row asked again with X's mention changed and everything else kept. For a model that sees only the
      rendered columns this is the sample version of Ctf-DE(ŷ) of x0 → x1 (W held at the row's own value, as
      Ctf-DE holds W at W_{x0}, which for a row of x0 is its observed W), with no model-side estimation: its SE
      is only the rows' sampling. The estimated Ctf-DE(ŷ) extrapolates E[ŷ | x1, z, w] from x1's rows to x0's,
      so the two differ by the estimator's error. The whole counterfactual "had this person's X been x1" would
      move W too (to W_{x1}, which no row shows): that part, the indirect and spurious effects, stays estimated;
    - **mention**: Ctf(mentioned) − Ctf(withheld) per measure, paired over the rows: how much of the model's
      disparity goes through X's mention itself (x_mode "both").
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, result_frame
from fairpath._stats import Estimate, holm, p_clause
from fairpath._vocabulary import LABELS
from fairpath._validation import (Boolean, Draws, Frame, Integer, Optional, Options, Probability, Real, Seed, Splits, Text,
                                  check_columns_present, validate_params)
from fairpath.causal import CONTRASTS
from fairpath.llm._prompt import WITHHELD, DecisionPrompt
from fairpath.llm._scoring import ScoreStore, score_prompts

X_MODES = ("mentioned", "withheld", "both")
MENTIONED, WITHHELD_COLUMN = "llm_mentioned", "llm_withheld"
PATHWAY_MEASURES = ("tv", "ctfde", "ctfie", "ctfse")
DESCRIPTIONS = {MENTIONED: "the language model's score with X mentioned in the prompt",
                WITHHELD_COLUMN: "the language model's score with X withheld from the prompt"}


def _estimate_columns(estimate: Estimate, prefix: str) -> dict:
    return {f"{prefix}{k}": v for k, v in estimate.to_dict().items() if k != "level"}


def reading(world: Estimate, model: Estimate, difference: Estimate, p_holm: float, alpha: float) -> str:
    """What the model does to the world's disparity on one pathway, in words (see the module docstring)."""
    if not p_holm < alpha:
        return "no change shown"
    world_shown = not world.ci_low <= 0 <= world.ci_high
    model_shown = not model.ci_low <= 0 <= model.ci_high
    if not world_shown:
        return "adds a disparity"
    if model_shown and np.sign(model.estimate) != np.sign(world.estimate):
        return "reverses"
    return "amplifies" if np.sign(difference.estimate) == np.sign(world.estimate) else "dampens"


def _pathways(audit, predictors: list[str], alpha: float) -> pd.DataFrame:
    decomposition, y = audit.decomposition, audit.sfm.y
    rows = []
    for contrast in decomposition.contrasts:
        for predictor in predictors:
            block = []
            for measure in PATHWAY_MEASURES:
                world = decomposition.estimate(measure, y, contrast=contrast)
                model = decomposition.estimate(measure, predictor, contrast=contrast)
                difference = decomposition.difference(measure, predictor, y, contrast=contrast)
                block.append({"contrast": contrast, "predictor": predictor, "measure": measure, "world": world, "model": model,
                              "difference": difference, "p_value": difference.p_value()})
            pathways = [row for row in block if row["measure"] != "tv"]
            for row, p_holm in zip(pathways, holm([row["p_value"] for row in pathways])):
                row["p_holm"] = float(p_holm)
            block[0]["p_holm"] = block[0]["p_value"]  # TV is no pathway: its own test
            for row in block:
                row["reading"] = reading(row["world"], row["model"], row["difference"], row["p_holm"], alpha)
            rows += block
    return pd.DataFrame([{**{k: v for k, v in row.items() if k not in ("world", "model", "difference")},
                          **_estimate_columns(row["world"], "world_"), **_estimate_columns(row["model"], "model_"),
                          **row["difference"].to_dict()} for row in rows])


def _exact(audit, data: pd.DataFrame, counterfactual: dict, level: float) -> pd.DataFrame:
    """Per contrast: the mean over x0's rows of f(x1 mentioned) − f(x0 mentioned), beside the estimated Ctf-DE(ŷ); a row
    whose prompt with x1's mention got no answer is left out of it and counted (``rows_unanswered``)."""
    decomposition, x = audit.decomposition, audit.sfm.x
    rows = []
    for contrast, part in decomposition.decompositions.items():
        x0, x1 = part.sfm.x0, part.sfm.x1
        own = (data[x] == x0).to_numpy()
        change = counterfactual[x1][own] - counterfactual[x0][own]
        answered = change[~np.isnan(change)]
        if len(answered) < 2:
            raise FairpathInputError(f"the exact check of {x1!r} against {x0!r} has {len(answered)} row(s) of {x0!r} answered under both "
                                     "mentions; it needs two: give more rows or a model whose answers name an option")
        exact = Estimate.from_se(answered.mean(), answered.std(ddof=1) / np.sqrt(len(answered)), level)
        estimated = decomposition.estimate("ctfde", MENTIONED, contrast=contrast)
        rows.append({"contrast": contrast, "x0": x0, "x1": x1, "rows": len(answered), **exact.to_dict(),
                     "rows_unanswered": len(change) - len(answered), "rows_changed": int((np.abs(answered) > 0).sum()),
                     **_estimate_columns(estimated, "estimated_"),
                     "gap_in_se": (estimated.estimate - exact.estimate) / estimated.se if estimated.se > 0 else np.nan})
    return pd.DataFrame(rows)


def _mention(audit) -> pd.DataFrame:
    decomposition = audit.decomposition
    rows = []
    for contrast in decomposition.contrasts:
        for measure in PATHWAY_MEASURES:
            difference = decomposition.difference(measure, MENTIONED, WITHHELD_COLUMN, contrast=contrast)
            rows.append({"contrast": contrast, "measure": measure, **difference.to_dict(), "p_value": difference.p_value()})
    return pd.DataFrame(rows)


def _levels(data: pd.DataFrame, sfm, n_folds: int) -> list:
    """X's levels, once the columns and the groups' sizes are checked: every problem the audit would find in the data
    is reported before any prompt is scored."""
    from fairpath.causal import prepare_data

    prepared = prepare_data(data, sfm, [sfm.y])
    prepared.check_fold_sizes(sfm.x, n_folds)
    return list(prepared.levels)


def _score_rows(data, sfm, prompt: DecisionPrompt, backend, levels: list, x_mode: str, store, batch_size: int, samples: int, seed: int,
                progress: bool) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """Per-row scores (own X mentioned, X withheld), the scores with each level mentioned, and the prompts' scores."""
    texts = {}
    if x_mode != "withheld":
        texts.update({level: prompt.render(data, sfm, x_values=level) for level in levels})
    if x_mode != "mentioned":
        texts[WITHHELD] = prompt.render(data, sfm, x_values=WITHHELD)
    every = [text for rendered in texts.values() for text in rendered]
    scores = score_prompts(backend, every, prompt.options, store=store, batch_size=batch_size, samples=samples, seed=seed,
                           progress=progress)
    counterfactual = {key: scores["score"].reindex(rendered).to_numpy() for key, rendered in texts.items()}
    rows = pd.DataFrame(index=data.index)
    if x_mode != "withheld":
        own = data[sfm.x].to_numpy()
        rows[MENTIONED] = np.select([own == level for level in levels], [counterfactual[level] for level in levels], np.nan)
        for level in levels:
            rows[f"{MENTIONED}[{level}]"] = counterfactual[level]
    if x_mode != "mentioned":
        rows[WITHHELD_COLUMN] = counterfactual[WITHHELD]
    return rows, counterfactual, scores


@validate_params({
    "data": Frame(), "x_mode": Options(X_MODES), "batch_size": Integer(1), "samples": Integer(1, 1000), "seed": Seed(),
    "level": Probability(), "alpha": Probability(), "margin": Optional(Real(0.0, None, open_low=True)), "n_rep": Splits(),
    "contrasts": Options(CONTRASTS), "title": Optional(Text()), "progress": Boolean(), "n_boot": Draws(), "n_bins": Integer(2), "n_folds": Integer(2),
})
def llm_audit(data: pd.DataFrame, sfm, prompt, bn="SE", *, backend=None, x_mode: str = "both", store=None, batch_size: int = 64,
              samples: int = 10, seed: int = 0, level: float = 0.95, alpha: float = 0.05, margin: float | None = None, learner=None,
              n_folds: int = 5, n_rep: int | str = "auto", n_bins: int = 10, n_boot: int = 200, contrasts: str = "reference", title: str | None = None,
              provenance: dict | None = None, progress: bool = True) -> "LLMAuditResult":
    """Audit a language model's decisions on the rows of ``data`` (see the module docstring)."""
    from fairpath._sfm import check_sfm
    from fairpath.parity import audit as run_audit
    from fairpath.report import api_call
    from fairpath.report import provenance as make_provenance

    started = time.perf_counter()
    check_sfm(sfm)
    prompt = DecisionPrompt.resolve(prompt)
    prompt.check(sfm)
    check_columns_present(data, sfm.columns)  # before the model loads
    if backend is None:
        from fairpath.text import HFGenerator

        backend = HFGenerator("default")
    if store is not None and not isinstance(store, ScoreStore):
        store = ScoreStore(store)
    notes = []
    if sfm.binary and not data[sfm.x].isin([sfm.x0, sfm.x1]).all():  # never asked about: said, as the audit says it
        other = ~data[sfm.x].isin([sfm.x0, sfm.x1])
        notes.append(f"{int(other.sum()):,} rows excluded because {sfm.x!r} is neither {sfm.x0!r} nor {sfm.x1!r}")
        warnings.warn(notes[-1], stacklevel=3)
        data = data.loc[~other]
    levels = _levels(data, sfm, n_folds)
    scored, counterfactual, prompt_scores = _score_rows(data, sfm, prompt, backend, levels, x_mode, store, batch_size, samples, seed, progress)
    predictors = [p for p in (MENTIONED, WITHHELD_COLUMN) if p in scored]
    unanswered = scored[predictors].isna().any(axis=1).to_numpy()
    if unanswered.all():
        raise FairpathInputError(f"none of the {len(data):,} rows got an answer that names an option "
                                 f"{[o.answer for o in prompt.options]}; check the question and the options' spellings")
    if unanswered.any():
        notes.append(f"{int(unanswered.sum()):,} of {len(data):,} rows kept out: the model gave no answer naming an option "
                     f"(no option among its most likely tokens, and no sampled answer parsed)")
    kept = data.loc[~unanswered].join(scored.loc[~unanswered, predictors])
    record = provenance or make_provenance(call=api_call("fairpath.llm.llm_audit", data, prompt=prompt.name, x_mode=x_mode, seed=seed),
                                           seed=seed, packages=("torch", "transformers"))
    audit = run_audit(kept, sfm, predictors, bn, learner=learner, n_folds=n_folds, seed=seed, level=level, alpha=alpha, margin=margin, n_rep=n_rep,
                      n_bins=n_bins, n_boot=n_boot, contrasts=contrasts, title=title or f"{backend.model_id} deciding: {prompt.description or prompt.name}",
                      descriptions={p: DESCRIPTIONS[p] for p in predictors}, provenance=record, progress=progress)
    kept_counterfactual = {key: values[~unanswered] for key, values in counterfactual.items()}
    exact = _exact(audit, kept, kept_counterfactual, level) if MENTIONED in predictors else pd.DataFrame()
    mention = _mention(audit) if len(predictors) == 2 else pd.DataFrame()
    notes += [f"exact check of {row.x1!r} against {row.x0!r}: {row.rows_unanswered:,} row(s) of {row.x0!r} left out, their prompt with "
              f"{row.x1!r} mentioned got no answer naming an option" for row in exact.itertuples() if row.rows_unanswered]
    model = {"model_id": backend.model_id, "dtype": backend.dtype, **backend.describe()}
    diagnostics = {"prompts": len(prompt_scores), "median_mass": float(prompt_scores["mass"].median()),
                   "min_mass": float(prompt_scores["mass"].min()),
                   "methods": {str(k): int(v) for k, v in prompt_scores["method"].value_counts().items()}}
    sampled = prompt_scores.loc[prompt_scores["method"] == "sampled", "score"].dropna()
    if len(sampled) and sampled.isin(prompt.values).all():  # every prompt's answers agreed
        notes.append(f"the {len(sampled):,} prompts scored by sampling got the same answer in each of their samples: the backend may "
                     "ignore the temperature and decode greedily (transformers serve does unless the model's generation config "
                     "samples), so the scores are decisions, not probabilities")
    if diagnostics["median_mass"] < 0.5 and "probabilities" in diagnostics["methods"]:
        notes.append(f"the model puts a median {diagnostics['median_mass']:.0%} of its next-token probability on the options: the "
                     "scores are its preference between them, renormalised; much of its answer lies elsewhere (a preamble, another word)")
    settings = {"prompt": prompt.to_dict(), "prompt_source": prompt.source, "x_mode": x_mode, "bn": audit.settings["bn"], "alpha": alpha,
                "level": level, "seed": seed, "batch_size": batch_size, "samples": samples, "rows": len(data),
                "scoring": diagnostics, "provenance": record}
    return LLMAuditResult(audit=audit, prompt=prompt, scores=data[[sfm.x]].join(scored), pathways=_pathways(audit, predictors, alpha),
                          exact=exact, mention=mention, model=model, settings=settings, notes=[*notes, *audit.notes],
                          example=prompt.example(data, sfm), seconds=time.perf_counter() - started)


@result_class
class LLMAuditResult(ResultMixin):
    """The audit of a language model's decisions (see :func:`llm_audit`).

    Attributes
    ----------
    audit : the :class:`~fairpath.parity.AuditResult` of the model's scores (decomposition, predictive parity, Cookbook).
    prompt : the :class:`~fairpath.llm.DecisionPrompt` asked.
    scores : per row: X, the score with its own X mentioned, with each level of X mentioned, with X withheld.
    pathways : per contrast, predictor and measure: the world's effect, the model's, their paired difference, its p and
        Holm p, and the reading (amplifies, dampens, reverses, adds a disparity, no change shown).
    exact : per contrast: the exact direct effect of X's mention on x0's rows beside the estimated Ctf-DE.
    mention : per contrast and measure: Ctf(mentioned) − Ctf(withheld), paired (empty unless x_mode is "both").
    model : the model's identity (id, dtype, backend, endpoint without credentials).
    settings : what reproduces the run; notes : what to read; example : the first row's prompt; seconds : wall time.
    """

    audit: object
    prompt: DecisionPrompt
    scores: pd.DataFrame
    pathways: pd.DataFrame
    exact: pd.DataFrame
    mention: pd.DataFrame
    model: dict
    settings: dict
    notes: list
    example: str
    seconds: float

    @property
    def predictors(self) -> list[str]:
        return list(self.audit.predictors)

    @property
    def status(self) -> dict[str, str]:
        return self.audit.status

    def headline(self) -> list[str]:
        """The verdict first, in words: each predictor's Cookbook verdict, then what the model does per pathway."""
        lines = [self.audit.verdict_line(p) for p in self.predictors]
        for row in self.pathways.itertuples():
            if row.reading == "no change shown" and row.measure != "tv":
                continue
            where = f" ({row.contrast})" if not self.audit.single else ""
            measure = LABELS[row.measure]
            claim = {"adds a disparity": f"adds a disparity on {measure} where the world's is not shown",
                     "no change shown": f"shows no change from the world's {measure}"}.get(row.reading, f"{row.reading} the world's {measure}")
            lines.append(f"{row.predictor}{where} {claim}: {measure}(ŷ) = {row.model_estimate:+.4f} against {measure}(y) = "
                         f"{row.world_estimate:+.4f}, difference {row.estimate:+.4f} [{row.level:.0%} CI {row.ci_low:+.4f}, "
                         f"{row.ci_high:+.4f}], {p_clause('Holm p', row.p_holm)}")
        for row in self.exact.itertuples():
            lines.append(f"exact direct effect of mentioning {row.x1} instead of {row.x0} on {row.rows:,} rows of {row.x0}: "
                         f"{row.estimate:+.4f} [{row.level:.0%} CI {row.ci_low:+.4f}, {row.ci_high:+.4f}]; estimated Ctf-DE "
                         f"{row.estimated_estimate:+.4f} [{row.estimated_ci_low:+.4f}, {row.estimated_ci_high:+.4f}]")
        return lines

    def to_frame(self) -> pd.DataFrame:
        """The pathway differences, the exact checks and the mention effects (core columns first), then the audit's table."""
        y = self.audit.sfm.y
        pathways = self.pathways.assign(subject=self.pathways["predictor"] + " − " + str(y), kind="model − world")
        exact = self.exact.assign(subject=f"{MENTIONED} (exact, rows of x0)", measure="ctfde", kind="exact intervention")
        mention = self.mention.assign(subject=f"{MENTIONED} − {WITHHELD_COLUMN}", kind="mention − withheld")
        audit = self.audit.to_frame().assign(kind="audit")
        keep = ["contrast", "kind", "p_value", "p_holm", "reading", "rows", "gap_in_se"]
        parts = [frame[[c for c in ("subject", "measure", "estimate", "se", "ci_low", "ci_high", "level", *keep) if c in frame]]
                 for frame in (pathways, exact, mention) if len(frame)]
        return result_frame(pd.concat([*parts, audit], ignore_index=True))

    def to_dict(self) -> dict:
        return {"model": self.model, "settings": self.settings, "status": self.status, "headline": self.headline(),
                "pathways": self.pathways.to_dict("records"), "exact": self.exact.to_dict("records"),
                "mention": self.mention.to_dict("records"), "notes": self.notes, "seconds": self.seconds,
                "audit": self.audit.to_dict()}

    def _repr_fields(self) -> dict:
        return {"model": self.model["model_id"], "prompt": self.prompt.name, "status": self.status}

    def summary(self) -> str:
        lines = [f"LLM decision audit: {self.model['model_id']} ({self.model['dtype']}), prompt {self.prompt.name!r}, "
                 f"{len(self.scores):,} rows, {self.seconds:.0f} s", *self.headline()]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def plot(self, ax=None, *, contrast: str | None = None, predictor: str | None = None):
        """The waterfall from the world's TV to the model's, one pathway at a time (see :mod:`fairpath.llm._report`)."""
        from fairpath.llm._report import waterfall

        return waterfall(self, ax, contrast=contrast, predictor=predictor)

    def _save_files(self, out) -> dict:
        from fairpath._io import write_csv

        return {"audit": self.audit.save(out / "audit")["report"], "scores": write_csv(self.scores.reset_index(names="row"), out / "scores.csv")}

    def _write_report(self, path):
        from fairpath.llm._report import write_llm_report

        return write_llm_report(self, path)
