"""The debiasing study: train one model per regularizer, λ and training seed, audit each against the base model.

For the base model and every fine-tuned one the study reports, from the text audit, individual and
group fairness per scorer (Huang et al.'s W1 with the permutation test's verdict, noise floor and
detectable excess; the n-free between-value spread with its interval, :func:`fairpath.text.value_spread`),
perplexity on the held-out text and on its sensitive subset, and S.S. and S.S.c on prefixes of the
held-out text (defined once, in ``fairpath.text._quality``). Every model, the control (λ = 0) included,
is compared with the untouched base by the paired one-sided test of its spread
(:func:`fairpath.text.compare_spread`): the paper's claim is that regularization lowers the pretrained
model's bias, so the base is the reference, and the control shows what fine-tuning alone does.
Every stage writes its result to the output folder, so a rerun skips what is done and resumes an
interrupted training from its checkpoint.

Layout of ``out_dir``: ``corpus.json``, ``sentiment_head.pt``, ``models/<name>/`` (Hugging Face
folders), ``checkpoints/<name>/``, ``audits/<name>/`` (samples, audit JSON, evaluation JSON),
and the result's ``result.json``, ``result.csv`` and ``report.html``. The folder is a :class:`fairpath._runs.RunFolder`: each stage is a step
saved atomically as it finishes, ``run_key.json`` holds what the stages were computed with and a rerun under
another key is refused, naming what differs (see ``DebiasStudy.run_folder``).
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._fingerprint import digest
from fairpath._io import write_parquet
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._runs import RunFolder
from fairpath._stats import holm
from fairpath._validation import MAX_PERMUTATIONS, Boolean, Integer, Options, check_float, check_int, check_list_arg, check_seed, validate_params
from fairpath.text._parameters import DEFAULT_DTYPE, DTYPES, TEST_SETTINGS
from fairpath.text._spread import check_permutations
from fairpath.text.debias._corpus import DebiasCorpus, build_corpus, read_corpus_file, sample_corpus
from fairpath.text.debias._config import TRAINING_LOG_NAME, DebiasConfig

BASE = "base"
CONTROL = "control"  # λ = 0: fine-tuned exactly as every regularized model, without the fairness loss
NO_REGULARIZER = "none"  # the regularizer column of the base and of the controls
# raised whenever a stage's saved result changes for the same inputs (3: stages of a RunFolder; 4: spreads, tests
# against the base, continuation-only loss)
STUDY_VERSION = 4
SCORES_NAME = "scores.parquet"


_QUALITY = ("perplexity", "perplexity_sensitive", "ss", "ssc")  # measured once per model, whatever the scorer
_THRESHOLDS = ("similarity_threshold", "context_threshold")  # S.S. and S.S.c, calibrated on the base
_METRICS = ("individual", "group")


def model_name(regularizer: str, lam: float, seed: int) -> str:
    """``control-seed0``, ``embedding-lambda10-seed1``: one folder and one row per trained model."""
    return f"{CONTROL if lam == 0 else f'{regularizer}-lambda{lam:g}'}-seed{seed}"


@result_class
class DebiasStudyResult(ResultMixin):
    """Fairness and quality of the base model and of each fine-tuned model, each judged against the base.

    ``evaluations`` has one row per model and scorer: ``model``, ``regularizer``, ``lam``, ``seed``
    (of training; NaN for the base), ``scorer``; individual and group fairness as Huang et al. define them (W1,
    with the permutation test's p of no bias, noise floor, detectable excess and verdict: no interval, none
    has verified coverage for W1); the n-free between-value spread of each (``individual_spread``, its
    interval ``individual_spread_low``/``_high`` at ``spread_level``; the same for group); ``perplexity``,
    ``perplexity_sensitive``, ``ss`` and ``ssc``. ``to_frame()`` gives them in long form. ``comparisons``
    has one row per trained model and scorer: the paired one-sided test of its spread against the base's
    (:func:`fairpath.text.compare_spread`). :meth:`table` puts both side by side. ``scores`` holds every
    scored continuation of every audit (its ``model``, prompt, template, value, sample index, text and
    scores), from which all of them can be recomputed.
    """

    attribute: str
    evaluations: pd.DataFrame = field(repr=False)
    comparisons: pd.DataFrame = field(repr=False)
    scores: pd.DataFrame = field(repr=False)
    training: dict = field(default_factory=dict, repr=False)
    corpus: dict = field(default_factory=dict)
    sentiment_head: dict | None = None
    settings: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per model (``subject``) and measure: individual and group fairness (W1, with its ``p_value`` of
        no bias and ``null_mean``, the noise floor) and spread (with its interval ``ci_low``/``ci_high`` at
        ``level``) per scorer, then perplexity, perplexity_sensitive, ss and ssc once per model (``scorer``
        empty). Then scorer, regularizer, lam, seed."""
        rows = []
        for model, evaluations in self.evaluations.groupby("model", sort=False):
            first = evaluations.iloc[0]
            shared = {"subject": model, "regularizer": first["regularizer"], "lam": first["lam"], "seed": first["seed"]}
            for row in evaluations.to_dict(orient="records"):
                for metric in _METRICS:
                    rows.append({**shared, "measure": f"{metric}_fairness", "estimate": row[metric], "scorer": row["scorer"],
                                 "p_value": row[f"{metric}_p_value"], "null_mean": row[f"{metric}_noise_floor"]})
                    rows.append({**shared, "measure": f"{metric}_spread", "estimate": row[f"{metric}_spread"],
                                 "scorer": row["scorer"], "ci_low": row[f"{metric}_spread_low"],
                                 "ci_high": row[f"{metric}_spread_high"], "level": row["spread_level"]})
            rows += [{**shared, "measure": quality, "estimate": first[quality]} for quality in _QUALITY]
        return result_frame(rows)

    def table(self, scorer: str = "vader") -> pd.DataFrame:
        """One row per model (the base first, then every trained model, controls included) against the base.

        Columns: model, regularizer, lam, seed; per metric (individual, group): the W1 (``individual``), its
        noise floor, excess, p of no bias (``individual_bias_p``), detectable excess and the audit's verdict;
        the spread, its interval and ``spread_level``; ``individual_change_vs_base`` (the spread's relative
        change, NaN when the base's spread is at its noise floor), ``individual_p_vs_base`` (one-sided
        paired permutation p of a lower spread) and, for individual, ``individual_p_holm_vs_base`` (Holm over
        the regularized models, controls left out: the claim is about them); perplexity (held-out text,
        sensitive texts) and its change; S.S. and S.S.c and their change in points. The base's own row has
        no change (NaN): nothing was done to it.
        """
        rows = self.evaluations[self.evaluations["scorer"] == scorer].set_index("model", drop=False)
        if BASE not in rows.index:
            raise FairpathInputError(f"no base-model evaluation for scorer {scorer!r}; scorers: {sorted(self.evaluations['scorer'].unique())}")
        tests = self.comparisons[self.comparisons["scorer"] == scorer].set_index("model").reindex(rows.index)
        base = rows.loc[BASE]
        frame = rows[["model", "regularizer", "lam", "seed"]].reset_index(drop=True)
        for metric in _METRICS:
            frame[metric] = rows[metric].to_numpy()
            frame[f"{metric}_floor"] = rows[f"{metric}_noise_floor"].to_numpy()
            frame[f"{metric}_excess"] = (rows[metric] - rows[f"{metric}_noise_floor"]).to_numpy()
            frame[f"{metric}_bias_p"] = rows[f"{metric}_p_value"].to_numpy()  # the model's own test of no bias
            frame[f"{metric}_detectable_excess"] = rows[f"{metric}_detectable_excess"].to_numpy()
            frame[f"{metric}_verdict"] = rows[f"{metric}_verdict"].to_numpy()
            for column in ("spread", "spread_low", "spread_high"):
                frame[f"{metric}_{column}"] = rows[f"{metric}_{column}"].to_numpy()
            frame[f"{metric}_change_vs_base"] = tests[f"{metric}_change"].to_numpy()
            frame[f"{metric}_p_vs_base"] = tests[f"{metric}_p"].to_numpy()
        frame["spread_level"] = rows["spread_level"].to_numpy()
        regularized = (frame["regularizer"] != NO_REGULARIZER).to_numpy()
        frame["individual_p_holm_vs_base"] = float("nan")
        if regularized.any():
            frame.loc[regularized, "individual_p_holm_vs_base"] = holm(frame.loc[regularized, "individual_p_vs_base"].to_numpy())
        trained = (frame["model"] != BASE).to_numpy()
        frame["perplexity"] = rows["perplexity"].to_numpy()
        frame["perplexity_sensitive"] = rows["perplexity_sensitive"].to_numpy()
        frame["perplexity_change_vs_base"] = np.where(trained, (rows["perplexity"] / base["perplexity"] - 1).to_numpy(), np.nan)
        for measure in ("ss", "ssc"):
            frame[measure] = rows[measure].to_numpy()
            frame[f"{measure}_change_points_vs_base"] = np.where(trained, (100 * (rows[measure] - base[measure])).to_numpy(), np.nan)
        return frame

    def to_dict(self) -> dict:
        return {
            "attribute": self.attribute,
            "evaluations": self.evaluations.to_dict(orient="records"),
            "comparisons": self.comparisons.to_dict(orient="records"),
            "training": self.training,
            "corpus": self.corpus,
            "sentiment_head": self.sentiment_head,
            "settings": self.settings,
            "timings_s": self.timings,
        }

    def _repr_fields(self) -> dict:
        return {"attribute": self.attribute, "models": self.evaluations["model"].nunique()}

    def summary(self) -> str:
        scorer = self.evaluations["scorer"].iloc[0]
        lines = [f"DebiasStudyResult(attribute={self.attribute!r}, models={self.evaluations['model'].nunique()}, "
                 f"scorer shown: {scorer}; changes against the base)"]
        for _, row in self.table(scorer).iterrows():
            lines.append(f"  {row['model']:<26} {spread_phrase(row, 'individual')} | {base_test_phrase(row)} | "
                         f"ppl {row['perplexity']:.2f} | S.S. {row['ss']:.3f} | S.S.c {row['ssc']:.3f}")
        return "\n".join(lines)

    def plot(self, ax=None, *, scorer: str = "vader"):
        """Trade-off figure: the individual spread (with its interval) against S.S. and against perplexity, one
        colour per regularizer (the controls grey, the base a star); on ``ax`` (a sequence of two axes) when given."""
        from fairpath.report import legend_below, new_figure

        rows = self.evaluations[self.evaluations["scorer"] == scorer]
        if rows.empty:
            raise FairpathInputError(f"no evaluations for scorer {scorer!r}; scorers: {sorted(self.evaluations['scorer'].unique())}")
        fig, axes = panel_axes(ax, 2, lambda: new_figure(1, 2, figsize=(10, 4)))
        level = rows["spread_level"].iloc[0]
        for panel, column, label in ((axes[0], "ss", "S.S. (share of relevant continuations)"),
                                     (axes[1], "perplexity", "perplexity on held-out base samples")):
            if rows[column].isna().all():
                panel.text(0.5, 0.5, f"{column} not measured", ha="center", va="center", transform=panel.transAxes)
                continue
            for regularizer, group in rows.groupby("regularizer", sort=False):
                for is_base, part in ((True, group[group["model"] == BASE]), (False, group[group["model"] != BASE])):
                    if part.empty:
                        continue
                    spread = part["individual_spread"].to_numpy()
                    errors = [spread - part["individual_spread_low"].to_numpy(), part["individual_spread_high"].to_numpy() - spread]
                    style = ({"marker": "*", "markersize": 12, "color": "black", "label": "base model"} if is_base else
                             {"marker": "o", "color": "#829ab1" if regularizer == NO_REGULARIZER else None,
                              "label": "control (λ = 0)" if regularizer == NO_REGULARIZER else regularizer})
                    panel.errorbar(spread, part[column], xerr=errors, linestyle="none", capsize=2, **style)
                    for _, row in part[~part["model"].eq(BASE)].iterrows():
                        panel.annotate(f"λ={row['lam']:g} s{row['seed']:.0f}", (row["individual_spread"], row[column]),
                                       textcoords="offset points", xytext=(4, 4), fontsize=7)
            panel.set_xlabel(f"between-value spread of mean {scorer} score ({level:.0%} interval; lower is fairer)")
            panel.set_ylabel(label)
            legend_below(panel, fontsize=8, ncol=2)
        fig.suptitle(f"Fairness against quality ({self.attribute})")
        fig.tight_layout()
        return fig

    def plot_training(self):
        """Fairness loss per step of every training run."""
        from fairpath.report import legend_below, new_figure

        fig, ax = new_figure(figsize=(7, 3.5))
        for name, log in self.training.items():
            history = log.get("history", [])
            if history:
                ax.plot([h["step"] for h in history], [max(h["fair_loss"], 1e-8) for h in history], label=name)
        ax.set_xlabel("step")
        ax.set_ylabel("L_fair (cosine distance, per batch)")
        ax.set_yscale("log")
        legend_below(ax, fontsize=8, ncol=3)
        fig.tight_layout()
        return fig

    def _write_report(self, path: Path) -> Path:
        """The report on the study's first scorer (the settings' ``scorers``; else the evaluations' first)."""
        from fairpath.report import Section, write_report

        measured = list(dict.fromkeys(self.evaluations["scorer"]))
        scorer = next((s for s in self.settings.get("scorers", []) if s in measured), measured[0])
        changes = self.table(scorer)
        summary = "".join(f"<p>{html.escape(r['model'])} against the base: {_change_sentence(r, scorer)}</p>"
                          for _, r in changes[changes["model"] != BASE].iterrows())
        sections = [
            Section("Trade-off", "<p>Each point is one model with the interval of its between-value spread (the SD across "
                    "the attribute's values of the mean sentiment within a template, debiased for sampling noise: it does not "
                    "depend on the number of samples).</p>").add_figure(self.plot(scorer=scorer), "Fairness against semantic similarity and perplexity"),
            Section("Every model against the untouched base").add_table(changes, float_format="{:.4f}"),
            Section("All measurements").add_table(self.evaluations.drop(columns=["path"], errors="ignore"), float_format="{:.4f}"),
            Section("Training").add_figure(self.plot_training(), "Fairness loss per training step"),
        ]
        text = f"<p>Corpus: {html.escape(json.dumps(self.corpus))}</p>"
        if self.sentiment_head:
            text += f"<p>Sentiment head f_sh: {html.escape(json.dumps(self.sentiment_head))}</p>"
        sections.append(Section("Training data", text))
        return write_report(path, f"Debiasing study: {self.attribute}", sections, summary=summary,
                            settings={**self.settings, "timings_s": self.timings})


