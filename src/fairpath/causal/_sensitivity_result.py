"""The result of ``decomposition.sensitivity(...)``: bounds, confidence bounds and robustness values per contrast,
subject and measure (the maths in :mod:`fairpath.causal._sensitivity`)."""

from __future__ import annotations

from dataclasses import field

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, panel_axes, result_class, result_frame
from fairpath._sfm import SFM
from fairpath._vocabulary import LABELS

CITATION = ("Chernozhukov, Cinelli, Newey, Sharma & Syrgkanis (2022), Long Story Short: Omitted Variable Bias in Causal "
            "Machine Learning; robustness values after Cinelli & Hazlett (2020)")
MEANING = {"cf_y": "the share of the outcome's residual variation (given X and the covariates) the confounder explains",
           "cf_d": "the share of the Riesz representer's (the weights') variation it explains",
           "rho": "the correlation of the two errors it causes (1: the worst case)"}


@result_class
class SensitivityResult(ResultMixin):
    """Omitted-variable-bias bounds of a decomposition (or an audit's decomposition) under a confounder of a given
    strength, and the robustness values that need no strength at all.

    ``to_frame()``: per contrast, subject (an outcome, or a predictor's paired difference ``"ŷ − y"``) and measure,
    the estimate and its SE; ``ci_low``/``ci_high`` the confidence bounds at ``level`` under confounding of strength
    (cf_y, cf_d, ρ) (the usual interval when both are 0: ``usual_ci_low``/``usual_ci_high``); ``bound_low``/``bound_high``
    the estimate ∓ the bias bound (``bias_bound``); ``robustness_value`` the strength r = cf_y = cf_d (ρ = 1) at which
    the estimate reaches 0, ``robustness_value_ci`` the strength at which its confidence bound does (NaN for a measure
    no confounder can change, such as TV); ``edges`` the confounded edges that bias it; ``scale`` S, with the bound
    ρ·√(cf_y·cf_d/(1 − cf_d))·S. ``settings["not_bounded"]`` lists measures given no bound (nested means).

    ``benchmarks`` (when given :func:`~fairpath.causal.confounder_benchmarks`): per observed column, the strengths a
    confounder as strong as it would have, the bias bound they give each measure (ρ = 1) and whether it reaches the
    estimate. ``verdicts`` (an audit's): each Cookbook verdict and the strength at which it would change.
    ``headline()`` says what to act on; ``strength_to_change(measure, level=, margin=)`` answers for any level.
    """

    sfm: SFM
    table: pd.DataFrame
    settings: dict
    benchmarks: pd.DataFrame | None = None
    verdicts: pd.DataFrame | None = None  # an audit's Cookbook verdicts and the strength that would change each
    # filled when made: (contrast, subject, measure) -> its Sensitivity (the per-row contributions and bound terms)
    _items: dict = field(default_factory=dict, init=False, repr=False)

    @property
    def level(self) -> float:
        return self.settings["level"]

    @property
    def contrasts(self) -> list[str]:
        return list(dict.fromkeys(self.table["contrast"]))

    def to_frame(self) -> pd.DataFrame:
        return result_frame(self.table)

    def row(self, measure: str, subject: str | None = None, contrast: str | None = None) -> pd.Series:
        """The row of one measure of ``subject`` (default: Y) in ``contrast`` (needed only with several)."""
        subject = self.sfm.y if subject is None else subject
        if contrast is None:
            if len(self.contrasts) > 1:
                raise FairpathInputError(f"this result has {len(self.contrasts)} contrasts: name one ({self.contrasts})")
            contrast = self.contrasts[0]
        contrast = str(contrast)
        found = self.table[(self.table["measure"] == measure) & (self.table["subject"] == subject)
                           & (self.table["contrast"] == contrast)]
        if found.empty:
            known = sorted({*self.table["subject"]}), sorted({*self.table["measure"]}), self.contrasts
            raise FairpathInputError(f"no row for measure {measure!r}, subject {subject!r}, contrast {contrast!r}; "
                                     f"subjects {known[0]}, measures {known[1]}, contrasts {known[2]}")
        return found.iloc[0]

    def strength_to_change(self, measure: str, subject: str | None = None, contrast: str | None = None, *, level: float,
                           margin: float | None = None) -> float:
        """The confounding strength r = cf_y = cf_d (ρ = 1) at which the confidence bounds at ``level`` of one measure
        stop excluding 0 (``margin`` None: a shown effect no longer shown) or stop lying inside ±``margin`` (an
        equivalence no longer certified); 0 when the claim does not hold without confounding, NaN for a measure no
        confounder changes."""
        from fairpath._validation import check_float, check_probability
        from fairpath.causal._sensitivity import excludes, strength_to_break, within

        check_probability("level", level)
        if margin is not None:
            check_float("margin", margin, 0.0, open_low=True)
        row = self.row(measure, subject, contrast)
        item = self._items[(row.contrast, row.subject, row.measure)]
        return strength_to_break(item, excludes(0.0) if margin is None else within(margin), level)

    def with_verdicts(self, verdicts: pd.DataFrame) -> "SensitivityResult":
        """This result with an audit's table of Cookbook verdicts and the strength that would change each."""
        result = SensitivityResult(sfm=self.sfm, table=self.table, settings=self.settings, benchmarks=self.benchmarks,
                                   verdicts=verdicts)
        result._items.update(self._items)
        return result

    def verdict_section(self):
        """The report section of the verdicts (``verdicts``) and the strength that would change each; the audit report
        shows it too."""
        import html

        from fairpath.report import Section

        v = self.verdicts
        text = html.escape(
            "Each Cookbook verdict with the confounding strength r (cf_y = cf_d = r, rho = 1) at which the interval its Holm "
            "step reads would stop showing it: a violation whose interval reaches 0, a certified pathway whose interval "
            "reaches the margin. No evidence has nothing a confounder could take away. Bounds at chosen strengths: "
            "--sensitivity CF_Y,CF_D or result.sensitivity(cf_y=, cf_d=).")
        return Section("Would a hidden confounder change a verdict?", f"<p>{text}</p>", anchor="robustness").add_table(pd.DataFrame({
            **({"contrast": v["contrast"]} if "contrast" in v else {}), "predictor": v["predictor"], "pathway": v["pathway"],
            "tested": v["tested"], "verdict": v["verdict"],
            "Holm step's level": v["holm_level"].map(lambda x: "—" if x != x else f"{x:.2%}"),
            "changes at strength": v["robustness_value"].map(lambda x: "—" if x != x else f"{x:.1%}")}),
            "Per Cookbook test; strengths are shares (cf_y: of the outcome's residual variation, cf_d: of the weights')")

    # -- text -------------------------------------------------------------------------------------
    def _value(self, subject: str, value: float) -> str:
        base = subject.split(" − ")[0]
        if base in self.settings.get("share_outcomes", []):
            text = f"{100 * value:+.1f} pp"
        else:  # outcome units: whole numbers from 100 on (salaries), else four significant digits
            text = f"{value:+,.0f}" if abs(value) >= 100 else f"{value:+.4g}"
        return text.replace("-0.0 ", "+0.0 ") if text.startswith("-0.0 ") else text

    def row_line(self, row) -> str:
        """One measure in words: estimate and usual interval, the bounds and confidence bounds under the given
        confounding, the robustness values and the edges."""
        label, level = LABELS[row.measure], f"{self.level:.0%}"
        v = lambda value: self._value(row.subject, value)  # noqa: E731
        head = f"{label} {v(row.estimate)} ({level} CI [{v(row.usual_ci_low)}, {v(row.usual_ci_high)}])"
        if not row.edges:
            return f"{head}: an observed difference, which no confounder changes"
        rv_ci = ("its usual interval already holds 0" if row.robustness_value_ci == 0
                 else f"{row.robustness_value_ci:.1%} for its {level} confidence bound")
        return (f"{head}; under this confounding within [{v(row.bound_low)}, {v(row.bound_high)}] (bias at most "
                f"{v(row.bias_bound).lstrip('+')}), {level} confidence bounds [{v(row.ci_low)}, {v(row.ci_high)}]; "
                f"robustness value {row.robustness_value:.1%} to reach 0, {rv_ci}; biased by a confounder on "
                f"{row.edges}")

    def summary(self) -> str:
        s = self.settings
        lines = [f"Sensitivity to an unobserved confounder: {self.sfm}",
                 f"confounding strength cf_y = {s['cf_y']:g}, cf_d = {s['cf_d']:g}, rho = {s['rho']:g}; {self.level:.0%} "
                 f"confidence bounds ({CITATION})",
                 "robustness value: the strength r = cf_y = cf_d (rho = 1) of a confounder that would bring the estimate "
                 "(or its confidence bound) to 0"]
        for contrast in self.contrasts:
            part = self.table[self.table["contrast"] == contrast]
            for subject in dict.fromkeys(part["subject"]):
                where = f" ({self.sfm.x}: {contrast})" if len(self.contrasts) > 1 else ""
                lines.append(f"{subject}{where}:")
                lines += [f"  {self.row_line(row)}" for row in part[part["subject"] == subject].itertuples()]
        if s["not_bounded"]:
            lines.append(f"not bounded (a nested mean of two regressions): {', '.join(LABELS[m] for m in s['not_bounded'])}")
        lines += self.benchmark_lines()
        if self.verdicts is not None and not self.verdicts.empty:
            lines.append("Cookbook verdicts: the confounding strength that would change each")
            lines += [f"  {claim}" for claim in self.verdicts["claim"]]
        return "\n".join(lines)

    def headline(self) -> list[str]:
        """What a reader acts on, first: per contrast, how strong a confounder would have to be to bring each pathway
        effect of Y to 0, where the given strength puts it, the strongest observed column's strengths, and the verdicts."""
        s, level = self.settings, f"{self.level:.0%}"
        lines = [f"How strong would a hidden confounder have to be? Bounds at cf_y = {s['cf_y']:g}, cf_d = {s['cf_d']:g}, "
                 f"rho = {s['rho']:g} ({CITATION.split(';')[0]}); a robustness value r is the strength (cf_y = cf_d = r, "
                 "rho = 1) that would bring an effect to 0."]
        for contrast in self.contrasts:
            where = f"{self.sfm.x} {contrast}: " if len(self.contrasts) > 1 else ""
            parts = []
            for measure in ("ctfde", "ctfie", "ctfse"):
                found = self.table[(self.table["contrast"] == contrast) & (self.table["subject"] == self.sfm.y)
                                   & (self.table["measure"] == measure)]
                if found.empty:
                    continue
                row = found.iloc[0]
                v = lambda value: self._value(row.subject, value)  # noqa: E731
                if row.robustness_value_ci == 0:
                    parts.append(f"{LABELS[measure]} {v(row.estimate)}: its {level} interval already holds 0")
                else:
                    parts.append(f"{LABELS[measure]} {v(row.estimate)}: 0 at r = {row.robustness_value:.1%} "
                                 f"({row.robustness_value_ci:.1%} for its {level} bound); at the given strength "
                                 f"[{v(row.ci_low)}, {v(row.ci_high)}]")
            lines.append(f"{where}{self.sfm.y}: " + "; ".join(parts) + ".")
        if self.benchmarks is not None and not self.benchmarks.empty:
            mine = self.benchmarks[(self.benchmarks["subject"] == self.sfm.y)]
            strongest = mine.assign(strength=mine[["cf_y", "cf_d"]].max(axis=1)).sort_values("strength").iloc[-1]
            reached = sorted({LABELS[m] for m in mine[(mine["column"] == strongest.column) & mine["reaches_zero"]]["measure"]})
            lines.append(f"The strongest observed column, {strongest.column} (cf_y {strongest.cf_y:.1%}, cf_d {strongest.cf_d:.1%} for "
                         f"{LABELS[strongest.measure]}): a confounder as strong would "
                         + (f"be enough to bring {', '.join(reached)} to 0." if reached else "bring no effect of Y to 0."))
        if self.verdicts is not None and not self.verdicts.empty:
            lines += list(self.verdicts["claim"])
        return lines

    def benchmark_lines(self) -> list[str]:
        """Per observed column, the strengths of a confounder as strong as it, and what they would do to each pathway
        of Y (rho = 1)."""
        if self.benchmarks is None or self.benchmarks.empty:
            return []
        lines = ["a confounder as strong as an observed column (the decomposition refitted without it; rho = 1):"]
        mine = self.benchmarks[(self.benchmarks["subject"] == self.sfm.y) & self.benchmarks["measure"].isin(("ctfde", "ctfie", "ctfse"))]
        for (contrast, column), part in mine.groupby(["contrast", "column"], sort=False):
            where = f" ({self.sfm.x}: {contrast})" if len(self.contrasts) > 1 else ""
            effects = "; ".join(
                f"{LABELS[row.measure]} cf_y {row.cf_y:.1%}, cf_d {row.cf_d:.1%}: bias at most "
                f"{self._value(row.subject, row.bias_bound).lstrip('+')}"
                f"{', enough to reach 0' if row.reaches_zero else ''}" for row in part.itertuples())
            lines.append(f"  as strong as {column}{where}: {effects}")
        return lines

    def _repr_fields(self) -> dict:
        return {"cf_y": self.settings["cf_y"], "cf_d": self.settings["cf_d"], "rho": self.settings["rho"]}

    def to_dict(self) -> dict:
        return {"sfm": self.sfm.to_dict(), "settings": self.settings, "method": CITATION, "meaning": MEANING,
                "rows": self.to_frame().to_dict(orient="records"),
                "benchmarks": None if self.benchmarks is None else self.benchmarks.to_dict(orient="records"),
                "verdicts": None if self.verdicts is None else self.verdicts.to_dict(orient="records")}

    def _write_report(self, path):
        """The report: the headline, the verdicts (an audit's), one contour plot per pathway of Y (and contrast), the table
        of bounds and the benchmarks."""
        import html

        from fairpath.report import Section, compact_digits, format_ci, styled, write_report

        summary = "".join(f"<p>{html.escape(line)}</p>" for line in self.headline())
        contours = Section("Where each pathway's bound reaches 0", "<p>" + html.escape(
            "Contours of the bound on the side of 0 over the two strengths (square-root axes); the red line is where it "
            "reaches 0, the triangle the strengths given, the dot the robustness value (cf_y = cf_d), the diamonds "
            "confounders as strong as observed columns.") + "</p>", anchor="contours")
        with styled():
            for contrast in self.contrasts:
                for measure in ("ctfde", "ctfie", "ctfse"):
                    found = self.table[(self.table["contrast"] == contrast) & (self.table["measure"] == measure)
                                       & (self.table["subject"] == self.sfm.y) & (self.table["edges"] != "")]
                    if not found.empty:
                        contours.add_figure(self.plot(measure=measure, contrast=contrast))
        frame, level = self.to_frame(), f"{self.level:.0%}"
        digits = compact_digits(frame[["ci_low", "ci_high"]].to_numpy().ravel())
        table = pd.DataFrame({
            **({"contrast": frame["contrast"]} if len(self.contrasts) > 1 else {}),
            "subject": frame["subject"], "measure": frame["measure"].map(LABELS),
            "estimate": frame["estimate"].map(lambda v: f"{v:+.{digits}f}"),
            f"usual {level} CI": [format_ci(a, b, digits) for a, b in zip(frame["usual_ci_low"], frame["usual_ci_high"])],
            "estimate ∓ bias": [format_ci(a, b, digits) for a, b in zip(frame["bound_low"], frame["bound_high"])],
            f"{level} bounds": [format_ci(a, b, digits) for a, b in zip(frame["ci_low"], frame["ci_high"])],
            "RV": frame["robustness_value"].map(lambda v: "—" if v != v else f"{v:.1%}"),
            f"RV of {level} bound": frame["robustness_value_ci"].map(lambda v: "—" if v != v else f"{v:.1%}"),
            "edges": frame["edges"].replace("", "none")})
        bounds = Section("Every bound", anchor="bounds").add_table(
            table, f"estimate ∓ bias: the bounds under the confounding given; {level} bounds: with sampling error; RV: "
                   "robustness value; edges: where a confounder biases it. Every column: result.csv; everything: result.json")
        sections = [contours, bounds]
        if self.benchmarks is not None and not self.benchmarks.empty:
            b = self.benchmarks[self.benchmarks["measure"].isin(("ctfde", "ctfie", "ctfse"))]
            sections.append(Section("A confounder as strong as an observed column", "<p>" + html.escape(
                "The decomposition refitted without each observed column, with the same settings and seed: the strengths "
                "that column has (Cinelli & Hazlett's benchmarks, in long story short's parameters), and the bias bound "
                "they give each pathway at rho = 1 (every measure: result.json).") + "</p>", anchor="benchmarks").add_table(pd.DataFrame({
                    **({"contrast": b["contrast"]} if len(self.contrasts) > 1 else {}), "as strong as": b["column"],
                    "subject": b["subject"], "measure": b["measure"].map(LABELS), "cf_y": b["cf_y"].map("{:.1%}".format),
                    "cf_d": b["cf_d"].map("{:.1%}".format), "rho": b["rho"].map(lambda v: "—" if v != v else f"{v:+.2f}"),
                    "bias at most": b["bias_bound"].map(lambda v: f"{v:.{digits}f}"),
                    "reaches the estimate": b["reaches_zero"].map({True: "yes", False: "no"})})))
        if self.verdicts is not None and not self.verdicts.empty:
            sections.insert(0, self.verdict_section())
        settings = {key: str(value) for key, value in self.settings.items()}
        return write_report(path, "fairpath: sensitivity to a hidden confounder", sections, summary, settings)

    # -- the contour plot -------------------------------------------------------------------------
    def _default_row(self):
        confounded = self.table[(self.table["edges"] != "") & (self.table["subject"] == self.sfm.y)]
        if confounded.empty:
            raise FairpathInputError("no measure of this result is open to confounding (TV alone): nothing to plot")
        preferred = confounded[confounded["measure"] == "ctfde"]
        return (preferred if not preferred.empty else confounded).iloc[0]

    def _benchmarks_of(self, row) -> pd.DataFrame:
        if self.benchmarks is None or self.benchmarks.empty:
            return pd.DataFrame(columns=["column", "cf_y", "cf_d"])
        b = self.benchmarks
        return b[(b["contrast"] == row.contrast) & (b["subject"] == row.subject) & (b["measure"] == row.measure)]

    def plot(self, ax=None, *, measure: str | None = None, subject: str | None = None, contrast: str | None = None):
        """Contours of the bound on the side of 0 (estimate ∓ bias bound, at the settings' ρ) over the two strengths, as
        sensemakr and DoubleML draw them, on square-root axes (the small strengths that matter most get room): the red
        line is where it reaches 0, the triangle the strengths given, the dot the robustness value on the diagonal, the
        diamonds confounders as strong as observed columns (``benchmarks``; the five strongest named). Default: Ctf-DE
        of Y (the first confounded measure)."""
        from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

        from fairpath.report import legend_below, new_figure

        row = self._default_row() if measure is None else self.row(measure, subject, contrast)
        if not row.edges:
            raise FairpathInputError(f"{LABELS[row.measure]} is an observed difference, which no confounder changes: "
                                     "nothing to plot")
        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(5.2, 4.4)))
        cf_y, cf_d, rho = self.settings["cf_y"], self.settings["cf_d"], self.settings["rho"]
        rv = row.robustness_value if np.isfinite(row.robustness_value) else 0.0
        marks = self._benchmarks_of(row)
        furthest = float(marks[["cf_y", "cf_d"]].to_numpy().max()) if len(marks) else 0.0
        top = float(min(0.95, max(0.2, 2 * max(cf_y, cf_d), 1.5 * rv, 1.2 * furthest)))
        grid = np.linspace(0, np.sqrt(top), 121) ** 2
        gy, gd = np.meshgrid(grid, grid, indexing="xy")
        toward = -1.0 if row.estimate >= 0 else 1.0
        surface = row.estimate + toward * rho * np.sqrt(gy * gd / (1 - gd)) * row.scale
        value = lambda v: self._value(row.subject, v)  # noqa: E731
        lines = ax.contour(gy, gd, surface, levels=9, colors="grey", linewidths=0.7)
        ax.clabel(lines, fontsize=7, fmt=value)
        if surface.min() < 0 < surface.max():
            ax.contour(gy, gd, surface, levels=[0.0], colors="#d64545", linewidths=2.0)
        ax.plot([cf_y], [cf_d], marker="^", color="black", markersize=9, linestyle="none",
                label=f"given: bound {value(row.estimate + toward * row.bias_bound)}")
        if rv:
            ax.plot([rv], [rv], marker="o", color="#d64545", linestyle="none", label=f"robustness value {rv:.1%}")
        if len(marks):
            ax.plot(marks["cf_y"], marks["cf_d"], marker="D", color="#486581", markersize=4, linestyle="none",
                    label="as strong as an observed column")
            strong = marks.assign(strength=marks[["cf_y", "cf_d"]].max(axis=1)).query("strength > 0.005")
            for mark in strong.nlargest(5, "strength").itertuples():
                ax.annotate(mark.column, (mark.cf_y, mark.cf_d), textcoords="offset points", xytext=(4, 3), fontsize=7,
                            color="#486581")
        ax.set_xscale("function", functions=(np.sqrt, np.square))
        ax.set_yscale("function", functions=(np.sqrt, np.square))
        for axis in (ax.xaxis, ax.yaxis):  # after the scale, which resets them
            axis.set_major_locator(FixedLocator([t for t in (0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9) if t <= top]))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0%}"))
            axis.set_minor_locator(NullLocator())
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("cf_y: share of the outcome's residual variation")
        ax.set_ylabel("cf_d: share of the weights' variation")
        where = f", {self.sfm.x}: {row.contrast}" if len(self.contrasts) > 1 else ""
        ax.set_title(f"{LABELS[row.measure]} of {row.subject}{where}: the bound on 0's side", fontsize=10)
        fig.tight_layout()
        legend_below(ax, fontsize=7, ncol=2)
        fig.tight_layout()
        return fig


