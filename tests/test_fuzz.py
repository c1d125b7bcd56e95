"""Property-based fuzzing of the command line with Hypothesis: dirty tables, odd headers and encodings, tiny
groups, junk YAML configs and specifications, broken JSONL generation files.

Each command must either stop with exit status 2 and one ``fairpath: error:`` line naming the column, key,
value or file at fault, or, where the change is immaterial (column order, an unused column, CRLF line
endings, a byte-order mark), give exactly the clean input's numbers; never a traceback, never a silently
different result. The levels of a protected attribute (leading zeros, 1 and 1.0, None, true, spaces, the pair
separator, over 128 levels) are fuzzed one layer down, where the CLI reads, matches, drops and codes them: they
must equal a pandas group-by of the file's text.

The default run is derandomized with a fixed budget (``FAST`` examples per property, 11 properties, about a
minute and a half on two cores); ``pytest -m slow tests/test_fuzz.py`` runs ``SLOW`` examples per property.
``text audit`` is left out: even the tiny test model takes about 10 s per run here.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpath import FairpathInputError
from fairpath._io import read_table
from fairpath._levels import match_level, recode_levels
from fairpath.causal import SFM
from fairpath.causal._data import level_counts, prepare_data
from fairpath._levels import contrast_codes, contrast_labels
from fairpath.cli import main
from fairpath.cli._common import parse_level_names
from fairpath.datasets import make_binary_sfm

FAST, SLOW = 8, 150
BUDGETS = [pytest.param(FAST, id="fast"), pytest.param(SLOW, id="slow", marks=pytest.mark.slow)]


def explore(check, budget: int, *args) -> None:
    """Run the property ``check(data, *args)`` on ``budget`` derandomized examples (the same ones every run)."""
    examples = settings(max_examples=budget, derandomize=True, deadline=None, database=None,
                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    examples(given(st.data())(lambda data: check(data, *args)))()


def run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("fairpath: error:")]
    assert len(lines) == 1, err
    return lines[0]


# -- tables ---------------------------------------------------------------------------------------

SFM_ARGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y"]
USED = ["x", "z1", "z2", "w1", "w2", "y"]
FAST_DECOMPOSE = ["--learner", "linear", "--folds", "2", "--n-rep", "1", "--quiet"]
TOKENS = ["?", "-", " ", "na", "NA", "n/a", "1,000", "inf", "-inf", "1e300", "1e400", "#N/A", "null", "None", "..", "１", "0x1A", "1.2.3"]


@functools.cache
def clean_frame() -> pd.DataFrame:
    return make_binary_sfm(300, seed=0).data[USED].round(6)


def decompose_csv(text: bytes, capsys, extra=()) -> tuple[int, str, dict | None]:
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "data.csv", Path(folder) / "result.json"
        path.write_bytes(text)
        code, err = run(["decompose", str(path), *SFM_ARGS, *FAST_DECOMPOSE, *extra, "--json", str(out)], capsys)
        return code, err, json.loads(out.read_text())["contrasts"]["1"]["estimates"] if code == 0 else None


_CLEAN: dict[str, str] = {}


def clean_estimates(capsys) -> str:
    """The clean table's estimates (computed once)."""
    if "decompose" not in _CLEAN:
        code, err, estimates = decompose_csv(clean_frame().to_csv(index=False).encode(), capsys)
        assert code == 0, err
        _CLEAN["decompose"] = json.dumps(estimates, sort_keys=True)
    return _CLEAN["decompose"]


def _immaterial(data) -> tuple[bytes, list[str]]:
    """The clean table written with changes that must not change a number: column order, unused columns of
    any content, CRLF line endings, a UTF-8 byte-order mark, quoted cells."""
    frame = clean_frame()
    columns = data.draw(st.permutations(list(frame.columns)), label="column order")
    frame = frame[columns]
    for i in range(data.draw(st.integers(0, 2), label="unused columns")):
        cells = data.draw(st.lists(st.sampled_from([*TOKENS, "café", "", "x", "3"]), min_size=len(frame), max_size=len(frame)))
        frame = frame.assign(**{f"unused{i}": cells})
    quoting = data.draw(st.sampled_from([0, 1]), label="quote every cell")  # csv.QUOTE_MINIMAL, csv.QUOTE_ALL
    text = frame.to_csv(index=False, quoting=quoting, lineterminator=data.draw(st.sampled_from(["\n", "\r\n"]), label="line end"))
    bom = data.draw(st.booleans(), label="byte-order mark")
    return ("\ufeff" if bom else "").encode() + text.encode(), columns