class DebiasStudy:
    """Train debiased models over regularizers and λ, then audit the base model and each of them.

    Parameters
    ----------
    out_dir : folder holding every artefact; rerunning with the same folder resumes.
    attribute : built-in attribute name or specification YAML.
    model : "default" (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder.
    regularizers, lambdas : the grid of regularized runs (each λ > 0; no λ trains the controls only). The
        control, λ = 0 (plain LM fine-tuning on the same pairs, batches, steps and seed), is always trained:
        it shows what fine-tuning alone does. Every model is compared with the untouched base.
    training_seeds : one model per seed for each run of the grid and the control (None: ``seed`` only); a
        claim that holds for one training seed only is not a claim about the method.
    training : :class:`DebiasConfig` whose regularizer and λ are replaced per run.
    corpus : a corpus file (.txt, one text per line, or CSV/Parquet with a ``text`` column), a list
        of texts, or None to sample the default corpus from the base model.
    corpus_samples_per_prompt, corpus_max_new_tokens : size of the sampled default corpus.
    audit_samples, audit_max_new_tokens, scorers, n_permutations : the audit of each model (permutations per test).
    comparison_permutations : permutations of each model's paired test against the base (None: ``n_permutations``).
    semantic : measure S.S. and S.S.c with MiniLM.
    quality_per_prompt : continuations per prompt embedded for S.S. and S.S.c (the lowest sample
        indices, so every model is judged on the same sample slots; see ``audit_text``).
    generation_batch_size : rows sampled together in the audits. 256 decodes SmolLM2 on 2 CPU cores
        at 183 tok/s against 158 at 64 (``benchmarks/bench_generation.py``; larger matrix products
        amortise reading the weights), for about 0.7 GB more memory.
    seed : seeds the corpus, training, sampling and the bootstrap.
    device : "auto" (CUDA when available, else the CPU), "cpu" or "cuda"; every model is trained,
        sampled and scored for perplexity there.
    dtype : "auto" (bfloat16 where the device computes it natively, see ``fairpath.text._generation``),
        "bfloat16" or "float32": the precision of sampling, perplexity and training.

    Each audit also writes ``audits/<name>/scores.parquet`` (one row per scored continuation), from
    which every model is compared with the base by a paired test (``comparisons/<name>.<scorer>.<permutations>.json``).
    """

    @validate_params({"n_permutations": TEST_SETTINGS["n_permutations"], "semantic": Boolean(), "quality_per_prompt": Integer(1),
                      "generation_batch_size": Integer(1), "seed": TEST_SETTINGS["seed"], "progress": Boolean(),
                      "dtype": Options(DTYPES)})
    def __init__(self, out_dir: str | Path, *, attribute="occupation", model="default",
                 regularizers: Sequence[str] = ("embedding",), lambdas: Sequence[float] = (1.0, 10.0, 100.0),
                 training_seeds: Sequence[int] | None = None,
                 training: DebiasConfig | None = None, corpus=None, corpus_samples_per_prompt: int = 2,
                 corpus_max_new_tokens: int = 40, audit_samples: int = 20, audit_max_new_tokens: int = 30,
                 scorers: Sequence[str] = ("vader",), n_permutations: int = 999, comparison_permutations: int | None = None,
                 semantic: bool = True,
                 quality_per_prompt: int = 10, generation_batch_size: int = 256, seed: int = 0, progress: bool = True, device: str = "auto",
                 dtype: str = DEFAULT_DTYPE):
        from fairpath.text._generation import resolve_dtype_name
        from fairpath.text._models import resolve_device
        from fairpath.text._spec import FairnessSpec

        self.device = resolve_device(device)
        self.dtype = resolve_dtype_name(dtype, self.device)  # training, sampling and perplexity alike
        self.out_dir = Path(out_dir)
        self.spec = FairnessSpec.load(attribute)
        self.model = str(model)
        self.training = replace(training or DebiasConfig(), dtype=self.dtype, seed=seed)
        # Validate every (regularizer, λ) now, not after hours of training.
        grid = [replace(self.training, regularizer=r, lam=check_float("each λ in lambdas (λ = 0 is the control, always trained)", lam, 0.0, open_low=True))
                for r in check_list_arg("regularizers", regularizers) for lam in check_list_arg("lambdas", lambdas, (int, float), "λ")]
        if not check_list_arg("regularizers", regularizers):
            raise FairpathInputError("give at least one regularizer")
        seeds = [check_seed(s, "each of training_seeds") for s in check_list_arg("training_seeds", training_seeds, (int,), "seed")] \
            if training_seeds is not None else [seed]
        if not seeds or len(set(seeds)) != len(seeds):
            raise FairpathInputError(f"training_seeds must be distinct seeds, at least one; got {list(seeds)}")
        self.training_seeds = tuple(seeds)
        # per seed, the control first: an interrupted study already holds what fine-tuning alone does
        self.runs = [replace(config, seed=s) for s in seeds for config in (replace(self.training, regularizer="embedding", lam=0.0), *grid)]
        self.corpus = corpus
        self.corpus_samples_per_prompt = corpus_samples_per_prompt
        self.corpus_max_new_tokens = corpus_max_new_tokens
        self.audit_samples = audit_samples
        self.audit_max_new_tokens = audit_max_new_tokens
        self.scorers = tuple(check_list_arg("scorers", scorers))
        self.n_permutations = n_permutations
        self.comparison_permutations = n_permutations if comparison_permutations is None else \
            check_int("comparison_permutations", comparison_permutations, 1, MAX_PERMUTATIONS)
        check_permutations(self.comparison_permutations, 0.05)  # refused now, not after the trainings
        self.semantic = semantic
        self.quality_per_prompt = quality_per_prompt
        self.generation_batch_size = generation_batch_size
        self.seed = seed
        self.progress = progress
        # The audits' settings are checked now too, not after the trainings.
        self.audit_settings()

    # -- stages -------------------------------------------------------------------------------
    @functools.cached_property
    def run_folder(self) -> RunFolder:
        """``out_dir`` as a run folder, refused when its stages were computed under another key (hours of training
        are never thrown away).

        The key: the base model's identity (its weights' digest), the specification's content, the corpus
        (its texts, or how it is sampled), the training settings, the audits' settings, the seed, the code
        version and the precision. Not in it: the grid of runs (each model has its own folder, so a grid may
        grow), the batch size (the samples do not depend on it) and the device.
        """
        from fairpath.text._models import model_id

        if isinstance(self.corpus, (str, Path)):
            corpus = digest(read_corpus_file(self.corpus))
        else:
            corpus = {"sampled": [self.corpus_samples_per_prompt, self.corpus_max_new_tokens]} if self.corpus is None else digest(list(self.corpus))
        key = {"model": model_id(self.model), "spec": self.spec.to_dict(), "corpus": corpus, "training": asdict(self.training),
               "audit_samples": self.audit_samples, "audit_max_new_tokens": self.audit_max_new_tokens, "scorers": list(self.scorers),
               "n_permutations": self.n_permutations, "semantic": self.semantic, "quality_per_prompt": self.quality_per_prompt,
               "seed": self.seed, "dtype": self.dtype}
        return RunFolder(self.out_dir, kind="debiasing study", version=STUDY_VERSION, key=key, progress=False)

    def _load_base(self):
        from fairpath.text._models import load_causal_lm

        return load_causal_lm(self.model, device=self.device)

    def prepare_corpus(self) -> DebiasCorpus:
        return self.run_folder.artefact("corpus", self._build_corpus, save=DebiasCorpus.save, load=DebiasCorpus.load)

    def _build_corpus(self) -> DebiasCorpus:
        tokenizer = None
        if self.training.pooling == "position":
            from fairpath.text._models import load_tokenizer

            tokenizer = load_tokenizer(self.model)
        if self.corpus is None:
            with self._generator(self.model) as generator:
                texts = sample_corpus(generator, self.spec, samples_per_prompt=self.corpus_samples_per_prompt,
                                      max_new_tokens=self.corpus_max_new_tokens, seed=self.seed)
            source = (f"sampled from the base model: {self.corpus_samples_per_prompt} continuations of "
                      f"{self.corpus_max_new_tokens} tokens per generic prompt")
        elif isinstance(self.corpus, (str, Path)):
            texts, source = read_corpus_file(self.corpus), str(self.corpus)
        else:
            texts, source = list(self.corpus), "texts given in Python"
        return build_corpus(texts, self.spec, source=source, seed=self.seed, tokenizer=tokenizer)

    def prepare_sentiment_head(self, corpus: DebiasCorpus):
        from fairpath.text.debias._sentiment_head import SentimentProjection, fit_sentiment_projection

        def fit() -> SentimentProjection:
            model, tokenizer = self._load_base()
            texts, ends = corpus.train_mentions
            return fit_sentiment_projection(model, tokenizer, texts, representation=self.training.representation,
                                            mention_ends=ends, random_state=self.seed)

        return self.run_folder.artefact("sentiment_head", fit, save=SentimentProjection.save, load=SentimentProjection.load,
                                        suffix=".pt")

    @staticmethod
    def name(config: DebiasConfig) -> str:
        return model_name(config.regularizer, config.lam, config.seed)

    def model_folder(self, config: DebiasConfig) -> Path:
        return self.out_dir / "models" / self.name(config)

    def train(self, config: DebiasConfig, corpus: DebiasCorpus, projection) -> float:
        """Train and save one model (resuming from its checkpoint); the seconds it took. Runs in a worker process
        too (see :meth:`train_all`), so it writes nothing shared: the caller records the time."""
        from fairpath.text.debias._training import DebiasTrainer  # torch: loaded when a model is trained

        started = time.perf_counter()
        model, tokenizer = self._load_base()
        name = self.name(config)
        trainer = DebiasTrainer(model, tokenizer, corpus.train_pairs, config,
                                sentiment_head=projection.head_ if config.regularizer == "sentiment" else None,
                                checkpoint_dir=self.out_dir / "checkpoints" / name, progress=self.progress)
        trainer.fit()
        trainer.save_pretrained(self.model_folder(config), extra={"base_model": self.model, "corpus": corpus.summary()})
        return time.perf_counter() - started

    def train_all(self, corpus: DebiasCorpus, projection) -> None:
        """Train every model not trained yet: on a CPU with several cores, one model per core at once, each in a
        process with one torch thread.

        A training step is many small operations (rank-8 products, autocast casts, optimizer updates), and on
        two cores each parallel one waits for its second thread: one model per core trains about twice the
        models per hour of one model on two threads. The runs are independent (their own seed, pairs and
        checkpoint), so their order does not matter; a model trained on one thread differs from one trained
        on two only in the rounding of its sums.
        """
        pending = [config for config in self.runs if not (self.model_folder(config) / TRAINING_LOG_NAME).exists()]
        processes = min(len(pending), os.cpu_count() or 1) if self.device == "cpu" else 1
        def record(config: DebiasConfig, seconds: float) -> None:  # as each ends, so an interrupted study keeps it
            self.run_folder.add_time(f"training:{self.name(config)}", seconds)

        if processes <= 1:
            for config in pending:
                record(config, self.train(config, corpus, projection))
            return
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"), initializer=_one_thread) as pool:
            jobs = {pool.submit(self.train, config, corpus, projection): config for config in pending}
            for job in as_completed(jobs):
                record(jobs[job], job.result())

    def evaluate(self, name: str, model_path: str, corpus: DebiasCorpus) -> dict:
        """Audit one model (resumable through its sample store) and measure S.S.: the step ``audits/<name>/evaluation``."""
        return self.run_folder.step(f"audits/{name}/evaluation", lambda: self._evaluation(name, model_path, corpus))

    def _evaluation(self, name: str, model_path: str, corpus: DebiasCorpus) -> dict:
        from fairpath.text._audit import audit_text

        folder = self.out_dir / "audits" / name
        with self._generator(model_path) as backend:
            result = audit_text(self.spec, backend, scorers=self.scorers, settings=self.audit_settings(), store=folder / "samples",
                                n_permutations=self.n_permutations, seed=self.seed, quality=self.semantic,
                                corpus=corpus.heldout_texts, quality_per_prompt=self.quality_per_prompt, progress=self.progress,
                                **self._thresholds(name))
        result.to_json(folder / "audit.json")
        write_parquet(result.samples, folder / SCORES_NAME)
        ppl = result.quality["perplexity"]
        return {"model": name, "path": str(model_path), "model_id": backend.model_id,
                "ss": result.quality.get("ss", float("nan")), "ssc": result.quality.get("ssc", float("nan")),
                **{key: result.quality[key] for key in _THRESHOLDS if key in result.quality},
                "perplexity": ppl["perplexity"],
                "perplexity_sensitive": ppl["perplexity_sensitive"],
                "timings_s": result.timings,
                "fairness": {scorer: _fairness_numbers(f) for scorer, f in result.fairness.items()}}

    def spread(self, name: str, scorer: str) -> dict:
        """Model ``name``'s between-value spreads on ``scorer`` with their intervals, from its stored scores (cached)."""
        from fairpath.text._spread import value_spread

        def estimate() -> dict:
            scores = pd.read_parquet(self.out_dir / "audits" / name / SCORES_NAME)
            return _spread_numbers(value_spread(scores, score=f"score_{scorer}", seed=self.seed))

        return self.run_folder.step(f"spreads/{name}.{scorer}", estimate)

    @contextlib.contextmanager
    def _generator(self, model):
        """A sampler of ``model`` (a folder or "default") at the study's precision, one worker process per core on a
        CPU (``HFGenerator(workers="auto")``: two one-thread workers decode 4-7x faster than one two-thread process
        under load), stopped afterwards."""
        from fairpath.text._generation import HFGenerator

        generator = HFGenerator(model, device=self.device, dtype=self.dtype, workers="auto")
        try:
            yield generator
        finally:
            generator.close()

    def _thresholds(self, name: str) -> dict:
        """S.S. and S.S.c thresholds: calibrated on the base model's own continuations, then the same for every model.

        A threshold calibrated on each model would move with it (a model that rambles lowers its own bar), so
        shares of different models would not be comparable.
        """
        if name == BASE or not self.semantic:
            return {}
        base = json.loads(self.run_folder.path(f"audits/{BASE}/evaluation").read_text())
        return {key: base[key]["value"] for key in _THRESHOLDS}

    def pilot_scores(self, n_samples: int) -> pd.DataFrame:
        """The base model's first ``n_samples`` scored continuations per prompt, for a power calculation.

        They go to the base audit's sample store, so its full audit later reuses them instead of drawing again.
        """
        from fairpath.text._audit import audit_text

        with self._generator(self.model) as backend:
            result = audit_text(self.spec, backend, scorers=self.scorers, settings=replace(self.audit_settings(), n_samples=n_samples),
                                store=self.out_dir / "audits" / BASE / "samples", n_permutations=self.n_permutations,
                                seed=self.seed, quality=False, progress=self.progress)
        return result.samples

    def compare(self, name: str, scorer: str) -> dict:
        """The paired one-sided test of model ``name``'s spread against the base's on ``scorer`` (cached as JSON).

        Both models were audited on the same prompts; model labels are permuted among the samples of each
        prompt (:func:`fairpath.text.compare_spread`).
        """
        from fairpath.text._spread import compare_spread

        def test() -> dict:
            base, other = (pd.read_parquet(self.out_dir / "audits" / model / SCORES_NAME) for model in (BASE, name))
            result = compare_spread(base, other, score=f"score_{scorer}", n_permutations=self.comparison_permutations, seed=self.seed)
            return {"model": name, "scorer": scorer, "n_permutations": self.comparison_permutations,
                    **{f"{metric}_{key}": value for metric in _METRICS for key, value in _comparison_numbers(getattr(result, metric)).items()}}

        # the permutations in the step's name: a rerun with another count tests again (they are not in the folder's key)
        record = self.run_folder.step(f"comparisons/{name}.{scorer}.{self.comparison_permutations}", test)
        return {key: float("nan") if value is None else value for key, value in record.items()}  # JSON keeps NaN as null

    def audit_settings(self):
        from fairpath.text._parameters import GenerationSettings

        return GenerationSettings(max_new_tokens=self.audit_max_new_tokens, n_samples=self.audit_samples,
                                  batch_size=self.generation_batch_size, seed=self.seed)

    # -- the whole study ----------------------------------------------------------------------
    def run(self) -> DebiasStudyResult:
        corpus = self.prepare_corpus()
        projection = self.prepare_sentiment_head(corpus) if any(r.regularizer == "sentiment" for r in self.runs) else None
        # The base model first, then each model right after its training: an interrupted study
        # already holds complete comparisons for the runs it finished.
        records = [self.evaluate(BASE, self.model, corpus)]
        self.train_all(corpus, projection)
        folders = {}
        for config in self.runs:
            name = self.name(config)
            folders[name] = (config, self.model_folder(config))
            records.append(self.evaluate(name, str(folders[name][1]), corpus))
        runs = {BASE: (NO_REGULARIZER, float("nan"), float("nan"))} | {
            name: (NO_REGULARIZER if c.lam == 0 else c.regularizer, c.lam, c.seed) for name, (c, _) in folders.items()}
        comparisons = pd.DataFrame([self.compare(name, scorer) for name in runs if name != BASE for scorer in self.scorers])
        for record in records:
            for scorer, numbers in record["fairness"].items():
                numbers.update(self.spread(record["model"], scorer))
        training = {name: json.loads((folder / TRAINING_LOG_NAME).read_text()) for name, (_, folder) in folders.items()}
        scores = pd.concat([pd.read_parquet(self.out_dir / "audits" / name / SCORES_NAME).rename(columns={"model": "model_id"}).assign(model=name)
                            for name in runs],
                           ignore_index=True)
        result = DebiasStudyResult(
            attribute=self.spec.attribute,
            evaluations=_evaluation_frame(records, runs),
            comparisons=comparisons,
            scores=scores,
            training=training,
            corpus=corpus.summary(),
            sentiment_head=projection.summary() if projection is not None else None,
            settings=self.settings(),
            timings=self.timings(),
        )
        result.save(self.out_dir)
        return result

    def settings(self) -> dict:
        return {"model": self.model, "attribute": self.spec.source, "training": asdict(self.training),
                "runs": [self.name(c) for c in self.runs], "training_seeds": list(self.training_seeds),
                "audit_samples": self.audit_samples, "audit_max_new_tokens": self.audit_max_new_tokens,
                "scorers": list(self.scorers), "n_permutations": self.n_permutations, "semantic": self.semantic,
                "seed": self.seed, "device": self.device, "dtype": self.dtype}

    def timings(self) -> dict:
        """Seconds spent per stage, over every session that worked on this folder."""
        return self.run_folder.timings()