def sensitivity_result(sfm: SFM, decompositions: dict, *, cf_y: float, cf_d: float, rho: float, level: float | None,
                       settings: dict, benchmarks: pd.DataFrame | None = None) -> SensitivityResult:
    """The :class:`SensitivityResult` of ``decompositions`` (contrast name → ContrastDecomposition), with the strengths of
    confounders as strong as observed columns (:func:`~fairpath.causal.confounder_benchmarks`) when given."""
    from fairpath.causal._sensitivity import check_influence_inference, sensitivity_table

    check_influence_inference(decompositions)
    level = settings["level"] if level is None else level
    table, not_bounded, items = sensitivity_table(decompositions, cf_y, cf_d, rho, level)
    result = SensitivityResult(sfm=sfm, table=table, benchmarks=None if benchmarks is None else _attach(benchmarks, table), settings={
        "cf_y": cf_y, "cf_d": cf_d, "rho": rho, "level": level, "not_bounded": not_bounded,
        "share_outcomes": settings.get("share_outcomes", []), "decomposition_seed": settings.get("seed"),
        "n_rep": settings.get("n_rep")})
    result._items.update(items)
    return result


BENCHMARK_COLUMNS = ("contrast", "subject", "measure", "column", "cf_y", "cf_d", "rho")


def _attach(benchmarks: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The benchmarks with the bias bound their strengths give each measure of this result (ρ = 1) and whether it reaches
    the estimate; refused when they were computed for another decomposition."""
    missing = [c for c in BENCHMARK_COLUMNS if c not in benchmarks]
    if missing:
        raise FairpathInputError(f"benchmarks lacks column(s) {missing}: pass the table confounder_benchmarks(...) returns")
    frame = benchmarks[list(BENCHMARK_COLUMNS)].copy()
    for column in ("cf_y", "cf_d"):
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame.loc[~((values >= 0) & (values < 1)), column]
        if len(bad):
            raise FairpathInputError(f"benchmarks column {column!r} must hold shares in [0, 1); got {str(bad.iloc[0])!r} "
                                     f"(row {bad.index[0]}): pass the table confounder_benchmarks(...) returns")
    known = table.set_index(["contrast", "subject", "measure"])
    keys = list(zip(frame["contrast"].astype(str), frame["subject"], frame["measure"]))
    unknown = sorted({key for key in keys if key not in known.index})
    if unknown:
        raise FairpathInputError(f"benchmarks name (contrast, subject, measure) {unknown[:3]} that this decomposition does not "
                                 "have: compute them with confounder_benchmarks(...) on this decomposition")
    scale, estimate = known.loc[keys, "scale"].to_numpy(), known.loc[keys, "estimate"].to_numpy()
    frame["bias_bound"] = np.sqrt(frame["cf_y"] * frame["cf_d"] / (1 - frame["cf_d"].clip(upper=0.999))) * scale
    frame["reaches_zero"] = frame["bias_bound"] >= np.abs(estimate)
    return frame
