"""Sampling continuations from an OpenAI-compatible server (vLLM, TGI, llama.cpp, transformers serve, a hosted API).

Public contract
---------------
``OpenAICompatibleBackend(base_url, model, endpoint="completions", api_key_env="OPENAI_API_KEY",
concurrency=8, max_n=16, timeout=120.0, max_retries=5, send_seed=True)``
    A :class:`GenerationBackend`. ``endpoint="completions"`` sends each prompt as raw text to continue
    (base models); ``"chat"`` sends it as the single user message of a chat completion (chat models:
    the server applies the model's chat template). The API key is read from the environment variable
    ``api_key_env`` when a request is made and is never stored by fairpath (not in samples, results,
    reports, repr or error messages); neither are credentials in ``base_url`` (``user:password@``,
    query values named like a key, token, secret, password or signature): ``base_url`` keeps them
    for the requests only, and the attribute, reports and messages show ``***`` in their place.
    Whatever the server sends (model name, fingerprint, continuations, error messages) has the key
    and those credentials replaced by ``***`` too, so a server that echoes them writes nothing
    secret. Without the variable set, requests carry the placeholder
    ``EMPTY`` (local servers need no key), unless ``api_key_env`` was given explicitly, which makes a
    missing variable an error.
    ``model_id`` is ``openai:<model the server reports>[@<system_fingerprint>][#chat]``, read from
    one probe request (which also finds out whether the server honours ``n``); every later response
    must report the same model and fingerprint, or the chunk fails before it is stored, so a store
    never mixes two models.
    ``generate_requests`` sends the samples of one prompt in groups of up to ``max_n`` choices per
    request (one per request when the server ignores ``n``), at most ``concurrency`` requests at a
    time, each with the seed ``request_seed(settings.seed, prompt, first sample index)``. Timeouts,
    connection errors, 408/409/429 and 5xx responses are retried by the ``openai`` client with
    exponential backoff, honouring ``Retry-After`` (up to ``max_retries`` times); ``timeout`` bounds each
    attempt as a whole (headers and body), not each socket read; an undecodable body
    is retried the same number of times; any other 4xx raises FairpathInputError with the server's
    message. ``tokens_generated`` counts the completion tokens the server reported.
    ``describe()`` gives what a report should say about the backend (endpoint, URL, seeds, n).
    ``answer_probabilities(prompts, options, top_logprobs=20)`` asks for one greedy token per prompt with its
    ``top_logprobs`` most likely tokens (``logprobs`` of /completions, ``logprobs``/``top_logprobs`` of
    /chat/completions, as vLLM and llama.cpp's server return them) and sums each option's; an option outside
    the top tokens counts 0, and a response without log probabilities gives a NaN row.

Reproducibility is the server's: with seeds honoured (vLLM, llama.cpp, transformers serve at
concurrency 1, OpenAI best-effort) the same settings give the same samples, also after a resume;
``top_k`` is not part of the OpenAI API and is refused rather than silently dropped.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import os
import random
import re
import sys
import urllib.parse
from collections.abc import Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import validate_params
from fairpath.text._parameters import ENDPOINT_SETTINGS
from fairpath.text._generation import (
    GenerationBackend,
    GenerationSettings,
    SampleRequest,
    _check_prompts,
)

_DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_NO_KEY = "EMPTY"  # what vLLM's docs send to servers that need no key
_SECRET_QUERY = re.compile(r"key|token|secret|pass|auth|sig|credential", re.IGNORECASE)
# Shorter secrets are blanked in the URL but not searched for in text: replacing "ab" everywhere would garble it.
_MIN_SECRET_LENGTH = 4
REDACTED = "***"


def request_seed(seed: int, prompt: str, first_index: int) -> int:
    """The seed sent with the request whose first sample is ``first_index`` of ``prompt`` (31 bits)."""
    digest = hashlib.sha256(f"{int(seed)}\0{prompt}\0{int(first_index)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def split_url_secrets(url: str) -> tuple[str, list[str]]:
    """``url`` with its credentials (``user:password@``, secret query values) shown as ``***``, and those
    credentials, also as the HTTP Basic header value a client derives from them."""
    parts = urllib.parse.urlsplit(url)
    secrets, netloc, query = [], parts.netloc, parts.query
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        plain = urllib.parse.unquote(userinfo)
        secrets += [userinfo, plain, urllib.parse.unquote(plain.partition(":")[2]),
                    base64.b64encode(plain.encode()).decode("ascii")]
        netloc = f"{REDACTED}@{host}"
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    hidden = [value for name, value in pairs if value and _SECRET_QUERY.search(name)]
    if hidden:
        secrets += hidden + [urllib.parse.quote_plus(value) for value in hidden]
        query = "&".join(f"{urllib.parse.quote_plus(name)}={REDACTED if value in hidden else urllib.parse.quote_plus(value)}"
                         for name, value in pairs)
    public = urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query)) if secrets else url
    return public, sorted({s for s in secrets if len(s) >= _MIN_SECRET_LENGTH}, key=len, reverse=True)


def _openai():
    try:
        import openai
    except ImportError as error:  # an optional extra
        raise FairpathInputError(
            "the OpenAI-compatible backend needs the 'openai' package: pip install 'fairpath[api]'"
        ) from error
    return openai


class OpenAICompatibleBackend(GenerationBackend):
    """Continuations from a model behind an OpenAI-compatible HTTP API.

    Parameters
    ----------
    base_url : str
        The API root, e.g. ``http://127.0.0.1:8000/v1``. Credentials in it are used for the requests and
        never shown: the attribute ``base_url`` holds the URL with ``***`` in their place.
    model : str
        The model name the server expects in requests.
    endpoint : {"completions", "chat"}
        ``/completions`` (raw text to continue; base models) or ``/chat/completions`` (the prompt as
        the one user message; chat models).
    api_key_env : str
        Name of the environment variable holding the API key (the key itself is never passed in).
    concurrency : int
        Requests in flight at most.
    max_n : int
        Samples asked for in one request (``n``) at most, where the server honours ``n``.
    timeout : float
        Seconds per request attempt, as a whole: sending, waiting and receiving the whole body (not per read,
        so a server that trickles its answer times out too).
    max_retries : int
        Retries of a failed request (backoff 0.5 s doubling to 8 s, or the server's ``Retry-After``).
    send_seed : bool
        Send a per-request seed (servers that reject the field need False).
    """

    @validate_params(ENDPOINT_SETTINGS)
    def __init__(self, base_url: str, model: str, *, endpoint: str = "completions", api_key_env: str | None = None,
                 concurrency: int = 8, max_n: int = 16, timeout: float = 120.0, max_retries: int = 5,
                 send_seed: bool = True):
        _openai()
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise FairpathInputError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
        self.key_required = api_key_env is not None
        self.api_key_env = api_key_env or _DEFAULT_KEY_ENV
        self._api_key()  # fail now on a required key that is not set
        self._url = base_url.rstrip("/")
        self.base_url, self._url_secrets = split_url_secrets(self._url)
        self.model, self.endpoint = model, endpoint
        self.concurrency, self.max_n, self.timeout, self.max_retries = concurrency, max_n, float(timeout), max_retries
        self.send_seed = send_seed
        self.served_model: str | None = None
        self.fingerprint: str | None = None
        self.n_supported: bool | None = None
        self.tokens_generated = 0

    def __repr__(self) -> str:
        return (f"OpenAICompatibleBackend(base_url={self.base_url!r}, model={self.model!r}, endpoint={self.endpoint!r}, "
                f"api_key_env={self.api_key_env!r}, concurrency={self.concurrency})")

    def _api_key(self) -> str:
        key = os.environ.get(self.api_key_env)
        if key:
            return key
        if self.key_required:
            raise FairpathInputError(f"the environment variable {self.api_key_env} holding the API key is not set; "
                                     f"export {self.api_key_env}=... before running")
        return _NO_KEY

    @property
    def model_id(self) -> str:
        if self.served_model is None:
            self._run(self._probe())
        fingerprint = f"@{self.fingerprint}" if self.fingerprint else ""
        chat = "#chat" if self.endpoint == "chat" else ""
        return f"openai:{self.served_model}{fingerprint}{chat}"

    def describe(self) -> dict:
        """What a report should state about where the samples came from (no secrets)."""
        self.model_id  # noqa: B018 - probes the server once
        return {"backend": "openai-compatible", "base_url": self.base_url, "requested_model": self.model,
                "served_model": self.served_model, "system_fingerprint": self.fingerprint,
                "endpoint": "/chat/completions" if self.endpoint == "chat" else "/completions",
                "n_per_request": self.max_n if self.n_supported else 1, "seeds_sent": self.send_seed,
                "concurrency": self.concurrency}

    def generate_requests(self, requests: Sequence[SampleRequest], settings: GenerationSettings) -> list[str]:
        requests = [SampleRequest(*r) for r in requests]
        _check_prompts([r.prompt for r in requests])
        if settings.top_k is not None:
            raise FairpathInputError(f"top_k={settings.top_k} is not part of the OpenAI API; an endpoint audit "
                                     "samples with temperature and top_p only (leave top_k unset)")
        if not requests:
            return []
        self.model_id  # noqa: B018 - the probe decides whether n is honoured before any grouping
        return self._run(self._generate(requests, settings))

    def answer_probabilities(self, prompts: Sequence[str], options: Sequence[Sequence[str]], *, batch_size: int = 64,
                             top_logprobs: int = 20):
        prompts = _check_prompts(prompts)
        self.model_id  # noqa: B018 - the probe fixes the model identity every answer is checked against
        return np.array(self._run(self._answers(prompts, [set(spellings) for spellings in options], top_logprobs)), dtype=float)

    async def _answers(self, prompts: list[str], options: list[set[str]], top: int) -> list[list[float]]:
        rows: list[list[float]] = [[]] * len(prompts)
        limit = asyncio.Semaphore(self.concurrency)
        asked = {"logprobs": True, "top_logprobs": top} if self.endpoint == "chat" else {"logprobs": top}

        async def one(client, position: int) -> None:
            async with limit:
                response = await self._create(client, prompt=prompts[position], n=1, seed=None, max_tokens=1, temperature=0.0, **asked)
            self._check_identity(response)
            rows[position] = _option_row(self._top_tokens(response.choices[0]), options)

        async with self._client() as client:
            await asyncio.gather(*(one(client, position) for position in range(len(prompts))))
        return rows

    def _top_tokens(self, choice) -> dict[str, float] | None:
        """The first generated token's alternatives, token -> log probability; None when the server sent none."""
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is None:
            return None
        if self.endpoint == "chat":
            content = getattr(logprobs, "content", None) or []
            first = getattr(content[0], "top_logprobs", None) if content else None
            return {entry.token: entry.logprob for entry in first} if first else None
        top = getattr(logprobs, "top_logprobs", None) or []
        return dict(top[0]) if top and top[0] else None

    # -- async machinery ------------------------------------------------------------------------

    @staticmethod
    def _run(coroutine):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine)
        # Called from a running loop (a notebook): run in a thread of its own.
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, coroutine).result()

    def _client(self):
        openai = _openai()
        http_client = openai.DefaultAsyncHttpxClient(transport=_DeadlineTransport(self.timeout))
        return openai.AsyncOpenAI(base_url=self._url, api_key=self._api_key(), timeout=self.timeout,
                                  max_retries=self.max_retries, http_client=http_client)

    async def _probe(self) -> None:
        counted = self.tokens_generated  # the probe's token is no sample
        async with self._client() as client:
            response = await self._create(client, prompt="Hello", n=2, max_tokens=1, temperature=1.0, top_p=1.0, seed=0)
        self.tokens_generated = counted
        self.served_model, self.fingerprint = self._reported_identity(response)
        self.n_supported = len(response.choices) >= 2

    def _groups(self, requests: list[SampleRequest]) -> list[list[int]]:
        """Positions of requests sent together: consecutive samples of one prompt, ``max_n`` at most."""
        size = self.max_n if self.n_supported else 1
        groups: list[list[int]] = []
        for position, request in enumerate(requests):
            last = groups[-1] if groups else None
            if (last and len(last) < size and requests[last[-1]].prompt == request.prompt
                    and requests[last[-1]].sample_index + 1 == request.sample_index):
                last.append(position)
            else:
                groups.append([position])
        return groups

    async def _generate(self, requests: list[SampleRequest], settings: GenerationSettings) -> list[str]:
        texts: list[str | None] = [None] * len(requests)
        limit = asyncio.Semaphore(self.concurrency)
        sampling = {"temperature": settings.temperature if settings.do_sample else 0.0, "top_p": settings.top_p,
                    "max_tokens": settings.max_new_tokens}

        async def one(client, group: list[int]) -> None:
            first = requests[group[0]]
            seed = request_seed(settings.seed, first.prompt, first.sample_index) if self.send_seed else None
            async with limit:
                response = await self._create(client, prompt=first.prompt, n=len(group), seed=seed, **sampling)
            self._check_identity(response)
            choices = sorted(response.choices, key=lambda c: c.index)
            if len(choices) != len(group):
                raise FairpathInputError(f"server {self.base_url} returned {len(choices)} choices for n={len(group)}; "
                                         "rerun with max_n=1 (--max-n 1)")
            for position, choice in zip(group, choices):
                texts[position] = self._choice_text(choice)

        async with self._client() as client:
            await asyncio.gather(*(one(client, group) for group in self._groups(requests)))
        return texts  # type: ignore[return-value]

    async def _create(self, client, prompt: str, n: int, seed: int | None, **sampling):
        """One request, with the server's 4xx turned into FairpathInputError and bad bodies retried."""
        openai = _openai()
        arguments = {"model": self.model, "n": n, **sampling, **({"seed": seed} if seed is not None else {})}
        for attempt in range(self.max_retries + 1):
            try:
                if self.endpoint == "chat":
                    response = await client.chat.completions.create(messages=[{"role": "user", "content": prompt}], **arguments)
                else:
                    response = await client.completions.create(prompt=prompt, **arguments)
                if not isinstance(getattr(response, "choices", None), list) or not response.choices:
                    raise ValueError("the response has no choices")
                break
            except openai.APIStatusError as error:
                if 400 <= error.status_code < 500:
                    raise FairpathInputError(self._redact(
                        f"server {self.base_url} refused the request for model {self.model!r} "
                        f"(HTTP {error.status_code}): {_server_message(error)}")) from None
                raise FairpathInputError(self._redact(
                    f"server {self.base_url} kept failing (HTTP {error.status_code} after {self.max_retries} retries): "
                    f"{_server_message(error)}")) from None
            except openai.APITimeoutError:
                raise FairpathInputError(self._redact(
                    f"server {self.base_url} did not finish answering within the timeout of {self.timeout:g} s per request "
                    f"({self.max_retries + 1} attempts); raise --timeout (timeout=) for slow servers or check the server"
                )) from None
            except openai.APIConnectionError as error:
                raise FairpathInputError(self._redact(
                    f"cannot reach {self.base_url} after {self.max_retries} retries ({type(error).__name__}: {error}); "
                    "is the server running?")) from None
            except (json.JSONDecodeError, openai.APIResponseValidationError, ValueError, TypeError) as error:
                # The openai client retries statuses, not bodies it cannot decode (a proxy's half-written reply).
                if attempt == self.max_retries:
                    raise FairpathInputError(self._redact(
                        f"server {self.base_url} sent an unreadable response {self.max_retries + 1} times "
                        f"({type(error).__name__}: {error})")) from None
                await asyncio.sleep(min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random()))
        usage = getattr(response, "usage", None)
        self.tokens_generated += int(getattr(usage, "completion_tokens", 0) or 0)
        return response

    def _check_identity(self, response) -> None:
        reported = self._reported_identity(response)
        if reported != (self.served_model, self.fingerprint):
            raise FairpathInputError(
                f"server {self.base_url} now reports model {reported[0]!r} (fingerprint {reported[1]!r}) instead of "
                f"{self.served_model!r} ({self.fingerprint!r}); nothing of this chunk was stored. Rerun to continue "
                "under the new model id (the store keeps the two apart)")

    def _reported_identity(self, response) -> tuple[str, str | None]:
        """The model and fingerprint the server reports, redacted: a server may echo the Authorization header."""
        fingerprint = getattr(response, "system_fingerprint", None) or None
        return self._redact(str(response.model or self.model)), self._redact(fingerprint) if fingerprint else None

    def _choice_text(self, choice) -> str:
        if self.endpoint == "chat":
            message = choice.message
            text = message.content if message.content is not None else getattr(message, "refusal", None)
        else:
            text = choice.text
        if not isinstance(text, str):
            raise FairpathInputError(self._redact(f"server {self.base_url} returned a choice without text: {choice!r}"))
        return self._redact(text)

    def _redact(self, message: str) -> str:
        """``message`` with the API key and the URL's credentials replaced by ``***``."""
        key = os.environ.get(self.api_key_env)
        for secret in ([key] if key else []) + self._url_secrets:
            message = message.replace(secret, REDACTED)
        return message


