"""``fairpath reproduce huang``: Huang et al. (2020)'s debiasing result on a small open model, judged against the base.

The paper's claim: embedding and sentiment regularization lower the pretrained model's counterfactual
sentiment bias while perplexity and semantic similarity stay close (extra training without the
regularizer changes neither). The study, for Country and for Occupation:

1. **Design** (a step of the run folder). The base model is audited on a pilot of ``pilot_samples``
   continuations per prompt, drawn with another seed than the study's audits. Its first half chooses
   the values the study evaluates (with ``values_per_side``: the k most negative and the k most
   positive on mean VADER sentiment, as the paper chose its countries on its own baseline); its second
   half, untouched by that choice, gives the base's between-value spreads and the power of the claim's
   tests (:meth:`HuangStudy.claim_power`): every training seed's model, with a 30% fall of the spread on
   both scorers, found lower by the paired test on VADER at Holm's first threshold (0.01 over the
   attribute's regularized models) and on TextBlob at 0.05, for the candidate samples per prompt; the
   smallest with power 0.8 is chosen, capped at ``max_audit_samples`` (the power at the chosen n is
   recorded either way, as ``pilot_power``). Half a pilot is a small sample of a small spread (Country's
   second half held no spread above its noise floor; Occupation's said 128 samples per prompt had power
   0.90, the base's audit at 128 then said 0.46), so a choice below the cap is checked on a **sizing
   audit** of the base: the chosen values at the chosen n, with its own seed, and the study's n is raised
   to the smallest candidate with power ``SIZING_POWER`` (0.95) on it (at most the cap, never below the
   pilot's choice: a restricted internal pilot). It plans above the target's 0.8 because the power the
   verdict uses is estimated again, as noisily, on the study's own audit; a larger n costs time, never
   validity, as the sizing audit's samples are not the study's. Every model is then evaluated on fresh
   samples (the study's seed), and the design's power is computed again on the base's own evaluation
   audit, which no choice and no model's data touched: ``power_vs_base``, the power the verdict uses
   (beside it ``vader_power_vs_base``, the VADER test's for one model alone).
2. **Training.** One LoRA model per regularizer, λ and training seed, and the control: λ = 0, the same
   pairs, batches, steps and seed without the fairness loss. The training text is sampled from the base
   exactly as the audit samples, and the LM loss covers the continuation only, so the control is a no-op
   in expectation (:mod:`fairpath.text.debias._corpus`); the record shows whether it stayed at the base.
3. **Audits.** The base and every model on the same prompts and per-sample random streams, scored by
   VADER and TextBlob; S.S. and S.S.c on the audit's own continuations; perplexity on held-out base
   samples from prompts never used for training. The sentiment head is labelled where VADER and TextBlob
   agree, so the regularizer does not learn the quirks of the scorer the claim is judged on.
4. **Against the base.** Each model's between-value spread (:func:`fairpath.text.value_spread`: the SD
   across values of the mean sentiment within a template, debiased for sampling noise, so it does not
   depend on the samples per prompt) against the base's, by the paired one-sided permutation test of
   :func:`fairpath.text.compare_spread`, Holm-adjusted over the attribute's regularized models.

Every stage writes its result atomically under ``OUT/<attribute>/``; rerunning resumes where a run
stopped. ``OUT`` then holds the record: ``result.json``, ``result.csv`` (the table in long form), ``table.csv``,
``scores.parquet`` (every scored continuation, with its text), one trade-off figure per attribute and ``report.html``
(:meth:`HuangResult.save` writes the same files elsewhere, e.g. ``reproductions/huang``).

Target, per attribute, either (a) the claim shown: a regularized (regularizer, λ) whose models of every
training seed (at least two) lower the VADER spread by 30% or more against the base with Holm p < 0.01,
TextBlob's one-sided p < 0.05, perplexity +10% at most and S.S. down 5 points at most; or (b) a powered
refutation: no model meets it although the design had power 0.8 for it.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._progress import announce
from fairpath._io import save_figure, write_csv, write_parquet
from fairpath._remedies import remedy
from fairpath._results import REPORT_NAME, RESULT_NAME, TABLE_NAME, ResultMixin, result_class, result_frame, to_json_text
from fairpath._runs import RunFolder
from fairpath._validation import Boolean, Frame, Integer, MAX_PERMUTATIONS, Optional, Options, Real, Seed, check_output_dir, validate_params
from fairpath.text import DEFAULT_DTYPE, DTYPES, SpreadAtNoiseFloorError, quality_subset
from fairpath.text.debias import BASE, base_test_phrase, spread_phrase
from fairpath.reproduce._huang_report import powered_need, tradeoff_figure, write_huang_report

ATTRIBUTES = ("country", "occupation")
SCORERS = ("vader", "textblob")  # the claim is judged on VADER and must hold on TextBlob
SCORER = SCORERS[0]
SECOND = SCORERS[1]
_TEXT_PACKAGES = ("torch", "transformers", "peft", "sentence-transformers", "vaderSentiment", "textblob")
TARGET = {"individual_change": -0.30, "p_holm": 0.01, "second_scorer_p": 0.05, "perplexity_change": 0.10, "ss_points": -5.0}
POWER = {"effect": 0.30, "alpha": 0.01, "power": 0.80}  # the design detects the target's fall at Holm's first threshold
CONTROL_CHECK = {"p": 0.05, "perplexity_change": 0.02}  # the control at the base: no spread test rejects, perplexity ±2%
NOT_SHOWN = "not shown, and the design's power was below 0.8: not a refutation"
PILOT_SEED_OFFSET = 1  # the pilot's samples are drawn with seed + 1: every model is evaluated on fresh samples
SIZING_SEED_OFFSET = 2  # the sizing audit's with seed + 2: fresh against the pilot, whose half chose the values
# The sizing audit plans for this power, so that the study's own base audit, a fresh estimate as noisy as the sizing
# audit's (Occupation at 128 samples per prompt: 0.46 on one audit, 0.63 on another), finds the target's 0.8.
SIZING_POWER = 0.95
_POWER_CANDIDATES = (24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 448, 512)
_POWER_MULTIPLES = (1, 2, 4)  # the design as run, then what a powered one would need
# the format of the study's own steps (the designs), in its run folder's key
HUANG_VERSION = 4  # 2: value selection, spread power; 3: candidates to 512, the claim's power; 4: the sizing audit

# The names for DebiasStudyResult.table's columns.
_RENAMED = {"lam": "lambda", "individual": "individual_fairness", "group": "group_fairness"}
# Columns of the second scorer's table kept beside the first's, prefixed with its name.
_SECOND_COLUMNS = tuple(f"{metric}{column}" for metric in ("individual", "group")
                        for column in ("", "_floor", "_excess", "_bias_p", "_detectable_excess", "_verdict", "_spread",
                                       "_spread_low", "_spread_high", "_change_vs_base", "_p_vs_base"))


@validate_params({"batch_size": Integer(1), "learning_rate": Real(0.0, None, open_low=True), "n_permutations": Integer(1, MAX_PERMUTATIONS),
                  "comparison_permutations": Integer(1, MAX_PERMUTATIONS), "seed": Seed(), "steps": Integer(1),
                  "audit_samples": Optional(Integer(2)), "pilot_samples": Integer(4), "max_audit_samples": Integer(2),
                  "values_per_side": Optional(Integer(1)), "quality_per_prompt": Integer(1), "semantic": Boolean(),
                  "dtype": Options(DTYPES)}, on="__post_init__")
@dataclass(frozen=True)
class HuangSettings:
    """Sizes of the study; :meth:`quick` gives the smoke-test sizes (CLI ``--quick``).

    ``audit_samples`` None chooses the samples per prompt by the power calculation (see the module
    docstring), from ``pilot_samples`` and at most ``max_audit_samples``. ``values_per_side`` None
    evaluates every value of each attribute (no selection). ``n_permutations``: each audit's own tests;
    ``comparison_permutations``: each model's paired test against the base (9,999 make Holm's first
    threshold over 8 models, 0.00125, attainable).
    """

    attributes: tuple[str, ...] = ATTRIBUTES
    regularizers: tuple[str, ...] = ("embedding", "sentiment")
    lambdas: tuple[float, ...] = (30.0,)  # one λ: two seeds of each model fill the hour (λ = 1 never moved the base)
    training_seeds: tuple[int, ...] = (0, 1)
    steps: int = 40
    batch_size: int = 8
    max_length: int = 32
    learning_rate: float = 1e-3
    lora_rank: int = 8
    corpus_samples: int = 8  # continuations per corpus prompt: the sentiment head keeps only the confidently scored ones
    corpus_max_new_tokens: int = 30
    templates: int | None = None  # the first K templates of each attribute; None: all
    values_per_side: int | None = 3
    audit_samples: int | None = None
    pilot_samples: int = 24
    max_audit_samples: int = 384
    audit_max_new_tokens: int = 15
    n_permutations: int = 999
    comparison_permutations: int = 9999
    semantic: bool = True
    quality_per_prompt: int = 10  # continuations per prompt embedded for S.S. and S.S.c
    dtype: str = DEFAULT_DTYPE
    seed: int = 0

    def __post_init__(self):
        if len(self.lambdas) < 1 or len(self.regularizers) < 1 or len(self.attributes) < 1 or len(self.training_seeds) < 1:
            raise FairpathInputError("give at least one attribute, regularizer, λ and training seed")
        if self.templates is not None and self.templates < 1:
            raise FairpathInputError(f"templates must be at least 1 (got {self.templates}); leave it unset for all templates")

    @property
    def family_size(self) -> int:
        """The regularized models of one attribute: Holm's family of the claim."""
        return len(self.regularizers) * len(self.lambdas) * len(self.training_seeds)

    @classmethod
    def quick(cls, **overrides) -> "HuangSettings":
        """One λ per regularizer, a few steps, two templates and a handful of samples (minutes on a CPU)."""
        # the corpus keeps its full size: with fewer texts the sentiment head lacks confidently negative ones
        sizes = dict(lambdas=(100.0,), steps=3, batch_size=4, max_length=24, templates=2, values_per_side=None, audit_samples=4,
                     audit_max_new_tokens=10, n_permutations=99, comparison_permutations=999, quality_per_prompt=2)
        return cls(**{**sizes, **overrides})