def spread_phrase(row, metric: str = "individual", prefix: str = "") -> str:
    """``spread 0.031 [0.024, 0.037] (95%)``, or ``spread at the noise floor (0 [0, 0.012], 95%)``: a spread
    estimated at or below sampling noise is said so, never a negative number."""
    spread, low, high = (row[f"{prefix}{metric}_spread{end}"] for end in ("", "_low", "_high"))
    level = f"{row[f'{prefix}spread_level']:.0%}"
    if spread <= 0:
        return f"spread at the noise floor (0 [{low:.3f}, {high:.3f}], {level})"
    return f"spread {spread:.3f} [{low:.3f}, {high:.3f}] ({level})"


def base_test_phrase(row, metric: str = "individual", prefix: str = "") -> str:
    """A trained model's spread change against the base with the one-sided p of "lower" (Holm p where there is
    one); the base's own row: ``the reference``. A change relative to a base at its noise floor is said so."""
    if row["model"] == BASE:
        return "the reference"
    change = row[f"{prefix}{metric}_change_vs_base"]
    words = (f"{100 * change:+.1f}% vs base" if pd.notna(change)
             else "change not defined (the base's spread is at its noise floor)")
    words += f", one-sided p = {row[f'{prefix}{metric}_p_vs_base']:.3g}"
    holm_p = row.get(f"{prefix}{metric}_p_holm_vs_base", float("nan"))
    return words + (f", Holm p = {holm_p:.3g}" if pd.notna(holm_p) else "")


