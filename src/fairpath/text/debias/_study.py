"""The debiasing study: train one model per regularizer and λ, audit each against the base model.

For the base model and every debiased one the study reports, from the text audit, individual and
group fairness per scorer (permutation p-values, noise floor), perplexity on the held-out text and on
its sensitive subset, and S.S. and S.S.c on prefixes of the held-out text (defined once, in
``fairpath.text._quality``). Every stage writes its result to the output folder, so a
rerun skips what is done and resumes an interrupted training from its checkpoint.

Layout of ``out_dir``: ``corpus.json``, ``sentiment_head.pt``, ``models/<name>/`` (Hugging Face
folders), ``checkpoints/<name>/``, ``audits/<name>/`` (samples, audit JSON, evaluation JSON),
``study.json`` and ``report.html``. ``study_key.json`` holds what the stages were computed with; a rerun
under another key is refused, naming what differs (see ``DebiasStudy._check_resumable``).
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._fingerprint import digest, key_differences, read_key, resume_key, write_key
from fairpath._io import atomic_path
from fairpath._results import ResultMixin, panel_axes, result_frame, write_json
from fairpath._validation import Boolean, Integer, check_list_arg, check_nonnegative, validate_params
from fairpath.text._parameters import TEST_SETTINGS
from fairpath.text.debias._corpus import DebiasCorpus, build_corpus, read_corpus_file, sample_corpus
from fairpath.text.debias._training import TRAINING_LOG_NAME, DebiasConfig, DebiasTrainer

BASE = "base"
STUDY_VERSION = 1  # raised whenever a stage's saved result changes for the same inputs
SCORES_NAME = "scores.parquet"


def write_parquet_atomic(frame: pd.DataFrame, path: Path) -> Path:
    """Write a table through a temporary file, so a kill never leaves half of it."""
    with atomic_path(path) as temporary:
        frame.to_parquet(temporary, index=False)
    return path


_QUALITY = ("perplexity", "perplexity_sensitive", "ss", "ssc")  # measured once per model, whatever the scorer


def model_name(regularizer: str, lam: float) -> str:
    return f"{regularizer}-lambda{lam:g}"


@dataclass(frozen=True, repr=False)
class DebiasStudyResult(ResultMixin):
    """Fairness and quality of the base model and of each debiased model.

    ``evaluations`` has one row per model and scorer: ``model``, ``regularizer``, ``lam``,
    ``scorer``, individual and group fairness with their permutation p-values and noise floors
    (no interval: none has verified coverage for W1), ``perplexity``, ``perplexity_sensitive``,
    ``ss`` and ``ssc``; ``to_frame()`` gives them in long form.
    """

    attribute: str
    evaluations: pd.DataFrame = field(repr=False)
    training: dict = field(default_factory=dict, repr=False)
    corpus: dict = field(default_factory=dict)
    sentiment_head: dict | None = None
    settings: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per model (``subject``) and measure: individual_fairness and group_fairness per scorer
        (with its ``p_value`` and ``null_mean``, the noise floor), then perplexity, perplexity_sensitive,
        ss and ssc once per model (``scorer`` empty); no se or interval. Then scorer, regularizer, lam."""
        rows = []
        for model, evaluations in self.evaluations.groupby("model", sort=False):
            shared = {"subject": model, "regularizer": evaluations["regularizer"].iloc[0], "lam": evaluations["lam"].iloc[0]}
            rows += [{**shared, "measure": f"{metric}_fairness", "estimate": row[metric], "scorer": row["scorer"],
                      "p_value": row[f"{metric}_p_value"], "null_mean": row[f"{metric}_noise_floor"]}
                     for row in evaluations.to_dict(orient="records") for metric in ("individual", "group")]
            rows += [{**shared, "measure": quality, "estimate": evaluations[quality].iloc[0]} for quality in _QUALITY]
        return result_frame(rows)

    def relative_to_base(self, scorer: str = "vader") -> pd.DataFrame:
        """Per model: change of individual fairness (relative), perplexity (relative) and S.S. (points) vs the base."""
        rows = self.evaluations[self.evaluations["scorer"] == scorer].set_index("model")
        if BASE not in rows.index:
            raise FairpathInputError(f"no base-model evaluation for scorer {scorer!r}")
        base = rows.loc[BASE]
        frame = pd.DataFrame({
            "regularizer": rows["regularizer"],
            "lam": rows["lam"],
            "individual_change": rows["individual"] / base["individual"] - 1,
            "perplexity_change": rows["perplexity"] / base["perplexity"] - 1,
            "ss_change_points": 100 * (rows["ss"] - base["ss"]),
            "ssc_change_points": 100 * (rows["ssc"] - base["ssc"]),
        })
        return frame.drop(index=BASE).reset_index()

    def to_dict(self) -> dict:
        return {
            "attribute": self.attribute,
            "evaluations": self.evaluations.to_dict(orient="records"),
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
        rows = self.evaluations[self.evaluations["scorer"] == scorer]
        lines = [f"DebiasStudyResult(attribute={self.attribute!r}, models={len(rows)}, scorer shown: {scorer})"]
        for _, row in rows.iterrows():
            # A NaN p is a test that could not reject here (see PermutationTest.not_testable), never "no evidence".
            p = f"permutation p {row['individual_p_value']:.3g}" if pd.notna(row["individual_p_value"]) else "not testable"
            lines.append(f"  {row['model']:<22} individual {row['individual']:.4f} ({p}) floor {row['individual_noise_floor']:.4f} | "
                         f"ppl {row['perplexity']:.2f} | S.S. {row['ss']:.3f} | S.S.c {row['ssc']:.3f}")
        return "\n".join(lines)

    def plot(self, ax=None, *, scorer: str = "vader"):
        """Trade-off figure: individual fairness against S.S. and against perplexity, one line per regularizer;
        on ``ax`` (a sequence of two axes) when given."""
        import matplotlib.pyplot as plt
        from fairpath.report import legend_below

        rows = self.evaluations[self.evaluations["scorer"] == scorer]
        if rows.empty:
            raise FairpathInputError(f"no evaluations for scorer {scorer!r}; scorers: {sorted(self.evaluations['scorer'].unique())}")
        base = rows[rows["model"] == BASE]
        fig, axes = panel_axes(ax, 2, lambda: plt.subplots(1, 2, figsize=(10, 4)))
        for panel, column, label in ((axes[0], "ss", "S.S. (share of relevant continuations)"),
                                     (axes[1], "perplexity", "perplexity on held-out text")):
            if rows[column].isna().all():
                panel.text(0.5, 0.5, f"{column} not measured", ha="center", va="center", transform=panel.transAxes)
                continue
            for regularizer, group in rows[rows["model"] != BASE].groupby("regularizer"):
                group = group.sort_values("lam")
                panel.plot(group["individual"], group[column], marker="o", label=regularizer)
                for _, row in group.iterrows():
                    panel.annotate(f"λ={row['lam']:g}", (row["individual"], row[column]), textcoords="offset points", xytext=(4, 4), fontsize=8)
            if not base.empty:
                panel.plot(base["individual"], base[column], marker="*", markersize=12, color="black", linestyle="none", label="base model")
                panel.axvline(float(base["individual_noise_floor"].iloc[0]), color="#b42318", linestyle="--", linewidth=1,
                           label="noise floor (base)")
            panel.set_xlabel(f"average individual fairness ({scorer}, W1; lower is fairer)")
            panel.set_ylabel(label)
            legend_below(panel, fontsize=8, ncol=2)
        fig.suptitle(f"Fairness against quality across λ ({self.attribute})")
        fig.tight_layout()
        return fig

    def plot_training(self):
        """Fairness loss per step of every training run."""
        import matplotlib.pyplot as plt
        from fairpath.report import legend_below

        fig, ax = plt.subplots(figsize=(7, 3.5))
        for name, log in self.training.items():
            history = log.get("history", [])
            if history:
                ax.plot([h["step"] for h in history], [h["fair_loss"] for h in history], label=name)
        ax.set_xlabel("step")
        ax.set_ylabel("L_fair (cosine distance, per batch)")
        ax.set_yscale("log")
        legend_below(ax, fontsize=8, ncol=3)
        fig.tight_layout()
        return fig

    def write_report(self, path: str | Path, scorer: str = "vader") -> Path:
        from fairpath.report import Section, write_report

        scorer = scorer if scorer in set(self.evaluations["scorer"]) else self.evaluations["scorer"].iloc[0]
        changes = self.relative_to_base(scorer)
        summary = "".join(
            f"<p>{html.escape(r['model'])}: individual fairness ({html.escape(scorer)}) {100 * r['individual_change']:+.1f}%"
            f", perplexity {100 * r['perplexity_change']:+.1f}%, "
            f"S.S. {r['ss_change_points']:+.1f} points.</p>" for _, r in changes.iterrows())
        sections = [
            Section("Trade-off across λ", "<p>Each point is one model (no interval: none has verified "
                    "coverage for W1); the dashed line is the base model's noise floor (the W1 expected from sampling "
                    "alone).</p>").add_figure(self.plot(scorer=scorer), "Fairness against semantic similarity and perplexity"),
            Section("Changes relative to the base model").add_table(changes, float_format="{:.3f}"),
            Section("All measurements").add_table(self.evaluations.drop(columns=["path"], errors="ignore"), float_format="{:.4f}"),
            Section("Training").add_figure(self.plot_training(), "Fairness loss per training step"),
        ]
        text = f"<p>Corpus: {html.escape(json.dumps(self.corpus))}</p>"
        if str(self.corpus.get("source", "")).startswith("sampled"):
            text += ("<p>The held-out text is itself sampled from the base model, so its perplexity favours models close "
                     "to the base and can fall under fine-tuning on sibling samples; give a corpus (--corpus) for an "
                     "independent measure.</p>")
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
    regularizers, lambdas : the grid of training runs (λ >= 0; λ = 0 is plain LM fine-tuning).
    training : :class:`DebiasConfig` whose regularizer and λ are replaced per run.
    corpus : a corpus file (.txt, one text per line, or CSV/Parquet with a ``text`` column), a list
        of texts, or None to sample the default corpus from the base model.
    corpus_samples_per_prompt, corpus_max_new_tokens : size of the sampled default corpus.
    audit_samples, audit_max_new_tokens, scorers, n_permutations : the audit of each model (permutations per test).
    semantic : measure S.S. and S.S.c with MiniLM.
    quality_samples : continuations per held-out prefix for S.S. and S.S.c (see ``audit_text``); an
        evaluation stored with another number is recomputed (its samples are reused).
    generation_batch_size : rows sampled together in the audits. 256 decodes SmolLM2 on 2 CPU cores
        at 183 tok/s against 158 at 64 (``benchmarks/bench_generation.py``; larger matrix products
        amortise reading the weights), for about 0.7 GB more memory.
    seed : seeds the corpus, training, sampling and the bootstrap.
    device : "auto" (CUDA when available, else the CPU), "cpu" or "cuda"; every model is trained,
        sampled and scored for perplexity there.

    Each audit also writes ``audits/<name>/scores.parquet`` (one row per scored continuation), from
    which models are compared with paired tests.
    """

    @validate_params({"n_permutations": TEST_SETTINGS["n_permutations"], "semantic": Boolean(), "quality_samples": Integer(1),
                      "generation_batch_size": Integer(1), "seed": TEST_SETTINGS["seed"], "progress": Boolean()})
    def __init__(self, out_dir: str | Path, attribute="occupation", model="default",
                 regularizers: Sequence[str] = ("embedding",), lambdas: Sequence[float] = (1.0, 10.0, 100.0),
                 training: DebiasConfig | None = None, corpus=None, corpus_samples_per_prompt: int = 2,
                 corpus_max_new_tokens: int = 40, audit_samples: int = 20, audit_max_new_tokens: int = 30,
                 scorers: Sequence[str] = ("vader",), n_permutations: int = 999, semantic: bool = True,
                 quality_samples: int = 10, generation_batch_size: int = 256, seed: int = 0, progress: bool = True, device: str = "auto"):
        from fairpath.text._models import resolve_device
        from fairpath.text._spec import FairnessSpec

        self.device = resolve_device(device)
        self.out_dir = Path(out_dir)
        self.spec = FairnessSpec.load(attribute)
        self.model = str(model)
        self.training = training or DebiasConfig()
        # Validate every (regularizer, λ) now, not after hours of training.
        self.runs = [replace(self.training, regularizer=r, lam=check_nonnegative("each λ in lambdas", lam), seed=seed)
                     for r in check_list_arg("regularizers", regularizers) for lam in check_list_arg("lambdas", lambdas, (int, float), "λ")]
        if not self.runs:
            raise FairpathInputError("give at least one regularizer and one λ")
        self.corpus = corpus
        self.corpus_samples_per_prompt = corpus_samples_per_prompt
        self.corpus_max_new_tokens = corpus_max_new_tokens
        self.audit_samples = audit_samples
        self.audit_max_new_tokens = audit_max_new_tokens
        self.scorers = tuple(check_list_arg("scorers", scorers))
        self.n_permutations = n_permutations
        self.semantic = semantic
        self.quality_samples = quality_samples
        self.generation_batch_size = generation_batch_size
        self.seed = seed
        self.progress = progress
        # The audits' settings are checked now too, not after the trainings.
        self.audit_settings()

    # -- stages -------------------------------------------------------------------------------
    def _timed(self, key: str, started: float) -> None:
        """Add a stage's seconds to ``timings.json`` at once, so interrupted sessions still count."""
        path = self.out_dir / "timings.json"
        timings = json.loads(path.read_text()) if path.exists() else {}
        timings[key] = round(timings.get(key, 0.0) + time.perf_counter() - started, 3)
        write_json(timings, path)

    def _load_base(self):
        from fairpath.text._models import load_causal_lm

        return load_causal_lm(self.model, device=self.device)

    def prepare_corpus(self) -> DebiasCorpus:
        path = self.out_dir / "corpus.json"
        if path.exists():
            return DebiasCorpus.load(path)
        started = time.perf_counter()
        tokenizer = None
        if self.training.pooling == "position":
            from fairpath.text._models import load_tokenizer

            tokenizer = load_tokenizer(self.model)
        if self.corpus is None:
            from fairpath.text._generation import HFGenerator

            model, base_tokenizer = self._load_base()
            texts = sample_corpus(HFGenerator(model, base_tokenizer), self.spec, self.corpus_samples_per_prompt,
                                  self.corpus_max_new_tokens, seed=self.seed)
            source = (f"sampled from the base model: {self.corpus_samples_per_prompt} continuations of "
                      f"{self.corpus_max_new_tokens} tokens per generic prompt")
        elif isinstance(self.corpus, (str, Path)):
            texts, source = read_corpus_file(self.corpus), str(self.corpus)
        else:
            texts, source = list(self.corpus), "texts given in Python"
        corpus = build_corpus(texts, self.spec, source, seed=self.seed, tokenizer=tokenizer)
        corpus.save(path)
        self._timed("corpus", started)
        return corpus

    def prepare_sentiment_head(self, corpus: DebiasCorpus):
        from fairpath.text.debias._sentiment_head import SentimentProjection, fit_sentiment_projection

        path = self.out_dir / "sentiment_head.pt"
        if path.exists():
            return SentimentProjection.load(path)
        started = time.perf_counter()
        model, tokenizer = self._load_base()
        texts = list(dict.fromkeys(corpus.train_texts))
        projection = fit_sentiment_projection(model, tokenizer, texts, scorer="vader",
                                              representation=self.training.representation, random_state=self.seed)
        projection.save(path)
        self._timed("sentiment_head", started)
        return projection

    def train(self, config: DebiasConfig, corpus: DebiasCorpus, projection) -> Path:
        name = model_name(config.regularizer, config.lam)
        folder = self.out_dir / "models" / name
        if (folder / TRAINING_LOG_NAME).exists():
            return folder
        started = time.perf_counter()
        model, tokenizer = self._load_base()
        trainer = DebiasTrainer(model, tokenizer, corpus.train_pairs, config,
                                sentiment_head=projection.head_ if config.regularizer == "sentiment" else None,
                                checkpoint_dir=self.out_dir / "checkpoints" / name, progress=self.progress)
        trainer.fit()
        trainer.save_pretrained(folder, extra={"base_model": self.model, "corpus": corpus.summary()})
        self._timed(f"training:{name}", started)
        return folder

    def evaluate(self, name: str, model_path: str, corpus: DebiasCorpus) -> dict:
        """Audit one model (resumable through its sample store) and measure S.S.; cached as JSON."""
        from fairpath.text._audit import audit_text
        from fairpath.text._generation import HFGenerator

        folder = self.out_dir / "audits" / name
        cached = folder / "evaluation.json"
        if cached.exists():
            record = json.loads(cached.read_text())
            if record.get("quality_samples", 1) == self.quality_samples or not self.semantic:  # older ones used 1
                return record
        started = time.perf_counter()
        backend = HFGenerator(model_path, device=self.device)
        settings = self.audit_settings()
        result = audit_text(self.spec, backend, scorers=self.scorers, settings=settings, store=folder / "samples",
                            n_permutations=self.n_permutations, seed=self.seed, quality=self.semantic,
                            corpus=corpus.heldout_texts, quality_samples=self.quality_samples, progress=self.progress)
        result.to_json(folder / "audit.json")
        write_parquet_atomic(result.samples, folder / SCORES_NAME)
        ppl = result.quality["perplexity"]
        record = {"model": name, "path": str(model_path), "model_id": backend.model_id,
                  "ss": result.quality.get("ss", float("nan")), "ssc": result.quality.get("ssc", float("nan")),
                  "perplexity": ppl["perplexity"],
                  "perplexity_sensitive": ppl["perplexity_sensitive"], "quality_samples": self.quality_samples,
                  "timings_s": result.timings,
                  "fairness": {scorer: _fairness_numbers(f) for scorer, f in result.fairness.items()}}
        write_json(record, cached)
        self._timed(f"evaluation:{name}", started)
        return record

    def audit_settings(self):
        from fairpath.text._generation import GenerationSettings

        return GenerationSettings(max_new_tokens=self.audit_max_new_tokens, n_samples=self.audit_samples,
                                  batch_size=self.generation_batch_size, seed=self.seed)

    # -- the whole study ----------------------------------------------------------------------
    def run(self) -> DebiasStudyResult:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._check_resumable()
        corpus = self.prepare_corpus()
        projection = self.prepare_sentiment_head(corpus) if any(r.regularizer == "sentiment" for r in self.runs) else None
        # The base model first, then each model right after its training: an interrupted study
        # already holds complete comparisons for the runs it finished.
        records = [self.evaluate(BASE, self.model, corpus)]
        folders = {}
        for config in self.runs:
            name = model_name(config.regularizer, config.lam)
            folders[name] = (config, self.train(config, corpus, projection))
            records.append(self.evaluate(name, str(folders[name][1]), corpus))
        runs = {BASE: (None, float("nan"))} | {name: (c.regularizer, c.lam) for name, (c, _) in folders.items()}
        evaluations = _evaluation_frame(records, runs)
        training = {name: json.loads((folder / TRAINING_LOG_NAME).read_text()) for name, (_, folder) in folders.items()}
        result = DebiasStudyResult(
            attribute=self.spec.attribute,
            evaluations=evaluations,
            training=training,
            corpus=corpus.summary(),
            sentiment_head=projection.summary() if projection is not None else None,
            settings=self.settings(),
            timings=self.timings(),
        )
        result.to_json(self.out_dir / "study.json")
        result.write_report(self.out_dir / "report.html", scorer=self.scorers[0])
        return result

    def _check_resumable(self) -> None:
        """Refuse a folder whose stages were computed under another key (hours of training are never thrown away).

        The key: the base model's identity (its weights' digest), the specification's content, the corpus
        (its texts, or how it is sampled), the training settings, the audits' settings, the seed and the code
        version. Not in it: the grid of runs (each model has its own folder, so a grid may grow),
        ``quality_samples`` (an evaluation of another number is recomputed), the batch size (the samples do
        not depend on it) and the device.
        """
        from fairpath.text._models import model_id

        if isinstance(self.corpus, (str, Path)):
            corpus = digest(read_corpus_file(self.corpus))
        else:
            corpus = {"sampled": [self.corpus_samples_per_prompt, self.corpus_max_new_tokens]} if self.corpus is None else digest(list(self.corpus))
        key = resume_key("debias study", STUDY_VERSION, model=model_id(self.model), spec=self.spec.to_dict(), corpus=corpus,
                         training=asdict(self.training), audit_samples=self.audit_samples,
                         audit_max_new_tokens=self.audit_max_new_tokens, scorers=list(self.scorers),
                         n_permutations=self.n_permutations, semantic=self.semantic, seed=self.seed)
        key_file = self.out_dir / "study_key.json"
        saved = read_key(key_file)
        if saved is None and (self.out_dir / "corpus.json").exists():
            saved = {}  # stages saved by a fairpath that wrote no key: nothing says what they were computed with
        if saved is None:
            write_key(key_file, key)
        elif changed := key_differences(saved, key):
            raise FairpathInputError(
                f"{str(self.out_dir)!r} holds a debiasing study computed with other {changed}; "
                "use another output folder, or delete that one to start afresh"
            )

    def settings(self) -> dict:
        return {"model": self.model, "attribute": self.spec.source, "training": asdict(self.training),
                "runs": [model_name(c.regularizer, c.lam) for c in self.runs],
                "audit_samples": self.audit_samples, "audit_max_new_tokens": self.audit_max_new_tokens,
                "scorers": list(self.scorers), "n_permutations": self.n_permutations, "semantic": self.semantic,
                "seed": self.seed, "device": self.device}

    def timings(self) -> dict:
        """Seconds spent per stage, over every session that worked on this folder."""
        path = self.out_dir / "timings.json"
        return json.loads(path.read_text()) if path.exists() else {}


def _fairness_numbers(result) -> dict:
    return {
        "individual": result.individual.estimate, "individual_p_value": result.individual.p_value,
        "individual_noise_floor": result.individual_noise_floor,
        "group": result.group.estimate, "group_p_value": result.group.p_value,
        "group_noise_floor": result.group_noise_floor,
    }


def _evaluation_frame(records: list[dict], runs: dict) -> pd.DataFrame:
    rows = []
    for record in records:
        regularizer, lam = runs[record["model"]]
        for scorer, numbers in record["fairness"].items():
            measured = {**numbers, **{k: record[k] for k in ("perplexity", "perplexity_sensitive", "ss", "ssc")}}
            # JSON stores NaN (not measured) as null
            measured = {k: float("nan") if v is None else float(v) for k, v in measured.items()}
            rows.append({"model": record["model"], "regularizer": regularizer, "lam": lam, "scorer": scorer, **measured,
                         "path": record["path"]})
    return pd.DataFrame(rows)
