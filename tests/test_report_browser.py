"""Every report kind (audit, demo, repair, frontier, reproduce compas/census/huang, text audit/score, decompose) is
a valid self-contained page, and opens in a real headless browser (Chromium) at laptop widths (1024 and 1400 px)
with every image decoded, nothing wider than the page or its card (wide tables scroll inside theirs) and no
number broken across lines."""

import base64
import html.parser
import json
import shutil
import subprocess

import pytest
from huang_tables import huang_result

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit
from fairpath.parity._oracles import oracle_predictors
from fairpath.parity._report import SECTION_IDS
from fairpath.reproduce._huang_report import write_huang_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WIDTHS = (1024, 1400)  # a laptop and a desktop window
KINDS = ("audit", "demo", "repair", "frontier", "reproduce", "census", "huang", "text", "text-audit", "text-score", "decompose")


class _Collector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.ids, self.external = [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        if tag in {"script", "link"} and (attrs.get("src") or attrs.get("href")):
            self.external.append(attrs.get("src") or attrs.get("href"))


def _sfm_flags(sfm) -> list[str]:
    return ["--x", sfm.x, "--x0", str(sfm.x0), "--x1", str(sfm.x1), "--z", ",".join(sfm.z), "--w", ",".join(sfm.w), "--y", sfm.y]


@pytest.fixture(scope="module")
def reports(tmp_path_factory, shared_dir):
    """One small report of every kind."""
    folder = tmp_path_factory.mktemp("reports")
    sample = make_binary_sfm(800, seed=3)
    data = sample.data.join(oracle_predictors(sample, seed=3)[["oracle", "noise"]])
    found = {"audit": audit(data, sample.sfm, ["oracle", "noise"], "SE", learner="linear", n_boot=20, margin=0.05,
                            progress=False).save(folder / "audit")["report"]}
    csv = folder / "synthetic.csv"
    sample.data.to_csv(csv, index=False)
    assert main(["repair", str(csv), *_sfm_flags(sample.sfm), "--bn", "SE", "--engine", "linear", "--out", str(folder / "repair")]) == 0
    found["repair"] = folder / "repair" / "report.html"
    assert main(["frontier", str(csv), *_sfm_flags(sample.sfm), "--engine", "linear", "--bn-sets", "none,ZW", "--repeats", "2",
                 "--no-constrained", "--quiet", "--out", str(folder / "frontier")]) == 0
    found["frontier"] = folder / "frontier" / "report.html"
    from fairpath.reproduce import CompasSettings, reproduce_compas

    tiny = CompasSettings(rows=600, repeats=2, bn_sets=("none", "ZW"), constrained=False, trees=30, n_folds=2, n_boot=10,
                          learner="linear")
    found["reproduce"] = reproduce_compas(folder / "compas", data=shared_dir / "data" / "compas_sp2pp.csv", settings=tiny,
                                          progress=False).out / "report.html"
    from fairpath.text import (
        FairnessSpec,
        GenerationSettings,
        PoolGenerator,
        audit_text,
    )

    spec = FairnessSpec.from_dict({"attribute": "country", "values": {"north": ["A", "B"], "south": ["C", "D"]},
                                   "templates": ["I am from {country}.", "People from {country} are", "{country} is"]})
    text = audit_text(spec, PoolGenerator(spec, mixing={"A": 0.8, "B": 0.7, "C": 0.3, "D": 0.4}), scorers=["vader"],
                      settings=GenerationSettings(n_samples=30), quality=False, n_permutations=49, progress=False)
    found["text"] = text.save(folder / "text")["report"]
    found["huang"] = _huang_report(folder / "huang")
    found["demo"] = _demo_report(folder / "demo")
    from fairpath.reproduce import CensusSettings, reproduce_census

    found["census"] = reproduce_census(folder / "census", data=shared_dir / "data" / "census_20k.csv", progress=False,
                                       settings=CensusSettings(rows=1000, max_rounds=10, cv_folds=2, n_folds=2, n_boot=10,
                                                               learner="linear")).out / "report.html"
    found.update(_text_cli_reports(folder))
    found["decompose"] = _decompose_report(csv, sample.sfm, folder / "decompose")
    return found


def _demo_report(folder):
    """The demo's COMPAS report (its four predictors, their descriptions, its title) on a subsample, with a linear learner."""
    from fairpath.cli._audit import COMPAS_PREDICTORS
    from fairpath.datasets import load_compas
    from fairpath.parity import baseline_predictors

    compas = load_compas()
    data = compas.data.sample(1500, random_state=0).reset_index(drop=True)
    data = data.join(baseline_predictors(data, compas.sfm, selection_rate=data["northpointe"].mean(), seed=0))
    data = data.rename(columns={"pp": "pp_baseline", "sp": "sp_baseline"}).assign(risk_score=data["decile_score"] / 10)
    result = audit(data, compas.sfm, ["northpointe", "risk_score", "pp_baseline", "sp_baseline"], "SE", learner="linear",
                   n_boot=20, title="fairpath demo: COMPAS, the court example (BN = {SE})", descriptions=COMPAS_PREDICTORS,
                   progress=False)
    return result.save(folder)["report"]


def _text_cli_reports(folder) -> dict:
    """``fairpath text audit`` with a tiny random model, then ``fairpath text score`` on its stored samples."""
    import yaml

    from tiny_models import make_tiny_causal_lm

    model = make_tiny_causal_lm(folder / "tiny-lm", seed=0)
    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump({"attribute": "country", "values": ["Chile", "Italy", "Iran"],
                                    "templates": ["{country} is", "People from {country} are"]}))
    measures = ["--attribute", str(spec), "--scorers", "vader,opinion", "--permutations", "99", "--quiet"]
    assert main(["text", "audit", "--model", str(model), "--samples", "3", "--max-new-tokens", "4", "--no-quality", *measures,
                 "--out", str(folder / "text-audit")]) == 0
    assert main(["text", "score", str(folder / "text-audit" / "samples"), *measures, "--out", str(folder / "text-score")]) == 0
    return {"text-audit": folder / "text-audit" / "report.html", "text-score": folder / "text-score" / "report.html"}