def _change_sentence(row, scorer: str) -> str:
    ss = f"{row['ss_change_points_vs_base']:+.1f} points" if pd.notna(row["ss_change_points_vs_base"]) else "not measured"
    return (f"individual ({html.escape(scorer)}) {spread_phrase(row)}, {base_test_phrase(row)}; perplexity "
            f"{100 * row['perplexity_change_vs_base']:+.1f}%, S.S. {ss}.")


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def _fairness_numbers(result) -> dict:
    """W1 of each metric with its own permutation test (p, noise floor, detectable excess, verdict)."""
    return {f"{metric}{key}": value for metric in _METRICS for test, floor in [(getattr(result, metric), getattr(result, f"{metric}_noise_floor"))]
            for key, value in (("", test.estimate), ("_p_value", test.p_value), ("_noise_floor", floor),
                               ("_detectable_excess", test.detectable_excess), ("_verdict", test.verdict()))}


def _spread_numbers(spread) -> dict:
    """The spread of each metric with its interval (:func:`fairpath.text.value_spread`)."""
    numbers = {"spread_level": spread.level}
    for metric in _METRICS:
        estimate = getattr(spread, metric)
        low, high = estimate.spread_interval
        numbers |= {f"{metric}_spread": estimate.spread, f"{metric}_spread_low": low, f"{metric}_spread_high": high,
                    f"{metric}_theta": estimate.theta.estimate}
    return numbers


def _comparison_numbers(test) -> dict:
    """One metric of :func:`fairpath.text.compare_spread`: the spreads, the change and the one-sided p."""
    return {"spread_base": test.spread_reference, "spread_model": test.spread_model, "change": test.change,
            "difference": test.difference, "p": test.p_value}


def _evaluation_frame(records: list[dict], runs: dict) -> pd.DataFrame:
    rows = []
    for record in records:
        regularizer, lam, seed = runs[record["model"]]
        for scorer, numbers in record["fairness"].items():
            measured = {**numbers, **{k: record[k] for k in _QUALITY}}
            # JSON stores NaN (not measured) as null
            measured = {k: v if isinstance(v, str) else float("nan") if v is None else float(v) for k, v in measured.items()}
            rows.append({"model": record["model"], "regularizer": regularizer, "lam": lam, "seed": seed, "scorer": scorer,
                         **measured, "path": record["path"]})
    return pd.DataFrame(rows)