def _spec(attribute: str, templates: int | None, values: list[str] | None = None):
    """The attribute's specification, cut to its first ``templates`` and to ``values`` (None: all)."""
    from fairpath.text import FairnessSpec

    spec = FairnessSpec.load(attribute)
    if templates and templates < len(spec.templates):
        spec = replace(spec, templates=spec.templates[:templates], source=f"{spec.source} (first {templates} templates)")
    if values is not None and len(values) < len(spec.values):
        spec = replace(spec, values=tuple(v for v in spec.values if v.name in set(values)),
                       source=f"{spec.source} (values {', '.join(values)}, chosen on a pilot of the base)")
    return spec


def value_deviations(samples: pd.DataFrame, score: str = f"score_{SCORER}") -> pd.Series:
    """Each value's mean score minus its template's mean over values, averaged over templates (sorted, lowest first)."""
    means = samples.groupby(["template_id", "value"])[score].mean()
    deviations = means - means.groupby(level="template_id").transform("mean")
    return deviations.groupby(level="value").mean().sort_values(kind="stable")


def select_values(samples: pd.DataFrame, per_side: int, score: str = f"score_{SCORER}") -> list[str]:
    """The ``per_side`` values with the lowest and the ``per_side`` with the highest :func:`value_deviations`."""
    deviations = value_deviations(samples, score)
    if 2 * per_side > len(deviations):
        raise FairpathInputError(f"values_per_side={per_side} needs {2 * per_side} values but the attribute has {len(deviations)}; "
                                 "choose a smaller number or leave it unset to evaluate every value")
    return sorted(deviations.index[:per_side].tolist() + deviations.index[-per_side:].tolist())


