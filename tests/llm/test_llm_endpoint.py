"""The LLM decision audit through an OpenAI-compatible server: probabilities from ``logprobs`` (completions and chat),
the sampled fallback of a server without them, a server that never answers, and the command line end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("openai")

from decision_server import DecisionServer
from scripted_decider import ScriptedDecider

from fairpath import FairpathInputError
from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.llm import DecisionPrompt, score_prompts
from fairpath.text import OpenAICompatibleBackend

PROBABILITY = lambda x, z, w: 0.3 + 0.08 * x + 0.1 * w[:, 1] + 0.15 * np.tanh(z[:, 0])  # noqa: E731


@pytest.fixture()
def server(request):
    server = DecisionServer(PROBABILITY, mode=getattr(request, "param", "logprobs"))
    yield server
    server.stop()


def _prompts(n=12, seed=0):
    sample = make_binary_sfm(n, seed=seed)
    prompt = DecisionPrompt.builtin("synthetic")
    return prompt, prompt.render(sample.data, sample.sfm)


@pytest.mark.parametrize("endpoint", ["completions", "chat"])
def test_scores_come_from_the_servers_log_probabilities(server, endpoint):
    prompt, texts = _prompts()
    backend = OpenAICompatibleBackend(server.base_url, "decider", endpoint=endpoint, concurrency=4)
    scores = score_prompts(backend, texts, prompt.options, progress=False)
    truth = np.array([ScriptedDecider(PROBABILITY).yes(text) for text in dict.fromkeys(texts)])
    # " Yes" and "No" count for yes and no (leading space dropped); " maybe" (1e-3) for neither
    assert np.allclose(scores["score"], truth / (truth + (1 - truth)), atol=1e-9) and (scores["method"] == "probabilities").all()
    assert np.allclose(scores["mass"], 1.0, atol=1e-9)
    asked = [body for body in server.requests if body.get("max_tokens") == 1 and body.get("logprobs")]
    assert len(asked) == len(set(texts)) and all(body["temperature"] == 0.0 for body in asked)
    assert all((body["top_logprobs"] == 20) if endpoint == "chat" else (body["logprobs"] == 20) for body in asked)


@pytest.mark.parametrize("server", ["none"], indirect=True)
def test_a_server_without_log_probabilities_is_sampled_and_parsed(server):
    prompt, texts = _prompts(8)
    backend = OpenAICompatibleBackend(server.base_url, "decider", max_n=16)
    scores = score_prompts(backend, texts, prompt.options, samples=40, progress=False)
    assert (scores["method"] == "sampled").all() and (scores["answers"] == 40).all() and (scores["mass"] == 1.0).all()
    truth = np.array([ScriptedDecider(PROBABILITY).yes(text) for text in dict.fromkeys(texts)])
    assert np.all(np.abs(scores["score"].to_numpy() - truth) < 4.5 * np.sqrt(truth * (1 - truth) / 40))


@pytest.mark.parametrize("server", ["silent"], indirect=True)
def test_a_server_that_never_answers_fails_with_the_timeout_named(server):
    prompt, texts = _prompts(2)
    backend = OpenAICompatibleBackend(server.base_url, "decider", timeout=0.5, max_retries=0)
    with pytest.raises(FairpathInputError, match=r"did not finish answering within the timeout of 0.5 s"):
        score_prompts(backend, texts, prompt.options, progress=False)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "applicants.csv"
    make_binary_sfm(500, seed=11).data.to_csv(path, index=False)
    return path


def test_the_command_audits_a_served_model_and_writes_no_secret(server, data_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DECIDER_KEY", "sk-very-secret-key-123")
    out = tmp_path / "out"
    argv = ["llm", "audit", str(data_file), "--prompt", "synthetic", "--backend", "openai", "--base-url", server.base_url,
            "--model", "decider", "--api-key-env", "DECIDER_KEY", "--bins", "4", "--out", str(out), "--fail-on", "violation"]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 3 and "Traceback" not in captured.err  # the planted direct effect fails BN = {SE}
    assert "llm_mentioned: FAIL under BN = {SE}" in captured.out and "exact direct effect of mentioning 1 instead of 0" in captured.out
    assert all(header == "Bearer sk-very-secret-key-123" for header in server.authorization)
    written = "".join(path.read_text(errors="ignore") for path in out.rglob("*") if path.suffix in {".html", ".json", ".csv"})
    assert "sk-very-secret-key-123" not in written and "openai:decider-7b" in written
    result = json.loads((out / "result.json").read_text())
    assert result["exact"][0]["estimate"] == pytest.approx(0.08, abs=1e-9)
    assert result["model"]["base_url"] == server.base_url and result["settings"]["scoring"]["methods"] == {"probabilities": 1500}
    asked = len(server.requests)
    assert main(argv) == 3  # a rerun resumes from the stored scores: no prompt is asked again
    assert len(server.requests) - asked <= 1  # the probe of the model's identity only
    scores = pd.read_csv(out / "scores.csv")
    assert len(scores) == 500 and scores["llm_mentioned"].between(0, 1).all()
