import base64
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import yaml

pytest.importorskip("openai")

from openai_servers import ScriptedServer

from fairpath import FairpathInputError
from fairpath.cli import main
from fairpath.text import (
    GenerationSettings,
    SampleRequest,
    SampleStore,
    generate_samples,
)
from fairpath.text._openai_backend import OpenAICompatibleBackend, request_seed
from fairpath.text._samples import KEY_COLUMNS

SETTINGS = GenerationSettings(max_new_tokens=5, n_samples=3, seed=7)


@pytest.fixture()
def scripted():
    server = ScriptedServer()
    yield server
    server.stop()


def test_served_model_samples_are_seeded_per_sample_and_keyed_by_the_served_model(transformers_server):
    backend = OpenAICompatibleBackend(transformers_server.base_url, transformers_server.model, concurrency=1)
    assert backend.model_id == f"openai:{transformers_server.model}"
    assert backend.n_supported is False  # transformers serve ignores n: one sample per request
    requests = [SampleRequest(p, i) for p in ("Chile is", "Italy is") for i in range(3)]
    texts = backend.generate_requests(requests, SETTINGS)
    assert len(texts) == 6 and len(set(texts)) == 6  # a random model with a vocabulary of 49k never repeats here
    assert backend.generate_requests(requests, SETTINGS) == texts  # the per-request seed is honoured
    assert backend.generate_requests([requests[4]], SETTINGS) == [texts[4]]  # sample i is the same alone
    assert backend.generate_requests(requests[:1], GenerationSettings(max_new_tokens=5, seed=8)) != texts[:1]
    assert backend.tokens_generated == 5 * (6 + 6 + 1 + 1)
    assert backend.describe()["endpoint"] == "/completions" and backend.describe()["n_per_request"] == 1


def test_chat_endpoint_sends_the_prompt_as_the_user_message(transformers_server):
    backend = OpenAICompatibleBackend(transformers_server.base_url, transformers_server.model, endpoint="chat", concurrency=1)
    assert backend.model_id == f"openai:{transformers_server.model}#chat"
    texts = backend.generate_requests([SampleRequest("Chile is", 0), SampleRequest("Chile is", 1)], SETTINGS)
    assert len(texts) == 2 and all(isinstance(t, str) and t for t in texts) and texts[0] != texts[1]
    assert backend.describe()["endpoint"] == "/chat/completions"


def _write_spec(path):
    path.write_text(yaml.safe_dump({"attribute": "country", "values": ["Chile", "Italy"],
                                    "templates": ["{country} is", "People from {country} are"]}))
    return path


def _endpoint_audit_args(server, spec, out, *extra):
    return ["text", "audit", "--backend", "openai", "--base-url", server.base_url, "--model", server.model,
            "--attribute", str(spec), "--samples", "3", "--max-new-tokens", "4", "--batch-size", "2",
            "--concurrency", "1", "--scorers", "vader", "--permutations", "99", "--no-quality", "--out", str(out), *extra]


def _stored(folder):
    return pd.read_parquet(folder).sort_values(KEY_COLUMNS).reset_index(drop=True)


def test_killed_endpoint_audit_resumes_with_no_sample_lost_or_duplicated(transformers_server, tmp_path):
    spec = _write_spec(tmp_path / "spec.yaml")
    interrupted, complete = tmp_path / "interrupted", tmp_path / "complete"
    command = [sys.executable, "-m", "fairpath.cli", *_endpoint_audit_args(transformers_server, spec, interrupted)]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while len(list((interrupted / "samples").glob("part-*.parquet"))) < 2 and child.poll() is None:
        time.sleep(0.005)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    kept = len(_stored(interrupted / "samples"))
    assert 4 <= kept < 12  # killed mid-run: whole parts only, some still missing

    assert main(_endpoint_audit_args(transformers_server, spec, interrupted)) == 0  # resumes
    assert main(_endpoint_audit_args(transformers_server, spec, complete)) == 0  # one uninterrupted run
    resumed, fresh = _stored(interrupted / "samples"), _stored(complete / "samples")
    assert len(resumed) == 12 and not resumed.duplicated(KEY_COLUMNS).any()
    pd.testing.assert_frame_equal(resumed, fresh)  # sample for sample
    resumed_results = json.loads((interrupted / "result.json").read_text())
    fresh_results = json.loads((complete / "result.json").read_text())
    assert resumed_results["summary"] == fresh_results["summary"]
    assert resumed_results["settings"]["endpoint"] == "/completions"
    assert resumed_results["model"] == f"openai:{transformers_server.model}"