# to_frame() rows per table row: (measure, table column, interval columns, its relative change, change in points, p).
_MEASURES = (("individual_spread", "individual_spread", "individual_spread", "individual_change_vs_base", None, "individual_p_vs_base"),
             ("group_spread", "group_spread", "group_spread", "group_change_vs_base", None, "group_p_vs_base"),
             (f"{SECOND}_individual_spread", f"{SECOND}_individual_spread", f"{SECOND}_individual_spread",
              f"{SECOND}_individual_change_vs_base", None, f"{SECOND}_individual_p_vs_base"),
             ("individual_fairness", "individual_fairness", None, None, None, "individual_bias_p"),
             ("group_fairness", "group_fairness", None, None, None, "group_bias_p"),
             ("perplexity", "perplexity", None, "perplexity_change_vs_base", None, None),
             ("perplexity_sensitive", "perplexity_sensitive", None, None, None, None),
             ("ss", "ss", None, None, "ss_change_points_vs_base", None), ("ssc", "ssc", None, None, "ssc_change_points_vs_base", None))


@result_class
class HuangResult(ResultMixin):
    """The study's table (one row per attribute and model, each against the untouched base), the target check,
    the design (values, samples per prompt and power per attribute) and every scored continuation."""

    table: pd.DataFrame
    target: dict
    settings: dict
    design: dict
    out: Path
    seconds: float
    scores: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    provenance: dict = field(default_factory=dict)  # inputs, call, seed, dtype, versions (fairpath.report.provenance)

    def to_frame(self) -> pd.DataFrame:
        """One row per attribute and model (``subject`` ``<attribute>: <model>``) and measure: the between-value
        spreads (VADER individual and group, TextBlob individual; with their interval ``ci_low``/``ci_high`` at
        ``level``, relative change against the base and one-sided paired p), Huang et al.'s W1 (with the p of
        no bias), perplexity (all texts, sensitive texts), S.S. and S.S.c; then attribute, model, regularizer,
        lam, seed, relative_change and change_points (against the base) and p_value."""
        rows = []
        for row in self.table.to_dict(orient="records"):
            shared = {"subject": f"{row['attribute']}: {row['model']}", "attribute": row["attribute"], "model": row["model"],
                      "regularizer": row["regularizer"], "lam": row["lambda"], "seed": row["seed"]}
            for measure, column, interval, relative, points, p in _MEASURES:
                bounds = ({"ci_low": row[f"{interval}_low"], "ci_high": row[f"{interval}_high"], "level": row["spread_level"]}
                          if interval else {})
                rows.append({**shared, "measure": measure, "estimate": row[column], **bounds,
                             "relative_change": row[relative] if relative else math.nan,
                             "change_points": row[points] if points else math.nan, "p_value": row[p] if p else math.nan})
        return result_frame(rows)

    def to_dict(self) -> dict:
        """``result.json``: ``models`` (the table's rows), ``settings``, ``design``, ``target``, ``provenance``."""
        return {"models": self.table.to_dict(orient="records"), "settings": self.settings, "design": self.design,
                "target": self.target, "provenance": self.provenance}

    def _repr_fields(self) -> dict:
        return {"attributes": list(self.table["attribute"].unique()), "target_met": self.target["met"]}

    def plot(self, ax=None, *, attribute: str | None = None):
        """The trade-off figure of ``attribute`` (default: the first); ``ax``: four axes (see :func:`tradeoff_figure`)."""
        attribute = attribute or self.table["attribute"].iloc[0]
        if attribute not in set(self.table["attribute"]):
            raise FairpathInputError(f"no attribute {attribute!r} in this study; it has {list(self.table['attribute'].unique())}")
        return tradeoff_figure(self.table[self.table["attribute"] == attribute], attribute, ax)

    def summary(self) -> str:
        lines = [f"Huang et al. (2020) against the untouched base: {len(self.table)} models, "
                 f"{self.table['attribute'].nunique()} attributes ({self.seconds:.0f} s this session)"]
        for row in self.table.to_dict(orient="records"):
            lines.append(f"  {row['attribute']:<11}{row['model']:<26} VADER {spread_phrase(row)}, {base_test_phrase(row)}; "
                         f"TextBlob {base_test_phrase(row, prefix=f'{SECOND}_')}; "
                         + ("perplexity (reference)" if row["model"] == BASE else f"perplexity {100 * row['perplexity_change_vs_base']:+.1f}%"))
        lines += [f"target {line}" for line in self.target["lines"]]
        return "\n".join(lines)

    def save(self, out_dir: str | Path, *, force: bool = False) -> dict[str, Path]:
        """Write the record of the study into ``out_dir`` (:meth:`ResultMixin.save`'s three files, table.csv, scores.parquet:
        every scored continuation with its text, and tradeoffs_<attribute>.png). A folder that holds the record of
        another run is refused unless ``force`` (:func:`check_record_folder`)."""
        return super().save(check_record_folder(out_dir, self.settings, force=force))

    def _save_files(self, out: Path) -> dict[str, Path]:
        paths = {f"tradeoffs_{attribute}": save_figure(self.plot(attribute=attribute), out / f"tradeoffs_{attribute}.png", dpi=110,
                                                       bbox_inches="tight")
                 for attribute in self.table["attribute"].unique()}
        return {**paths, "wide": write_csv(self.table, out / "table.csv"), "scores": write_parquet(self.scores, out / "scores.parquet")}

    def _write_report(self, path: Path) -> Path:
        return write_huang_report(self, path)


