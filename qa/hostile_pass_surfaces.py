"""A hostile user's pass over the surfaces added last (issue 41): several hundred generated cases on
K levels, intersections and pairs, the commands that share their helpers, Dask, outputs, text logs
and the earlier leftovers, run and classified by ``hostile_pass.py``'s machinery.

Each case is a command line with one thing made dirty or hostile and what a correct tool does with
it: refuse it with a clear error (``error``), succeed (``ok``), succeed with the numbers of an
equivalent clean input (``same``: levels ``01`` and ``1`` must give the numbers of the same data
with levels ``a`` and ``b``), or either (``any``); some cases also check what the run wrote (the
number of contrasts equals the number of the data's levels, a folder is complete after stdout
closed early, no stale contrast folder stays behind a rerun) or its exit status (a contrast that
is not estimable is no violation: ``audit --fail-on violation`` must not exit 3). The classes are
``hostile_pass.py``'s: clear error / correct / traceback / silent / wrong remedy (an error names a
flag its command lacks) / security / data lost / hang.

    python qa/hostile_pass_surfaces.py [--jobs 2] [--only PATTERN] [--out DIR]

writes ``DIR/hostile_pass_surfaces.json`` (default DIR qa/results/hostile). Cases whose
first run would start a study (``reproduce huang --record``) have a short timeout: a correct tool
refuses them before any work, and each works on a copy of the record in its own folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_pass import SCRIPT, Case, _csv, _generations, _with_token, run_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLEAN = {0: "a", 1: "b", 2: "c", 3: "d"}  # the levels' clean names, in the order of the hostile ones below
SFM = ["--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


# -- data ------------------------------------------------------------------------------------------

def _frame(n: int = 600, seed: int = 3) -> pd.DataFrame:
    """A binary SFM with the four oracle predictors, X coded 0..3 (x + 2 × a fair coin: levels 2 and 3 are random
    halves of 0 and 1) and a second attribute s (a fair coin) for intersections."""
    from fairpath.datasets import make_binary_sfm
    from fairpath.parity._oracles import oracle_predictors

    sample = make_binary_sfm(n, seed=seed)
    frame = sample.data.join(oracle_predictors(sample, seed=seed))
    coin = np.random.default_rng(seed).integers(0, 2, (2, n))
    return frame.assign(x=frame.x.astype(int) + 2 * coin[0], s=coin[1])


def _named(frame: pd.DataFrame, names: dict) -> pd.DataFrame:
    return frame.assign(x=frame.x.map(names))


def _binary(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(x=frame.x % 2)


def _decompose(x0="a", *extra, x="x", data="data.csv") -> list[str]:
    return ["decompose", data, "--x", x, "--x0", str(x0), *SFM, "--learner", "linear", "--folds", "2", "--n-rep", "1",
            "--out", "out", *extra]


def _audit(x0="a", *extra, x="x", data="data.csv", predictor="z_only") -> list[str]:
    return ["audit", data, "--x", x, "--x0", str(x0), *SFM, "--predictor", predictor, "--bn", "SE", "--learner", "linear",
            "--folds", "2", "--n-rep", "1", "--bootstrap", "20", "--out", "out", *extra]


def _repair(x0="0", *extra, x="x", data="data.csv") -> list[str]:
    return ["repair", data, "--x", x, "--x0", str(x0), *SFM, "--bn", "SE", "--engine", "linear", "--n-boot", "20", "--out", "out", *extra]


def _frontier(x0="0", *extra, x="x", data="data.csv") -> list[str]:
    return ["frontier", data, "--x", x, "--x0", str(x0), *SFM, "--engine", "linear", "--bn-sets", "none,ZW", "--repeats", "1",
            "--no-constrained", "--out", "out", *extra]


COMMANDS = {"decompose": _decompose, "audit": _audit}


def _with(argv: list[str], flag: str, value: str | None) -> list[str]:
    """``argv`` with ``flag``'s value replaced (None: the flag and its value removed)."""
    argv = list(argv)
    at = argv.index(flag)
    if value is None:
        del argv[at:at + 2]
    else:
        argv[at + 1] = value
    return argv


# -- checks of what a run wrote ---------------------------------------------------------------------

def _results(folder: Path) -> dict | None:
    for name in ("out/result.json", "out.json"):
        if (folder / name).is_file():
            return json.loads((folder / name).read_text())
    return None


def _error_line(folder: Path) -> str:
    lines = (folder / ".stderr").read_text(errors="replace").strip().splitlines() if (folder / ".stderr").exists() else []
    return next((line for line in reversed(lines) if line.startswith("fairpath: error:")), "")


def contrasts(expected: int) -> Callable[[Path], str | None]:
    """A success must report ``expected`` contrasts (the levels' group-by count: K − 1, or K(K − 1)/2 for pairs)."""
    def check(folder: Path) -> str | None:
        found = _results(folder)
        if found is None or _error_line(folder):
            return None
        names = list(found.get("contrasts", {})) or ["(one, binary)"]
        return None if len(names) == expected else f"{len(names)} contrasts {names[:8]} where the data give {expected}"
    return check


def lists(names: list[str]) -> Callable[[Path], str | None]:
    """A refusal must name every one of ``names`` (e.g. every tiny level) in its one message."""
    def check(folder: Path) -> str | None:
        line = _error_line(folder)
        missing = [name for name in names if repr(name) not in line and f'"{name}"' not in line]
        return f"the error omits {missing[:6]}{' ...' if len(missing) > 6 else ''}" if line and missing else None
    return check


def not_estimable(contrast: str) -> Callable[[Path], str | None]:
    """A success must flag ``contrast`` not estimable."""
    def check(folder: Path) -> str | None:
        found = _results(folder)
        if found is None:
            return None
        part = found.get("contrasts", {}).get(contrast)
        if part is None:
            return f"no contrast {contrast!r} in the results"
        flag = part.get("estimable", part.get("cookbook", {}).get("estimable"))
        return None if flag is False else f"contrast {contrast!r} is not flagged not estimable (estimable: {flag})"
    return check


def complete(names: list[str]) -> Callable[[Path], str | None]:
    """Every one of ``names`` must be written, whether the run succeeded or refused (stdout closed early)."""
    def check(folder: Path) -> str | None:
        missing = [name for name in names if not (folder / name).is_file()]
        return f"incomplete output, missing {missing}" if missing else None
    return check


def no_stale_contrasts(folder: Path) -> str | None:
    """After a rerun into the same --out, the contrast folders are those of this run's results."""
    found = _results(folder)
    if found is None:
        return None
    kept = sorted(p.name for p in (folder / "out" / "contrasts").iterdir()) if (folder / "out" / "contrasts").is_dir() else []
    contrasts = len(found.get("contrasts", {}))
    due = contrasts if contrasts > 1 else 0  # one contrast (a binary X) is saved in out itself, with no contrast folder
    return None if len(kept) == due else f"out/contrasts holds {kept} after a rerun with {contrasts} contrasts"