def test_retries_5xx_429_and_malformed_bodies_with_backoff_and_stores_each_sample_once(scripted, tmp_path):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", concurrency=1, max_n=2)
    assert backend.model_id == "openai:scripted-model@fp-1" and backend.n_supported  # the probe
    scripted.script = [500, 500, (429, 1), "malformed"]
    prompts = pd.DataFrame({"prompt": ["A is", "B is"], "value": ["A", "B"]})
    store = SampleStore(tmp_path / "samples")
    samples = generate_samples(backend, prompts, SETTINGS, store, progress=False)

    times = [t for t, _, _ in scripted.requests[1:]]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert len(times) == 4 + 4  # four failures, then two requests (n=2, n=1) per prompt
    assert gaps[0] >= 0.5 * 0.75 and gaps[1] >= 1.0 * 0.75  # exponential backoff (with at most 25% jitter)
    assert gaps[2] >= 1.0  # Retry-After: 1 honoured
    bodies = [body for _, _, body in scripted.requests[-4:]]
    assert [(b["prompt"], b["n"]) for b in bodies] == [("A is", 2), ("A is", 1), ("B is", 2), ("B is", 1)]
    expected = [f" s{request_seed(7, p, first)}c{i}" for p in ("A is", "B is") for first, i in ((0, 0), (0, 1), (2, 0))]
    assert samples["text"].tolist() == expected
    raw = pd.read_parquet(tmp_path / "samples")
    assert len(raw) == 6 and not raw.duplicated(KEY_COLUMNS).any()
    assert generate_samples(backend, prompts, SETTINGS, store, progress=False)["text"].tolist() == expected
    assert len(scripted.requests) == 1 + 8  # nothing generated twice
    assert backend.tokens_generated == 5 * 2 * 3  # the probe's one token was not counted as a sample


def test_api_key_is_sent_but_never_written(scripted, tmp_path, monkeypatch):
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("FAIRPATH_TEST_KEY", key)
    spec, out = _write_spec(tmp_path / "spec.yaml"), tmp_path / "audit"
    args = ["text", "audit", "--backend", "openai", "--base-url", scripted.base_url, "--model", "scripted-model",
            "--api-key-env", "FAIRPATH_TEST_KEY", "--attribute", str(spec), "--samples", "2", "--max-new-tokens", "3",
            "--scorers", "vader", "--permutations", "19", "--no-quality", "--out", str(out)]
    assert main(args) == 0
    assert all(headers["authorization"] == f"Bearer {key}" for _, headers, _ in scripted.requests)
    written = [path for path in out.rglob("*") if path.is_file()]
    assert {p.name for p in written} >= {"result.json", "report.html"} and any(p.suffix == ".parquet" for p in written)
    assert not [p for p in written if key.encode() in p.read_bytes()]
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", api_key_env="FAIRPATH_TEST_KEY")
    assert key not in repr(backend) and key not in json.dumps(backend.describe())
    assert key not in str(vars(backend))
    results = json.loads((out / "result.json").read_text())
    assert results["settings"]["base_url"] == scripted.base_url and results["settings"]["system_fingerprint"] == "fp-1"
    assert os.environ["FAIRPATH_TEST_KEY"] == key


