"""A hostile user's pass over every command: several hundred generated cases, each run as the CLI runs
and classified as clear error / correct / traceback / silent / security / data lost / hang.

Each case is a command line over a small synthetic SFM (or a text generations file, a spec, a config)
with one thing made dirty or hostile, and an expectation: ``error`` (the input must be refused with a
``fairpath: error:`` line), ``ok`` (the run must succeed), ``same`` (it must succeed with the clean
input's numbers) or ``any`` (a clear error or a success; never a traceback). Checks after the run:
the inputs are unchanged (data lost otherwise), no planted ``<script>`` is unescaped and no planted
secret appears in anything the run wrote (security), no CSV cell starts with ``=`` (formula injection),
every flag an error line names as a remedy exists in that command (wrong remedy otherwise), the exit
status of a success is the case's (0, or 3 where a violation must fail the run), and a case's own
``check`` of what the run wrote holds (silent otherwise).

    python qa/hostile_pass.py [--jobs 2] [--only PATTERN] [--out DIR]

Cases run in forked children of a process that imported fairpath once (fast), each with a timeout
(a hang is a case that exceeds it). The per-class counts, and every case outside "clear error" and
"correct", are printed and written to ``DIR/hostile_pass.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

SCRIPT = "<script>alert(1)</script>"
SECRET = "sk-hostile-0123456789abcdef"
GOOD = ("clear error", "correct")
CLASSES = (*GOOD, "traceback", "silent", "wrong remedy", "security", "data lost", "hang")
VIOLATION_EXIT = 3  # the documented status of a shown violation (--fail-on violation) or a failed check
BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE: the reader of stdout closed it (fairpath exits so, without a traceback)


@dataclass
class Case:
    name: str
    argv: list[str]
    expect: str = "error"  # error | ok | same | any
    files: dict = field(default_factory=dict)  # name -> bytes written into the case folder first
    same_as: str | None = None  # the clean case whose result.json / json must match
    timeout: float = 90.0
    setup: str | None = None  # a special preparation (fifo, symlink, device, stdout-closed, ...)
    exit_code: int = 0  # the status a success must end with (3: a violation the run must report)
    before: list[str] | None = None  # a command run first in the same folder (a rerun into its --out)
    check: Callable[[Path], str | None] | None = None  # what the outputs must satisfy: None, or the problem (silent)
    numbers: Callable[[Path], object] | None = None  # what ``same`` compares (default: the estimates of the JSON)


# -- data ------------------------------------------------------------------------------------------

def _clean_frame(n: int = 600) -> pd.DataFrame:
    from fairpath.datasets import make_binary_sfm
    from fairpath.parity._oracles import oracle_predictors

    sample = make_binary_sfm(n, seed=3)
    return sample.data.join(oracle_predictors(sample, seed=3)[["oracle", "noise"]])


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


SFM_FLAGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


def _command(kind: str, data: str = "data.csv", extra=()) -> list[str]:
    extra = list(extra)
    if kind == "decompose":
        return ["decompose", data, *SFM_FLAGS, "--learner", "linear", "--json", "out.json", *extra]
    if kind == "audit":
        return ["audit", data, *SFM_FLAGS, "--predictor", "oracle", "--bn", "SE", "--learner", "linear", "--bootstrap", "20", "--out", "out", *extra]
    if kind == "repair":
        return ["repair", data, *SFM_FLAGS, "--bn", "SE", "--engine", "linear", "--out", "out", *extra]
    if kind == "frontier":
        return ["frontier", data, *SFM_FLAGS, "--engine", "linear", "--bn-sets", "none,ZW", "--repeats", "1", "--no-constrained", "--out", "out", *extra]
    raise ValueError(kind)


def _with_token(frame: pd.DataFrame, column: str, token: str, rows=(5,)) -> bytes:
    text = frame.astype(object)
    for row in rows:
        text.loc[row, column] = token
    return _csv(text)


# tokens and what a careful tool must do with them in a numeric column
TOKENS = {
    "?": "error", "-": "error", " ": "error", "na": "error", "1,000": "error", "abc": "error", "1.5.2": "error",
    "0x10": "error", "TRUE": "error", "٣": "error", "1e308": "any", "-1e308": "any", "inf": "error", "-inf": "error",
    "": "any", "NA": "any", "N/A": "any", "NaN": "any",
}


def table_cases(frame: pd.DataFrame) -> list[Case]:
    cases = []
    for command in ("decompose", "audit"):
        for column in ("z1", "w1", "y", "oracle") if command == "audit" else ("z1", "w1", "y"):
            for token, expect in TOKENS.items():
                cases.append(Case(f"token/{command}/{column}/{token!r}", _command(command), expect,
                                  {"data.csv": _with_token(frame, column, token)}))
    # the same dirty numeric column through repair and frontier
    for command in ("repair", "frontier"):
        for token in ("?", "1,000", "inf", "abc"):
            cases.append(Case(f"token/{command}/w1/{token!r}", _command(command), "error", {"data.csv": _with_token(frame, "w1", token)}))
    return cases


def header_cases(frame: pd.DataFrame) -> list[Case]:
    cases = []
    variants = {
        "duplicate": (lambda f: f.set_axis([*f.columns[:-1], "oracle"], axis=1), "error"),
        "empty-name": (lambda f: f.rename(columns={"noise": ""}), "any"),
        "unicode": (lambda f: f.rename(columns={"noise": "bruit_é✓"}), "ok"),
        "script-unused": (lambda f: f.rename(columns={"noise": SCRIPT}), "ok"),
        "formula-unused": (lambda f: f.rename(columns={"noise": "=HYPERLINK(\"http://x\")"}), "ok"),
        "shuffled": (lambda f: f[list(reversed(f.columns))], "same"),
        "extra-column": (lambda f: f.assign(extra="a"), "same"),
        "spaces-in-header": (lambda f: f.rename(columns={"w1": " w1 "}), "error"),
    }
    for name, (change, expect) in variants.items():
        for command in ("decompose", "audit", "repair"):
            cases.append(Case(f"header/{command}/{name}", _command(command), expect, {"data.csv": _csv(change(frame))},
                              same_as=f"clean/{command}" if expect == "same" else None))
    # hostile names in roles: reports must escape them, CSVs must neutralise them
    for name, label in (("script-role", SCRIPT), ("formula-role", "=1+2")):
        renamed = frame.rename(columns={"w1": label})
        for command in ("audit", "repair", "decompose"):
            argv = [a if a != "w1,w2" else f"{label},w2" for a in _command(command)]
            cases.append(Case(f"header/{command}/{name}", argv, "ok", {"data.csv": _csv(renamed)}))
    return cases


def file_cases(frame: pd.DataFrame) -> list[Case]:
    raw = frame.to_csv(index=False)
    files = {
        "latin1": (raw.replace("x,", "x_é,", 1).encode("latin-1"), "error"),
        "utf16": (raw.encode("utf-16"), "error"),
        "bom": (b"\xef\xbb\xbf" + raw.encode(), "same"),
        "crlf": (raw.replace("\n", "\r\n").encode(), "same"),
        "binary": (os.urandom(4000), "error"),
        "empty": (b"", "error"),
        "header-only": (raw.splitlines()[0].encode() + b"\n", "error"),
        "one-row": ("\n".join(raw.splitlines()[:2]).encode() + b"\n", "error"),
        "ragged": (raw.replace("\n", ",9\n", 3).encode(), "error"),
        "nul-bytes": (raw.encode().replace(b",", b"\x00,", 5), "error"),
        "gzip-named-csv": (__import__("gzip").compress(raw.encode()), "error"),
        "json-named-csv": (frame.to_json().encode(), "error"),
    }
    cases = []
    for name, (content, expect) in files.items():
        for command in ("decompose", "audit"):
            cases.append(Case(f"file/{command}/{name}", _command(command), expect, {"data.csv": content},
                              same_as=f"clean/{command}" if expect == "same" else None))
    for command in ("decompose", "audit", "repair"):
        cases.append(Case(f"file/{command}/missing", _command(command, data="nope.csv"), "error"))
        cases.append(Case(f"file/{command}/directory", _command(command, data="."), "error"))
        cases.append(Case(f"file/{command}/fifo-input", _command(command, data="fifo.csv"), "error", setup="fifo-input", timeout=30))
        cases.append(Case(f"file/{command}/dev-zero", _command(command, data="/dev/zero"), "error", timeout=30))
    return cases


def group_cases(frame: pd.DataFrame) -> list[Case]:
    tiny = pd.concat([frame[frame.x == 0], frame[frame.x == 1].head(5)])
    cases = []
    variants = {
        "tiny-group": (tiny, [], "error"),
        "x-constant": (frame.assign(x=0), [], "error"),
        "y-constant": (frame.assign(y=1.0), [], "any"),
        "y-missing": (frame.assign(y=np.nan), [], "error"),
        "x0-equals-x1": (frame, ["--x1", "0"], "error"),
        "x0-absent": (frame, ["--x0", "7"], "error"),
        "x-three-levels": (frame.assign(x=np.where(np.arange(len(frame)) % 7 == 0, 2, frame.x)), [], "any"),
        "y-pm1": (frame.assign(y=frame.y * 2 - 1), [], "any"),
        "y-x100": (frame.assign(y=frame.y * 100), [], "any"),
        "x-text-levels": (frame.assign(x=frame.x.map({0: "a", 1: "b"})), [], "error"),
        "z-equals-y": (frame.assign(z1=frame.y), [], "any"),
        "role-twice": (frame, ["--w", "w1,z1"], "error"),
        "y-in-w": (frame, ["--w", "w1,y"], "error"),
        "unknown-column": (frame, ["--z", "z1,zz"], "error"),
    }
    for name, (data, flags, expect) in variants.items():
        for command in ("decompose", "audit", "repair"):
            argv = _command(command)
            for i in range(0, len(flags), 2):  # override a flag's value
                argv[argv.index(flags[i]) + 1] = flags[i + 1]
            # on audit the outcome's scale is compared with the predictor's: a Y not in [0, 1] must be refused there
            expected = "error" if (command == "audit" and name in ("y-pm1", "y-x100")) else expect
            cases.append(Case(f"group/{command}/{name}", argv, expected, {"data.csv": _csv(data)}))
    return cases


# (command, flag, bad values); every value must be refused with a clear error
FLAGS = [
    ("decompose", "--folds", ["0", "1", "-3", "abc", "2.5", "100000"]),
    ("decompose", "--seed", ["-1", "4294967296", "1e3", "abc", "99999999999999999999"]),
    ("decompose", "--level", ["0", "1", "1.5", "-0.1", "nan", "inf", "abc"]),
    ("decompose", "--eps", ["-0.1", "0.6", "nan", "abc"]),
    ("decompose", "--bootstrap", ["1", "-5", "1000000000", "abc"]),  # 0: no bootstrap (analytic intervals)
    ("decompose", "--n-rep", ["0", "-1", "autoo", "1.5", "100000"]),
    ("decompose", "--workers", ["0", "-1", "abc"]),
    ("decompose", "--method", ["nonsense", ""]),
    ("decompose", "--learner", ["nonsense", "__import__('os')"]),
    ("decompose", "--plot", ["fig", "fig.xyz"]),
    ("decompose", "--nboot1", ["0", "-1", "1000000000"]),
    ("audit", "--alpha", ["0", "1", "-0.5", "nan", "abc"]),
    ("audit", "--margin", ["-0.1", "nan", "abc", "inf"]),
    ("audit", "--bins", ["0", "1", "-2", "abc", "1000000"]),
    ("audit", "--bn", ["XYZ", "DE,,", "SE;IE;", ""]),
    ("audit", "--bootstrap", ["1", "0", "1000000000"]),
    ("audit", "--config", ["nope.toml"]),
    ("repair", "--seed", ["-1", "4294967296", "abc"]),
    ("repair", "--bn", ["XYZ", "DE;"]),
    ("repair", "--resolving", ["y", "x", "nope", "oracle"]),
    ("repair", "--engine", ["nonsense"]),
    ("frontier", "--repeats", ["0", "-1", "abc", "1000000"]),
    ("frontier", "--quantile", ["0", "1", "nan", "abc"]),
    ("frontier", "--n-jobs", ["0", "-2", "abc"]),
    ("frontier", "--bn-sets", ["XYZ", ";;", ""]),
]


def flag_cases(frame: pd.DataFrame) -> list[Case]:
    cases = []
    for command, flag, values in FLAGS:
        for value in values:
            argv = _command(command)
            if flag in argv:
                argv[argv.index(flag) + 1] = value
            else:
                argv += [flag, value]
            cases.append(Case(f"flag/{command}/{flag}={value!r}", argv, "error", {"data.csv": _csv(frame)}))
    return cases


def output_cases(frame: pd.DataFrame) -> list[Case]:
    data = {"data.csv": _csv(frame)}
    cases = [
        Case("out/decompose/json-is-input", _command("decompose")[:-2] + ["--json", "data.csv"], "error", data),
        Case("out/decompose/json-is-input-other-spelling", _command("decompose")[:-2] + ["--json", "./sub/../data.csv"], "error", data,
             setup="subdir"),
        Case("out/decompose/plot-is-input", _command("decompose") + ["--plot", "data.csv"], "error", data),
        Case("out/decompose/json-symlink", _command("decompose")[:-2] + ["--json", "link.json"], "error", data, setup="symlink-file"),
        Case("out/decompose/json-fifo", _command("decompose")[:-2] + ["--json", "fifo.json"], "error", data, setup="fifo-output", timeout=60),
        Case("out/decompose/json-device", _command("decompose")[:-2] + ["--json", "null-device"], "error", data, setup="device"),
        Case("out/decompose/json-in-missing-dir", _command("decompose")[:-2] + ["--json", "new/dir/out.json"], "ok", data),
        Case("out/decompose/json-is-dir", _command("decompose")[:-2] + ["--json", "."], "error", data),
        Case("out/audit/out-is-file", _command("audit")[:-2] + ["--out", "data.csv"], "error", data),
        Case("out/audit/out-symlink-dir", _command("audit")[:-2] + ["--out", "linkdir"], "error", data, setup="symlink-dir"),
        Case("out/repair/out-is-file", _command("repair")[:-2] + ["--out", "data.csv"], "error", data),
        Case("out/frontier/out-is-file", _command("frontier")[:-2] + ["--out", "data.csv"], "error", data),
        Case("out/audit/out-proc", _command("audit")[:-2] + ["--out", "/proc/forbidden"], "error", data),
        Case("out/demo/out-is-file", ["demo", "--out", "data.csv"], "error", data),
        Case("out/frontier/locked", _command("frontier"), "error", data, setup="locked-out"),
    ]
    return cases


def _generations(spec_values, templates, rows_per_cell: int = 2, text=lambda v, i: f"a fine day {i}") -> pd.DataFrame:
    rows = [{"template": t, "value": v, "continuation": text(v, i)} for t in templates for v in spec_values for i in range(rows_per_cell)]
    return pd.DataFrame(rows)


def text_cases() -> list[Case]:
    from fairpath.text._spec import FairnessSpec

    spec = FairnessSpec.builtin("country")
    templates, values = list(spec.templates), list(spec.value_names)
    clean = _generations(values, templates)
    cases = [Case("text/score/clean-csv", ["text", "score", "gen.csv", "--attribute", "country", "--scorers", "vader", "--no-quality",
                                           "--permutations", "200", "--out", "out"], "ok", {"gen.csv": _csv(clean)})]

    def score(name, files, expect="error", extra=(), data="gen.csv", attribute="country"):
        cases.append(Case(f"text/score/{name}", ["text", "score", data, "--attribute", attribute, "--scorers", "vader", "--no-quality",
                                                 "--permutations", "200", "--out", "out", *extra], expect, files))

    score("missing-column", {"gen.csv": _csv(clean.drop(columns="continuation"))})
    score("unknown-value", {"gen.csv": _csv(clean.assign(value="Atlantis"))})
    score("unknown-template", {"gen.csv": _csv(clean.assign(template="nope {country}"))})
    score("empty-continuations", {"gen.csv": _csv(clean.assign(continuation=""))})
    score("one-per-prompt", {"gen.csv": _csv(_generations(values, templates, 1))}, "ok")
    score("missing-cell", {"gen.csv": _csv(clean[clean.value != values[0]])})
    score("script-continuation", {"gen.csv": _csv(clean.assign(continuation=SCRIPT))}, "ok")
    score("formula-continuation", {"gen.csv": _csv(clean.assign(continuation="=cmd|' /C calc'!A0"))}, "ok")
    score("latin1", {"gen.csv": clean.assign(continuation="café crème").to_csv(index=False).encode("latin-1")})
    score("huge-field", {"gen.csv": _csv(clean.assign(continuation="good " * 20000))}, "any")
    score("jsonl-bad-line", {"gen.jsonl": b'{"template": 1}\nnot json\n'}, data="gen.jsonl")
    score("wrong-suffix", {"gen.txt": _csv(clean)}, data="gen.txt")
    score("missing-file", {}, data="none.csv")
    for bad in ("0", "-5", "abc", "1000000000000"):
        score(f"permutations={bad}", {"gen.csv": _csv(clean)}, extra=["--permutations", bad])
    for bad in ("0", "1", "nan"):
        score(f"alpha={bad}", {"gen.csv": _csv(clean)}, extra=["--alpha", bad])
    score("scorers-unknown", {"gen.csv": _csv(clean)}, extra=["--scorers", "vader,nonsense"])
    score("scorers-empty", {"gen.csv": _csv(clean)}, extra=["--scorers", ""])
    score("seed-huge", {"gen.csv": _csv(clean)}, extra=["--seed", "4294967296"])
    # specifications
    spec_yaml = {
        "bool-values": "attribute: answer\nvalues: [yes, no]\ntemplates: ['I say {answer} because']\n",
        "number-values": "attribute: n\nvalues: [1, 2]\ntemplates: ['I have {n} cats']\n",
        "no-placeholder": "attribute: c\nvalues: [a, b]\ntemplates: ['nothing here']\n",
        "one-value": "attribute: c\nvalues: [a]\ntemplates: ['I am {c}']\n",
        "duplicate-values": "attribute: c\nvalues: [a, a]\ntemplates: ['I am {c}']\n",
        "not-a-mapping": "- a\n- b\n",
        "bad-yaml": "attribute: [\n",
        "python-tag": "attribute: !!python/object/apply:os.system ['touch pwned']\nvalues: [a, b]\ntemplates: ['{c}']\n",
        "anchor-bomb": "a: &a ['x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                       "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                       "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nattribute: c\nvalues: *g\ntemplates: ['{c}']\n",
        "deep-nesting": "attribute: c\nvalues: " + "[" * 5000 + "a" + "]" * 5000 + "\ntemplates: ['{c}']\n",
        "many-values": "attribute: c\nvalues: [" + ", ".join(f"v{i}" for i in range(3000)) + "]\ntemplates: ['I am {c}']\n",
        "huge-file": "attribute: c\nvalues: [a, b]\ntemplates: ['{c}']\n# " + "x" * 30_000_000 + "\n",
        "script-attribute": f"attribute: '{SCRIPT}'\nplaceholder: c\nvalues: [a, b]\ntemplates: ['I am {{c}}', 'You are {{c}}']\n",
    }
    for name, text in spec_yaml.items():
        expect = "ok" if name == "script-attribute" else "error"
        gens = _generations(["a", "b"], ["I am {c}", "You are {c}"]) if name == "script-attribute" else clean
        cases.append(Case(f"text/spec/{name}", ["text", "score", "gen.csv", "--attribute", "spec.yaml", "--scorers", "vader", "--no-quality",
                                                "--permutations", "200", "--out", "out"], expect,
                          {"spec.yaml": text.encode(), "gen.csv": _csv(gens)}, timeout=60))
    # text audit arguments that must fail before any model loads
    for flag, bad in (("--samples", "0"), ("--samples", "-1"), ("--samples", "100000000"), ("--max-new-tokens", "0"), ("--temperature", "-1"),
                      ("--temperature", "hot"), ("--top-k", "-1"), ("--top-p", "0"), ("--top-p", "1.5"), ("--batch-size", "0"),
                      ("--dtype", "float8"), ("--backend", "nonsense"), ("--timeout", "0"), ("--timeout", "-1"), ("--retries", "-1"),
                      ("--concurrency", "0"), ("--model", "/nonexistent/model"), ("--attribute", "nonsense")):
        cases.append(Case(f"text/audit/{flag}={bad}", ["text", "audit", "--attribute", "country", flag, bad, "--out", "out"], "error", timeout=60))
    cases.append(Case("text/audit/openai-credentials-unreachable",
                      ["text", "audit", "--backend", "openai", "--base-url", f"http://user:{SECRET}@127.0.0.1:9/v1", "--model", "m",
                       "--attribute", "country", "--samples", "1", "--retries", "0", "--timeout", "2", "--out", "out"], "error", timeout=60))
    return cases


def config_cases(frame: pd.DataFrame) -> list[Case]:
    data = {"data.csv": _csv(frame)}
    base = 'data = "data.csv"\nx = "x"\nx0 = 0\nx1 = 1\nz = ["z1", "z2"]\nw = ["w1", "w2"]\ny = "y"\npredictors = ["oracle"]\nbn = "SE"\n'
    configs = {
        "unknown-key": (base + "nonsense = 1\n", "error"),
        "wrong-type": (base.replace('bn = "SE"', "bn = 3"), "error"),
        "bad-toml": ("x = [\n", "error"),
        "seed-string": (base + 'seed = "1"\n', "error"),
        "n-boot-float": (base + "n_boot = 20.0\n", "error"),
        "data-missing": (base.replace("data.csv", "none.csv"), "error"),
        "binary": (os.urandom(300).decode("latin-1"), "error"),
    }
    cases = []
    for name, (text, expect) in configs.items():
        cases.append(Case(f"config/audit/{name}", ["audit", "--config", "audit.toml", "--out", "out"], expect,
                          {**data, "audit.toml": text.encode("utf-8", "surrogateescape") if name != "binary" else text.encode("latin-1")}))
    return cases


def resume_cases(frame: pd.DataFrame) -> list[Case]:
    other = frame.assign(y=1.0 - frame.y)
    return [Case("resume/frontier/other-outcome", _command("frontier"), "ok", {"data.csv": _csv(other)}, setup="frontier-first-run", timeout=300)]


def clean_cases(frame: pd.DataFrame) -> list[Case]:
    return [Case(f"clean/{command}", _command(command), "ok", {"data.csv": _csv(frame)}, timeout=300)
            for command in ("decompose", "audit", "repair", "frontier")]


# -- running ---------------------------------------------------------------------------------------

def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"


def _prepare(case: Case, folder: Path, clean_frame: pd.DataFrame) -> dict:
    for name, content in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    if case.setup == "subdir":
        (folder / "sub").mkdir()
    elif case.setup == "symlink-file":
        (folder / "target.txt").write_text("precious")
        (folder / "link.json").symlink_to(folder / "target.txt")
    elif case.setup == "symlink-dir":
        (folder / "real").mkdir()
        (folder / "real" / "precious.txt").write_text("precious")
        (folder / "linkdir").symlink_to(folder / "real")
    elif case.setup == "device":  # a device node of the case's own (never the machine's /dev/null), made as root
        os.mknod(folder / "null-device", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    elif case.setup in ("fifo-output", "fifo-input"):
        os.mkfifo(folder / ("fifo.json" if case.setup == "fifo-output" else "fifo.csv"))
    elif case.setup == "locked-out":
        import fcntl

        (folder / "out").mkdir()
        handle = open(folder / "out" / ".fairpath.lock", "w")
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return {"lock": handle}
    elif case.setup == "frontier-first-run":
        (folder / "first.csv").write_bytes(_csv(clean_frame))
        _run_child(_command("frontier", data="first.csv"), folder, 300)
        return {"first": pd.read_csv(folder / "out" / "runs.csv") if (folder / "out" / "runs.csv").exists() else None}
    if case.before:
        _run_child(case.before, folder, case.timeout)
    return {}


def _run_child(argv: list[str], folder: Path, timeout: float, stdout_closed: bool = False) -> tuple[int | None, str, float]:
    """Run ``fairpath argv`` in a forked child in ``folder``; (exit status or None on timeout, stderr, seconds).
    With ``stdout_closed`` its standard output is a pipe whose reader has gone (``fairpath ... | head -1``)."""
    start = time.monotonic()
    err_path = folder / ".stderr"
    pipe = os.pipe() if stdout_closed else None
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.chdir(folder)
            fd_err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            fd_out = os.open(folder / ".stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if pipe is None else pipe[1]
            if pipe is not None:
                os.close(pipe[0])
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            os.environ["OPENAI_API_KEY"] = SECRET
            os.environ["FAIRPATH_CACHE"] = str(folder / ".cache")  # a model a case converts stays in its folder
            from fairpath.cli import main

            code = main(argv)
        except SystemExit as exit_:  # argparse's own exit (status 2 after its usage and error lines), as the console script
            code = exit_.code
        except BaseException:  # noqa: BLE001 - anything else escaping main is a traceback
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except OSError:  # a closed pipe: the child must still end here, never return into the runner
                    pass
            os._exit(int(code) if isinstance(code, int) else 1)
    if pipe is not None:  # the reader goes before the child writes: every write to stdout meets a closed pipe
        os.close(pipe[0])
        os.close(pipe[1])
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, err_path.read_text(errors="replace") if err_path.exists() else "", time.monotonic() - start
        time.sleep(0.05)
    return os.waitstatus_to_exitcode(status), err_path.read_text(errors="replace"), time.monotonic() - start


def _written_files(folder: Path, before: set) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and p not in before and not p.name.startswith(".std")
            and ".cache" not in p.relative_to(folder).parts]


def _numbers(folder: Path) -> object:
    for name in ("out.json", "out/result.json"):
        path = folder / name
        if path.is_file():
            found = json.loads(path.read_text())
            return _rounded(found.get("estimates", found.get("results", found)))
    if (folder / "out" / "runs.csv").is_file():
        return pd.read_csv(folder / "out" / "runs.csv").select_dtypes("number").round(10).to_dict("list")
    return None


def _rounded(value):
    if isinstance(value, float):
        return round(value, 10)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items() if k not in ("provenance", "settings", "created", "elapsed_seconds", "seconds", "data")}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _security_problems(files: list[Path], argv: list[str]) -> list[str]:
    problems = []
    for path in files:
        raw = path.read_bytes()
        if SECRET.encode() in raw:
            problems.append(f"secret in {path.name}")
        if path.suffix == ".html" and SCRIPT.encode() in raw:
            problems.append(f"unescaped <script> in {path.name}")
        if path.suffix == ".csv":
            for line in raw.decode(errors="replace").splitlines():
                if any(cell.startswith(("=", "@")) or (len(cell) > 1 and cell.startswith(("+", "-")) and not _is_number(cell)) for cell in line.split(",")):
                    problems.append(f"formula cell in {path.name}: {line[:60]!r}")
                    break
    return problems


def _is_number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def _flags(argv: list[str]) -> set[str]:
    """The options of the (sub)command that ``argv`` runs, as its --help lists them."""
    from fairpath.cli import build_parser

    parser, flags = build_parser({argv[0]}), set()
    for word in argv:
        flags |= set(parser._option_string_actions)
        subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subcommands or word not in subcommands[0].choices:
            break
        parser = subcommands[0].choices[word]
    return flags | set(parser._option_string_actions)


def _error_line(stderr: str) -> str:
    """The whole ``fairpath: error:`` line (the result keeps 300 characters of it, which may cut a flag in two)."""
    return next((line for line in reversed(stderr.splitlines()) if line.startswith("fairpath: error:")), "")


def _wrong_remedies(argv: list[str], error_line: str) -> list[str]:
    """The flags that ``error_line`` names (beyond those the user typed) and the command does not have."""
    import re

    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", error_line)) - {word.split("=")[0] for word in argv}
    return sorted(named - _flags(argv)) if named else []


def classify(case: Case, folder: Path, references: dict, clean_frame: pd.DataFrame) -> dict:
    """Run ``case`` in ``folder`` and classify it; ``references`` maps the names of cases run before to their folders."""
    context = _prepare(case, folder, clean_frame)
    inputs = [folder / name for name in case.files] + [folder / "target.txt", folder / "real" / "precious.txt", folder / "first.csv"]
    watched = {p: _digest(p) for p in inputs if p.is_file()}
    before = {p for p in folder.rglob("*") if p.is_file()}
    code, stderr, seconds = _run_child(case.argv, folder, case.timeout, stdout_closed=case.setup == "stdout-closed")
    written = _written_files(folder, before)
    result = {"case": case.name, "exit": code, "seconds": round(seconds, 2), "expect": case.expect,
              "stderr": stderr.strip().splitlines()[-1][:300] if stderr.strip() else ""}
    lost = [str(p.relative_to(folder)) for p, digest in watched.items() if _digest(p) != digest]
    link = {"symlink-file": "link.json", "symlink-dir": "linkdir"}.get(case.setup)
    if link and not (folder / link).is_symlink():
        lost.append(f"{link} replaced by a regular file")
    security = _security_problems(written, case.argv) + (["secret in stderr"] if SECRET in stderr else [])
    if code == BROKEN_PIPE_EXIT and case.setup == "stdout-closed":
        code = case.exit_code  # the reader closed the pipe: the shell's status of a command killed by SIGPIPE, judged by its outputs
    if code is None:
        verdict = "hang"
    elif code == 1 or "Traceback (most recent call last)" in stderr or "internal error" in stderr:
        verdict = "traceback"
    elif lost:
        verdict, result["detail"] = "data lost", lost
    elif security:
        verdict, result["detail"] = "security", security
    elif code == 2 and "fairpath: error:" in stderr and _wrong_remedies(case.argv, _error_line(stderr)):
        verdict, result["detail"] = "wrong remedy", f"{case.argv[0]} has no {', '.join(_wrong_remedies(case.argv, _error_line(stderr)))}"
    elif code == 2 and "fairpath: error:" in stderr:
        verdict = "clear error" if case.expect in ("error", "any") else "silent"  # refusing good input is a failure too
        if case.expect not in ("error", "any"):
            result["detail"] = "refused an input it should take"
    elif code in (0, VIOLATION_EXIT) and code != case.exit_code:
        verdict, result["detail"] = "silent", f"exit status {code} where {case.exit_code} is due"
    elif code == case.exit_code:
        numbers = case.numbers or _numbers
        reference = references.get(case.same_as)
        if case.expect == "error":
            verdict, result["detail"] = "silent", "accepted an input it must refuse"
        elif case.expect == "same" and reference is not None and numbers(reference) is not None and numbers(folder) != numbers(reference):
            verdict, result["detail"] = "silent", f"numbers differ from {case.same_as}"
        elif case.setup == "frontier-first-run" and context.get("first") is not None and (folder / "out" / "runs.csv").exists() \
                and pd.read_csv(folder / "out" / "runs.csv").select_dtypes("number").equals(context["first"].select_dtypes("number")):
            verdict, result["detail"] = "silent", "resumed the first run's numbers for another outcome"
        else:
            verdict = "correct"
    else:
        verdict, result["detail"] = "traceback", f"exit {code}"
    problem = case.check(folder) if case.check and verdict in GOOD else None
    if problem:
        verdict, result["detail"] = "silent", problem
    result["class"] = verdict
    return result


def _run_share(cases: list[tuple[int, Case]], root: Path, references: dict, clean_frame: pd.DataFrame, total: int,
               start: float, sink) -> None:
    """Classify ``cases`` (numbered) in order, each in its folder under ``root``; one JSON line per result into ``sink``."""
    for i, case in cases:
        folder = root / f"{i:04d}"
        folder.mkdir()
        result = classify(case, folder, references, clean_frame)
        sink.write(json.dumps({"index": i, **result}) + "\n")
        sink.flush()
        if result["class"] not in GOOD or (i + 1) % 25 == 0:
            print(f"[{i + 1}/{total} {time.monotonic() - start:.0f}s] {result['class']:12s} {case.name}  exit={result['exit']} "
                  f"{result.get('detail', '')} {result['stderr'][:160]}", file=sys.stderr, flush=True)


def run_cases(cases: list[Case], clean_frame: pd.DataFrame, out: Path, *, jobs: int = 1, name: str = "hostile_pass") -> int:
    """Run and classify ``cases``: first, in this process, those that others' ``same_as`` name, then the rest shared
    among ``jobs`` forked workers; print the counts per family and class and write ``out/<name>.json``. Returns 0
    when every case is a clear error or correct, else 1."""
    out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="hostile-"))
    print(f"{len(cases)} cases; folders under {root}", file=sys.stderr, flush=True)
    start = time.monotonic()
    named = {case.same_as for case in cases}
    numbered = list(enumerate(cases))
    first = [(i, c) for i, c in numbered if c.name in named]
    rest = [(i, c) for i, c in numbered if c.name not in named]
    with open(root / "first.jsonl", "w") as sink:
        _run_share(first, root, {}, clean_frame, len(cases), start, sink)
    references = {case.name: root / f"{i:04d}" for i, case in first}
    workers = []
    for job in range(max(1, jobs)):
        pid = os.fork()
        if pid == 0:  # a worker: its share of the cases, then out
            code = 0
            try:
                with open(root / f"job{job}.jsonl", "w") as sink:
                    _run_share(rest[job::max(1, jobs)], root, references, clean_frame, len(cases), start, sink)
            except BaseException:  # noqa: BLE001 - a runner bug: say so, and never return into the parent's code
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        workers.append(pid)
    for pid in workers:
        os.waitpid(pid, 0)
    results = sorted((json.loads(line) for part in root.glob("*.jsonl") for line in part.read_text().splitlines()),
                     key=lambda r: r.pop("index"))
    if len(results) != len(cases):
        print(f"runner: {len(cases) - len(results)} cases left no result (a worker died)", file=sys.stderr)
    counts = {c: n for c, n in pd.Series([r["class"] for r in results], dtype=object).value_counts().items()}
    by_family = pd.DataFrame(results).assign(family=lambda f: f.case.str.split("/").str[0]).pivot_table(
        index="family", columns="class", values="case", aggfunc="count", fill_value=0)
    print(by_family.to_string())
    print(json.dumps(counts))
    (out / f"{name}.json").write_text(json.dumps({"counts": counts, "cases": results, "seconds": time.monotonic() - start}, indent=1))
    return 0 if set(counts) <= set(GOOD) and len(results) == len(cases) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="")
    parser.add_argument("--out", default="qa/results/hostile")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import fairpath.cli  # noqa: F401 - imported once, before the forks

    frame = _clean_frame()
    cases = [*clean_cases(frame), *table_cases(frame), *header_cases(frame), *file_cases(frame), *group_cases(frame),
             *flag_cases(frame), *output_cases(frame), *text_cases(), *config_cases(frame), *resume_cases(frame)]
    return run_cases([c for c in cases if args.only in c.name], frame, Path(args.out), jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