class _DeadlineTransport:
    """An HTTP transport with a deadline on each request attempt as a whole: sending, headers and body.

    httpx's own timeouts bound each socket read, so a server that trickles one byte a second would never
    time out; here the attempt fails with the client's ``ReadTimeout`` (which the ``openai`` client
    retries like any timeout) once ``timeout`` seconds have passed. The body is read here, within the
    deadline (the backend never streams). It speaks whichever httpx the ``openai`` client is built on
    (httpx, or httpx2 in its newer releases), taking the classes from the module of the request.
    """

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.inner = None

    async def handle_async_request(self, request):
        http = sys.modules[type(request).__module__.split(".")[0]]
        if self.inner is None:
            self.inner = http.AsyncHTTPTransport()
        try:
            return await asyncio.wait_for(self._whole(request, http), self.timeout)
        except asyncio.TimeoutError:
            raise http.ReadTimeout(f"no complete answer within {self.timeout:g} s", request=request) from None

    async def _whole(self, request, http):
        response = await self.inner.handle_async_request(request)
        try:
            body = b"".join([chunk async for chunk in response.stream])
        finally:
            await response.stream.aclose()
        return http.Response(response.status_code, headers=response.headers, content=body, extensions=response.extensions)

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *error) -> None:
        await self.aclose()


def _server_message(error) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        detail = body.get("error", body.get("detail", body.get("message", body)))
        if isinstance(detail, dict):
            detail = detail.get("message", detail)
        return str(detail)
    return str(getattr(error, "message", error))


def _option_row(top: dict[str, float] | None, options: list[set[str]]) -> list[float]:
    """Each option's probability among the top tokens (tokens compared without leading whitespace); NaN without any."""
    if top is None:
        return [float("nan")] * len(options)
    return [sum(math.exp(logprob) for token, logprob in top.items() if token.lstrip() in spellings) for spellings in options]
