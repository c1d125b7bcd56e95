"""The audit report is a valid self-contained page: figures embedded, sections present, and it opens in
a real headless browser (Chromium) with every image decoded."""

import base64
import html.parser
import shutil
import subprocess

import pytest

from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit
from fairpath.parity._oracles import oracle_predictors
from fairpath.parity._report import SECTION_IDS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


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


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    sample = make_binary_sfm(800, seed=3)
    data = sample.data.join(oracle_predictors(sample, seed=3)[["oracle", "noise"]])
    result = audit(data, sample.sfm, ["oracle", "noise"], "SE", learner="linear", n_boot=20, progress=False)
    return result.save(tmp_path_factory.mktemp("report"))["report"]


def test_report_embeds_every_figure_and_section(report):
    parser = _Collector()
    parser.feed(report.read_text(encoding="utf-8"))
    assert set(SECTION_IDS) <= parser.ids
    # SFM diagram, decomposition bars, one PPM figure per predictor, Cookbook plot
    assert len(parser.images) == 5
    for src in parser.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png.startswith(PNG_SIGNATURE)
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width > 300 and height > 150
    assert parser.external == []  # self-contained: nothing to fetch


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (apt-get install chromium)")
def test_report_opens_in_headless_chromium_with_all_images_decoded(report, tmp_path):
    # A harness page loads the report in a frame and writes what the browser saw into its own DOM.
    harness = tmp_path / "harness.html"
    harness.write_text(
        f"""<!doctype html><html><body><iframe id="r" src="{report.as_uri()}" width="1200" height="3000"></iframe>
<pre id="out">pending</pre><script>
document.getElementById('r').addEventListener('load', () => {{
  const doc = document.getElementById('r').contentDocument;
  const images = Array.from(doc.images);
  const broken = images.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  const sections = Array.from(doc.querySelectorAll('section h2')).map(h => h.textContent);
  document.getElementById('out').textContent = 'images=' + images.length + ' broken=' + broken + ' sections=' + sections.join('|');
}});
</script></body></html>""",
        encoding="utf-8",
    )
    command = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
               "--virtual-time-budget=10000", "--dump-dom", harness.as_uri()]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "images=5 broken=0" in completed.stdout
    assert "Business Necessity Cookbook" in completed.stdout and "Predictive parity" in completed.stdout
    screenshot = tmp_path / "report.png"
    completed = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={screenshot}",
                                "--window-size=1200,3000", report.as_uri()], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0 and screenshot.read_bytes().startswith(PNG_SIGNATURE)
