"""An OpenAI-compatible server that decides like :class:`scripted_decider.ScriptedDecider`, for the endpoint tests.

``mode="logprobs"`` answers /v1/completions and /v1/chat/completions with the first token's ``top_logprobs`` in the
OpenAI formats (the completions API's ``{token: logprob}`` dicts, the chat API's ``content[0].top_logprobs`` list),
the tokens spelled as a server writes them (" Yes" after a space, "No"); ``"none"`` ignores the request for log
probabilities and sends a sampled answer ("Yes." or "No"); ``"silent"`` accepts the connection and never answers.
``requests`` keeps every request body; ``authorization`` every Authorization header.
"""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from scripted_decider import ScriptedDecider


class DecisionServer:
    def __init__(self, probability, mode: str = "logprobs", model: str = "decider-7b"):
        self.decider, self.mode, self.model = ScriptedDecider(probability), mode, model
        self.requests: list[dict] = []
        self.authorization: list[str] = []
        self.lock = threading.Lock()
        self.rng = np.random.default_rng(0)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.authorization.append(self.headers.get("Authorization", ""))
                if server.mode == "silent":
                    time.sleep(30)
                    return
                data = json.dumps(server.answer(body, chat=self.path.endswith("/chat/completions"))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, body: dict, chat: bool) -> dict:
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        yes = self.decider.yes(prompt) if "Applicant record" in prompt else 0.5
        wants = body.get("logprobs") and self.mode == "logprobs"
        choices = []
        for index in range(body.get("n", 1)):
            with self.lock:
                text = "Yes." if self.rng.uniform() < yes else "No"
            choice = {"index": index, "finish_reason": "length"}
            top = {" Yes": math.log(max(yes, 1e-300)), "No": math.log(max(1 - yes, 1e-300)), " maybe": math.log(1e-3)}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
                if wants:
                    entries = [{"token": token, "logprob": logprob, "bytes": None} for token, logprob in top.items()]
                    choice["logprobs"] = {"content": [{"token": text, "logprob": entries[0]["logprob"], "bytes": None,
                                                       "top_logprobs": entries[: body.get("top_logprobs", 5)]}]}
            else:
                choice["text"] = text
                if wants:
                    choice["logprobs"] = {"tokens": [text], "token_logprobs": [0.0], "top_logprobs": [top], "text_offset": [0]}
            choices.append(choice)
        return {"id": "decision", "object": "chat.completion" if chat else "text_completion", "created": 0, "model": self.model,
                "choices": choices, "usage": {"prompt_tokens": 10, "completion_tokens": len(choices), "total_tokens": 10 + len(choices)}}

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