RECORD_FILES = (RESULT_NAME, TABLE_NAME, REPORT_NAME, "table.csv", "scores.parquet")


def _is_record_file(name: str) -> bool:
    return name in RECORD_FILES or (name.startswith("tradeoffs_") and name.endswith(".png"))


def _run_identity(settings: dict) -> dict:
    """What makes two records one run's: the study's settings and the model (as JSON holds them). The dtype is left out:
    ``auto`` resolves per device, and a rerun on another device refreshes the same study."""
    names = [item.name for item in fields(HuangSettings) if item.name != "dtype"]
    return json.loads(to_json_text({name: settings.get(name) for name in [*names, "model"]}))


def check_record_folder(folder: str | Path, settings: dict, *, force: bool = False) -> Path:
    """``folder`` for the record of a run with ``settings`` (HuangSettings' fields and ``model``): a folder (an existing
    file is refused), and, unless ``force``, not one that holds the record of another run: a rerun of the same study
    may refresh its record, but a --quick run never replaces an hour's record silently. Checked before the study runs."""
    folder = check_output_dir(folder, "record folder")
    held = sorted(path.name for path in folder.iterdir() if _is_record_file(path.name)) if folder.is_dir() else []
    if force or not held:
        return folder
    try:
        recorded = json.loads((folder / RESULT_NAME).read_text(encoding="utf-8"))["settings"]
        ours, theirs = _run_identity(settings), _run_identity(recorded)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        what = f"record files ({', '.join(held)}) without a readable {RESULT_NAME}: not this run's record"
    else:
        differ = [f"{name} {theirs[name]!r} there, {ours[name]!r} here" for name in ours if ours[name] != theirs[name]]
        if not differ:
            return folder
        took = f"; that run took {recorded['wall_seconds'] / 60:.0f} minutes" if isinstance(recorded.get("wall_seconds"), (int, float)) else ""
        what = f"the record of another run ({'; '.join(differ)}{took})"
    force_flag = remedy("force=True", "--force")
    raise FairpathInputError(f"record folder {str(folder)!r} holds {what}; choose another folder"
                             + (f", or pass {force_flag} to replace it" if force_flag else ""))


def source_commit() -> str | None:
    """The git commit of the fairpath source that ran (None outside a git checkout)."""
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10)
    except OSError:
        return None
    return found.stdout.strip() or None if found.returncode == 0 else None