def writes_under(name: str) -> Callable[[Path], str | None]:
    """Nothing is written beside the case's inputs except under ``name`` (a level's name is no path)."""
    def check(folder: Path) -> str | None:
        stray = [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".std")
                 and p.parts[len(folder.parts)] != name and p.suffix not in (".csv", ".yaml", ".toml")]
        outside = [str(p) for p in folder.parent.glob("*evil*")]
        return f"written outside {name}/: {(stray + outside)[:4]}" if stray or outside else None
    return check


def noted(word: str) -> Callable[[Path], str | None]:
    """A success must say (a note on stderr) what it left out, naming ``word``."""
    def check(folder: Path) -> str | None:
        text = (folder / ".stderr").read_text(errors="replace") if (folder / ".stderr").exists() else ""
        said = any(line.startswith("note:") and word in line and any(verb in line for verb in ("exclude", "left out", "drop"))
                   for line in text.splitlines())
        return None if _error_line(folder) or said else f"rows of level {word!r} left out without a note"
    return check


def counted(expected: int) -> Callable[[Path], str | None]:
    """A text score must score ``expected`` continuations (its first stderr line says how many)."""
    def check(folder: Path) -> str | None:
        text = (folder / ".stderr").read_text(errors="replace") if (folder / ".stderr").exists() else ""
        if _error_line(folder) or "continuations from" not in text:
            return None
        n = int(text.split("fairpath text score: ")[1].split()[0])
        return None if n == expected else f"scored {n} continuations where {expected} are due"
    return check


def estimates(folder: Path) -> object:
    """The numbers of out/result.csv, row order and level names aside (for ``same`` across renamed levels)."""
    path = folder / "out" / "result.csv"
    if not path.is_file():
        return None
    # the contrast column holds level names, which read as numbers where the levels are numbers
    numbers = pd.read_csv(path).drop(columns="contrast", errors="ignore").select_dtypes("number").round(10).fillna(-999.0)
    return sorted(map(tuple, numbers.to_numpy().tolist()))


# -- K levels, intersections and pairs --------------------------------------------------------------

# hostile names for the levels 0..3, each in the order of CLEAN (as text): the data must give four levels
LEVEL_NAMES = {
    "leading-zeros": {0: "0", 1: "00", 2: "01", 3: "1"},
    "int-and-float": {0: "1", 1: "1.0", 2: "2", 3: "2.0"},
    "level-None": {0: "None", 1: "b", 2: "c", 3: "d"},
    "level-null-token": {0: "a", 1: "nan_", 2: "null_", 3: "nx"},
    "true-false": {0: "false", 1: "true", 2: "u", 3: "v"},
    "spaces-inside": {0: "a", 1: "b c", 2: "c d", 3: "d e"},
    "pair-label": {0: "a", 1: "b", 2: "c", 3: "c vs b"},
    "unicode": {0: "a", 1: "é", 2: "ü", 3: "✓"},
    "script": {0: "a", 1: "b", 2: SCRIPT, 3: "d"},
    "formula": {0: "a", 1: "b", 2: "=1+2", 3: "d"},
    "path-traversal": {0: "a", 1: "b", 2: "../../evil", 3: "d"},
    "long-name": {0: "a", 1: "b" * 300, 2: "c", 3: "d"},
    "negative-numbers": {0: "-1", 1: "-2", 2: "0", 3: "1"},
}


def level_cases(frame: pd.DataFrame) -> list[Case]:
    cases = []
    for command, build in COMMANDS.items():
        clean = _named(frame, CLEAN)
        cases.append(Case(f"levels/{command}/clean", build("a"), "ok", {"data.csv": _csv(clean)}, timeout=120, check=contrasts(3)))
        cases.append(Case(f"levels/{command}/clean-pairs", build("a", "--contrasts", "pairs"), "ok", {"data.csv": _csv(clean)},
                          timeout=120, check=contrasts(6)))
        for name, names in LEVEL_NAMES.items():
            data = {"data.csv": _csv(_named(frame, names))}
            hostile = {"script": "ok", "formula": "ok", "path-traversal": "ok", "long-name": "ok"}.get(name, "same")
            checks = {"path-traversal": writes_under("out")}
            for contrast_set, expected in (("reference", 3), ("pairs", 6)):
                extra = ["--contrasts", contrast_set] if contrast_set == "pairs" else []
                check = checks.get(name, contrasts(expected))
                # a level named like a pair label may be refused with pairs, naming it (issue 41: "or refused, naming it")
                expect = "any" if (name, contrast_set) == ("pair-label", "pairs") else hostile
                cases.append(Case(f"levels/{command}/{name}/{contrast_set}", build(names[0], *extra), expect, data,
                                  same_as=f"levels/{command}/clean" + ("-pairs" if extra else ""), timeout=120, check=check,
                                  numbers=estimates))
        # the same hostile names declared categorical: read as text, they must be the four levels
        for name in ("leading-zeros", "int-and-float", "negative-numbers"):
            names = LEVEL_NAMES[name]
            cases.append(Case(f"levels/{command}/{name}/categorical", build(names[0], "--categorical", "x"), "same",
                              {"data.csv": _csv(_named(frame, names))}, same_as=f"levels/{command}/clean", timeout=120,
                              check=contrasts(3), numbers=estimates))
        # the reference named otherwise than the data write it
        for name, x0, expect in (("x0-1.0-for-1", "1.0", "any"), ("x0-01-for-1", "01", "any"), ("x0-absent", "7", "error"),
                                 ("x0-empty", "", "error"), ("x0-space", " 0", "any"), ("x0-case", "A", "error")):
            names = {0: "1", 1: "2", 2: "3", 3: "4"} if name.endswith("-for-1") else {0: "0", 1: "1", 2: "2", 3: "3"}
            if name == "x0-case":
                names = CLEAN
            cases.append(Case(f"levels/{command}/{name}", build(x0), expect, {"data.csv": _csv(_named(frame, names))}, timeout=120,
                              check=contrasts(3)))
    return cases


