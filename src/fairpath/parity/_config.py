"""Audit settings from a TOML or YAML file and command-line flags (flags win over the file)."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import yaml

from fairpath._exceptions import FairpathInputError
from fairpath._vocabulary import parse_bn

_LIST_KEYS = ("z", "w", "predictors")


@dataclasses.dataclass
class AuditConfig:
    """Everything an audit needs; the keys of a config file are these field names."""

    data: str | None = None
    x: str | None = None
    x0: object = None
    x1: object = None
    z: list[str] = dataclasses.field(default_factory=list)
    w: list[str] = dataclasses.field(default_factory=list)
    y: str | None = None
    predictors: list[str] = dataclasses.field(default_factory=list)
    bn: tuple[str, ...] | None = None
    out: str | None = None
    method: str = "debiasing"
    learner: str | None = None
    n_folds: int = 5
    seed: int = 0
    level: float = 0.95
    alpha: float = 0.05
    margin: float | None = None
    n_bins: int = 10
    n_boot: int = 200
    eps: float = 0.01
    trim: bool = False
    nboot1: int = 1

    def audit_options(self) -> dict:
        """Keyword arguments of :func:`fairpath.parity.audit`."""
        skip = {"data", "x", "x0", "x1", "z", "w", "y", "predictors", "bn", "out"}
        return {key: value for key, value in self.to_dict().items() if key not in skip}

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_mapping(cls, values: dict, source: str = "settings") -> "AuditConfig":
        """Build from a dict, rejecting unknown keys; list keys accept lists or ``a,b`` strings."""
        unknown = [key for key in values if key not in cls.keys()]
        if unknown:
            raise FairpathInputError(
                f"unknown key {unknown[0]!r} in {source}; allowed keys: {', '.join(cls.keys())}"
            )
        return cls().updated(values)

    def updated(self, values: dict) -> "AuditConfig":
        """A copy with the given (non-None) values replacing the current ones."""
        changes = {key: _normalise(key, value) for key, value in values.items() if value is not None}
        return dataclasses.replace(self, **changes)

    def require(self) -> "AuditConfig":
        """Check that the settings without defaults are present."""
        hints = {
            "data": "the data file (DATA)",
            "x": "--x (protected attribute)",
            "x0": "--x0 (baseline level)",
            "x1": "--x1 (comparison level)",
            "y": "--y (outcome)",
            "bn": "--bn (business-necessity set, e.g. SE or DE,IE,SE; 'none' for the empty set)",
            "out": "--out (output folder)",
        }
        missing = [hint for key, hint in hints.items() if getattr(self, key) is None]
        if not self.predictors:
            missing.append("--predictor (at least one predictor column)")
        if missing:
            raise FairpathInputError("missing setting(s): " + "; ".join(missing) + " (give them as flags or in --config)")
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _normalise(key: str, value):
    if key in _LIST_KEYS:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        if not isinstance(value, (list, tuple)):
            raise FairpathInputError(f"setting {key!r} must be a list of column names, got {value!r}")
        return [str(item) for item in value]
    if key == "bn":
        return parse_bn(value)
    return value


def load_config(path: str | Path) -> AuditConfig:
    """Read an audit config file (``.toml``, ``.yaml`` or ``.yml``)."""
    path = Path(path)
    if not path.exists():
        raise FairpathInputError(f"config file {str(path)!r} does not exist; check the path")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".toml":
            values = tomllib.loads(text)
        elif path.suffix.lower() in {".yaml", ".yml"}:
            values = yaml.safe_load(text) or {}
        else:
            raise FairpathInputError(f"config file {str(path)!r} must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as error:
        raise FairpathInputError(f"could not parse config file {str(path)!r}: {error}") from error
    if not isinstance(values, dict):
        raise FairpathInputError(f"config file {str(path)!r} must hold key = value settings at its top level")
    return AuditConfig.from_mapping(values, source=f"config file {str(path)!r}")