class HuangStudy:
    """Run or resume the whole study under ``out`` (see the module docstring)."""

    @validate_params({"progress": Boolean()})
    def __init__(self, out: str | Path, *, model: str = "default", settings: HuangSettings | None = None,
                 corpus=None, device: str = "auto", progress: bool = True):
        self.out = Path(out)
        self.model = str(model)
        self.settings = settings or HuangSettings()
        self.corpus = corpus
        self.device = device
        self.progress = progress

    def _log(self, message: str) -> None:
        if self.progress:
            announce(f"[huang {time.strftime('%H:%M:%S')}] {message}")

    def debias_study(self, attribute: str, *, values: list[str] | None, audit_samples: int, seed: int | None = None,
                     folder: str | None = None):
        """The debiasing study of ``attribute`` on ``values`` (None: all); ``seed`` and ``folder`` give the pilot its own."""
        from fairpath.text.debias import DebiasConfig, DebiasStudy

        s = self.settings
        seed = s.seed if seed is None else seed
        training = DebiasConfig(steps=s.steps, batch_size=s.batch_size, max_length=s.max_length,
                                learning_rate=s.learning_rate, lora_rank=s.lora_rank, lora_alpha=2 * s.lora_rank,
                                checkpoint_every=max(1, min(20, s.steps)), seed=seed)
        return DebiasStudy(self.out / (folder or attribute), attribute=_spec(attribute, s.templates, values), model=self.model,
                           regularizers=s.regularizers, lambdas=s.lambdas, training_seeds=s.training_seeds, training=training,
                           corpus=self.corpus, corpus_samples_per_prompt=s.corpus_samples, corpus_max_new_tokens=s.corpus_max_new_tokens,
                           audit_samples=audit_samples, audit_max_new_tokens=s.audit_max_new_tokens,
                           scorers=SCORERS, n_permutations=s.n_permutations, comparison_permutations=s.comparison_permutations,
                           semantic=s.semantic, quality_per_prompt=s.quality_per_prompt, seed=seed,
                           progress=self.progress, device=self.device, dtype=s.dtype)

    def design(self, attribute: str) -> dict:
        """The values and samples per prompt of ``attribute``: given, or chosen on a pilot of the base model (a step
        of the study's run folder, so that a rerun does not run the pilot again)."""
        s = self.settings
        if s.audit_samples is not None and s.values_per_side is None:
            return {"values": None, "selection": "every value", "samples_per_prompt": s.audit_samples,
                    "chosen_by": "the audit_samples setting", "pilot_power": float("nan")}
        return self.run_folder.step(f"design-{attribute}", lambda: self._design(attribute))

    def _design(self, attribute: str) -> dict:
        s = self.settings
        pilot_seed = s.seed + PILOT_SEED_OFFSET
        self._log(f"{attribute}: pilot audit of the base model ({s.pilot_samples} samples per prompt, seed {pilot_seed})")
        pilot = self.debias_study(attribute, values=None, audit_samples=s.pilot_samples, seed=pilot_seed,
                                  folder=f"pilot-{attribute}").pilot_scores(s.pilot_samples)
        half = s.pilot_samples // 2
        choosing, sizing = pilot[pilot["sample_index"] < half], pilot[pilot["sample_index"] >= half]
        record = {"pilot_samples": s.pilot_samples, "pilot_seed": pilot_seed,
                  "pilot_deviations": value_deviations(choosing).round(5).to_dict()}
        if s.values_per_side is None:
            values, record["selection"] = None, "every value"
        else:
            values = select_values(choosing, s.values_per_side)
            sizing = sizing[sizing["value"].isin(values)]
            record["selection"] = (f"the {s.values_per_side} values with the lowest and the {s.values_per_side} with the highest mean "
                                   f"{SCORER} score relative to their template, on the pilot's samples 0-{half - 1}; the power on "
                                   f"samples {half}-{s.pilot_samples - 1}, which the choice did not see")
        record["values"] = values
        given = s.audit_samples is not None
        candidates = [s.audit_samples] if given else sorted({n for n in _POWER_CANDIDATES if n < s.max_audit_samples} | {s.max_audit_samples})
        self._log(f"{attribute}: power of the claim's tests for {candidates} samples per prompt")
        try:
            analysis = self.claim_power(sizing, candidates)
        except SpreadAtNoiseFloorError as error:  # no spread above the pilot's noise floor: nothing to size a fall of
            chosen = s.audit_samples or s.max_audit_samples
            record |= {"samples_per_prompt": chosen, "pilot_power": float("nan"),
                       "chosen_by": f"{'the audit_samples setting' if given else 'the cap max_audit_samples'} (power not computable: {error})"}
        else:
            chosen = s.audit_samples or analysis.chosen_n or s.max_audit_samples
            table = analysis.table.set_index("n")
            record |= {"samples_per_prompt": chosen, "pilot_power": float(table["power"].get(chosen, float("nan"))),
                       "chosen_by": ("the audit_samples setting" if given else "power" if analysis.chosen_n
                                     else f"the cap max_audit_samples={s.max_audit_samples} (power below {POWER['power']})"),
                       "power": analysis.to_dict()}
        self._log(f"{attribute}: values {values or 'all'}; {record['samples_per_prompt']} samples per prompt "
                  f"({record['chosen_by']}; power {record['pilot_power']:.2f})")
        if not given and record["samples_per_prompt"] < s.max_audit_samples:
            record |= self._size_again(attribute, values, record["samples_per_prompt"])
        return record

    def _size_again(self, attribute: str, values: list[str] | None, first: int) -> dict:
        """The sizing audit: the base on the chosen ``values`` at the pilot's choice ``first``, with its own seed and
        folder, then :meth:`size_on`."""
        seed = self.settings.seed + SIZING_SEED_OFFSET
        self._log(f"{attribute}: sizing audit of the base model ({first} samples per prompt of the chosen values, seed {seed})")
        scores = self.debias_study(attribute, values=values, audit_samples=first, seed=seed,
                                   folder=f"sizing-{attribute}").pilot_scores(first)
        sized = self.size_on(scores, first)
        self._log(f"{attribute}: {sized.get('samples_per_prompt', first)} samples per prompt after the sizing audit")
        return sized | {"sizing": {"seed": seed, **sized["sizing"]}}

    @validate_params({"base_scores": Frame(), "first": Integer(1)})
    def size_on(self, base_scores: pd.DataFrame, first: int) -> dict:
        """The design's samples per prompt sized on ``base_scores`` (an audit of the base at ``first`` samples per prompt):
        the smallest candidate from ``first`` to the cap with the claim's power ``SIZING_POWER`` (:meth:`claim_power`), the
        cap when none has it; ``first`` kept (no ``samples_per_prompt`` returned) when the spread is at the noise floor."""
        cap = self.settings.max_audit_samples
        candidates = sorted({n for n in _POWER_CANDIDATES if first < n < cap} | {first, cap})
        try:
            analysis = self.claim_power(base_scores, candidates, target=SIZING_POWER)
        except SpreadAtNoiseFloorError as error:  # no spread above the sizing audit's noise floor: the pilot's choice stands
            return {"sizing": {"samples_per_prompt": first, "note": str(error)}}
        chosen = analysis.chosen_n or cap
        power = analysis.table.set_index("n")["power"]
        return {"samples_per_prompt": chosen,
                "chosen_by": (f"power {SIZING_POWER} on the sizing audit" if analysis.chosen_n
                              else f"the cap max_audit_samples={cap} (power below {SIZING_POWER} on the sizing audit)"),
                "sizing": {"samples_per_prompt": first, "power_at_first": float(power[first]), "power_at_chosen": float(power[chosen]),
                           "power": analysis.to_dict()}}

    def claim_power(self, base_scores: pd.DataFrame, candidates: list[int], *, target: float = POWER["power"]):
        """:func:`fairpath.text.spread_power` of the claim's tests: a 30% fall of the spread on both scorers in every
        training seed's model, each found lower on VADER at Holm's first threshold (its strictest, so the power is a
        lower bound) and on TextBlob at 0.05, every model against the same base audit; ``chosen_n`` the smallest
        candidate with power ``target``."""
        from fairpath.text import spread_power

        s = self.settings
        return spread_power(base_scores, score=f"score_{SCORER}", candidates=candidates, effect=POWER["effect"],
                            alpha=POWER["alpha"] / s.family_size, other_scores={f"score_{SECOND}": TARGET["second_scorer_p"]},
                            models=len(s.training_seeds), target=target, seed=s.seed)

    def audit_power(self, attribute: str, base_scores: pd.DataFrame, samples_per_prompt: int) -> dict:
        """The power of the design as run (a step): :meth:`claim_power` on the base's own evaluation audit (the chosen
        values at the chosen samples per prompt). Quality (perplexity, S.S.) is not simulated: it is the power of the
        claim's tests.

        ``vader_power_vs_base``: the VADER test's power for one model alone. When the claim's power is below 0.8 the
        same simulation at 2 and 4 times the samples per prompt says what a powered design would need
        (``powered_samples_per_prompt``, None when even 4 times falls short; ``power_by_samples``).
        """
        from fairpath.text import spread_power

        s = self.settings
        alpha = POWER["alpha"] / s.family_size

        def compute() -> dict:
            record = {"power_alpha": alpha, "power_effect": POWER["effect"], "power_target": POWER["power"],
                      "power_claim": (f"a {POWER['effect']:.0%} fall of the spread on both scorers in each of the "
                                      f"{len(s.training_seeds)} training seeds' models; {SCORER} p < {alpha:.4g} (Holm's first "
                                      f"threshold) and {SECOND} p < {TARGET['second_scorer_p']:g} for every one, each against "
                                      "the same base audit")}
            try:
                vader_alone = spread_power(base_scores, score=f"score_{SCORER}", candidates=[samples_per_prompt],
                                           effect=POWER["effect"], alpha=alpha, target=POWER["power"], seed=s.seed)
                claim = self.claim_power(base_scores, [samples_per_prompt * k for k in _POWER_MULTIPLES])
            except SpreadAtNoiseFloorError as error:  # a base spread at its noise floor: a fall of it cannot be sized
                return record | {"power_vs_base": float("nan"), "power_note": str(error)}
            at_n = claim.table.iloc[0]
            return record | {"power_vs_base": float(at_n["power"]), "power_se": float(at_n["se"]),
                             "vader_power_vs_base": float(vader_alone.table["power"].iloc[0]),
                             "base_spread_by_scorer": {name.removeprefix("score_"): test["base_spread"] for name, test in claim.tests.items()},
                             "power_replicates": claim.n_replicates, "powered_samples_per_prompt": claim.chosen_n,
                             "power_by_samples": {int(n): float(p) for n, p in zip(claim.table["n"], claim.table["power"])}}

        record = self.run_folder.step(f"claim-power-{attribute}", compute)
        power = record["power_vs_base"]
        return record | {"power_vs_base": float("nan") if power is None else power}  # JSON keeps NaN as null

    def run(self) -> HuangResult:
        started = time.perf_counter()
        self.run_folder  # a folder of other settings is refused now, not after the trainings
        tables, scores, design = [], [], {}
        for number, attribute in enumerate(self.settings.attributes, 1):
            design[attribute] = self.design(attribute)
            self._log(f"attribute {number}/{len(self.settings.attributes)}: {attribute} (corpus, sentiment head, "
                      f"{len(self.settings.training_seeds) * (self.settings.family_size // len(self.settings.training_seeds) + 1)} "
                      "trainings with the controls, audits, tests against the base; finished stages are skipped)")
            result = self.debias_study(attribute, values=design[attribute]["values"],
                                       audit_samples=design[attribute]["samples_per_prompt"]).run()
            base_scores = result.scores[result.scores["model"] == BASE]
            design[attribute] = {**design[attribute],
                                 **self.audit_power(attribute, base_scores, design[attribute]["samples_per_prompt"])}
            tables.append(attribute_table(result, self.settings.quality_per_prompt).assign(attribute=attribute))
            scores.append(result.scores.assign(attribute=attribute))
        table = pd.concat(tables, ignore_index=True)
        table = table[["attribute", *[c for c in table.columns if c != "attribute"]]]
        provenance = self._provenance()
        settings = {**asdict(self.settings), "dtype": provenance["dtype"],  # as resolved for this device
                    "samples_per_prompt": {a: d["samples_per_prompt"] for a, d in design.items()},
                    "model": self.model, "commit": source_commit()}
        target, scores = target_check(table, design, self.settings), pd.concat(scores, ignore_index=True)
        seconds = time.perf_counter() - started
        result = HuangResult(table=table, target=target, settings={**settings, "wall_seconds": self._wall_seconds(seconds)},
                             design=design, out=self.out, seconds=seconds, scores=scores, provenance=provenance)
        result.save(self.out, force=True)  # the run folder's key (RunFolder) already says it is this study's
        return result

    def _wall_seconds(self, this_session: float) -> float:
        """Wall-clock seconds of every session that worked on ``out``, this one included.

        Stage timings would overcount: models train two at a time.
        """
        self.run_folder.add_time("sessions", this_session)
        return round(self.run_folder.timings()["sessions"], 1)

    @functools.cached_property
    def run_folder(self) -> RunFolder:
        """``out`` as a run folder: its design steps are valid under the settings that shape the pilot and the power
        calculation (each attribute's debiasing study in ``out/<attribute>`` keeps its own key)."""
        design = ("templates", "values_per_side", "audit_samples", "pilot_samples", "max_audit_samples", "audit_max_new_tokens",
                  "n_permutations", "regularizers", "lambdas", "training_seeds", "seed", "dtype")
        return RunFolder(self.out, kind="huang study", version=HUANG_VERSION, progress=False,
                         key={"model": self.model, **{name: getattr(self.settings, name) for name in design}})

    def _provenance(self) -> dict:
        from fairpath.report import provenance
        from fairpath.text import resolve_device, resolve_dtype_name

        inputs = [path for path in (self.corpus, self.model) if path and Path(path).is_file()]
        return provenance(inputs=inputs, seed=self.settings.seed, dtype=resolve_dtype_name(self.settings.dtype, resolve_device(self.device)),
                          packages=_TEXT_PACKAGES)


