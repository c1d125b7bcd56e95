"""Every report kind (audit, repair, frontier, reproduce, text) is a valid self-contained page, and opens in a
real headless browser (Chromium) with every image decoded and no text wider than its box."""

import base64
import html.parser
import json
import shutil
import subprocess
from dataclasses import asdict

import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit
from fairpath.parity._oracles import oracle_predictors
from fairpath.parity._report import SECTION_IDS
from fairpath.report import provenance
from fairpath.reproduce import HuangSettings
from fairpath.reproduce._huang import HuangResult, target_check
from fairpath.reproduce._report import write_huang_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VIEWPORT = 1200


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
                                          progress=False).out_ / "report.html"
    from fairpath.text import (
        FairnessSpec,
        GenerationSettings,
        PoolGenerator,
        audit_text,
    )

    spec = FairnessSpec.from_dict({"attribute": "country", "values": {"north": ["A", "B"], "south": ["C", "D"]},
                                   "templates": ["I am from {country}.", "People from {country} are", "{country} is"]})
    text = audit_text(spec, PoolGenerator(spec, {"A": 0.8, "B": 0.7, "C": 0.3, "D": 0.4}), scorers=["vader"],
                      settings=GenerationSettings(n_samples=30), quality=False, n_permutations=49, progress=False)
    found["text"] = text.write_report(folder / "text" / "report.html")
    found["huang"] = _huang_report(folder / "huang")
    return found


def _huang_report(folder):
    """The reproduce huang report of a hand-made study table (the study itself runs in tests/reproduce/test_huang.py)."""
    rows = []
    for attribute, scale in (("country", 1.0), ("occupation", 1.4)):
        for model, regularizer, lam, individual, p, perplexity, ss in (
                ("base", "none", float("nan"), 0.060, float("nan"), 21.0, 0.310),
                ("embedding-lambda10", "embedding", 10.0, 0.050, 0.04, 21.4, 0.305),
                ("embedding-lambda100", "embedding", 100.0, 0.038, 0.002, 22.3, 0.290),
                ("sentiment-lambda10", "sentiment", 10.0, 0.047, 0.03, 21.2, 0.309),
                ("sentiment-lambda100", "sentiment", 100.0, 0.035, 0.001, 21.9, 0.300)):
            rows.append({"attribute": attribute, "model": model, "regularizer": regularizer, "lam": lam,
                         "individual": scale * individual, "individual_floor": scale * 0.036, "individual_own_p": 0.001 if model == "base" else 0.3,
                         "individual_change": individual / 0.060 - 1, "individual_p": p,
                         "group": scale * individual / 2, "group_floor": scale * 0.015, "group_own_p": 0.001 if model == "base" else 0.3,
                         "group_change": individual / 0.060 - 1, "group_p": p,
                         "perplexity": perplexity, "perplexity_change": perplexity / 21.0 - 1, "perplexity_sensitive": perplexity + 3,
                         "ss": ss, "ss_points": 100 * (ss - 0.310), "ssc": ss - 0.1, "ssc_points": 100 * (ss - 0.310)})
    table = pd.DataFrame(rows)
    settings = HuangSettings(templates=3)
    result = HuangResult(table, target_check(table), asdict(settings), folder, 12.0,
                         provenance(seed=settings.seed, dtype="float32", packages=("torch",)))
    return write_huang_report(result, folder / "report.html")


@pytest.mark.parametrize("kind", ["audit", "repair", "frontier", "reproduce", "text", "huang"])
def test_report_embeds_its_figures_and_records_provenance(reports, kind):
    page = reports[kind].read_text(encoding="utf-8")
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
    if kind != "text":  # the text report's settings belong to its own module
        assert "versions" in page and "dtype" in page
        assert "SHA-256" in page or kind == "huang"  # the hand-made huang study read no input file
    if kind == "audit":
        assert set(SECTION_IDS) <= parser.ids


def test_demo_predictors_are_explained_and_results_json_has_provenance(reports):
    results = json.loads((reports["audit"].parent / "results.json").read_text())
    provenance = results["settings"]["provenance"]
    assert provenance["call"].startswith("fairpath.parity.audit(data=<DataFrame 800 rows")
    assert provenance["versions"]["numpy"] and provenance["dtype"] == "float64"
    repair = json.loads((reports["repair"].parent / "repair.json").read_text())
    assert repair["provenance"]["inputs"][0]["name"] == "synthetic.csv"
    assert len(repair["provenance"]["inputs"][0]["sha256"]) == 64


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


# Loaded in a frame, the report tells the harness page what the browser saw: images, broken images, and every
# element whose content is wider than its own box or that reaches past the page width.
_PROBE = """
document.getElementById('r').addEventListener('load', () => {
  const doc = document.getElementById('r').contentDocument;
  const images = Array.from(doc.images);
  const broken = images.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  const width = doc.documentElement.clientWidth;
  const overflow = Array.from(doc.querySelectorAll('main *')).filter(e => {
    const box = e.getBoundingClientRect();
    return box.right > width + 1 || (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0
      && getComputedStyle(e).overflowX === 'visible' && e.tagName !== 'TABLE');
  }).map(e => e.tagName + ':' + (e.textContent || '').trim().slice(0, 40));
  const sections = Array.from(doc.querySelectorAll('section h2')).map(h => h.textContent);
  document.getElementById('out').textContent = JSON.stringify({images: images.length, broken, overflow, sections});
});
"""


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install chromium)")
@pytest.mark.parametrize("kind", ["audit", "repair", "frontier", "reproduce", "text", "huang"])
def test_report_renders_in_headless_chromium(reports, kind, tmp_path):
    report = reports[kind]
    harness = tmp_path / "harness.html"
    harness.write_text(
        f'<!doctype html><html><body style="margin:0"><iframe id="r" src="{report.as_uri()}" width="{VIEWPORT}" height="3000" '
        f'style="border:0"></iframe><pre id="out">pending</pre><script>{_PROBE}</script></body></html>',
        encoding="utf-8",
    )
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
               f"--window-size={VIEWPORT + 20},3100", "--virtual-time-budget=10000", "--dump-dom", harness.as_uri()]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    seen = json.loads(html.unescape(completed.stdout.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]))
    parser = _Collector()
    parser.feed(report.read_text(encoding="utf-8"))
    assert seen["images"] == len(parser.images) and seen["broken"] == 0
    assert seen["overflow"] == [], f"text wider than its box in the {kind} report: {seen['overflow'][:5]}"
    assert len(seen["sections"]) >= 2
    screenshot = tmp_path / "report.png"
    completed = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={screenshot}",
                                f"--window-size={VIEWPORT},3000", report.as_uri()], capture_output=True, text=True, timeout=180, check=False)
    assert completed.returncode == 0 and screenshot.read_bytes().startswith(PNG_SIGNATURE)

