import json

import pandas as pd
import pytest
import yaml
from toy_spec import BIASED, SPEC  # tests/text is on the import path (no __init__.py)

from fairpath.cli import main
from fairpath.text import (
    GenerationSettings,
    PoolGenerator,
    audit_samples,
    audit_text,
    read_generations,
)

SETTINGS = GenerationSettings(n_samples=12, seed=3)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    store = tmp_path_factory.mktemp("audit") / "samples"
    result = audit_text(SPEC, PoolGenerator(SPEC, mixing=BIASED), scorers=["vader", "opinion"], settings=SETTINGS, store=store,
                        quality=False, n_permutations=99, seed=5, progress=False)
    return result, store


def _logged(result) -> pd.DataFrame:
    """The audit's samples as a user would log them: template text, value, prompt, continuation; shuffled."""
    templates = dict(zip(SPEC.template_ids(), SPEC.templates))
    frame = pd.DataFrame({"template": result.samples["template_id"].map(templates), "value": result.samples["value"],
                          "prompt": result.samples["prompt"], "continuation": result.samples["text"],
                          "sample_index": result.samples["sample_index"]})
    return frame.sample(frac=1.0, random_state=0)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_scoring_stored_generations_reproduces_the_audit(audited, tmp_path, suffix):
    result, _ = audited
    path = tmp_path / f"generations{suffix}"
    frame = _logged(result)
    {".csv": lambda: frame.to_csv(path, index=False), ".jsonl": lambda: frame.to_json(path, orient="records", lines=True),
     ".parquet": lambda: frame.to_parquet(path)}[suffix]()
    scored = audit_samples(read_generations(path), SPEC, scorers=["vader", "opinion"], n_permutations=99, seed=5,
                           quality=False, source=str(path))
    pd.testing.assert_frame_equal(scored.to_frame(), result.to_frame())
    assert scored.to_dict()["fairness"] == result.to_dict()["fairness"]
    assert scored.model_id == f"stored generations ({path})"


def test_text_score_on_the_audits_store_and_file_gives_the_audits_metrics(audited, tmp_path, capsys):
    result, store = audited
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC.to_dict()))
    logged = tmp_path / "logged.csv"
    # Without sample_index the rank in the file is the index: keep the audit's order of rows within a cell.
    _logged(result).sort_index().drop(columns=["sample_index"]).to_csv(logged, index=False)
    expected = json.loads(result.to_json())
    for source in (store, logged):
        out = tmp_path / f"scored-{source.name}"
        assert main(["text", "score", str(source), "--attribute", str(spec_file), "--scorers", "vader,opinion",
                     "--permutations", "99", "--seed", "5", "--no-quality", "--out", str(out)]) == 0
        scored = json.loads((out / "result.json").read_text())
        assert scored["summary"] == expected["summary"] and scored["fairness"] == expected["fairness"]
        assert scored["n_samples"] == 20 * 12 and (out / "report.html").is_file()
    assert scored["settings"]["samples_source"] == repr(str(logged))
    printed = capsys.readouterr()
    assert f"240 continuations from {logged}" in printed.err and "individual" in printed.out