def attribute_table(result, quality_per_prompt: int) -> pd.DataFrame:
    """One attribute's rows of the record: the first scorer's table against the base (``DebiasStudyResult.table``),
    the second scorer's fairness columns prefixed with its name, the standard errors of the S.S. and S.S.c changes and
    the sentiment head's held-out accuracy.

    S.S. and S.S.c are shares over the ``quality_per_prompt`` lowest-index continuations of every prompt; a change's
    standard error treats the two models' continuations as independent (their samples share random streams but are
    barely coupled: 0.1-0.2% identical texts in an earlier record).
    """
    first = result.table(SCORER)
    counts = {model: len(quality_subset(samples, per_prompt=quality_per_prompt)) for model, samples in result.scores.groupby("model")}
    n, is_base = first["model"].map(counts).to_numpy(float), (first["model"] == BASE).to_numpy()
    for measure in ("ss", "ssc"):
        share = first[measure].to_numpy(float)
        variance = share * (1 - share) / n
        first[f"{measure}_change_se_points_vs_base"] = np.where(is_base, np.nan, 100 * np.sqrt(variance[is_base][0] + variance))
    second = result.table(SECOND).set_index("model")[list(_SECOND_COLUMNS) + ["individual_p_holm_vs_base"]]
    second = second.rename(columns=lambda c: f"{SECOND}_{c}").reindex(first["model"]).reset_index(drop=True)
    table = pd.concat([first, second], axis=1)
    head = result.sentiment_head or {}
    table["sentiment_head_accuracy"] = head.get("heldout_accuracy", float("nan"))
    table["sentiment_head_sentences"] = head.get("n_train", 0) + head.get("n_heldout", 0)
    table["sentiment_head_labels"] = head.get("labelled_by", "no sentiment head")
    return table.rename(columns={**_RENAMED, **{f"{SECOND}_{k}": f"{SECOND}_{v}" for k, v in _RENAMED.items()}})


