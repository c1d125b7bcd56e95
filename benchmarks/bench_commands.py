"""The commands as a user types them (whole process, defaults) beside their baselines, in the same run.

    python benchmarks/bench_commands.py [--only text,compas,census,million] [--repeats 2]

Every figure is a whole child process (wall and CPU seconds, peak RSS from ``os.wait4``), best wall of
``--repeats``; the ratios divide the command by its baseline measured in this run (targets: issue 42).
- text: ``fairpath text audit --attribute country --samples 20 --max-new-tokens 20 --scorers vader
  --no-quality --out DIR`` against a process that loads the same model in bfloat16 and runs plain Hugging
  Face ``generate`` (temperature 1, every token, batch 256, torch on every core) on the same 2,000 prompts'
  rows; target ratio ≤ 0.5.
- compas: ``fairpath decompose compas_sp2pp.csv ... --predictor northpointe --seed 23`` on one core
  (``taskset -c 0``) against faircause's ``fairness_cookbook`` for Y and the Northpointe score in one
  ``Rscript`` on the same core, where R and faircause are installed; without them the section says so and
  shows the recorded faircause seconds (another machine, another run: no ratio); target: faircause / fairpath ≥ 10.
- census: ``fairpath decompose gov_census.csv --x sex ... --out DIR`` against one default
  ``LGBMRegressor`` fit of salary on the same columns (in this process); target ratio ≤ 5.
- million: ``fairpath decompose`` on a 1,000,000-row ``make_mixed_sfm`` table (``bench_scale.table``)
  against one default ``LGBMRegressor`` fit on its columns; targets ratio ≤ 10 and peak ≤ 1 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_scale import FLAGS, SHARED, baseline_fit, child_run, table

COMPAS_FLAGS = ["--x", "race", "--x0", "Majority", "--x1", "Minority", "--z", "age,sex", "--w",
                "juv_fel,juv_misd,juv_other,priors,charge", "--y", "two_year_recid", "--predictor", "northpointe", "--seed", "23"]
TEXT_FLAGS = ["--attribute", "country", "--samples", "20", "--max-new-tokens", "20", "--scorers", "vader", "--no-quality"]
FAIRCAUSE = """suppressMessages(library(faircause))
d <- read.csv("{data}", stringsAsFactors = TRUE)
for (y in c("two_year_recid", "northpointe")) {{
  set.seed(23)
  fairness_cookbook(d, X = "race", Z = c("age", "sex"), W = c("juv_fel", "juv_misd", "juv_other", "priors", "charge"),
                    Y = y, x0 = "Majority", x1 = "Minority")
}}
"""


def timed(command: list[str], repeats: int) -> dict:
    """The fastest of ``repeats`` runs of ``command`` as a child process (:func:`bench_scale.child_run`)."""
    return min((child_run(command) for _ in range(repeats)), key=lambda run: run["wall"])


def fairpath_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "fairpath.cli", *args]


def show(name: str, run: dict) -> None:
    print(f"  {name:<28} {run['wall']:7.2f} s wall {run['cpu']:7.2f} s CPU {run['peak_mb']:7.0f} MB peak", flush=True)


def text_section(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        audits = []
        for k in range(repeats):  # a fresh folder each time: a rerun would resume from the stored samples
            audits.append(timed(fairpath_command("text", "audit", *TEXT_FLAGS, "--out", f"{scratch}/audit{k}"), 1))
        audit = min(audits, key=lambda run: run["wall"])
    generate = timed([sys.executable, __file__, "--child-generate"], repeats)
    detail = json.loads(generate["out"].strip().splitlines()[-1])
    print("text audit, defaults, 100 prompts x 20 samples x 20 tokens (SmolLM2-135M-Instruct)")
    show("fairpath text audit", audit)
    show("plain generate, batch 256", generate)
    print(f"  generate itself {detail['generate_s']:.1f} s for {detail['tokens']:,} tokens "
          f"({detail['tokens'] / detail['generate_s']:.0f} tok/s, {detail['threads']} threads)")
    print(f"  ratio audit / generate: {audit['wall'] / generate['wall']:.2f} (target ≤ 0.5)")


def child_generate() -> None:
    """Plain ``generate`` of the text audit's rows: the default model in bfloat16, batch 256, every core."""
    import torch

    from fairpath.text import FairnessSpec
    from fairpath.text._models import load_causal_lm

    torch.set_num_threads(os.cpu_count() or 1)
    model, tokenizer = load_causal_lm("default", device="cpu", dtype=torch.bfloat16)
    tokenizer.padding_side = "left"
    rows = [prompt for prompt in FairnessSpec.builtin("country").prompts()["prompt"] for _ in range(20)]
    eos, tokens = tokenizer.eos_token_id, 0
    torch.manual_seed(0)
    start = time.perf_counter()
    with torch.inference_mode():
        for begin in range(0, len(rows), 256):
            encoded = tokenizer(rows[begin:begin + 256], return_tensors="pt", padding=True)
            out = model.generate(**encoded, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=20,
                                 pad_token_id=tokenizer.pad_token_id)
            for row in out[:, encoded["input_ids"].shape[1]:].tolist():
                tokens += next((i + 1 for i, token in enumerate(row) if token == eos), len(row))
    print(json.dumps({"generate_s": time.perf_counter() - start, "tokens": tokens, "threads": torch.get_num_threads()}))


