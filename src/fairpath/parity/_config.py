"""Audit settings from a TOML or YAML file and command-line flags (flags win over the file)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from fairpath._exceptions import FairpathInputError
from fairpath._io import read_text, read_toml, read_yaml
from fairpath._levels import level_text, merge_from_text, names_from_text
from fairpath._validation import check_choice, check_columns_arg
from fairpath._vocabulary import parse_bn

_LIST_KEYS = ("z", "w", "predictors", "empty_category", "categorical")


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
    n_rep: int | str = "auto"
    contrasts: str = "reference"  # without x1: each level against x0, or every pair
    merge: dict = dataclasses.field(default_factory=dict)  # levels of X renamed before the audit (several may share a name)
    drop_levels: list[str] = dataclasses.field(default_factory=list)  # levels of X whose rows are left out
    empty_category: list[str] = dataclasses.field(default_factory=list)  # columns where "" is a category
    na_values: list[str] = dataclasses.field(default_factory=list)  # further tokens that mean a missing value
    categorical: list[str] = dataclasses.field(default_factory=list)  # columns read as categories

    def audit_options(self) -> dict:
        """Keyword arguments of :func:`fairpath.parity.audit`."""
        skip = {"data", "x", "x0", "x1", "z", "w", "y", "predictors", "bn", "out", "empty_category", "na_values", "categorical", "merge",
                "drop_levels"}
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
        return cls().updated(values, source)

    def updated(self, values: dict, source: str = "settings") -> "AuditConfig":
        """A copy with the given (non-None) values replacing the current ones; each is type-checked."""
        changes = {key: _normalise(key, value, source) for key, value in values.items() if value is not None}
        return dataclasses.replace(self, **changes)

    def require(self) -> "AuditConfig":
        """Check that the settings without defaults are present."""
        hints = {
            "data": "the data file (DATA)",
            "x": "--x (protected attribute)",
            "x0": "--x0 (baseline level)",
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


def _text(name: str, value) -> str:
    if not isinstance(value, str) or not value:
        raise FairpathInputError(f"{name} must be a non-empty text (a name or a path), got {value!r} ({type(value).__name__})")
    return value


def _level(name: str, value):
    """A level of X (kept as given: a flag's text, a settings file's text or number), named by its text
    (:func:`fairpath._levels.level_text`: a boolean is refused)."""
    if isinstance(value, (list, dict)):
        raise FairpathInputError(f"{name} must be one level of the protected attribute (a text or a number), got {value!r}")
    _level_texts(name, [value])
    return value


def _level_texts(name: str, values) -> list[str]:
    """The texts of level names from a settings file (see :func:`fairpath._levels.level_text`), errors naming the setting."""
    try:
        return [level_text(value) for value in values]
    except FairpathInputError as error:
        raise FairpathInputError(f"{name}: {error}") from None


def _merge(name: str, value) -> dict:
    """{level: new name}: a mapping (config file) or ``"A=B,C=D"`` text (flag), every name exactly as written."""
    if isinstance(value, str):
        try:
            return merge_from_text(value)
        except FairpathInputError as error:
            raise FairpathInputError(f"{name}: {error}") from None
    if not isinstance(value, dict):
        raise FairpathInputError(f"{name} must map levels of X to new names, e.g. {{NHOPI = \"other\"}}, got {value!r}")
    return dict(zip(_level_texts(name, value), _level_texts(name, value.values())))


def _level_names(name: str, value) -> list[str]:
    """``drop_levels``: a list, or ``"a,b"`` text, of level names, each exactly as written."""
    if isinstance(value, str):
        try:
            return names_from_text(value)
        except FairpathInputError as error:
            raise FairpathInputError(f"{name}: {error}") from None
    if not isinstance(value, (list, tuple)):
        raise FairpathInputError(f"{name} must be a list of level names, got {value!r}")
    return _level_texts(name, value)


def _declared(key: str):
    """The check of a setting that audit() declares: the same constraint as its parameter (one set of bounds)."""
    from fairpath.parity._audit import audit

    def check(name: str, value):
        audit.parameter_constraints[key].check(name, value)
        return value

    return check


def _checks() -> dict:
    """Per key, the check of its value: (display name, value) -> value."""
    from fairpath.causal import PRESETS

    declared = ("method", "n_folds", "seed", "level", "alpha", "margin", "n_bins", "n_boot", "eps", "trim", "nboot1", "n_rep", "contrasts")
    return {
        "data": _text, "x": _text, "y": _text, "out": _text, "x0": _level, "x1": _level, "merge": _merge, "drop_levels": _level_names,
        "learner": lambda name, v: check_choice(name, v, PRESETS),
        "na_values": lambda name, v: check_columns_arg(name, v, item="missing-value token"),
        **{key: _declared(key) for key in declared},
    }


def _normalise(key: str, value, source: str = "settings"):
    name = f"setting {key!r}" + (f" in {source}" if source != "settings" else "")
    if key in _LIST_KEYS:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        if not isinstance(value, (list, tuple)):
            raise FairpathInputError(f"setting {key!r} must be a list of column names, got {value!r}")
        bad = [item for item in value if not isinstance(item, str)]
        if bad:
            raise FairpathInputError(f"{name} must list column names (texts), got {bad[0]!r} ({type(bad[0]).__name__})")
        return list(value)
    if key == "bn":
        try:
            return parse_bn(value)
        except FairpathInputError as error:  # parse_bn is shared with the API and flags: say which setting and file
            raise FairpathInputError(f"{name}: {error}") from None
    return _checks()[key](name, value)


_LEVEL_KEYS = ("x0", "x1", "drop_levels", "merge")


def _level_nodes(node, loaded) -> list:
    """(YAML node, the value read from it) of each level name in one setting's node: a scalar, a list's items, a
    mapping's keys and values."""
    if isinstance(node, yaml.SequenceNode) and isinstance(loaded, list):
        return list(zip(node.value, loaded))
    if isinstance(node, yaml.MappingNode) and isinstance(loaded, dict):
        return [pair for (key, value), item in zip(node.value, loaded.items()) for pair in ((key, item[0]), (value, item[1]))]
    return [(node, loaded)]


