"""Hostile strings in a report's input (column names, X levels, predictor names, specification attribute, values
and templates, file names, settings; a served model's name: tests/text/test_openai_backend.py) are shown escaped in every report kind: they never
become markup that runs in the reader's browser (stored XSS)."""

from __future__ import annotations

import html.parser

import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit
from fairpath.parity._oracles import oracle_predictors
from fairpath.report import Section, render_report

SCRIPT = "<script>alert(1)</script>"
IMAGE = '"><img src=x onerror=alert(2)>'
# How the payloads read once escaped (quotes are escaped differently by Jinja, html.escape and pandas; <, > alike).
ESCAPED = ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;")
COLUMNS = {"x": f"race{SCRIPT}", "z1": f"age{IMAGE}", "z2": "z2", "w1": f"prior{SCRIPT}", "w2": "w2", "y": f"y{IMAGE}"}
LEVELS = {0: f"a{SCRIPT}", 1: f"b{IMAGE}"}


class _Markup(html.parser.HTMLParser):
    """The page's script elements and event-handler attributes: what a planted string would have to become to run."""

    def __init__(self):
        super().__init__()
        self.scripts, self.handlers = 0, []

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        self.handlers += [f"<{tag} {name}=…>" for name, _ in attrs if name.lower().startswith("on")]


def assert_escaped(page: str, shown=ESCAPED) -> None:
    """No script element or event handler in ``page``, and the payloads it ``shown`` are there as text."""
    markup = _Markup()
    markup.feed(page)
    assert markup.scripts == 0 and markup.handlers == []
    assert SCRIPT not in page and "<img src=x" not in page
    for escaped in shown:
        assert escaped in page


def _hostile_sample():
    sample = make_binary_sfm(400, seed=3)
    data = sample.data.join(oracle_predictors(sample, seed=3)[["oracle", "noise"]])
    data = data.rename(columns={**COLUMNS, "oracle": f"oracle{SCRIPT}", "noise": f"noise{IMAGE}"})
    data[COLUMNS["x"]] = data[COLUMNS["x"]].map(LEVELS)
    return data


def _sfm_flags() -> list[str]:
    return ["--x", COLUMNS["x"], "--x0", LEVELS[0], "--x1", LEVELS[1], "--z", f"{COLUMNS['z1']},z2", "--w", f"{COLUMNS['w1']},w2",
            "--y", COLUMNS["y"]]


def test_render_report_escapes_title_headings_captions_and_settings():
    sections = [Section(f"heading {SCRIPT}", "<p>fairpath's own markup stays markup</p>").add_table(
        pd.DataFrame({f"column {IMAGE}": [SCRIPT]}), f"caption {IMAGE}")]
    page = render_report(f"title {SCRIPT}", sections, settings={f"key {SCRIPT}": f"value {IMAGE}"})
    assert_escaped(page)
    assert "<p>fairpath's own markup stays markup</p>" in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 5  # <title>, <h1>, heading, table cell, setting key


def test_audit_report(tmp_path):
    from fairpath.causal import SFM

    data = _hostile_sample()
    sfm = SFM(x=COLUMNS["x"], x0=LEVELS[0], x1=LEVELS[1], z=[COLUMNS["z1"], "z2"], w=[COLUMNS["w1"], "w2"], y=COLUMNS["y"])
    predictors = [f"oracle{SCRIPT}", f"noise{IMAGE}"]
    result = audit(data, sfm, predictors, "SE", learner="linear", n_bins=5, n_boot=20, margin=0.05, progress=False, title=f"audit {SCRIPT}",
                   descriptions={predictors[0]: f"knows {IMAGE}"})
    assert_escaped(result.save(tmp_path / "audit")["report"].read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def hostile_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / f"data{IMAGE}.csv"  # a file name is shown too
    _hostile_sample().drop(columns=[f"oracle{SCRIPT}", f"noise{IMAGE}"]).to_csv(path, index=False)
    return path


def test_repair_report(hostile_file, tmp_path):
    assert main(["repair", str(hostile_file), *_sfm_flags(), "--bn", "SE", "--engine", "linear", "--quiet", "--out", str(tmp_path)]) == 0
    assert_escaped((tmp_path / "report.html").read_text(encoding="utf-8"))


def test_frontier_report(hostile_file, tmp_path):
    assert main(["frontier", str(hostile_file), *_sfm_flags(), "--engine", "linear", "--bn-sets", "none,ZW", "--repeats", "1",
                 "--no-constrained", "--quiet", "--out", str(tmp_path)]) == 0
    assert_escaped((tmp_path / "report.html").read_text(encoding="utf-8"), shown=ESCAPED[1:])  # it names only the file


def test_decompose_report(hostile_file, tmp_path):
    assert main(["decompose", str(hostile_file), *_sfm_flags(), "--learner", "linear", "--quiet", "--out", str(tmp_path)]) == 0
    assert_escaped((tmp_path / "report.html").read_text(encoding="utf-8"))


def _hostile_spec():
    from fairpath.text import FairnessSpec

    return FairnessSpec.from_dict({
        "attribute": f"country{SCRIPT}", "placeholder": "country",
        "values": {f"north{IMAGE}": [f"A{SCRIPT}", f"B{IMAGE}"], f"south{SCRIPT}": ["C", f"D{SCRIPT}"]},
        "templates": [f"I am from {{country}}. {IMAGE}", f"People from {{country}} are {SCRIPT}", "{country} is"]})


def test_text_report(tmp_path):
    from fairpath.text import GenerationSettings, PoolGenerator, audit_text

    spec = _hostile_spec()
    pools = {f"A{SCRIPT}": 0.8, f"B{IMAGE}": 0.7, "C": 0.3, f"D{SCRIPT}": 0.4}
    result = audit_text(spec, PoolGenerator(spec, mixing=pools), scorers=["vader"], settings=GenerationSettings(n_samples=20),
                        quality=False, n_permutations=19, progress=False)
    assert_escaped(result.save(tmp_path)["report"].read_text(encoding="utf-8"))


def test_reproduce_compas_report(shared_dir, tmp_path):
    from fairpath.reproduce import CompasSettings, reproduce_compas

    data = tmp_path / f"compas{IMAGE}.csv"
    data.write_bytes((shared_dir / "data" / "compas_sp2pp.csv").read_bytes())
    tiny = CompasSettings(rows=600, repeats=2, bn_sets=("none", "ZW"), constrained=False, trees=30, n_folds=2, n_boot=10, learner="linear")
    study = reproduce_compas(tmp_path / f"out{SCRIPT.replace('/', '')}", data=data, settings=tiny, progress=False)
    assert_escaped((study.out / "report.html").read_text(encoding="utf-8"), shown=ESCAPED[1:])  # the file name, escaped


def test_reproduce_huang_report(tmp_path):
    from huang_tables import MODELS, huang_result

    from fairpath.reproduce._huang_report import write_huang_report

    models = [(f"{name}{SCRIPT if i % 2 else IMAGE}", *rest) if name != "base" else (name, *rest) for i, (name, *rest) in enumerate(MODELS)]
    result = huang_result(tmp_path, attributes=(f"country{SCRIPT}", f"occupation{IMAGE}"), models=models, model=f"model{SCRIPT}",
                          chosen_by=f"the cap{SCRIPT}")
    assert_escaped(write_huang_report(result, tmp_path / "report.html").read_text(encoding="utf-8"))
