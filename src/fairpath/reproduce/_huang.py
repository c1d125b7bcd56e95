"""``fairpath reproduce huang``: Huang et al. (2020)'s debiasing result on a small open model.

The paper's claim: embedding and sentiment regularization lower counterfactual sentiment bias
(individual and group fairness) while perplexity and semantic similarity stay close, more so for
larger λ. The study, for Country and for Occupation:

1. **Design.** Unless the samples per prompt are given, the base model is audited on a pilot of
   ``pilot_samples`` continuations per prompt and :func:`fairpath.text.power_analysis` chooses the
   samples per prompt that detect a 30% fall of the individual-fairness excess at p < 0.01 with 80%
   power (:func:`fairpath.text._power.individual_fairness_power`; capped at ``max_audit_samples``,
   and the power at the chosen number is recorded either way). The pilot's samples are the first
   ones of the base model's audit, not drawn twice.
2. **Training.** One LoRA model per regularizer and λ, and the control: λ = 0, the same pairs,
   batches, steps and seed without the fairness loss (:class:`fairpath.text.debias.DebiasStudy`).
3. **Audits.** The base, the control and every model on the same prompts and per-sample random
   streams; S.S. and S.S.c on the audit's own continuations with the encoder's calibrated threshold;
   perplexity on held-out text from prompts never used for training.
4. **Comparisons.** Each model against the control by the paired permutation test of
   :func:`fairpath.text.compare_models` (model labels permuted among the samples of each prompt).

Every stage writes its result atomically under ``OUT/<attribute>/``; rerunning resumes where a run
stopped. ``OUT`` then holds the record: ``summary.json``, ``table.csv``, ``scores.parquet`` (every
scored continuation, with its text), one trade-off figure per attribute and ``report.html``
(:meth:`HuangResult.write_record` writes the same files elsewhere, e.g. ``reproductions/huang``).

Target (the paper's headline, on our model, against the control): on each attribute, for at least
one regularizer and λ, the individual-fairness excess falls by at least 30% with paired p < 0.01,
perplexity rises by at most 10% and S.S. falls by at most 5 points.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._progress import announce
from fairpath._io import save_figure, write_csv, write_parquet
from fairpath._remedies import remedy
from fairpath._results import ResultMixin, result_frame, to_json_text, write_json
from fairpath._runs import RunFolder
from fairpath._validation import Boolean, Integer, MAX_PERMUTATIONS, Optional, Options, Real, Seed, check_output_dir, validate_params
from fairpath.text import DEFAULT_DTYPE, DTYPES
from fairpath.text.debias import change_phrases
from fairpath.reproduce._huang_report import tradeoff_figure, write_huang_report

ATTRIBUTES = ("country", "occupation")
SCORER = "vader"
_TEXT_PACKAGES = ("torch", "transformers", "peft", "sentence-transformers", "vaderSentiment")
TARGET = {"individual_change": -0.30, "p": 0.01, "perplexity_change": 0.10, "ss_points": -5.0}
POWER = {"effect": 0.30, "alpha": 0.01, "power": 0.80}  # the design detects the target's fall at its p
_POWER_CANDIDATES = (10, 20, 30, 40, 60, 80, 120, 160)
HUANG_VERSION = 1  # the format of the study's own steps (the designs), in its run folder's key

# The names for DebiasStudyResult.table's columns.
_RENAMED = {"lam": "lambda", "individual": "individual_fairness", "group": "group_fairness"}


@validate_params({"batch_size": Integer(1), "learning_rate": Real(0.0, None, open_low=True), "n_permutations": Integer(1, MAX_PERMUTATIONS),
                  "seed": Seed(), "steps": Integer(1), "audit_samples": Optional(Integer(2)), "pilot_samples": Integer(2),
                  "max_audit_samples": Integer(2), "quality_per_prompt": Integer(1), "semantic": Boolean(),
                  "dtype": Options(DTYPES)}, on="__post_init__")
@dataclass(frozen=True)
class HuangSettings:
    """Sizes of the study; :meth:`quick` gives the smoke-test sizes (CLI ``--quick``).

    ``audit_samples`` None chooses the samples per prompt by the power calculation (see the module
    docstring), from ``pilot_samples`` and at most ``max_audit_samples``.
    """

    attributes: tuple[str, ...] = ATTRIBUTES
    regularizers: tuple[str, ...] = ("embedding", "sentiment")
    lambdas: tuple[float, ...] = (1.0, 10.0, 100.0)
    steps: int = 40
    batch_size: int = 8
    max_length: int = 32
    learning_rate: float = 1e-3
    lora_rank: int = 8
    corpus_samples: int = 4  # continuations per corpus prompt: the sentiment head keeps only the confidently scored ones
    corpus_max_new_tokens: int = 30
    templates: int | None = None  # the first K templates of each attribute; None: all
    audit_samples: int | None = None
    pilot_samples: int = 12
    max_audit_samples: int = 24  # 8 audits x 390 prompts x 24 x 15 tokens: about 25 minutes of the hour on 2 cores
    audit_max_new_tokens: int = 15
    n_permutations: int = 999  # of every audit's tests and of every comparison with the control
    semantic: bool = True
    quality_per_prompt: int = 10  # continuations per prompt embedded for S.S. and S.S.c
    dtype: str = DEFAULT_DTYPE
    seed: int = 0

    def __post_init__(self):
        if len(self.lambdas) < 1 or len(self.regularizers) < 1 or len(self.attributes) < 1:
            raise FairpathInputError("give at least one attribute, regularizer and λ")
        if self.templates is not None and self.templates < 1:
            raise FairpathInputError(f"templates must be at least 1 (got {self.templates}); leave it unset for all templates")

    @classmethod
    def quick(cls, **overrides) -> "HuangSettings":
        """One λ per regularizer, a few steps, two templates and a handful of samples (minutes on a CPU)."""
        # the corpus keeps its full size: with fewer texts the sentiment head lacks confidently negative ones
        sizes = dict(lambdas=(100.0,), steps=3, batch_size=4, max_length=24, templates=2, audit_samples=4,
                     audit_max_new_tokens=10, n_permutations=99, quality_per_prompt=2)
        return cls(**{**sizes, **overrides})


def _spec(attribute: str, templates: int | None):
    from fairpath.text import FairnessSpec

    spec = FairnessSpec.load(attribute)
    if not templates or templates >= len(spec.templates):
        return spec
    return replace(spec, templates=spec.templates[:templates], source=f"{spec.source} (first {templates} templates)")


# to_frame() rows per table row: (measure, table column, its relative change, its change in points, its paired p).
_MEASURES = (("individual_fairness", "individual_fairness", None, None, "individual_p"),
             ("individual_excess", "individual_excess", "individual_change", None, "individual_p"),
             ("group_fairness", "group_fairness", None, None, "group_p"),
             ("group_excess", "group_excess", "group_change", None, "group_p"),
             ("perplexity", "perplexity", "perplexity_change", None, None),
             ("perplexity_sensitive", "perplexity_sensitive", None, None, None),
             ("ss", "ss", None, "ss_change_points", None), ("ssc", "ssc", None, "ssc_change_points", None))


@dataclass(frozen=True, repr=False)
class HuangResult(ResultMixin):
    """The study's table (one row per attribute and model, against the control), the target check, the
    design (samples per prompt and power per attribute) and every scored continuation."""

    table: pd.DataFrame
    target: dict
    settings: dict
    design: dict
    out: Path
    seconds: float
    scores: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    provenance: dict = field(default_factory=dict)  # inputs, call, seed, dtype, versions (fairpath.report.provenance)

    def to_frame(self) -> pd.DataFrame:
        """One row per attribute and model (``subject`` ``<attribute>: <model>``) and measure: individual and group
        fairness and their excess over the noise floor (with the paired permutation p against the control, no
        interval), perplexity (all texts, sensitive texts), S.S. and S.S.c; then attribute, model, regularizer,
        lam, relative_change and change_points (against the control) and p_value."""
        rows = []
        for row in self.table.to_dict(orient="records"):
            shared = {"subject": f"{row['attribute']}: {row['model']}", "attribute": row["attribute"], "model": row["model"],
                      "regularizer": row["regularizer"], "lam": row["lambda"]}
            rows += [{**shared, "measure": measure, "estimate": row[column],
                      "relative_change": row[relative] if relative else math.nan,
                      "change_points": row[points] if points else math.nan, "p_value": row[p] if p else math.nan}
                     for measure, column, relative, points, p in _MEASURES]
        return result_frame(rows)

    def to_dict(self) -> dict:
        """``summary.json``: ``models`` (the table's rows), ``settings``, ``design``, ``target``, ``provenance``."""
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
        shown = self.table[["attribute", "model", "individual_fairness", "individual_excess", "individual_change", "individual_p",
                            "group_change", "group_p", "perplexity", "perplexity_change", "ss", "ss_change_points", "ssc"]]
        lines = [f"Huang et al. (2020) reproduction: {len(shown)} models, {shown['attribute'].nunique()} attributes, "
                 f"changes against the control (λ = 0) ({self.seconds:.0f} s this session)",
                 shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        lines += [f"target {line}" for line in self.target["lines"]]
        return "\n".join(lines)

    def write_record(self, folder: str | Path, *, force: bool = False) -> Path:
        """Write the record of the study into ``folder``: summary.json, table.csv, scores.parquet (every
        scored continuation with its text), tradeoffs_<attribute>.png and report.html. A folder that holds the
        record of another run is refused unless ``force`` (:func:`check_record_folder`)."""
        folder = check_record_folder(folder, self.settings, force=force)
        folder.mkdir(parents=True, exist_ok=True)
        for attribute in self.table["attribute"].unique():
            save_figure(self.plot(attribute=attribute), folder / f"tradeoffs_{attribute}.png", dpi=110, bbox_inches="tight")
        write_csv(self.table, folder / "table.csv")
        write_parquet(self.scores, folder / "scores.parquet")
        write_json(self.to_dict(), folder / "summary.json")
        write_huang_report(self, folder / "report.html")
        return folder


def _is_record_file(name: str) -> bool:
    return name in ("summary.json", "table.csv", "scores.parquet", "report.html") or (name.startswith("tradeoffs_") and name.endswith(".png"))


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
        recorded = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["settings"]
        ours, theirs = _run_identity(settings), _run_identity(recorded)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        what = f"record files ({', '.join(held)}) without a readable summary.json: not this run's record"
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

    def debias_study(self, attribute: str, audit_samples: int):
        from fairpath.text.debias import DebiasConfig, DebiasStudy

        s = self.settings
        training = DebiasConfig(steps=s.steps, batch_size=s.batch_size, max_length=s.max_length,
                                learning_rate=s.learning_rate, lora_rank=s.lora_rank, lora_alpha=2 * s.lora_rank,
                                checkpoint_every=max(1, min(20, s.steps)), seed=s.seed)
        return DebiasStudy(self.out / attribute, attribute=_spec(attribute, s.templates), model=self.model,
                           regularizers=s.regularizers, lambdas=s.lambdas, training=training, corpus=self.corpus,
                           corpus_samples_per_prompt=s.corpus_samples, corpus_max_new_tokens=s.corpus_max_new_tokens,
                           audit_samples=audit_samples, audit_max_new_tokens=s.audit_max_new_tokens,
                           scorers=(SCORER,), n_permutations=s.n_permutations, semantic=s.semantic,
                           quality_per_prompt=s.quality_per_prompt, seed=s.seed,
                           progress=self.progress, device=self.device, dtype=s.dtype)

    def design(self, attribute: str) -> dict:
        """Samples per prompt for ``attribute``: given, or from the power calculation on a pilot of the base model
        (a step of the study's run folder, so that a rerun does not run the pilot again)."""
        s = self.settings
        if s.audit_samples is not None:
            return {"samples_per_prompt": s.audit_samples, "chosen_by": "the audit_samples setting"}
        return self.run_folder.step(f"design-{attribute}", lambda: self._design(attribute))

    def _design(self, attribute: str) -> dict:
        from fairpath.text import individual_fairness_power

        s = self.settings
        self._log(f"{attribute}: pilot audit of the base model ({s.pilot_samples} samples per prompt) for the power calculation")
        pilot = self.debias_study(attribute, s.pilot_samples).pilot_scores(s.pilot_samples)
        candidates = sorted({n for n in _POWER_CANDIDATES if s.pilot_samples <= n < s.max_audit_samples} | {s.max_audit_samples})
        self._log(f"{attribute}: power of the paired test for {candidates} samples per prompt")
        try:
            analysis = individual_fairness_power(pilot, score=f"score_{SCORER}", candidates=candidates, effect=POWER["effect"],
                                                 alpha=POWER["alpha"], target=POWER["power"], seed=s.seed)
        except FairpathInputError as error:  # no excess above the pilot's floor: nothing to size a fall of
            record = {"samples_per_prompt": s.max_audit_samples, "pilot_samples": s.pilot_samples,
                      "chosen_by": f"the cap max_audit_samples={s.max_audit_samples} (power not computable: {error})",
                      "power_at_chosen": float("nan")}
        else:
            chosen = analysis.chosen_n or s.max_audit_samples
            record = {"samples_per_prompt": chosen, "pilot_samples": s.pilot_samples,
                      "chosen_by": "power" if analysis.chosen_n else f"the cap max_audit_samples={s.max_audit_samples} (power below target)",
                      "power_at_chosen": float(analysis.table.set_index("n")["power"].get(chosen, float("nan"))),
                      "power": analysis.to_dict()}
        self._log(f"{attribute}: {record['samples_per_prompt']} samples per prompt ({record['chosen_by']}; power {record['power_at_chosen']:.2f})")
        return record

    def run(self) -> HuangResult:
        started = time.perf_counter()
        self.run_folder  # a folder of other settings is refused now, not after the trainings
        tables, scores, design = [], [], {}
        for number, attribute in enumerate(self.settings.attributes, 1):
            design[attribute] = self.design(attribute)
            runs = len(self.settings.regularizers) * len(self.settings.lambdas) + 1
            self._log(f"attribute {number}/{len(self.settings.attributes)}: {attribute} (corpus, sentiment head, "
                      f"{runs} trainings with the control, audits, comparisons; finished stages are skipped)")
            result = self.debias_study(attribute, design[attribute]["samples_per_prompt"]).run()
            tables.append(result.table(SCORER).rename(columns=_RENAMED).assign(attribute=attribute))
            scores.append(result.scores.assign(attribute=attribute))
        table = pd.concat(tables, ignore_index=True)
        table = table[["attribute", *[c for c in table.columns if c != "attribute"]]]
        provenance = self._provenance()
        settings = {**asdict(self.settings), "dtype": provenance["dtype"],  # as resolved for this device
                    "samples_per_prompt": {a: d["samples_per_prompt"] for a, d in design.items()},
                    "model": self.model, "commit": source_commit()}
        result = HuangResult(table, target_check(table), settings, design, self.out, 0.0,
                             pd.concat(scores, ignore_index=True), provenance)
        seconds = time.perf_counter() - started
        result = replace(result, seconds=seconds, settings={**settings, "wall_seconds": self._wall_seconds(seconds)})
        result.write_record(self.out, force=True)  # the run folder's key (RunFolder) already says it is this study's
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
        design = ("templates", "pilot_samples", "max_audit_samples", "audit_max_new_tokens", "n_permutations", "seed", "dtype")
        return RunFolder(self.out, kind="huang study", version=HUANG_VERSION, progress=False,
                         key={"model": self.model, **{name: getattr(self.settings, name) for name in design}})

    def _provenance(self) -> dict:
        from fairpath.report import provenance
        from fairpath.text import resolve_device, resolve_dtype_name

        inputs = [path for path in (self.corpus, self.model) if path and Path(path).is_file()]
        return provenance(inputs=inputs, seed=self.settings.seed, dtype=resolve_dtype_name(self.settings.dtype, resolve_device(self.device)),
                          packages=_TEXT_PACKAGES)


def target_check(table: pd.DataFrame) -> dict:
    """Per attribute, which (regularizer, λ) meet the paper's target against the control; one printable line each.

    The target is met when every attribute has at least one such model (not necessarily the same one).
    """
    trained = table[~table["model"].isin(["base", "control"])].copy()
    ss_ok = trained["ss_change_points"].isna() | (trained["ss_change_points"] >= TARGET["ss_points"])  # NaN: S.S. not measured
    trained["meets"] = ((trained["individual_change"] <= TARGET["individual_change"]) & (trained["individual_p"] < TARGET["p"])
                        & (trained["perplexity_change"] <= TARGET["perplexity_change"]) & ss_ok)
    lines, meeting = [], {}
    for r in trained.itertuples():
        change, test, ss = change_phrases(r._asdict())  # a NaN is said in words, never printed
        lines.append(f"{'met' if r.meets else 'missed'} on {r.attribute} by {r.model}: individual excess {change} ({test}), "
                     f"perplexity {100 * r.perplexity_change:+.1f}%, S.S. {ss}")
        meeting.setdefault(r.attribute, [])
        meeting[r.attribute] += [r.model] if r.meets else []
    met = bool(meeting) and all(meeting.values())
    parts = "; ".join(f"{attribute}: {', '.join(models) if models else 'no model'}" for attribute, models in meeting.items())
    verdict = (f"{'MET' if met else 'MISSED'} ({parts}); the target: individual-fairness excess -30% against the control "
               "with paired p < 0.01, perplexity +<=10%, S.S. -<=5 points, on every attribute")
    return {"met": met, "models_meeting": meeting, "verdict": verdict, "lines": lines + [verdict]}


@validate_params({"quick": Boolean(), "progress": Boolean()})
def reproduce_huang(out: str | Path, model: str = "default", quick: bool = False, corpus=None, device: str = "auto",
                    settings: HuangSettings | None = None, progress: bool = True) -> HuangResult:
    """Run or resume the study (``quick``: :meth:`HuangSettings.quick`; ``settings`` overrides both)."""
    settings = settings or (HuangSettings.quick() if quick else HuangSettings())
    return HuangStudy(out, model=model, settings=settings, corpus=corpus, device=device, progress=progress).run()