def _decompose_report(csv, sfm, folder):
    """``fairpath decompose --out`` writes a report where the command has that flag (None otherwise)."""
    from fairpath.cli import build_parser
    from fairpath.cli.__init__ import _leaf_parsers

    command = next(p for p in _leaf_parsers(build_parser()) if p.prog == "fairpath decompose")
    if "--out" not in command._option_string_actions:
        return None
    assert main(["decompose", str(csv), *_sfm_flags(sfm), "--learner", "linear", "--quiet", "--out", str(folder)]) == 0
    return folder / "report.html"


def _huang_report(folder):
    """The reproduce huang report of a hand-made record (the study itself runs in tests/reproduce/test_huang.py)."""
    folder.mkdir()
    return write_huang_report(huang_result(folder), folder / "report.html")


def _report(reports, kind):
    if reports[kind] is None or not reports[kind].is_file():
        pytest.skip(f"no {kind} report in this version")
    return reports[kind]


@pytest.mark.parametrize("kind", KINDS)
def test_report_embeds_its_figures_and_records_provenance(reports, kind):
    page = _report(reports, kind).read_text(encoding="utf-8")
    parser = _Collector()
    parser.feed(page)
    assert parser.images, "a report shows at least one figure"
    for src in parser.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png.startswith(PNG_SIGNATURE)
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert 300 < width <= 1100 and height > 150  # never scaled down by the page, so its fonts stay legible
    assert parser.external == []  # self-contained: nothing to fetch
    if not kind.startswith("text"):  # the text report's settings belong to its own module
        assert "versions" in page and "dtype" in page
        assert "SHA-256" in page or kind == "huang"  # the hand-made huang study read no input file
    if kind in ("audit", "demo"):
        assert set(SECTION_IDS) <= parser.ids


def test_demo_predictors_are_explained_and_results_json_has_provenance(reports):
    results = json.loads((reports["audit"].parent / "result.json").read_text())
    provenance = results["settings"]["provenance"]
    assert provenance["call"].startswith("fairpath.parity.audit(data=<DataFrame 800 rows")
    assert provenance["versions"]["numpy"] and provenance["dtype"] == "float64"
    repair = json.loads((reports["repair"].parent / "result.json").read_text())
    assert repair["settings"]["provenance"]["inputs"][0]["name"] == "synthetic.csv"
    assert len(repair["settings"]["provenance"]["inputs"][0]["sha256"]) == 64


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


_needs_chromium = pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install chromium)")