@pytest.mark.parametrize("credentials", ["key and query token", "user and password in the URL"])
def test_secrets_echoed_by_the_server_are_never_written(credentials, tmp_path, monkeypatch, capsys):
    """A server that reflects the Authorization header into its model name and its continuations: neither the API
    key nor the URL's credentials reach result.json, report.html, the Parquet samples or stderr."""
    key, password, token = "sk-live-5f3a9c1e7b2d", "hunter2-s3cret", "qtok-77aa99bb"
    monkeypatch.setenv("FAIRPATH_TEST_KEY", key)
    server = ScriptedServer(echo_authorization=True)
    try:
        host = server.base_url.removeprefix("http://")
        if credentials == "key and query token":  # the client sends "Bearer <key>"
            url, sent, public = f"http://{host}?api_key={token}", f"Bearer {key}", f"http://{host}?api_key=***"
        else:  # the client turns user:password@ into HTTP Basic, which the server echoes
            url, public = f"http://alice:{password}@{host}", f"http://***@{host}"
            sent = "Basic " + base64.b64encode(f"alice:{password}".encode()).decode()
        out = tmp_path / "audit"
        args = ["text", "audit", "--backend", "openai", "--base-url", url, "--model", "scripted-model",
                "--api-key-env", "FAIRPATH_TEST_KEY", "--attribute", str(_write_spec(tmp_path / "spec.yaml")), "--samples", "2",
                "--max-new-tokens", "3", "--scorers", "vader", "--permutations", "19", "--no-quality", "--out", str(out)]
        assert main(args) == 0
    finally:
        server.stop()
    assert server.requests[-1][1]["authorization"] == sent  # the server did get the secret, and echoed it
    captured = capsys.readouterr()
    written = [path for path in out.rglob("*") if path.is_file()]
    assert {p.name for p in written} >= {"result.json", "report.html"} and any(p.suffix == ".parquet" for p in written)
    secrets = [key, password, token, sent.split()[1]]
    for secret in secrets:
        assert secret not in captured.err + captured.out
        assert not [p.name for p in written if secret.encode() in p.read_bytes()], secret
    results = json.loads((out / "result.json").read_text())
    assert results["settings"]["base_url"] == public
    assert results["settings"]["served_model"] == f"scripted-model {sent.split()[0]} ***"  # redacted, not dropped
    samples = pd.read_parquet(out / "samples")
    assert samples["text"].str.endswith(f"{sent.split()[0]} ***").all()


def test_server_error_messages_never_show_the_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRPATH_TEST_KEY", "sk-live-5f3a9c1e7b2d")
    server = ScriptedServer(script=[(400, "bad key sk-live-5f3a9c1e7b2d for alice:hunter2-s3cret")] * 3)
    try:
        url = server.base_url.replace("http://", "http://alice:hunter2-s3cret@") + "?token=qtok-77aa99bb"
        backend = OpenAICompatibleBackend(url, "scripted-model", api_key_env="FAIRPATH_TEST_KEY", max_retries=0)
        assert backend.base_url == server.base_url.replace("http://", "http://***@") + "?token=***"
        with pytest.raises(FairpathInputError) as caught:
            backend.model_id  # noqa: B018 - the probe meets the 400
    finally:
        server.stop()
    message = str(caught.value)
    assert "(HTTP 400): bad key *** for ***" in message and f"server {backend.base_url} refused" in message
    for secret in ("sk-live-5f3a9c1e7b2d", "hunter2-s3cret", "qtok-77aa99bb"):
        assert secret not in message and secret not in repr(backend)


def test_hostile_model_name_and_values_are_escaped_in_the_report(tmp_path):
    script, image = "<script>alert(1)</script>", '"><img src=x onerror=alert(2)>'
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"attribute": "country", "values": [f"Chile{script}", "Italy"], "templates": ["{country} is"]}))
    server = ScriptedServer(model=f"served{script}{image}", fingerprint=f"fp{image}")
    try:
        assert main(["text", "audit", "--backend", "openai", "--base-url", server.base_url, "--model", "m", "--attribute", str(spec),
                     "--samples", "2", "--max-new-tokens", "2", "--scorers", "vader", "--permutations", "19", "--no-quality",
                     "--quiet", "--out", str(tmp_path / "audit")]) == 0
    finally:
        server.stop()
    page = (tmp_path / "audit" / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x" not in page
    assert "served&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(2)&gt;" in page


@pytest.mark.model
@pytest.mark.slow
def test_smollm2_greedy_continuations_through_the_server_equal_in_process_generation(tmp_path):
    from fairpath.text import HFGenerator
    from fairpath.text._models import default_model_dir
    from tiny_models import TransformersServer

    greedy = GenerationSettings(max_new_tokens=8, n_samples=1, do_sample=False)
    requests = [SampleRequest("People from Chile are", 0), SampleRequest("I got a new job as a baker. Next week I will", 0)]
    expected = HFGenerator(default_model_dir()).generate_requests(requests, greedy)
    with TransformersServer(default_model_dir(), tmp_path / "serve.log") as server:
        backend = OpenAICompatibleBackend(server.base_url, server.model, concurrency=1)
        assert backend.generate_requests(requests, greedy) == expected
        chat = OpenAICompatibleBackend(server.base_url, server.model, endpoint="chat", concurrency=1)
        answers = chat.generate_requests(requests, GenerationSettings(max_new_tokens=16, seed=1))
    assert all(len(answer.split()) >= 3 for answer in answers)  # an instruction model answers in words