def _check_yaml_levels(path: Path, values: dict) -> None:
    """A level of X written unquoted in a YAML config must read as its own text: YAML reads ``true``/``yes`` as a
    boolean, ``010`` as 8 and ``01`` as 1, which would name another level (or none); such a level is refused, naming
    the setting, its text and its line: quote it."""
    root = yaml.compose(read_text(path, "config file"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for key_node, node in root.value if isinstance(root, yaml.MappingNode) else []:
        if key_node.value not in _LEVEL_KEYS:
            continue
        for scalar, value in _level_nodes(node, values.get(key_node.value)):
            if isinstance(scalar, yaml.ScalarNode) and not isinstance(value, str) and (isinstance(value, bool) or str(value) != scalar.value):
                raise FairpathInputError(
                    f"setting {key_node.value!r} in config file {str(path)!r} (line {scalar.start_mark.line + 1}) writes the level "
                    f"{scalar.value} unquoted, which YAML reads as {value!r} ({type(value).__name__}), not as the text "
                    f"{scalar.value!r}; levels are matched to the cells' text exactly: quote it, e.g. {key_node.value}: '{scalar.value}'")


def load_config(path: str | Path) -> AuditConfig:
    """Read an audit config file (``.toml``, ``.yaml`` or ``.yml``)."""
    path = Path(path)
    if not path.exists():
        raise FairpathInputError(f"config file {str(path)!r} does not exist; check the path")
    if path.suffix.lower() == ".toml":
        values = read_toml(path, "config file")
    elif path.suffix.lower() in {".yaml", ".yml"}:
        values = read_yaml(path, "config file") or {}
        if isinstance(values, dict):
            _check_yaml_levels(path, values)
    else:
        raise FairpathInputError(f"config file {str(path)!r} must end in .toml, .yaml or .yml")
    if not isinstance(values, dict):
        raise FairpathInputError(f"config file {str(path)!r} must hold key = value settings at its top level")
    return AuditConfig.from_mapping(values, source=f"config file {str(path)!r}")