# The harness page holds every report in a frame of the tested width and, once all have loaded, writes what the
# browser laid out: per report its images (and broken ones), how far the page and each card reach past their width,
# tables wider than their box outside a scrolling wrapper, numeric cells whose text takes more than one line, and
# elements reaching past the page outside a scrolling wrapper.
_PROBE = r"""
const NUMERIC = /^[\s\u00a0\u2011\u2212\u2013\[\]()<>≤≥=~±+\-,.%0-9eE]*[0-9][\s\u00a0\u2011\u2212\u2013\[\]()<>≤≥=~±+\-,.%0-9eE]*$/;
function measure(frame) {
  const doc = frame.contentDocument, win = frame.contentWindow, width = win.innerWidth;
  const scrolled = e => { for (let p = e.parentElement; p; p = p.parentElement) {
    if (['auto', 'scroll'].includes(win.getComputedStyle(p).overflowX)) return true; } return false; };
  const images = Array.from(doc.images);
  const cards = Array.from(doc.querySelectorAll('section')).map(s => s.scrollWidth - s.clientWidth);
  const tables = Array.from(doc.querySelectorAll('table')).filter(t => t.getBoundingClientRect().width > t.parentElement.clientWidth + 1 && !scrolled(t));
  const wrapped = Array.from(doc.querySelectorAll('td')).filter(td => NUMERIC.test(td.textContent.trim())).filter(td => {
    const range = doc.createRange(); range.selectNodeContents(td);
    const tops = Array.from(range.getClientRects()).map(r => r.top);
    return Math.max(...tops) - Math.min(...tops) > 0.5 * parseFloat(win.getComputedStyle(td).fontSize);
  });
  const beyond = Array.from(doc.querySelectorAll('main *')).filter(e => !scrolled(e) && (e.getBoundingClientRect().right > width + 1
    || (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 && win.getComputedStyle(e).overflowX === 'visible' && e.tagName !== 'TABLE')));
  const text = e => e.tagName + ':' + (e.textContent || '').trim().slice(0, 40);
  return {images: images.length, broken: images.filter(i => !(i.complete && i.naturalWidth > 0)).length,
          page_overflow_px: doc.scrollingElement.scrollWidth - width, card_overflow_px: Math.max(0, ...cards),
          unscrolled_wide_tables: tables.map(text), wrapped_numbers: wrapped.map(e => e.textContent.trim()),
          beyond_page: beyond.map(text), sections: doc.querySelectorAll('section h2').length};
}
window.addEventListener('load', () => {  // after every frame has loaded
  const frames = Array.from(document.querySelectorAll('iframe'));
  document.getElementById('out').textContent = JSON.stringify(Object.fromEntries(frames.map(f => [f.name, measure(f)])));
});
"""


@pytest.fixture(scope="module")
def layouts(reports, tmp_path_factory):
    """What Chromium laid out, per width and report kind: one browser run per width for all reports."""
    folder = tmp_path_factory.mktemp("harness")
    seen = {}
    for width in WIDTHS:
        frames = "".join(f'<iframe name="{kind}" src="{path.as_uri()}" width="{width}" height="1500" style="border:0;display:block">'
                         "</iframe>" for kind, path in reports.items() if path is not None and path.is_file())
        harness = folder / f"harness-{width}.html"
        harness.write_text(f'<!doctype html><html><body style="margin:0">{frames}<pre id="out">pending</pre>'
                           f"<script>{_PROBE}</script></body></html>", encoding="utf-8")
        command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                   "--hide-scrollbars", f"--window-size={width + 20},1600", "--virtual-time-budget=60000", "--dump-dom", harness.as_uri()]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert completed.returncode == 0, completed.stderr[-2000:]
        seen[width] = json.loads(html.unescape(completed.stdout.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]))
    return seen


@_needs_chromium
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", KINDS)
def test_report_fits_a_laptop_window_with_every_number_on_one_line(reports, layouts, kind, width):
    report = _report(reports, kind)
    seen = layouts[width][kind]
    parser = _Collector()
    parser.feed(report.read_text(encoding="utf-8"))
    assert seen["images"] == len(parser.images) and seen["broken"] == 0
    assert seen["page_overflow_px"] <= 0, f"the {kind} page is {seen['page_overflow_px']} px wider than a {width} px window"
    assert seen["card_overflow_px"] == 0, f"a card of the {kind} report overflows by {seen['card_overflow_px']} px at {width} px"
    assert seen["unscrolled_wide_tables"] == [], f"tables wider than their card in the {kind} report: {seen['unscrolled_wide_tables'][:3]}"
    assert seen["wrapped_numbers"] == [], f"numbers broken across lines in the {kind} report at {width} px: {seen['wrapped_numbers'][:5]}"
    assert seen["beyond_page"] == [], f"elements past the page in the {kind} report at {width} px: {seen['beyond_page'][:5]}"
    assert seen["sections"] >= 2


@_needs_chromium
@pytest.mark.parametrize("kind", KINDS)
def test_report_screenshot_at_1024_px(reports, kind, tmp_path_factory):
    """A screenshot of each report at 1024 px, kept in the test's temporary folder for a person to look at."""
    screenshot = tmp_path_factory.getbasetemp() / "screens" / f"{kind}-1024.png"
    screenshot.parent.mkdir(exist_ok=True)
    completed = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--screenshot={screenshot}",
                                "--window-size=1024,4000", _report(reports, kind).as_uri()], capture_output=True, text=True, timeout=180, check=False)
    assert completed.returncode == 0 and screenshot.read_bytes().startswith(PNG_SIGNATURE)
