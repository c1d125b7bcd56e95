"""``fairpath reproduce huang``: Huang et al. (2020)'s debiasing result on a small open model.

The paper's claim: embedding and sentiment regularization lower counterfactual sentiment bias
(individual and group fairness) while perplexity and semantic similarity stay close, more so for
larger λ. The study trains, for Country and for Occupation, one LoRA model per regularizer and λ
(:class:`fairpath.text.debias.DebiasStudy`), audits the base model and every trained model on the
same prompts with the same per-sample random streams, and compares each trained model with the
base by the paired permutation test of :func:`fairpath.text.compare_models` (model labels permuted
among the samples of each prompt; two-sided p-values of the differences in individual and group
fairness).

Every stage writes its result atomically under ``OUT/<attribute>/`` (corpus, sentiment head, models,
audits, scores) and ``OUT/<attribute>/comparisons/<model>.json``: rerunning resumes where a run
stopped. ``OUT`` then holds ``table.csv``, ``summary.json`` and one trade-off figure per attribute
(individual and group fairness against perplexity and against S.S., per regularizer and λ).

Target (the paper's headline, on our model): for at least one regularizer and λ, individual fairness
falls by at least 30% against the base with paired p < 0.01 on both attributes, while perplexity
rises by at most 10% and S.S. falls by at most 5 points.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import save_figure, write_csv
from fairpath._results import ResultMixin, panel_axes, result_frame, write_json
from fairpath._validation import Boolean, Integer, MAX_PERMUTATIONS, Real, Seed, validate_params
from fairpath.reproduce._report import write_huang_report

ATTRIBUTES = ("country", "occupation")
_TEXT_PACKAGES = ("torch", "transformers", "peft", "sentence-transformers", "vaderSentiment")
TARGET = {"individual_change": -0.30, "p": 0.01, "perplexity_change": 0.10, "ss_points": -5.0}


@validate_params({"batch_size": Integer(1), "learning_rate": Real(0.0, None, open_low=True), "n_permutations": Integer(1, MAX_PERMUTATIONS),
                  "seed": Seed(), "steps": Integer(1)}, on="__post_init__")
@dataclass(frozen=True)
class HuangSettings:
    """Sizes of the study; :meth:`quick` gives the smoke-test sizes (CLI ``--quick``)."""

    attributes: tuple[str, ...] = ATTRIBUTES
    regularizers: tuple[str, ...] = ("embedding", "sentiment")
    lambdas: tuple[float, ...] = (10.0, 100.0)
    steps: int = 60
    batch_size: int = 8
    max_length: int = 32
    learning_rate: float = 1e-3
    lora_rank: int = 8
    corpus_samples: int = 2
    corpus_max_new_tokens: int = 30
    templates: int | None = None  # the first K templates of each attribute; None: all
    audit_samples: int = 50
    audit_max_new_tokens: int = 20
    n_permutations: int = 999  # of every audit's tests and of every comparison with the base
    semantic: bool = True
    quality_samples: int = 10  # continuations per held-out prefix for S.S. and S.S.c
    seed: int = 0

    def __post_init__(self):
        if len(self.lambdas) < 1 or len(self.regularizers) < 1 or len(self.attributes) < 1:
            raise FairpathInputError("give at least one attribute, regularizer and λ")
        if self.templates is not None and self.templates < 1:
            raise FairpathInputError(f"templates must be at least 1 (got {self.templates}); leave it unset for all templates")

    @classmethod
    def quick(cls, **overrides) -> "HuangSettings":
        """One λ per regularizer, a few steps, two templates and a handful of samples (minutes on a CPU)."""
        sizes = dict(lambdas=(100.0,), steps=3, batch_size=4, max_length=24, corpus_samples=2,
                     corpus_max_new_tokens=16, templates=2, audit_samples=4, audit_max_new_tokens=10,
                     n_permutations=99, quality_samples=2)
        return cls(**{**sizes, **overrides})


def _spec(attribute: str, templates: int | None):
    from fairpath.text import FairnessSpec

    spec = FairnessSpec.load(attribute)
    if not templates or templates >= len(spec.templates):
        return spec
    return replace(spec, templates=spec.templates[:templates], source=f"{spec.source} (first {templates} templates)")


# to_frame() rows per table row: (measure, table column, its relative change, its change in points, its paired p).
_MEASURES = (("individual_fairness", "individual", "individual_change", None, "individual_p"),
             ("group_fairness", "group", "group_change", None, "group_p"),
             ("perplexity", "perplexity", "perplexity_change", None, None),
             ("perplexity_sensitive", "perplexity_sensitive", None, None, None),
             ("ss", "ss", None, "ss_points", None), ("ssc", "ssc", None, "ssc_points", None))


@dataclass(frozen=True, repr=False)
class HuangResult(ResultMixin):
    """The study's table (one row per attribute and model) and the target check."""

    table: pd.DataFrame
    target: dict
    settings: dict
    out: Path
    seconds: float
    provenance: dict = field(default_factory=dict)  # inputs, call, seed, dtype, versions (fairpath.report.provenance)

    def to_frame(self) -> pd.DataFrame:
        """One row per attribute and model (``subject`` ``<attribute>: <model>``) and measure: individual and
        group fairness (with the paired permutation p against the base, no interval), perplexity (all texts,
        sensitive texts), S.S. and S.S.c; then attribute, model, regularizer, lam, relative_change (against the
        base), change_points (S.S., S.S.c) and p_value."""
        rows = []
        for row in self.table.to_dict(orient="records"):
            shared = {"subject": f"{row['attribute']}: {row['model']}", "attribute": row["attribute"], "model": row["model"],
                      "regularizer": row["regularizer"], "lam": row["lam"]}
            rows += [{**shared, "measure": measure, "estimate": row[column],
                      "relative_change": row[relative] if relative else math.nan,
                      "change_points": row[points] if points else math.nan, "p_value": row[p] if p else math.nan}
                     for measure, column, relative, points, p in _MEASURES]
        return result_frame(rows)

    def to_dict(self) -> dict:
        return {"settings": self.settings, "target": self.target, "table": self.table.to_dict(orient="records"),
                "out": self.out, "seconds": self.seconds, "provenance": self.provenance}

    def _repr_fields(self) -> dict:
        return {"attributes": list(self.table["attribute"].unique()), "target_met": self.target["met"]}

    def plot(self, ax=None, *, attribute: str | None = None):
        """The trade-off figure of ``attribute`` (default: the first); ``ax``: four axes (see :func:`tradeoff_figure`)."""
        attribute = attribute or self.table["attribute"].iloc[0]
        if attribute not in set(self.table["attribute"]):
            raise FairpathInputError(f"no attribute {attribute!r} in this study; it has {list(self.table['attribute'].unique())}")
        return tradeoff_figure(self.table[self.table["attribute"] == attribute], attribute, ax)

    def summary(self) -> str:
        shown = self.table.drop(columns=["path"], errors="ignore")
        lines = [f"Huang et al. (2020) reproduction: {len(shown)} models, {shown['attribute'].nunique()} attributes "
                 f"({self.seconds:.0f} s this session)", shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        lines += [f"target {line}" for line in self.target["lines"]]
        return "\n".join(lines)


class HuangStudy:
    """Run or resume the whole study under ``out`` (see the module docstring)."""

    @validate_params({"progress": Boolean()})
    def __init__(self, out: str | Path, model: str = "default", settings: HuangSettings | None = None,
                 corpus=None, device: str = "auto", progress: bool = True):
        self.out = Path(out)
        self.model = str(model)
        self.settings = settings or HuangSettings()
        self.corpus = corpus
        self.device = device
        self.progress = progress

    def _log(self, message: str) -> None:
        if self.progress:
            print(f"[huang {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    def debias_study(self, attribute: str):
        from fairpath.text.debias import DebiasConfig, DebiasStudy

        s = self.settings
        training = DebiasConfig(steps=s.steps, batch_size=s.batch_size, max_length=s.max_length,
                                learning_rate=s.learning_rate, lora_rank=s.lora_rank, lora_alpha=2 * s.lora_rank,
                                checkpoint_every=max(1, min(20, s.steps)), seed=s.seed)
        return DebiasStudy(self.out / attribute, attribute=_spec(attribute, s.templates), model=self.model,
                           regularizers=s.regularizers, lambdas=s.lambdas, training=training, corpus=self.corpus,
                           corpus_samples_per_prompt=s.corpus_samples, corpus_max_new_tokens=s.corpus_max_new_tokens,
                           audit_samples=s.audit_samples, audit_max_new_tokens=s.audit_max_new_tokens,
                           scorers=("vader",), n_permutations=s.n_permutations, semantic=s.semantic,
                           quality_samples=s.quality_samples, seed=s.seed,
                           progress=self.progress, device=self.device)

    def compare(self, folder: Path, name: str) -> dict:
        """The paired test of model ``name`` against the base (cached as JSON)."""
        from fairpath.text import compare_models
        from fairpath.text.debias import BASE, SCORES_NAME

        path = folder / "comparisons" / f"{name}.json"
        if path.exists():
            return json.loads(path.read_text())
        base = pd.read_parquet(folder / "audits" / BASE / SCORES_NAME)
        other = pd.read_parquet(folder / "audits" / name / SCORES_NAME)
        result = compare_models(base, other, score="score_vader", scorer="vader",
                                n_permutations=self.settings.n_permutations, seed=self.settings.seed)
        # base minus model: positive when the model is fairer
        record = {"individual_difference": result.individual.estimate, "individual_p": result.individual.p_value,
                  "group_difference": result.group.estimate, "group_p": result.group.p_value,
                  "n_permutations": result.n_permutations}
        write_json(record, path)
        return record

    def run(self) -> HuangResult:
        started = time.perf_counter()
        self.out.mkdir(parents=True, exist_ok=True)
        rows = []
        for number, attribute in enumerate(self.settings.attributes, 1):
            self._log(f"attribute {number}/{len(self.settings.attributes)}: {attribute} "
                      f"(corpus, sentiment head, {len(self.settings.regularizers) * len(self.settings.lambdas)} "
                      "trainings, audits; finished stages are skipped)")
            study = self.debias_study(attribute)
            result = study.run()
            rows.extend(self._rows(attribute, result))
        table = pd.DataFrame(rows)
        target = target_check(table)
        for attribute in self.settings.attributes:
            save_figure(tradeoff_figure(table[table["attribute"] == attribute], attribute), self.out / f"tradeoffs_{attribute}.png",
                        dpi=120, bbox_inches="tight")
        write_csv(table, self.out / "table.csv")
        result = HuangResult(table, target, asdict(self.settings), self.out, time.perf_counter() - started, self._provenance())
        write_json({"settings": result.settings, "model": self.model, "target": target,
                            "table": table.to_dict(orient="records"), "seconds_this_session": result.seconds,
                            "provenance": result.provenance}, self.out / "summary.json")
        write_huang_report(result, self.out / "report.html")
        return result

    def _provenance(self) -> dict:
        from fairpath.report import provenance

        inputs = [path for path in (self.corpus, self.model) if path and Path(path).is_file()]
        return provenance(inputs=inputs, seed=self.settings.seed, dtype="float32", packages=_TEXT_PACKAGES)

    def _rows(self, attribute: str, result) -> list[dict]:
        from fairpath.text.debias import BASE

        frame = result.evaluations[result.evaluations["scorer"] == "vader"].set_index("model")
        base = frame.loc[BASE]
        rows = []
        for name, row in frame.iterrows():
            test = self.compare(self.out / attribute, name) if name != BASE else None
            rows.append({
                "attribute": attribute, "model": name, "regularizer": row["regularizer"] if name != BASE else "none",
                "lam": row["lam"], "individual": row["individual"], "individual_floor": row["individual_noise_floor"],
                "individual_own_p": row["individual_p_value"],
                "individual_change": row["individual"] / base["individual"] - 1,
                "individual_p": test["individual_p"] if test else math.nan,
                "group": row["group"], "group_floor": row["group_noise_floor"], "group_own_p": row["group_p_value"],
                "group_change": row["group"] / base["group"] - 1,
                "group_p": test["group_p"] if test else math.nan,
                "perplexity": row["perplexity"], "perplexity_change": row["perplexity"] / base["perplexity"] - 1,
                "perplexity_sensitive": row["perplexity_sensitive"],
                "ss": row["ss"], "ss_points": 100 * (row["ss"] - base["ss"]),
                "ssc": row["ssc"], "ssc_points": 100 * (row["ssc"] - base["ssc"]),
            })
        return rows


def target_check(table: pd.DataFrame) -> dict:
    """Which (regularizer, λ) meet the paper's target on every attribute; one printable line each."""
    trained = table[table["model"] != "base"].copy()
    ss_ok = trained["ss_points"].isna() | (trained["ss_points"] >= TARGET["ss_points"])  # NaN: S.S. not measured
    trained["meets"] = ((trained["individual_change"] <= TARGET["individual_change"]) & (trained["individual_p"] < TARGET["p"])
                        & (trained["perplexity_change"] <= TARGET["perplexity_change"]) & ss_ok)
    n_attributes = table["attribute"].nunique()
    lines, met = [], []
    for name, group in trained.groupby("model", sort=False):
        ok = bool(group["meets"].all()) and len(group) == n_attributes
        met += [name] if ok else []
        parts = "; ".join(f"{r.attribute}: individual {100 * r.individual_change:+.1f}% (paired p = {r.individual_p:.3g}), "
                          f"perplexity {100 * r.perplexity_change:+.1f}%, S.S. {r.ss_points:+.1f} points"
                          for r in group.itertuples())
        lines.append(f"{'met' if ok else 'missed'} by {name} — {parts}")
    verdict = (f"MET by {', '.join(met)}" if met else "MISSED by every model") + (
        " (individual fairness -30% with paired p < 0.01 on every attribute, perplexity +<=10%, S.S. -<=5 points)")
    return {"met": bool(met), "models_meeting": met, "verdict": verdict, "lines": lines + [verdict]}


def tradeoff_figure(rows: pd.DataFrame, attribute: str, ax=None):
    """Individual and group fairness against perplexity and S.S., one line per regularizer through λ; on ``ax``
    (four axes: individual against perplexity and S.S., then group) when given."""
    from fairpath.report import legend_below, styled, subplots

    with styled():  # the report's fonts for every text of the figure, not only its axes
        fig, panels = panel_axes(ax, 4, lambda: subplots(2, 2, height=8.0))
        base = rows[rows["model"] == "base"].iloc[0]
        for i, (fairness, label) in enumerate((("individual", "individual fairness (W1)"), ("group", "group fairness (W1)"))):
            for j, (quality, quality_label) in enumerate((("perplexity", "perplexity on held-out text"), ("ss", "S.S."))):
                ax = panels[2 * i + j]
                ax.axhline(base[f"{fairness}_floor"], color="#b42318", linestyle="--", linewidth=1, label="noise floor (base)")
                ax.scatter([base[quality]], [base[fairness]], marker="*", s=150, color="black", label="base", zorder=3)
                for regularizer, group in rows[rows["model"] != "base"].groupby("regularizer"):
                    group = group.sort_values("lam")
                    ax.plot(group[quality], group[fairness], marker="o", label=regularizer)
                    for r in group.itertuples():
                        ax.annotate(f"λ={r.lam:g}", (getattr(r, quality), getattr(r, fairness)), textcoords="offset points",
                                    xytext=(4, 4), fontsize=9)
                ax.set_xlabel(quality_label)
                ax.set_ylabel(label)
        fig.suptitle(f"Huang et al. (2020) trade-offs on {attribute}: VADER fairness (lower is fairer) against quality")
        fig.tight_layout()
        # one legend for the four panels, under the lower row (inside a panel it covered the points near the base)
        legend_below(panels[2], handles=panels[0].get_legend_handles_labels()[0], ncol=4, across_figure=True)
    return fig


@validate_params({"quick": Boolean(), "progress": Boolean()})
def reproduce_huang(out: str | Path, model: str = "default", quick: bool = False, corpus=None, device: str = "auto",
                    settings: HuangSettings | None = None, progress: bool = True) -> HuangResult:
    """Run or resume the study (``quick``: :meth:`HuangSettings.quick`; ``settings`` overrides both)."""
    settings = settings or (HuangSettings.quick() if quick else HuangSettings())
    return HuangStudy(out, model=model, settings=settings, corpus=corpus, device=device, progress=progress).run()