def many_level_cases() -> list[Case]:
    """More than 128 levels (a level's code must not overflow), and 1,000 levels too small to analyse."""
    rng = np.random.default_rng(5)
    cases = []
    for k, per, expect in ((130, 22, "ok"), (200, 22, "ok"), (1000, 3, "error"), (1000, 1, "error")):
        n = k * per
        frame = pd.DataFrame({"x": np.repeat([f"g{i:04d}" for i in range(k)], per), "z1": rng.normal(size=n), "z2": rng.integers(0, 2, n),
                              "w1": rng.normal(size=n), "w2": rng.normal(size=n)})
        frame["y"] = (rng.random(n) < 1 / (1 + np.exp(-(frame.z1 + frame.w1)))).astype(int)
        frame["z_only"] = 1 / (1 + np.exp(-frame.z1))
        check = contrasts(k - 1) if expect == "ok" else lists(["g0000", f"g{k - 1:04d}"])
        cases.append(Case(f"levels/decompose/{k}-levels-of-{per}", _decompose("g0000"), expect, {"data.csv": _csv(frame)},
                          timeout=400, check=check))
        if expect == "error":
            cases.append(Case(f"levels/audit/{k}-levels-of-{per}", _audit("g0000"), expect, {"data.csv": _csv(frame)},
                              timeout=120, check=check))
    # 129 levels in pairs: 8,256 contrasts is a lot; a correct tool computes them or refuses clearly
    frame = pd.DataFrame({"x": np.repeat([f"g{i:03d}" for i in range(129)], 22)})
    n = len(frame)
    frame = frame.assign(z1=rng.normal(size=n), z2=rng.integers(0, 2, n), w1=rng.normal(size=n), w2=rng.normal(size=n),
                         y=rng.integers(0, 2, n))
    cases.append(Case("levels/decompose/129-levels-pairs", _decompose("g000", "--contrasts", "pairs"), "any", {"data.csv": _csv(frame)},
                      timeout=200, check=contrasts(129 * 128 // 2)))
    return cases


def tiny_level_cases(frame: pd.DataFrame) -> list[Case]:
    """Levels too small to analyse: one message lists every one of them, with remedies the command has."""
    named = _named(frame, CLEAN)
    cases = []
    few = pd.concat([named[~named.x.isin(["c", "d"])], named[named.x == "c"].head(3), named[named.x == "d"].head(5)])
    one = pd.concat([named[named.x != "d"], named[named.x == "d"].head(1)])
    for command, build in COMMANDS.items():
        cases.append(Case(f"tiny/{command}/two-tiny-levels", build("a"), "error", {"data.csv": _csv(few)}, check=lists(["c", "d"])))
        cases.append(Case(f"tiny/{command}/one-row-level", build("a"), "error", {"data.csv": _csv(one)}, check=lists(["d"])))
        cases.append(Case(f"tiny/{command}/tiny-reference", build("c"), "error", {"data.csv": _csv(few)}, check=lists(["c", "d"])))
        cases.append(Case(f"tiny/{command}/tiny-dropped", build("a", "--drop-levels", "c,d"), "ok", {"data.csv": _csv(few)},
                          check=contrasts(1)))
        cases.append(Case(f"tiny/{command}/tiny-merged", build("a", "--merge", "c=b,d=b"), "ok", {"data.csv": _csv(few)},
                          check=contrasts(1)))
        cases.append(Case(f"tiny/{command}/tiny-with-x1", build("a", "--x1", "b"), "any", {"data.csv": _csv(few)}, check=noted("c")))
        cases.append(Case(f"tiny/{command}/tiny-pairs", build("a", "--contrasts", "pairs"), "error", {"data.csv": _csv(few)},
                          check=lists(["c", "d"])))
    # the binary commands sharing the size check: its remedies must be flags they have
    tiny_binary = pd.concat([_binary(frame)[lambda f: f.x == 0], _binary(frame)[lambda f: f.x == 1].head(5)])
    for command, build in (("repair", _repair), ("frontier", _frontier)):
        cases.append(Case(f"tiny/{command}/tiny-group", build("0", "--x1", "1"), "error", {"data.csv": _csv(tiny_binary)},
                          timeout=120))
    return cases


def intersection_cases(frame: pd.DataFrame) -> list[Case]:
    named = _named(_binary(frame), {0: "a", 1: "b"}).assign(s=lambda f: f.s.map({0: "f", 1: "m"}), t=lambda f: np.arange(len(f)) % 2)
    cases = []
    for command, build in COMMANDS.items():
        x = "x,s"
        data = {"data.csv": _csv(named)}
        cases.append(Case(f"cross/{command}/clean", build("a/f", x=x), "ok", data, timeout=120, check=contrasts(3)))
        cases.append(Case(f"cross/{command}/pairs", build("a/f", "--contrasts", "pairs", x=x), "ok", data, timeout=120, check=contrasts(6)))
        cases.append(Case(f"cross/{command}/three-columns", build("a/f/0", x="x,s,t"), "any", data, timeout=120, check=contrasts(7)))
        cases.append(Case(f"cross/{command}/reference-order", build("f/a", x="s,x"), "ok", data, timeout=120, check=contrasts(3)))
        cases.append(Case(f"cross/{command}/x0-not-a-cell", build("a", x=x), "error", data))
        cases.append(Case(f"cross/{command}/x0-wrong-separator", build("a,f", x=x), "error", data))
        cases.append(Case(f"cross/{command}/column-twice", build("a/a", x="x,x"), "error", data))
        cases.append(Case(f"cross/{command}/trailing-comma", build("a", x="x,"), "any", data))
        cases.append(Case(f"cross/{command}/space-after-comma", build("a/f", x="x, s"), "any", data, check=contrasts(3)))
        cases.append(Case(f"cross/{command}/unknown-column", build("a/f", x="x,q"), "error", data))
        cases.append(Case(f"cross/{command}/combined-name-taken", build("a/f", x=x), "error", {"data.csv": _csv(named.assign(**{"x/s": 1}))}))
        cases.append(Case(f"cross/{command}/slash-in-level", build("a/f", x=x), "error",
                          {"data.csv": _csv(named.assign(s=named.s.replace({"m": "m/n"})))}))
        cases.append(Case(f"cross/{command}/missing-in-second", build("a/f", x=x), "error",
                          {"data.csv": _csv(named.assign(s=named.s.mask(np.arange(len(named)) == 7)))}))
        empty_cell = named[~((named.x == "b") & (named.s == "m"))]
        cases.append(Case(f"cross/{command}/empty-cell", build("a/f", x=x), "ok", {"data.csv": _csv(empty_cell)}, timeout=120,
                          check=contrasts(2)))
        tiny_cell = pd.concat([empty_cell, named[(named.x == "b") & (named.s == "m")].head(3)])
        cases.append(Case(f"cross/{command}/tiny-cell", build("a/f", x=x), "error", {"data.csv": _csv(tiny_cell)}, check=lists(["b/m"])))
        cases.append(Case(f"cross/{command}/tiny-cell-dropped", build("a/f", "--drop-levels", "b/m", x=x), "ok",
                          {"data.csv": _csv(tiny_cell)}, timeout=120, check=contrasts(2)))
        cases.append(Case(f"cross/{command}/tiny-cell-merged", build("a/f", "--merge", "b/m=b/f", x=x), "ok",
                          {"data.csv": _csv(tiny_cell)}, timeout=120, check=contrasts(2)))
        only_reference = named.assign(s="f")
        cases.append(Case(f"cross/{command}/second-constant", build("a/f", x=x), "ok", {"data.csv": _csv(only_reference)}, timeout=120,
                          check=contrasts(1)))
        cases.append(Case(f"cross/{command}/numeric-columns", build("0/0", x="t,s"), "any",
                          {"data.csv": _csv(named.assign(s=frame.s))}, timeout=120, check=contrasts(3)))
        # a column of X in another role: refused, naming it
        for role, flag, value in (("z", "--z", "z1,s"), ("w", "--w", "w1,s"), ("y", "--y", "s"), ("z-first", "--z", "x,z2")):
            argv = _with(build("a/f", x=x), flag, value)
            cases.append(Case(f"cross/{command}/x-column-in-{role}", argv, "error",
                              {"data.csv": _csv(named.assign(s=frame.s) if role == "y" else named)}))
        predictor_data = {"data.csv": _csv(named.assign(s=frame.s.astype(float)))}
        argv = _with(build("a/0", x=x), "--predictor", "s") if command == "audit" else [*build("a/0", x=x), "--predictor", "s"]
        cases.append(Case(f"cross/{command}/x-column-as-predictor", argv, "error", predictor_data))
    return cases


def merge_drop_cases(frame: pd.DataFrame) -> list[Case]:
    """--merge and --drop-levels: unknown names, names with spaces, the reference merged or dropped away."""
    named = _named(frame, CLEAN)
    spaced = _named(frame, {0: " base", 1: "b", 2: "c ", 3: "d"})
    data, spaced_data = {"data.csv": _csv(named)}, {"data.csv": _csv(spaced)}
    variants = [
        ("merge-unknown", "a", ["--merge", "z=b"], "error", data, None),
        ("drop-unknown", "a", ["--drop-levels", "z"], "error", data, None),
        ("merge-into-reference", "a", ["--merge", "b=a"], "ok", data, contrasts(2)),
        ("merge-reference-away", "a", ["--merge", "a=b"], "error", data, None),
        ("drop-reference", "a", ["--drop-levels", "a"], "error", data, None),
        ("drop-all-but-one", "a", ["--drop-levels", "b,c,d"], "error", data, None),
        ("merge-all-into-one", "a", ["--merge", "b=a,c=a,d=a"], "error", data, None),
        ("merge-and-drop-same", "a", ["--merge", "b=c", "--drop-levels", "b"], "error", data, None),
        ("merge-chain", "a", ["--merge", "b=c,c=d"], "any", data, contrasts(2)),
        ("merge-new-name", "a", ["--merge", "b=other,c=other"], "ok", data, contrasts(2)),
        ("merge-new-name-is-x0", "other", ["--merge", "a=other"], "ok", data, contrasts(3)),
        ("drop-then-x1-dropped", "a", ["--drop-levels", "b", "--x1", "b"], "error", data, None),
        ("merge-then-x1-merged", "a", ["--merge", "b=c", "--x1", "b"], "error", data, None),
        ("merge-empty", "a", ["--merge", ""], "any", data, contrasts(3)),
        ("merge-no-equals", "a", ["--merge", "b"], "error", data, None),
        ("merge-two-equals", "a", ["--merge", "b=c=d"], "error", data, None),
        ("merge-twice", "a", ["--merge", "b=c,b=d"], "error", data, None),
        ("drop-twice", "a", ["--drop-levels", "b,b"], "error", data, None),
        ("drop-empty-items", "a", ["--drop-levels", ",,"], "any", data, contrasts(3)),
        ("merge-spaced-name", " base", ["--merge", " base=b"], "any", spaced_data, contrasts(2)),
        ("drop-spaced-name", " base", ["--drop-levels", "c "], "any", spaced_data, contrasts(2)),
        ("drop-stripped-name", "b", ["--drop-levels", "base"], "any", spaced_data, contrasts(2)),
        ("x0-spaced", " base", [], "any", spaced_data, contrasts(3)),
        ("merge-number-text", "0", ["--merge", "1=0"], "ok", {"data.csv": _csv(frame)}, contrasts(2)),
        ("merge-float-text", "0", ["--merge", "1.0=0"], "error", {"data.csv": _csv(frame)}, None),
        ("drop-number-text", "0", ["--drop-levels", "3"], "ok", {"data.csv": _csv(frame)}, contrasts(2)),
        ("merge-script-name", "a", ["--merge", f"b={SCRIPT}"], "ok", data, contrasts(3)),
        ("merge-slash-name", "a", ["--merge", "b=b/c"], "any", data, contrasts(3)),
    ]
    cases = []
    for command, build in COMMANDS.items():
        for name, x0, extra, expect, files, check in variants:
            cases.append(Case(f"merge/{command}/{name}", build(x0, *extra), expect, files, timeout=120, check=check))
    return cases


def estimability_cases(frame: pd.DataFrame) -> list[Case]:
    """A mediator that separates one level: that contrast is not estimable, which is no violation (exit 0, not 3)."""
    binary = _binary(frame)
    third = binary[binary.x == 0].sample(150, random_state=1).assign(x=2)
    separated = pd.concat([binary, third.assign(w1=third.w1 + 40.0)], ignore_index=True)
    overlapping = pd.concat([binary, third], ignore_index=True)
    cases = []
    # The default learner (the last --learner wins): the regularized logistic of --learner linear does not separate the
    # shifted level (21.8% of the pair's rows outside the bounds, in the binary analysis of that pair as in the contrast).
    default = ("--learner", "stack")
    for name, data, check in (("separated", separated, not_estimable("2")), ("overlapping", overlapping, contrasts(2))):
        files = {"data.csv": _csv(data)}
        cases.append(Case(f"estimable/audit/{name}-fail-on-violation", _audit("0", "--fail-on", "violation", *default), "ok", files,
                          timeout=240, check=check))
        cases.append(Case(f"estimable/audit/{name}-pairs-fail-on-violation",
                          _audit("0", "--fail-on", "violation", "--contrasts", "pairs", *default), "ok", files, timeout=240))
        cases.append(Case(f"estimable/decompose/{name}", _decompose("0", *default), "ok", files, timeout=240, check=check))
    # a violation the run must report: the oracle predictor uses every pathway, BN = SE forbids DE and IE
    files = {"data.csv": _csv(overlapping)}
    cases.append(Case("estimable/audit/violation-exits-3", _audit("0", "--fail-on", "violation", predictor="oracle"), "ok", files,
                      timeout=120, exit_code=3))
    cases.append(Case("estimable/audit/violation-never", _audit("0", "--fail-on", "never", predictor="oracle"), "ok", files, timeout=120))
    return cases


def config_level_cases(frame: pd.DataFrame) -> list[Case]:
    """Levels through an audit config (YAML and TOML): true/false, yes/no and numbers as x0."""
    def config(x0: str, kind: str = "yaml", extra: str = "") -> bytes:
        if kind == "yaml":
            return (f"data: data.csv\nx: x\nx0: {x0}\nz: [z1, z2]\nw: [w1, w2]\ny: y\npredictors: [z_only]\nbn: SE\nout: out\n"
                    f"learner: linear\nn_folds: 2\nn_rep: 1\nn_boot: 20\n{extra}").encode()
        return (f'data = "data.csv"\nx = "x"\nx0 = {x0}\nz = ["z1", "z2"]\nw = ["w1", "w2"]\ny = "y"\npredictors = ["z_only"]\n'
                f'bn = "SE"\nout = "out"\nlearner = "linear"\nn_folds = 2\nn_rep = 1\nn_boot = 20\n{extra}').encode()

    binary = _binary(frame)
    clean = {"data.csv": _csv(_named(binary, {1: "a", 0: "b"}))}
    cases = [Case("config/audit/clean-binary", ["audit", "--config", "audit.yaml"], "ok", {**clean, "audit.yaml": config("a")}, timeout=120),
             Case("config/audit/clean-levels", ["audit", "--config", "audit.yaml"], "ok",
                  {"data.csv": _csv(_named(frame, CLEAN)), "audit.yaml": config("a")}, timeout=120, check=contrasts(3))]
    # An unquoted level that YAML or TOML reads as another type (true, 01, 1.0, a date) may be refused, saying to quote
    # it, or matched as written (issue 41); never matched to another level.
    variants = [
        ("yaml-x0-true", {1: "true", 0: "false"}, config("true"), "yaml", "any"),
        ("yaml-x0-True", {1: "True", 0: "False"}, config("True"), "yaml", "any"),
        ("yaml-x0-yes", {1: "yes", 0: "no"}, config("yes"), "yaml", "any"),
        ("yaml-x0-on", {1: "on", 0: "off"}, config("on"), "yaml", "any"),
        ("yaml-x0-quoted-true", {1: "true", 0: "false"}, config("'true'"), "yaml", "same"),
        ("yaml-x0-01", {1: "01", 0: "1"}, config("01"), "yaml", "any"),
        ("yaml-x0-1.0", {1: "1.0", 0: "1"}, config("1.0"), "yaml", "any"),
        ("yaml-x0-null", {1: "a", 0: "b"}, config("null"), "yaml", "error"),
        ("yaml-x0-None-level", {1: "None", 0: "b"}, config("None"), "yaml", "same"),
        ("yaml-x0-list", {1: "a", 0: "b"}, config("[a, b]"), "yaml", "error"),
        ("yaml-x0-date", {1: "2020-01-01", 0: "2021-01-01"}, config("2020-01-01"), "yaml", "any"),
        ("toml-x0-true", {1: "true", 0: "false"}, config("true", "toml"), "toml", "any"),
        ("toml-x0-float", {1: "1.0", 0: "2.0"}, config("1.0", "toml"), "toml", "any"),
    ]
    for name, names, text, kind, expect in variants:
        cases.append(Case(f"config/audit/{name}", ["audit", "--config", f"audit.{kind}"], expect,
                          {"data.csv": _csv(_named(binary, names)), f"audit.{kind}": text}, same_as="config/audit/clean-binary",
                          timeout=120, numbers=estimates))
    levels = {"data.csv": _csv(_named(frame, CLEAN))}
    for name, extra, expect, check in (
        ("yaml-merge-text", "merge: 'b=c'\n", "ok", contrasts(2)),
        ("yaml-merge-mapping", "merge: {b: c}\n", "ok", contrasts(2)),
        ("yaml-merge-bool-name", "merge: {b: true}\n", "error", None),
        ("yaml-merge-number-name", "merge: {b: 1}\n", "any", contrasts(3)),
        ("yaml-drop-spaced", "drop_levels: [' b']\n", "any", contrasts(2)),
        ("yaml-drop-text", "drop_levels: 'b,c'\n", "any", contrasts(1)),
        ("yaml-drop-number", "drop_levels: [1]\n", "error", None),
        ("yaml-contrasts-bad", "contrasts: all\n", "error", None),
        ("yaml-contrasts-pairs", "contrasts: pairs\n", "ok", contrasts(6)),
    ):
        cases.append(Case(f"config/audit/{name}", ["audit", "--config", "audit.yaml"], expect, {**levels, "audit.yaml": config("a", extra=extra)},
                          timeout=120, check=check))
    return cases


# -- commands sharing the helpers -----------------------------------------------------------------

def shared_helper_cases(frame: pd.DataFrame) -> list[Case]:
    """repair and frontier with the level flags of decompose and audit: a clear error or a correct run, never a
    traceback, and every remedy an error names is a flag of that command."""
    binary, three = _binary(frame), frame.assign(x=np.where(frame.x == 3, 2, frame.x))
    cases = []
    for command, build in (("repair", _repair), ("frontier", _frontier)):
        timeout = 200
        base = {"data.csv": _csv(binary)}
        cases.append(Case(f"shared/{command}/clean", build("0", "--x1", "1"), "ok", base, timeout=timeout))
        variants = [
            ("intersection", build("0/0", "--x1", "1/1", x="x,s"), base, "any"),
            ("intersection-no-x1", build("0/0", x="x,s"), base, "any"),
            ("merge", build("0", "--x1", "1", "--merge", "2=0"), {"data.csv": _csv(three)}, "any"),
            ("drop-levels", build("0", "--x1", "1", "--drop-levels", "2"), {"data.csv": _csv(three)}, "any"),
            ("contrasts-pairs", build("0", "--contrasts", "pairs"), base, "any"),
            ("x0-without-x1", build("0"), base, "any"),
            ("x0-without-x1-three-levels", build("0"), {"data.csv": _csv(three)}, "any"),
            ("x1-absent", build("0", "--x1", "7"), base, "error"),
            ("x1-equals-x0", build("0", "--x1", "0"), base, "error"),
            ("x-in-z", _with(build("0", "--x1", "1"), "--z", "z1,x"), base, "error"),
            ("text-levels", build("a", "--x1", "b"), {"data.csv": _csv(_named(binary, {0: "a", 1: "b"}))}, "ok"),
            ("leading-zero-levels", build("0", "--x1", "01"), {"data.csv": _csv(_named(binary, {0: "0", 1: "01"}))}, "ok"),
            ("level-None", build("None", "--x1", "b"), {"data.csv": _csv(_named(binary, {0: "None", 1: "b"}))}, "ok"),
        ]
        for name, argv, files, expect in variants:
            cases.append(Case(f"shared/{command}/{name}", argv, expect, files, timeout=timeout))
        # a third level beside --x0 and --x1: its rows are left out, and the run says so
        cases.append(Case(f"shared/{command}/third-level-left-out", build("0", "--x1", "1"), "any", {"data.csv": _csv(three)},
                          timeout=timeout, check=noted("2")))
    return cases


# -- Dask -------------------------------------------------------------------------------------------

def dask_cases(frame: pd.DataFrame) -> list[Case]:
    """--scheduler and --workers values, and a bad cell beyond the rows from which Dask guesses the types (Dask reads
    the first 256 kB to guess them; fairpath's block size is fixed at 64 MB, so one block holds this file)."""
    binary = _binary(frame)
    base = {"data.csv": _csv(binary)}
    decompose = ["decompose", "data.csv", "--x", "x", "--x0", "0", "--x1", "1", *SFM, "--learner", "linear", "--folds", "2",
                 "--n-rep", "1", "--out", "out"]
    cases = []
    for value, timeout in (("not a url", 60), ("http://x", 60), ("", 60), ("tcp://127.0.0.1:1", 75), ("tcp://127.0.0.1:99999", 60),
                           ("tcp://[::1", 60), ("inproc://nothing", 60), ("file:///etc/passwd", 60)):
        cases.append(Case(f"dask/decompose/scheduler={value!r}", [*decompose, "--scheduler", value], "error", base, timeout=timeout))
    cases.append(Case("dask/audit/scheduler='tcp://127.0.0.1:1'", _with(_audit("0"), "--x0", "0") + ["--x1", "1", "--scheduler", "tcp://127.0.0.1:1"],
                      "error", base, timeout=75))
    cases.append(Case("dask/frontier/scheduler='not a url'", _frontier("0", "--x1", "1", "--scheduler", "not a url"), "error", base, timeout=75))
    for command, argv in (("audit", _audit("0", "--x1", "1")), ("frontier", _frontier("0", "--x1", "1")), ("decompose", decompose)):
        for value in ("0", "-1", "abc", "1.5", "", "100000"):
            # 100,000 workers: a run that starts them, instead of refusing, is stopped (a hang) after 30 s
            cases.append(Case(f"dask/{command}/workers={value!r}", [*argv, "--workers", value], "error", base,
                              timeout=30 if value == "100000" else 90))
        cases.append(Case(f"dask/{command}/workers-and-scheduler", [*argv, "--workers", "1", "--scheduler", "tcp://127.0.0.1:1"], "error",
                          base, timeout=90))
    levels = {"data.csv": _csv(_named(frame, CLEAN))}
    cases.append(Case("dask/decompose/workers-intersection", _decompose("a/0", "--workers", "1", x="x,s"), "error", levels, timeout=120))
    cases.append(Case("dask/decompose/workers-merge", _decompose("a", "--workers", "1", "--merge", "b=c"), "error", levels, timeout=120))
    cases.append(Case("dask/decompose/workers-levels", _decompose("a", "--workers", "1"), "any", levels, timeout=180, check=contrasts(3)))
    # a bad cell in the last row of a 5,000-row file (about 400 kB), read as partitions on a local cluster
    from fairpath.datasets import make_binary_sfm

    big = make_binary_sfm(5000, seed=4).data.assign(z2=lambda f: f.z2.astype(int))
    cases.append(Case("dask/decompose/big-clean-local", _with(decompose, "--x1", "1"), "ok", {"data.csv": _csv(big)}, timeout=180))
    cases.append(Case("dask/decompose/big-clean-workers", [*decompose, "--workers", "1"], "same", {"data.csv": _csv(big)},
                      same_as="dask/decompose/big-clean-local", timeout=180, numbers=estimates))
    last = [len(big) - 1]
    for column, token in (("w1", "?"), ("w1", "abc"), ("y", "?"), ("z1", "inf"), ("z2", ""), ("z2", "1.5"), ("z2", "x"), ("y", "2"),
                          ("x", "7"), ("x", "")):
        for where in ("workers", "local"):
            argv = [*decompose, "--workers", "1"] if where == "workers" else decompose
            # a third level, a 1.5 among integers and a 2 in a numeric outcome are data, not bad cells
            expect = "any" if (column, token) in (("x", "7"), ("z2", "1.5"), ("y", "2")) else "error"
            cases.append(Case(f"dask/decompose/last-row-{column}={token!r}-{where}", argv, expect,
                              {"data.csv": _with_token(big, column, token, rows=last)}, timeout=180))
    return cases


# -- outputs ----------------------------------------------------------------------------------------

def output_cases(frame: pd.DataFrame) -> list[Case]:
    levels = _named(frame, CLEAN)
    data = {"data.csv": _csv(levels)}
    cases = [
        Case("out/audit/rerun-fewer-levels", _audit("a", "--drop-levels", "d"), "ok", data, before=_audit("a"), timeout=200,
             check=no_stale_contrasts),
        Case("out/audit/rerun-binary", _audit("a", "--x1", "b"), "ok", data, before=_audit("a"), timeout=200, check=no_stale_contrasts),
        Case("out/audit/rerun-pairs-then-reference", _audit("a"), "ok", data, before=_audit("a", "--contrasts", "pairs"), timeout=200,
             check=no_stale_contrasts),
        Case("out/audit/rerun-intersection", _audit("a"), "ok", data, before=_audit("a/0", x="x,s"), timeout=200, check=no_stale_contrasts),
        Case("out/decompose/rerun-fewer-levels", _decompose("a", "--drop-levels", "d"), "ok", data, before=_decompose("a"), timeout=200,
             check=contrasts(2)),
        Case("out/decompose/out-is-file", _with(_decompose("a"), "--out", "data.csv"), "error", data),
        Case("out/decompose/out-is-other-file", _with(_decompose("a"), "--out", "notes.txt"), "error", {**data, "notes.txt": b"keep me"}),
        Case("out/audit/out-is-file-levels", _with(_audit("a"), "--out", "data.csv"), "error", data),
        Case("out/decompose/json-is-data-levels", [*_decompose("a"), "--json", "data.csv"], "error", data),
        Case("out/decompose/json-is-data-intersection", [*_decompose("a/0", x="x,s"), "--json", "data.csv"], "error", data),
        Case("out/decompose/json-is-data-other-spelling", [*_decompose("a"), "--json", "./out/../data.csv"], "error", data),
        Case("out/decompose/json-is-plot", [*_decompose("a"), "--json", "fig.png", "--plot", "fig.png"], "error", data),
        Case("out/decompose/json-inside-out", [*_decompose("a"), "--json", "out/result.json"], "any", data),
        Case("out/decompose/plot-is-data", [*_decompose("a"), "--plot", "data.csv"], "error", data),
        Case("out/decompose/out-is-data-folder", _with(_decompose("a"), "--out", "."), "any", data),
    ]
    complete_decompose = complete(["out/result.json", "out/result.csv", "out/report.html"])
    for name, argv, files, check in (
        ("decompose-levels", _decompose("a"), data, complete_decompose),
        ("decompose-json", [*_decompose("a"), "--json", "r.json"], data, complete(["out/result.json", "r.json"])),
        ("audit-levels", _audit("a"), data, complete(["out/result.json", "out/report.html"])),
        ("repair", _repair("0", "--x1", "1"), {"data.csv": _csv(_binary(frame))}, complete(["out/report.html"])),
    ):
        cases.append(Case(f"out/{argv[0]}/stdout-closed-{name}", argv, "ok", files, setup="stdout-closed", timeout=200, check=check))
    # the committed record of the Huang study, copied into the case's folder: never overwritten without being asked
    record = {f"record/{p.name}": p.read_bytes() for p in (ROOT / "reproductions" / "huang").iterdir() if p.is_file()}
    huang = ["reproduce", "huang", "--quick", "--no-quality", "--device", "cpu", "--out", "study"]
    cases += [
        Case("out/reproduce/record-holds-a-record", [*huang, "--record", "record"], "error", record, timeout=30),
        Case("out/reproduce/record-is-file", [*huang, "--record", "record.txt"], "error", {"record.txt": b"keep me"}, timeout=30),
        Case("out/reproduce/record-is-out", [*huang, "--record", "study"], "error", {}, timeout=30),
        Case("out/reproduce/out-is-file", [*_with(huang, "--out", "study.txt"), "--record", "r"], "error", {"study.txt": b"keep"}, timeout=30),
    ]
    return cases


def _guard_record(cases: list[Case]) -> list[Case]:
    """No case may name the committed record itself."""
    real = str(ROOT / "reproductions")
    for case in cases:
        if any(real in word or "reproductions/" in word for word in case.argv):
            raise SystemExit(f"case {case.name} names the committed record: {case.argv}")
    return cases


# -- text -------------------------------------------------------------------------------------------

def text_cases() -> list[Case]:
    from fairpath.text._spec import FairnessSpec

    spec = FairnessSpec.builtin("country")
    templates, values = list(spec.templates), list(spec.value_names)
    clean = _generations(values, templates)
    n = len(clean)

    def score(data: str, *extra) -> list[str]:
        return ["text", "score", data, "--attribute", "country", "--scorers", "vader", "--no-quality", "--permutations", "200",
                "--out", "out", *extra]

    cases = [Case("text/score/clean", score("gen.csv"), "ok", {"gen.csv": _csv(clean)}, check=counted(n))]
    two_models = pd.concat([clean.assign(model="m1"), clean.assign(model="m2", continuation="an awful day")], ignore_index=True)
    cases += [
        Case("text/score/two-models-no-model", score("gen.csv"), "error", {"gen.csv": _csv(two_models)}),
        Case("text/score/two-models-jsonl", score("gen.jsonl"), "error", {"gen.jsonl": two_models.to_json(orient="records", lines=True).encode()}),
        Case("text/score/two-models-model", score("gen.csv", "--model", "m1"), "ok", {"gen.csv": _csv(two_models)}, check=counted(n)),
        Case("text/score/two-models-absent-model", score("gen.csv", "--model", "m3"), "error", {"gen.csv": _csv(two_models)}),
        Case("text/score/model-missing-cells", score("gen.csv"), "error", {"gen.csv": _csv(two_models.assign(model=two_models.model.where(
            np.arange(len(two_models)) % 2 == 0, "")))}),
        Case("text/score/one-model", score("gen.csv"), "ok", {"gen.csv": _csv(clean.assign(model="m1"))}, check=counted(n)),
    ]
    jsonl = clean.to_json(orient="records", lines=True).encode()
    cases += [
        Case("text/score/jsonl", score("gen.jsonl"), "ok", {"gen.jsonl": jsonl}, check=counted(n)),
        Case("text/score/jsonl-bom", score("gen.jsonl"), "ok", {"gen.jsonl": b"\xef\xbb\xbf" + jsonl}, check=counted(n)),
        Case("text/score/jsonl-bom-crlf", score("gen.jsonl"), "ok", {"gen.jsonl": b"\xef\xbb\xbf" + jsonl.replace(b"\n", b"\r\n")},
             check=counted(n)),
        Case("text/score/jsonl-blank-lines", score("gen.jsonl"), "any", {"gen.jsonl": jsonl.replace(b"\n", b"\n\n")}, check=counted(n)),
        Case("text/score/jsonl-utf16", score("gen.jsonl"), "error", {"gen.jsonl": jsonl.decode().encode("utf-16")}),
        Case("text/score/csv-bom", score("gen.csv"), "ok", {"gen.csv": b"\xef\xbb\xbf" + _csv(clean)}, check=counted(n)),
    ]
    indexed = clean.assign(sample_index=np.arange(n) % 2)
    for bad in ("inf", "-1", "1.5", "abc", "", "nan", "1e3", "99999999999999999999"):
        for fmt in ("csv", "jsonl"):
            frame = indexed.astype({"sample_index": object})
            frame.loc[3, "sample_index"] = bad if fmt == "csv" else {"inf": float("inf"), "-1": -1, "1.5": 1.5, "nan": float("nan"),
                                                                     "1e3": 1e3}.get(bad, bad)
            content = _csv(frame) if fmt == "csv" else frame.to_json(orient="records", lines=True).encode()
            expect = "any" if bad in ("1e3", "99999999999999999999") else "error"  # whole numbers, written otherwise
            cases.append(Case(f"text/score/sample_index={bad!r}-{fmt}", score(f"gen.{fmt}"), expect, {f"gen.{fmt}": content}))
    cases.append(Case("text/score/sample_index-duplicate", score("gen.csv"), "error", {"gen.csv": _csv(clean.assign(sample_index=0))}))
    for token in ("?", "-", " ", "na", "NA", "null"):
        for column, expect in (("template", "error"), ("value", "error"), ("continuation", "any")):
            cases.append(Case(f"text/score/{column}={token!r}", score("gen.csv"), expect, {"gen.csv": _with_token(clean, column, token)},
                              check=counted(n)))
    hashed = pd.concat([clean.assign(settings_hash="h1"), clean.assign(settings_hash="h2")], ignore_index=True)
    cases += [
        Case("text/score/settings-hash-with-file", score("gen.csv", "--settings-hash", "abc"), "error", {"gen.csv": _csv(clean)}),
        Case("text/score/settings-hash-column-chosen", score("gen.csv", "--settings-hash", "h1"), "any", {"gen.csv": _csv(hashed)},
             check=counted(n)),
        Case("text/score/settings-hash-column-absent", score("gen.csv", "--settings-hash", "h9"), "error", {"gen.csv": _csv(hashed)}),
        Case("text/score/settings-hash-column-not-chosen", score("gen.csv"), "error", {"gen.csv": _csv(hashed)}),
        Case("text/score/settings-hash-jsonl", score("gen.jsonl", "--settings-hash", "abc"), "error", {"gen.jsonl": jsonl}),
        Case("text/score/out-is-file", _with(score("gen.csv"), "--out", "gen.csv"), "error", {"gen.csv": _csv(clean)}),
        Case("text/score/stdout-closed", score("gen.csv"), "ok", {"gen.csv": _csv(clean)}, setup="stdout-closed",
             check=complete(["out/result.json", "out/report.html"])),
    ]
    return cases


# -- earlier leftovers --------------------------------------------------------------------------------

def leftover_cases(frame: pd.DataFrame) -> list[Case]:
    binary = _binary(frame)
    data = {"data.csv": _csv(binary)}
    repair = _repair("0", "--x1", "1")
    raw = binary.to_csv(index=False)
    header, body = raw.split("\n", 1)
    cases = [
        Case("leftover/repair/bn-and-resolving", [*repair, "--resolving", "priors"], "error", data, timeout=120),
        Case("leftover/repair/bn-and-resolving-column", [*repair, "--resolving", "z1"], "error", data, timeout=120),
        Case("leftover/repair/resolving-unknown", [*_with(repair, "--bn", None), "--resolving", "priors"], "error", data, timeout=120),
        Case("leftover/repair/resolving-empty", [*_with(repair, "--bn", None), "--resolving", ""], "any", data, timeout=120),
        Case("leftover/repair/resolving-x", [*_with(repair, "--bn", None), "--resolving", "x"], "error", data, timeout=120),
        Case("leftover/repair/test-header-only", [*repair, "--test", "test.csv"], "error", {**data, "test.csv": (header + "\n").encode()}),
        Case("leftover/repair/test-empty", [*repair, "--test", "test.csv"], "error", {**data, "test.csv": b""}),
        Case("leftover/repair/test-one-row", [*repair, "--test", "test.csv"], "ok", {**data, "test.csv": (header + "\n" + body.split("\n")[0]
                                                                                                             + "\n").encode()}, timeout=120),
        Case("leftover/repair/test-token", [*repair, "--test", "test.csv"], "error", {**data, "test.csv": _with_token(binary, "w1", "?")}),
        Case("leftover/repair/test-new-level", [*repair, "--test", "test.csv"], "error", {**data, "test.csv": _csv(binary.assign(x=2))}),
    ]
    base = ('data = "data.csv"\nx = "x"\nx0 = 0\nx1 = 1\nz = ["z1", "z2"]\nw = ["w1", "w2"]\ny = "y"\npredictors = ["z_only"]\n'
            'out = "out"\nlearner = "linear"\nn_folds = 2\nn_rep = 1\nn_boot = 20\n')
    for name, text in (("bn-table-false", base + "[bn]\nSE = false\n"), ("bn-table-true", base + "[bn]\nSE = true\n"),
                       ("bn-inline-table", base + "bn = { SE = false }\n"), ("bn-bool", base + "bn = false\n"),
                       ("bn-list-bools", base + "bn = [true]\n"), ("bn-nested", base + "bn = [[\"SE\"]]\n")):
        cases.append(Case(f"leftover/config/{name}", ["audit", "--config", "audit.toml"], "error", {**data, "audit.toml": text.encode()}))
    cases.append(Case("leftover/config/yaml-bn-mapping", ["audit", "--config", "audit.yaml"], "error",
                      {**data, "audit.yaml": b"data: data.csv\nx: x\nx0: 0\nx1: 1\nz: [z1]\ny: y\npredictors: [z_only]\nbn: {SE: false}\nout: out\n"}))
    # a duplicate column name behind a quoted header cell holding a newline
    rows = body.strip().split("\n")
    for name, head, row in (("quoted-newline", f'"note\nmore",{header},x', "q,{},0"), ("quoted-comma", f'"a,b",{header},x', "q,{},0"),
                            ("quoted-duplicate", f'{header},"x"', "{},0"), ("newline-then-duplicate-role", f'"a\nb",{header},"y"', "q,{},0")):
        content = (head + "\n" + "\n".join(row.format(line) for line in rows) + "\n").encode()
        for command, argv in (("decompose", ["decompose", "data.csv", "--x", "x", "--x0", "0", "--x1", "1", *SFM, "--learner", "linear",
                                              "--folds", "2", "--n-rep", "1", "--out", "out"]),
                              ("audit", _audit("0", "--x1", "1")), ("repair", repair)):
            cases.append(Case(f"leftover/{command}/header-{name}", argv, "error", {"data.csv": content}, timeout=120))
    return cases


def all_cases() -> tuple[list[Case], pd.DataFrame]:
    frame = _frame()
    cases = [*level_cases(frame), *many_level_cases(), *tiny_level_cases(frame), *intersection_cases(frame), *merge_drop_cases(frame),
             *estimability_cases(frame), *config_level_cases(frame), *shared_helper_cases(frame), *dask_cases(frame),
             *output_cases(frame), *text_cases(), *leftover_cases(frame)]
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise SystemExit(f"duplicate case names: {sorted({n for n in names if names.count(n) > 1})}")
    return _guard_record(cases), frame


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default="qa/results/hostile")
    parser.add_argument("--list", action="store_true", help="print the cases' names and counts per family, run nothing")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import fairpath.cli  # noqa: F401 - imported once, before the forks

    cases, frame = all_cases()
    chosen = [c for c in cases if args.only in c.name]
    # a case compared with another needs that one run too
    needed = {c.same_as for c in chosen} - {c.name for c in chosen}
    chosen = [c for c in cases if c.name in needed] + chosen
    if args.list:
        print("\n".join(c.name for c in chosen))
        print(pd.Series([c.name.split("/")[0] for c in chosen]).value_counts().to_string(), f"\n{len(chosen)} cases")
        return 0
    return run_cases(chosen, frame, Path(args.out), jobs=args.jobs, name="hostile_pass_surfaces")


if __name__ == "__main__":
    sys.exit(main())