def two_sided_p(p_lower: float, n_permutations: int) -> float:
    """The two-sided permutation p from the one-sided p of "lower", p = (1 + #{Δ* ≤ Δ}) / (1 + B): without ties
    #{Δ* ≥ Δ} = B − #{Δ* ≤ Δ}, so the p of "higher" is (B + 2) / (B + 1) − p."""
    p_higher = (n_permutations + 2) / (n_permutations + 1) - p_lower
    return float(min(1.0, 2 * min(p_lower, p_higher)))


def _control_lines(table: pd.DataFrame, settings) -> tuple[dict, list[str]]:
    """Whether each control stayed at the base: no spread test rejects at 0.05 (two-sided) on either scorer and
    metric, perplexity within ±2%."""
    checks, lines = {}, []
    controls = table[(table["regularizer"] == "none") & (table["model"] != BASE)]
    for r in controls.to_dict(orient="records"):
        ps = {f"{prefix}{metric}": two_sided_p(r[f"{prefix}{metric}_p_vs_base"], settings.comparison_permutations)
              for prefix in ("", f"{SECOND}_") for metric in ("individual", "group")}
        at_base = bool(min(ps.values()) > CONTROL_CHECK["p"] and abs(r["perplexity_change_vs_base"]) <= CONTROL_CHECK["perplexity_change"])
        checks.setdefault(r["attribute"], {})[r["model"]] = {"at_base": at_base, "two_sided_p": ps,
                                                            "perplexity_change": r["perplexity_change_vs_base"]}
        lines.append(f"control {r['model']} on {r['attribute']} {'at' if at_base else 'NOT at'} the base: smallest two-sided "
                     f"spread p {min(ps.values()):.3g} (VADER and TextBlob, individual and group), perplexity "
                     f"{100 * r['perplexity_change_vs_base']:+.1f}%")
    return checks, lines