def _check_immaterial(data, capsys):
    text, _ = _immaterial(data)
    code, err, estimates = decompose_csv(text, capsys)
    assert code == 0, err
    assert json.dumps(estimates, sort_keys=True) == clean_estimates(capsys)


def _check_dirty_cell(data, capsys):
    frame = clean_frame().assign(unused=1.0).astype(object)
    column = data.draw(st.sampled_from(list(frame.columns)), label="column")
    rows = data.draw(st.lists(st.integers(0, len(frame) - 1), min_size=1, max_size=3, unique=True), label="rows")
    token = data.draw(st.sampled_from(TOKENS), label="token")
    frame.loc[rows, column] = token
    code, err, estimates = decompose_csv(frame.to_csv(index=False).encode(), capsys)
    if column == "unused":
        assert code == 0, err
        assert json.dumps(estimates, sort_keys=True) == clean_estimates(capsys)
    else:
        assert code == 2
        assert repr(column) in error_line(err)


def _check_header(data, capsys):
    frame = clean_frame()
    header = list(frame.columns)
    position = data.draw(st.integers(0, len(header) - 1), label="position")
    header[position] = data.draw(st.sampled_from(["", " ", header[(position + 1) % len(header)], f" {header[position]}",
                                                  f"{header[position]} ", header[position].upper(), "Unnamed: 0", "ä"]), label="header")
    text = ",".join(header) + "\n" + frame.to_csv(index=False, header=False)
    code, err, estimates = decompose_csv(text.encode(), capsys)
    assert code == 2, "a used column renamed or duplicated must be refused"
    line = error_line(err)
    assert repr(frame.columns[position]) in line or repr(header[position]) in line, line


def _check_groups_and_outcome(data, capsys):
    frame = clean_frame()
    kept = data.draw(st.integers(0, 12), label="rows of x=1")
    constant = data.draw(st.booleans(), label="constant outcome")
    frame = pd.concat([frame[frame["x"] == 0], frame[frame["x"] == 1].head(kept)])
    if constant:
        frame = frame.assign(y=1)
    code, err, _ = decompose_csv(frame.to_csv(index=False).encode(), capsys)
    assert code == 2
    line = error_line(err)
    assert ("'y'" in line and "constant" in line) if constant and kept >= 2 else ("x=1" in line or "'x'" in line or "'1'" in line), line


def _check_encoding(data, capsys):
    frame = clean_frame().assign(city=data.draw(st.sampled_from(["Zürich", "São Paulo", "Kraków"]), label="city"))
    encoding = data.draw(st.sampled_from(["latin-1", "cp1252", "utf-16"]), label="encoding")
    text = frame.to_csv(index=False).encode(encoding, errors="replace")
    code, err, estimates = decompose_csv(text, capsys)
    if code == 0:  # read as it is meant (the unused column only): the same numbers
        assert json.dumps(estimates, sort_keys=True) == clean_estimates(capsys)
    else:
        assert code == 2 and "UTF-8" in error_line(err) and "data.csv" in error_line(err)


def _check_other_commands(data, capsys):
    """audit, repair and frontier refuse a dirty cell of a used column (the predictor's too) before any fitting. (A row
    whose X is neither level is left out with a note by audit, as documented; decompose's check of X is fuzzed above.)"""
    frame = clean_frame().assign(p=lambda f: (0.2 + 0.5 * f["y"]).round(3)).astype(object)
    command = data.draw(st.sampled_from(["audit", "repair", "frontier"]), label="command")
    covariates = [c for c in USED if c != "x"]
    column = data.draw(st.sampled_from([*covariates, "p"] if command == "audit" else covariates), label="column")
    row = data.draw(st.integers(0, len(frame) - 1), label="row")
    frame.loc[row, column] = data.draw(st.sampled_from(TOKENS), label="token")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.csv"
        frame.to_csv(path, index=False)
        extra = ["--predictor", "p", "--bn", "SE", *FAST_DECOMPOSE, "--bootstrap", "2", "--bins", "2"] if command == "audit" else ["--engine", "linear"]
        code, err = run([command, str(path), *SFM_ARGS, *extra, "--out", str(Path(folder) / "out"), "--quiet"], capsys)
    assert code == 2
    assert repr(column) in error_line(err)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("check", [_check_immaterial, _check_dirty_cell, _check_header, _check_groups_and_outcome, _check_encoding,
                                   _check_other_commands],
                         ids=["immaterial-changes", "dirty-cell", "header", "tiny-group-or-constant-outcome", "encoding",
                              "audit-repair-frontier-dirty-cell"])
