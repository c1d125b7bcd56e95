"""Imports flow one way through the package's layers, no package reaches into another's private modules, and no
modules import each other in a circle.

The layers, lowest first (the table is documented in ``fairpath/__init__.py``):

    core (fairpath._*.py, fairpath.report) → causal → datasets → adaptation → parity → repair → text
    → llm → reproduce → cli

A module may import its own layer's package and any lower layer, never a higher one; across packages
it imports only public modules (the core's private modules are the shared foundation and exempt).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fairpath

LAYERS = ("core", "causal", "datasets", "adaptation", "parity", "repair", "text", "llm", "reproduce", "cli")
CORE_PACKAGES = {"report"}
SOURCE = Path(fairpath.__file__).resolve().parent


def package_of(module: str) -> str:
    """The layer package of a dotted module name under ``fairpath`` ("core" for the foundation)."""
    parts = module.split(".")
    if parts[1:] == ["__main__"]:  # ``python -m fairpath``: the command line's entry point
        return "cli"
    if len(parts) == 1 or parts[1].startswith("_") or parts[1] in CORE_PACKAGES:
        return "core"
    if parts[1] not in LAYERS:
        raise AssertionError(f"package fairpath.{parts[1]} has no layer; add it to LAYERS here and in fairpath/__init__.py")
    return parts[1]


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted name) of every fairpath module or name imported anywhere in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name == "fairpath" or name.startswith("fairpath.")]


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """Upward imports and private reaches of one module."""
    own = package_of(module)
    problems = []
    for line, name in imported_modules(source, module, is_package):
        other = package_of(name)
        if other == own:
            continue
        if LAYERS.index(other) > LAYERS.index(own):
            problems.append(f"{module}:{line} imports {name}: layer {own} must not import the higher layer {other}")
        elif other != "core" and any(part.startswith("_") for part in name.split(".")[2:]):
            problems.append(f"{module}:{line} imports {name}, a private part of fairpath.{other}; use its public name")
    return problems


def scan(root: Path) -> list[str]:
    """Violations of every module under the package folder ``root`` (named ``fairpath``)."""
    return [problem for module, (path, is_package) in module_files(root).items()
            for problem in violations(module, path.read_text(encoding="utf-8"), is_package)]


def test_the_package_imports_one_way_and_only_public_names_across_packages():
    assert scan(SOURCE) == []


def module_files(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, whether it is a package's ``__init__``) of every module under the folder ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("fairpath", *path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def import_circles(root: Path) -> list[list[str]]:
    """The groups of modules under ``root`` that import each other in a circle (the strongly connected components of
    the import graph, counting imports inside functions too: a lazy import hides a circle, it does not remove it)."""
    import numpy as np
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    modules = module_files(root)
    names = list(modules)
    index = {name: i for i, name in enumerate(names)}

    def defining(name: str) -> str:  # fairpath.text.FairnessSpec -> fairpath.text
        while name not in modules:
            name = name.rsplit(".", 1)[0]
        return name

    edges = {(index[module], index[defining(name)]) for module, (path, is_package) in modules.items()
             for _, name in imported_modules(path.read_text(encoding="utf-8"), module, is_package) if defining(name) != module}
    rows, columns = zip(*edges) if edges else ((), ())
    graph = coo_matrix((np.ones(len(rows)), (rows, columns)), shape=(len(names), len(names)))
    count, labels = connected_components(graph, directed=True, connection="strong")
    groups = [[names[i] for i in np.flatnonzero(labels == label)] for label in range(count)]
    return [group for group in groups if len(group) > 1]


def test_no_modules_import_each_other_in_a_circle():
    assert import_circles(SOURCE) == []


def planted_tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package folder ``fairpath`` holding ``files`` (path within it -> source)."""
    root = tmp_path / "fairpath"
    for name, source in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(source)
    return root


def test_the_circle_finder_finds_a_planted_circle_through_a_lazy_import(tmp_path):
    root = planted_tree(tmp_path, {"reproduce/__init__.py": "from fairpath.reproduce._study import Study\n",
                                   "reproduce/_study.py": "def save():\n    from fairpath.reproduce._report import write\n",
                                   "reproduce/_report.py": "from fairpath.reproduce._study import MEASURES\n"})
    assert import_circles(root) == [["fairpath.reproduce._report", "fairpath.reproduce._study"]]


def test_every_layer_package_exists():
    packages = {p.name for p in SOURCE.iterdir() if (p / "__init__.py").exists()}
    assert packages == (set(LAYERS) - {"core"}) | CORE_PACKAGES


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("fairpath.causal._data", "from fairpath.parity import audit", "layer causal must not import the higher layer parity"),
        ("fairpath.adaptation._graph", "def f():\n    import fairpath.repair\n", "layer adaptation must not import the higher layer repair"),
        ("fairpath._io", "from fairpath.cli._common import comma_list", "layer core must not import the higher layer cli"),
        ("fairpath.text.debias._corpus", "from fairpath.cli._common import read_table", "layer text must not import the higher layer cli"),
        ("fairpath.cli._audit", "from fairpath.parity._oracles import oracle_predictors", "a private part of fairpath.parity"),
        ("fairpath.parity._baselines", "from ..causal._learners import fit_predict", "a private part of fairpath.causal"),
    ],
)
def test_the_checker_reports_a_planted_violation(module, source, expected):
    (problem,) = violations(module, source)
    assert expected in problem and problem.startswith(f"{module}:")


def test_the_checker_accepts_downward_public_and_same_package_imports():
    assert violations("fairpath.parity._ppm", "from fairpath.causal import SFM\nfrom fairpath._stats import Estimate") == []
    assert violations("fairpath.parity._audit", "from fairpath.parity._report import write_audit_report") == []
    assert violations("fairpath.text.debias._study", "from fairpath.text._spec import FairnessSpec") == []
    assert violations("fairpath.parity", "from ._ppm import Bins", is_package=True) == []


def test_scan_finds_an_upward_import_planted_in_a_module_tree(tmp_path):
    root = planted_tree(tmp_path, {"causal/__init__.py": "from fairpath.causal._sfm import SFM\n",
                                   "causal/_sfm.py": "import numpy\n\n\ndef draw():\n    from fairpath.repair import frontier\n"})
    assert scan(root) == ["fairpath.causal._sfm:5 imports fairpath.repair.frontier: layer causal must not import the higher layer repair"]