def compas_section(repeats: int) -> None:
    data = SHARED / "data" / "compas_sp2pp.csv"
    ours = timed(["taskset", "-c", "0", *fairpath_command("decompose", str(data), *COMPAS_FLAGS)], repeats)
    print("COMPAS, Y and Northpointe, debiasing with CIs, one core (taskset -c 0)")
    show("fairpath decompose", ours)
    has_faircause = shutil.which("Rscript") and subprocess.run(
        ["Rscript", "-e", "library(faircause)"], capture_output=True).returncode == 0
    if has_faircause:
        with tempfile.NamedTemporaryFile("w", suffix=".R", delete=False) as script:
            script.write(FAIRCAUSE.format(data=data))
        theirs = timed(["taskset", "-c", "0", "Rscript", script.name], repeats)
        show("faircause fairness_cookbook x2", theirs)
        print(f"  faircause / fairpath: {theirs['wall'] / ours['wall']:.1f}x (target ≥ 10)")
        return
    recorded = json.loads((SHARED / "reference" / "faircause_compas.json").read_text())["runs"]
    seconds = sum(run["cookbook_seconds"] for run in recorded if run["method"] == "debiasing")
    print(f"  faircause: R with faircause is not installed here, so no ratio of this run; its recorded calls "
          f"(shared/reference/faircause_compas.json, two fairness_cookbook calls, another run) took {seconds:.1f} s")


def census_section(repeats: int) -> None:
    import lightgbm as lgb
    import pandas as pd

    from fairpath.datasets import GOV_CENSUS_SFM, load_gov_census

    path, sfm = SHARED / "data" / "gov_census.csv", GOV_CENSUS_SFM
    data = load_gov_census(path).data
    features = data[[sfm.x, *sfm.z, *sfm.w]].apply(lambda c: c if pd.api.types.is_numeric_dtype(c) else c.astype("category"))
    fits = []
    for _ in range(2):
        start = time.perf_counter()
        lgb.LGBMRegressor(verbose=-1).fit(features, data[sfm.y])
        fits.append(time.perf_counter() - start)
    flags = ["--x", sfm.x, "--x0", sfm.x0, "--x1", sfm.x1, "--z", ",".join(sfm.z), "--w", ",".join(sfm.w), "--y", sfm.y,
             "--empty-category", "industry"]
    with tempfile.TemporaryDirectory() as scratch:
        ours = timed(fairpath_command("decompose", str(path), *flags, "--out", scratch), repeats)
    print(f"Census 2018 ({len(data):,} rows), default learner, report written (--out)")
    show("fairpath decompose", ours)
    print(f"  one default LGBMRegressor fit of salary on the same columns: {min(fits):.2f} s")
    print(f"  ratio: {ours['wall'] / min(fits):.1f}x one fit (target ≤ 5)")


def million_section(repeats: int) -> None:
    path = table(1_000_000)
    fit = baseline_fit(path)
    with tempfile.TemporaryDirectory() as scratch:
        ours = timed(fairpath_command("decompose", str(path), *FLAGS, "--out", scratch), repeats)
    print("1,000,000 rows of make_mixed_sfm (continuous Y, categorical Z), default learner, report written (--out)")
    show("fairpath decompose", ours)
    print(f"  one default LGBMRegressor fit on the same columns: {fit:.2f} s")
    print(f"  ratio: {ours['wall'] / fit:.1f}x one fit (target ≤ 10); peak {ours['peak_mb']:.0f} MB (target ≤ 1,024 MB)")


SECTIONS = {"text": text_section, "compas": compas_section, "census": census_section, "million": million_section}


def main() -> None:
    if sys.argv[1:] == ["--child-generate"]:
        child_generate()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections to run, comma-separated")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each command; the fastest is shown")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for name in args.only.split(","):
        SECTIONS[name](args.repeats)
        print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