def test_table(check, budget, capsys):
    explore(check, budget, capsys)


# -- audit configs (YAML) -------------------------------------------------------------------------

CONFIG_KEYS = ["method", "learner", "n_folds", "seed", "level", "alpha", "margin", "n_bins", "n_boot", "eps", "trim", "nboot1", "n_rep",
               "bn", "x0", "z", "predictors"]
UNKNOWN_KEYS = ["seeds", "n-folds", "Alpha", "folds", "extra", ""]
JUNK = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-5, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                              st.sampled_from(["", "abc", "1,000", "?", "yes", "0.5", "SE", "auto"])),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                    max_leaves=4)


def _check_config(data, capsys):
    frame = clean_frame().assign(p=lambda f: (0.2 + 0.5 * f["y"]).round(3))
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        frame.to_csv(folder / "data.csv", index=False)
        config = {"data": str(folder / "data.csv"), "x": "x", "x0": 0, "x1": 1, "z": ["z1", "z2"], "w": ["w1", "w2"], "y": "y",
                  "predictors": ["p"], "bn": "SE", "out": str(folder / "out"), "learner": "linear", "n_folds": 2, "n_boot": 2,
                  "n_bins": 2, "n_rep": 1}
        fuzzed = data.draw(st.dictionaries(st.sampled_from(CONFIG_KEYS + UNKNOWN_KEYS), JUNK, min_size=1, max_size=3), label="settings")
        config.update(fuzzed)
        text = yaml.safe_dump(config) + data.draw(st.sampled_from(["", "broken: [unclosed\n", "\t- tab\n"]), label="tail")
        (folder / "audit.yaml").write_text(text)
        code, err = run(["audit", "--config", str(folder / "audit.yaml"), "--quiet"], capsys)
        assert code in (0, 2), err
        if code == 0:
            assert not set(fuzzed) & set(UNKNOWN_KEYS) and text.endswith("\n") and "broken" not in text and "tab" not in text
        else:
            line = error_line(err)
            # the key as written ('n_folds') or as its flag (--n-folds, for a required setting left empty), or the file
            names = [repr(key) for key in fuzzed] + [f"--{key.replace('_', '-')}" for key in fuzzed] + ["audit.yaml"]
            assert any(name in line for name in names) or any(str(value) in line for value in fuzzed.values()), line


@pytest.mark.parametrize("budget", BUDGETS)
def test_audit_config(budget, capsys):
    explore(_check_config, budget, capsys)


# -- levels: the file's text ---------------------------------------------------------------------

# Codes that pandas reads as one number (0 and 00, 1 and 1.0), words pandas or YAML read as values, spaces, the pair
# separator and the intersection's; random short texts of the same characters (no missing-value marker can be formed).
SPECIAL_LEVELS = ["0", "00", "01", "1", "1.0", "1e3", "-0", "+1", "None", "true", "True", "yes", " base", "base", "base ", " ",
                  "c vs b", "c", "b", "a/b", "10", "2"]
LEVEL_NAMES = st.one_of(st.sampled_from(SPECIAL_LEVELS), st.text(alphabet="019 .-+bcvsoeNT/", min_size=1, max_size=5))


def _level_names(data, many: bool) -> list[str]:
    """Distinct level names: a few (2 to 10), or more than 128 (zero-padded codes of a drawn width, then drawn names)."""
    drawn = data.draw(st.lists(LEVEL_NAMES, min_size=2, max_size=10, unique=True), label="names")
    if not many:
        return drawn
    width = data.draw(st.integers(3, 4), label="code width")
    count = data.draw(st.integers(129, 300), label="codes")
    return list(dict.fromkeys([*drawn, *(f"{i:0{width}d}" for i in range(count))]))


