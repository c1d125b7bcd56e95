"""Real local servers for the endpoint tests: `transformers serve`, and a scripted server that fails first."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sampling_lm(path: Path) -> Path:
    """A tiny random Llama whose generation config samples (as chat models ship; `transformers serve` reads it)."""
    from fairpath.text._testing import make_tiny_causal_lm

    make_tiny_causal_lm(path, seed=0)
    config_file = path / "generation_config.json"
    config = json.loads(config_file.read_text())
    config_file.write_text(json.dumps({**config, "do_sample": True}))
    return path


class TransformersServer:
    """`transformers serve MODEL` on 127.0.0.1:<free port>, started and stopped by the tests."""

    def __init__(self, model: Path, log: Path):
        pytest.importorskip("fastapi", reason="transformers serve needs the 'serve' extra: pip install 'fairpath[serve]'")
        pytest.importorskip("uvicorn", reason="transformers serve needs the 'serve' extra: pip install 'fairpath[serve]'")
        self.model, self.port, self.log = str(model), free_port(), log
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        command = [str(Path(sys.executable).with_name("transformers")), "serve", self.model,
                   "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu"]
        # One torch thread: on a loaded machine more threads per decode step are much slower, not faster.
        env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        self._log_file = open(log, "w")
        self.process = subprocess.Popen(command, stdout=self._log_file, stderr=subprocess.STDOUT, env=env)
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"transformers serve exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log_file.close()


class ScriptedServer:
    """An OpenAI-style /v1/completions server that answers each request with the next scripted failure, then succeeds.

    Script entries: ``500`` (server error), ``(429, seconds)`` (rate limited with Retry-After), ``"malformed"``
    (a JSON content type with a broken body), ``(400, message)`` (a client error). Once the script is used up
    every request succeeds: choice ``i`` of a request with seed ``s`` is the text ``" s<s>c<i>"``, and ``n``
    is honoured. ``requests`` records (time, lower-cased headers, body) of every request.
    """

    def __init__(self, script=(), fingerprint: str | None = "fp-1", model: str = "scripted-model"):
        self.script, self.fingerprint, self.model = list(script), fingerprint, model
        self.requests: list[tuple[float, dict, dict]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append((time.monotonic(), {k.lower(): v for k, v in self.headers.items()}, body))
                    step = server.script.pop(0) if server.script else None
                if step == 500:
                    self._send(500, {"error": {"message": "internal hiccup"}})
                elif isinstance(step, tuple) and step[0] == 429:
                    self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": str(step[1])})
                elif step == "malformed":
                    self._send(200, None, raw=b'{"id": "x", "choices": [{"text": "cut off')
                elif isinstance(step, tuple) and step[0] == 400:
                    self._send(400, {"error": {"message": step[1]}})
                else:
                    self._send(200, server.completion(body))

            def _send(self, status, payload, headers=None, raw=None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def completion(self, body: dict) -> dict:
        choices = [{"index": i, "text": f" s{body.get('seed')}c{i}", "finish_reason": "length"} for i in range(body.get("n", 1))]
        return {"id": "cmpl", "object": "text_completion", "created": 0, "model": self.model,
                "system_fingerprint": self.fingerprint, "choices": choices,
                "usage": {"prompt_tokens": 3, "completion_tokens": body["max_tokens"] * len(choices),
                          "total_tokens": 3 + body["max_tokens"] * len(choices)}}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
