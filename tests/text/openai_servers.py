"""A scripted local server for the endpoint tests: it fails first, then answers like an OpenAI server."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ScriptedServer:
    """An OpenAI-style /v1/completions server that answers each request with the next scripted failure, then succeeds.

    Script entries: ``500`` (server error), ``(429, seconds)`` (rate limited with Retry-After), ``"malformed"``
    (a JSON content type with a broken body), ``(400, message)`` (a client error), ``("trickle", seconds)`` (a
complete answer sent one byte every ``seconds``, so that no single read waits long). Once the script is used up
    every request succeeds: choice ``i`` of a request with seed ``s`` is the text ``" s<s>c<i>"``, and ``n``
    is honoured. ``requests`` records (time, lower-cased headers, body) of every request. With
    ``echo_authorization`` the server behaves like a careless proxy: it reports the request's Authorization
    header as part of its model name and in the text of every choice.
    """

    def __init__(self, script=(), fingerprint: str | None = "fp-1", model: str = "scripted-model", echo_authorization: bool = False):
        self.script, self.fingerprint, self.model = list(script), fingerprint, model
        self.echo_authorization = echo_authorization
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
                elif isinstance(step, tuple) and step[0] == "trickle":
                    self._trickle(json.dumps(server.completion(body)).encode(), step[1])
                else:
                    self._send(200, server.completion(body, self.headers.get("Authorization", "")))

            def _trickle(self, data, seconds):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(seconds)
                except OSError:  # the client gave up
                    pass

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

    def completion(self, body: dict, authorization: str = "") -> dict:
        echo = f" {authorization}" if self.echo_authorization else ""
        choices = [{"index": i, "text": f" s{body.get('seed')}c{i}{echo}", "finish_reason": "length"} for i in range(body.get("n", 1))]
        return {"id": "cmpl", "object": "text_completion", "created": 0, "model": self.model + echo,
                "system_fingerprint": self.fingerprint, "choices": choices,
                "usage": {"prompt_tokens": 3, "completion_tokens": body["max_tokens"] * len(choices),
                          "total_tokens": 3 + body["max_tokens"] * len(choices)}}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