def _check_levels(data, many: bool):
    """What fairpath reads as X's levels (read_table with levels=, or --categorical; match_level for --x0; recode_levels for
    --drop-levels and --merge; the level coding of decompose with x1=None; the contrasts' names) equals a pandas group-by of
    the file's text."""
    names = _level_names(data, many)
    extra = data.draw(st.sampled_from(names), label="level with a third row")
    rows = [name for name in names for _ in range(3 if name == extra else 2)]
    order = data.draw(st.permutations(range(len(rows))), label="row order") if not many else range(len(rows))
    frame = pd.DataFrame({"x": [rows[i] for i in order], "y": [i % 2 for i in range(len(rows))]})
    reading = data.draw(st.sampled_from([{"levels": ["x"]}, {"categorical": ["x"]}]), label="read as")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "levels.csv"
        frame.to_csv(path, index=False)
        text = pd.read_csv(path, dtype=str, keep_default_na=False)["x"]
        read = read_table(path, **reading)["x"]
    expected = text.value_counts().to_dict()
    assert read.astype(str).value_counts().to_dict() == expected and read.nunique() == len(names)
    assert (read.astype(str) == text).all()  # row by row
    for name in names:  # --x0 NAME: the one level written so
        assert (read == match_level(read, name)).sum() == expected[name]
    table = pd.DataFrame({"x": read, "y": frame["y"]})
    nonblank = [name for name in names if name.strip() and "," not in name]
    drop = data.draw(st.lists(st.sampled_from(nonblank), max_size=min(3, len(nonblank) - 2), unique=True), label="drop") if len(nonblank) > 2 else []
    kept = [name for name in names if name not in drop]
    if drop:  # --drop-levels, exactly as written
        recoded = recode_levels(table, "x", drop_levels=parse_level_names(",".join(drop)))
        assert recoded.dropped == {name: expected[name] for name in drop}
        assert recoded.data["x"].astype(str).value_counts().to_dict() == {name: expected[name] for name in kept}
        table = recoded.data
    reference = data.draw(st.sampled_from(kept), label="x0")
    contrasts = "pairs" if not many and data.draw(st.booleans(), label="pairs") else "reference"
    sfm = SFM(x="x", x0=match_level(table["x"], reference), x1=None, y="y")
    try:
        prepared = prepare_data(table, sfm)
    except FairpathInputError as error:  # mostly numbers and a few words: refused as a dirty numeric column unless declared
        assert "x" in reading.get("levels", []) and "declare it so (categorical= in read_table, --categorical x)" in str(error), error
        table = table.assign(x=table["x"].astype(str).astype("category"))
        prepared = prepare_data(table, sfm.for_contrast(reference, None))
    counts = {str(level): count for level, count in level_counts(prepared.x, prepared.levels).items()}
    assert counts == {name: expected[name] for name in kept} and str(prepared.levels[0]) == reference
    codes = contrast_codes(len(prepared.levels), contrasts)
    try:
        labels = contrast_labels("x", prepared.levels, codes)
    except FairpathInputError as error:  # only a level holding the pair separator can give two contrasts one name
        assert contrasts == "pairs" and any(" vs " in name and repr(name) in str(error) for name in kept), error
    else:
        assert len(set(labels)) == len(codes)
        if contrasts == "reference":
            assert sorted(labels) == sorted(name for name in kept if name != reference)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("many", [False, True], ids=["few-levels", "over-128-levels"])
def test_levels_are_the_files_text(budget, many):
    explore(_check_levels, budget, many)


# -- text: specifications (YAML) and stored generations (JSONL) -----------------------------------

SPEC = {"attribute": "country", "values": {"north": ["Avaland", "Borovia"], "south": ["Cestia", "Dorland"]},
        "templates": ["I am from {country}.", "People from {country} are", "{country} is"]}
CONTINUATIONS = ["a lovely and happy place", "terrible, awful news", "calm and fine", "sad and grim", "wonderful people"]