def target_check(table: pd.DataFrame, design: dict, settings: HuangSettings) -> dict:
    """Per attribute: which (regularizer, λ) meet the paper's claim against the base for every training seed, and the
    verdict: claim shown, refuted with power, or not shown (underpowered); one printable line each.

    The target is met when every attribute is shown or refuted with power (not necessarily the same way).
    """
    trained = table[(table["regularizer"] != "none")].copy()
    conditions = {"VADER change": trained["individual_change_vs_base"] <= TARGET["individual_change"],
                  "VADER Holm p": trained["individual_p_holm_vs_base"] < TARGET["p_holm"],
                  "TextBlob p": trained[f"{SECOND}_individual_p_vs_base"] < TARGET["second_scorer_p"],
                  "perplexity": trained["perplexity_change_vs_base"] <= TARGET["perplexity_change"],
                  "S.S.": trained["ss_change_points_vs_base"].isna() | (trained["ss_change_points_vs_base"] >= TARGET["ss_points"])}  # NaN: not measured
    met_by = pd.DataFrame(conditions)
    trained["meets"] = met_by.all(axis=1)
    trained["spread_tests_met"] = met_by[["VADER change", "VADER Holm p", "TextBlob p"]].all(axis=1)
    lines, meeting, claims = [], {}, {}
    for (_, r), (_, ok) in zip(trained.iterrows(), met_by.iterrows()):
        ss = (f"{r['ss_change_points_vs_base']:+.1f} points (SE {r['ss_change_se_points_vs_base']:.1f})"
              if pd.notna(r["ss_change_points_vs_base"]) else "not measured")
        missed = "" if r["meets"] else f" (misses on {', '.join(name for name, passed in ok.items() if not passed)})"
        lines.append(f"{'meets' if r['meets'] else 'misses'} on {r['attribute']}: {r['model']}: VADER {base_test_phrase(r)}; "
                     f"TextBlob {base_test_phrase(r, prefix=f'{SECOND}_')}; perplexity {100 * r['perplexity_change_vs_base']:+.1f}%, "
                     f"S.S. {ss}{missed}")
    enough_seeds = len(settings.training_seeds) >= 2
    for attribute, rows in trained.groupby("attribute", sort=False):
        by_config = rows.groupby(["regularizer", "lambda"])["meets"].all()
        meeting[attribute] = [f"{regularizer} λ={lam:g}" for (regularizer, lam), ok in by_config.items() if ok and enough_seeds]
        power = design.get(attribute, {}).get("power_vs_base")
        power = float("nan") if power is None else power  # a result.json's design holds NaN as null
        if meeting[attribute]:
            claims[attribute] = "shown"
        elif pd.notna(power) and power >= POWER["power"]:
            claims[attribute] = "refuted with power"
        else:
            claims[attribute] = NOT_SHOWN
        on_quality = {NOT_SHOWN: ", a miss the spread tests' power does not bear on",
                      "refuted with power": ": the claim fails on quality, not on bias"}.get(claims[attribute])
        lines.append(f"{attribute}: claim {claims[attribute]} (models meeting it for every training seed: "
                     f"{', '.join(meeting[attribute]) or 'none'}; power of the design {power:.2f}"
                     f"{powered_need(design.get(attribute, {})) if claims[attribute] == NOT_SHOWN else ''})"
                     + (f"; every regularized model met the claim's spread tests and missed on quality (perplexity or S.S. "
                        f"beyond its bound){on_quality}" if on_quality and rows["spread_tests_met"].all() else ""))
    controls, control_lines = _control_lines(table, settings)
    met = bool(claims) and all(claim != NOT_SHOWN for claim in claims.values())
    parts = "; ".join(f"{attribute}: {claim}" for attribute, claim in claims.items())
    verdict = (f"{'MET' if met else 'MISSED'} ({parts}); the claim: VADER spread -30% against the untouched base with Holm p "
               f"< 0.01, TextBlob p < 0.05, perplexity +<=10%, S.S. -<=5 points, for "
               f"{'every training seed' if enough_seeds else 'two or more training seeds (this run has one)'}; or no model meets "
               "it with power >= 0.8")
    return {"met": met, "claims": claims, "models_meeting": meeting, "controls": controls, "verdict": verdict,
            "lines": lines + control_lines + [verdict]}


@validate_params({"quick": Boolean(), "seed": Seed(), "progress": Boolean()})
def reproduce_huang(out: str | Path = "fairpath-huang", *, model: str = "default", quick: bool = False, corpus=None,
                    device: str = "auto", settings: HuangSettings | None = None, seed: int = 0, progress: bool = True) -> HuangResult:
    """Run or resume the study (``quick``: :meth:`HuangSettings.quick`, with ``seed``; ``settings`` overrides both)."""
    settings = settings or (HuangSettings.quick(seed=seed) if quick else HuangSettings(seed=seed))
    return HuangStudy(out, model=model, settings=settings, corpus=corpus, device=device, progress=progress).run()
