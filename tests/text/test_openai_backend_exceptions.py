import time

import pandas as pd
import pytest

pytest.importorskip("openai")

from openai_servers import ScriptedServer, free_port

from fairpath._exceptions import FairpathInputError
from fairpath.cli import main
from fairpath.text import (
    GenerationSettings,
    SampleRequest,
    SampleStore,
    generate_samples,
)
from fairpath.text._openai_backend import OpenAICompatibleBackend

SETTINGS = GenerationSettings(max_new_tokens=4, n_samples=2)
PROMPTS = pd.DataFrame({"prompt": ["A is", "B is"]})


@pytest.fixture()
def scripted():
    server = ScriptedServer()
    yield server
    server.stop()


def test_client_error_reports_the_servers_message_without_the_key_and_stores_nothing(scripted, tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRPATH_TEST_KEY", "sk-secret-42")
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", api_key_env="FAIRPATH_TEST_KEY")
    backend.model_id  # noqa: B018 - the probe succeeds
    scripted.script = [(400, "max_tokens is too large for key sk-secret-42")]
    store = SampleStore(tmp_path / "samples")
    with pytest.raises(FairpathInputError, match=r"refused the request for model 'scripted-model' \(HTTP 400\): "
                                                 r"max_tokens is too large for key \*\*\*$"):
        generate_samples(backend, PROMPTS, SETTINGS, store, progress=False)
    assert store.parts() == []


def test_persistent_server_errors_fail_after_the_retries(scripted):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", max_retries=1)
    scripted.script = [500, 500]
    with pytest.raises(FairpathInputError, match=r"kept failing \(HTTP 500 after 1 retries\): internal hiccup"):
        backend.model_id  # noqa: B018
    assert len(scripted.requests) == 2


def test_repeatedly_malformed_bodies_fail_after_the_retries(scripted):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", max_retries=1)
    scripted.script = ["malformed", "malformed"]
    with pytest.raises(FairpathInputError, match="sent an unreadable response 2 times"):
        backend.model_id  # noqa: B018


def test_a_model_change_mid_audit_is_refused_before_storing(scripted, tmp_path):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model")
    assert backend.model_id == "openai:scripted-model@fp-1"
    scripted.fingerprint = "fp-2"
    store = SampleStore(tmp_path / "samples")
    with pytest.raises(FairpathInputError, match=r"now reports model 'scripted-model' \(fingerprint 'fp-2'\) instead of "
                                                 r"'scripted-model' \('fp-1'\); nothing of this chunk was stored"):
        generate_samples(backend, PROMPTS, SETTINGS, store, progress=False)
    assert store.parts() == []


def test_unreachable_server():
    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0)
    with pytest.raises(FairpathInputError, match=r"cannot reach http://127.0.0.1:\d+/v1 after 0 retries .*is the server running"):
        backend.model_id  # noqa: B018


@pytest.mark.parametrize("retries", [0, 1])
def test_a_server_that_trickles_its_answer_times_out_per_attempt_not_per_read(scripted, retries):
    # One byte every 0.2 s: each read waits well under the timeout, the whole answer (~300 bytes) would take a minute.
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", timeout=1, max_retries=retries)
    scripted.script = [("trickle", 0.2)] * (retries + 1)
    start = time.monotonic()
    with pytest.raises(FairpathInputError, match=rf"server http://127.0.0.1:\d+/v1 did not finish answering within the timeout "
                                                 rf"of 1 s per request \({retries + 1} attempts\); raise --timeout"):
        backend.model_id  # noqa: B018
    elapsed = time.monotonic() - start
    assert len(scripted.requests) == retries + 1
    assert retries + 1 <= elapsed < 2 * (retries + 1) + 2  # each attempt ends at its deadline (plus a backoff between)


def test_cli_timeout_bounds_a_trickling_server(scripted, tmp_path, capsys):
    scripted.script = [("trickle", 0.2)]
    start = time.monotonic()
    assert main(["text", "audit", "--backend", "openai", "--base-url", scripted.base_url, "--model", "scripted-model",
                 "--timeout", "1", "--retries", "0", "--attribute", "country", "--out", str(tmp_path)]) == 2
    assert time.monotonic() - start < 10
    assert "fairpath: error: server http://127.0.0.1:" in capsys.readouterr().err


def test_a_slow_but_complete_answer_within_the_timeout_is_read(scripted):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model", timeout=30, max_retries=0)
    scripted.script = [("trickle", 0.001)]
    assert backend.model_id == "openai:scripted-model@fp-1" and backend.n_supported


def test_top_k_is_refused_not_dropped(scripted):
    backend = OpenAICompatibleBackend(scripted.base_url, "scripted-model")
    with pytest.raises(FairpathInputError, match="top_k=5 is not part of the OpenAI API"):
        backend.generate_requests([SampleRequest("A is", 0)], GenerationSettings(top_k=5))


def test_a_named_key_variable_must_be_set(monkeypatch):
    monkeypatch.delenv("FAIRPATH_UNSET_KEY", raising=False)
    with pytest.raises(FairpathInputError, match="the environment variable FAIRPATH_UNSET_KEY holding the API key is not set"):
        OpenAICompatibleBackend("http://127.0.0.1:1/v1", "m", api_key_env="FAIRPATH_UNSET_KEY")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"base_url": "127.0.0.1:8000"}, "base_url must be an http"),
    ({"model": " "}, "model must be a non-empty string naming the model the server serves; got ' '"),
    ({"endpoint": "responses"}, "unknown endpoint 'responses'; use one of completions, chat"),
    ({"concurrency": 0}, "concurrency must be an integer ≥ 1, got 0"),
    ({"max_n": 1.5}, r"max_n must be an integer, got 1\.5 \(float\)"),
    ({"timeout": 0}, r"timeout must lie in \(0, inf\], got 0\.0"),
    ({"max_retries": -1}, "max_retries must be an integer ≥ 0, got -1"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(FairpathInputError, match=message):
        OpenAICompatibleBackend(**{"base_url": "http://127.0.0.1:1/v1", "model": "m", **kwargs})


@pytest.mark.parametrize(("extra", "message"), [
    ([], "--backend openai needs --base-url"),
    (["--base-url", "http://127.0.0.1:1/v1"], "--backend openai needs --model NAME"),
])
def test_cli_endpoint_flags(extra, message, tmp_path, capsys):
    assert main(["text", "audit", "--backend", "openai", *extra, "--attribute", "country", "--out", str(tmp_path)]) != 0
    assert message in capsys.readouterr().err