def _generations() -> list[dict]:
    rows = []
    for t, template in enumerate(SPEC["templates"]):
        for v, value in enumerate(w for words in SPEC["values"].values() for w in words):
            for i in range(3):
                rows.append({"template": template, "value": value, "continuation": CONTINUATIONS[(t + 2 * v + i) % len(CONTINUATIONS)],
                             "sample_index": i})
    return rows


def score(folder: Path, spec_text: str, generations: bytes, capsys, name: str = "generations.jsonl") -> tuple[int, str, dict | None]:
    (folder / "spec.yaml").write_text(spec_text)
    (folder / name).write_bytes(generations)
    out = folder / "out"
    code, err = run(["text", "score", str(folder / name), "--attribute", str(folder / "spec.yaml"), "--scorers", "vader",
                     "--no-quality", "--permutations", "19", "--out", str(out), "--quiet"], capsys)
    return code, err, json.loads((out / "result.json").read_text())["fairness"] if code == 0 else None


def _jsonl(rows: list[dict], end: str = "\n") -> bytes:
    return "".join(json.dumps(row) + end for row in rows).encode()


def clean_fairness(capsys) -> str:
    if "text" not in _CLEAN:
        with tempfile.TemporaryDirectory() as folder:
            code, err, fairness = score(Path(folder), yaml.safe_dump(SPEC), _jsonl(_generations()), capsys)
        assert code == 0, err
        _CLEAN["text"] = json.dumps(fairness, sort_keys=True)
    return _CLEAN["text"]


def _check_spec(data, capsys):
    spec = json.loads(json.dumps(SPEC))
    key = data.draw(st.sampled_from(["attribute", "values", "templates", "unknown"]), label="key")
    spec[key] = data.draw(JUNK | st.dictionaries(st.sampled_from(["north", "a"]), JUNK, max_size=2), label="value")
    with tempfile.TemporaryDirectory() as folder:
        code, err, fairness = score(Path(folder), yaml.safe_dump(spec), _jsonl(_generations()), capsys)
    assert code == 2 or (code == 0 and key == "unknown"), err
    if code == 2:
        line = error_line(err)
        assert "spec.yaml" in line or repr(key) in line or "generations.jsonl" in line, line


def _check_generations(data, capsys):
    rows = _generations()
    change = data.draw(st.sampled_from(["shuffle", "extra field", "crlf", "bom", "blank lines", "missing field", "wrong type",
                                        "unknown value", "broken line", "duplicate"]), label="change")
    row = data.draw(st.integers(0, len(rows) - 1), label="row")
    field = data.draw(st.sampled_from(["template", "value", "continuation", "sample_index"]), label="field")
    end, prefix = "\n", b""
    if change == "shuffle":
        rows = data.draw(st.permutations(rows), label="order")
    elif change == "extra field":
        rows = [{**r, "note": data.draw(JUNK, label="note")} for r in rows]
    elif change == "crlf":
        end = "\r\n"
    elif change == "bom":
        prefix = "\ufeff".encode()
    elif change == "missing field":
        del rows[row][field]
    elif change == "wrong type":
        rows[row][field] = data.draw(st.one_of(st.none(), st.lists(st.integers(), max_size=2), st.dictionaries(st.just("a"), st.integers()),
                                               st.floats(allow_nan=True)), label="junk")
    elif change == "unknown value":
        rows[row]["value"] = "Atlantis"
    elif change == "duplicate":
        rows.append(dict(rows[row]))
    text = prefix + _jsonl(rows, end)
    if change == "blank lines":
        text += b"\n\n"
    elif change == "broken line":
        text += b'{"template": "{country} is", "value": \n'
    with tempfile.TemporaryDirectory() as folder:
        code, err, fairness = score(Path(folder), yaml.safe_dump(SPEC), text, capsys)
    if change in ("shuffle", "extra field", "crlf", "bom", "blank lines"):
        assert code == 0, err
        assert json.dumps(fairness, sort_keys=True) == clean_fairness(capsys)
    else:
        assert code == 2, f"{change}: {err}"
        assert "generations.jsonl" in error_line(err)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("check", [_check_spec, _check_generations], ids=["spec", "generations"])
def test_text_score(check, budget, capsys):
    explore(check, budget, capsys)
