"""OpenAIChatProvider and OllamaProvider: any OpenAI-compatible Chat Completions server
(Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, LiteLLM) through the official ``openai`` SDK.

There is no universal server and no universal model: the base URL comes from the caller
(``--base-url``, ``%config ChatMagics.base_url``) or ``OPENAI_BASE_URL``, and the model must be
named. Ollama's provider knows its server's address (``OLLAMA_HOST``, as Ollama's own CLI reads
it, else ``http://localhost:11434``) but not which models were pulled there: it asks for one and
says how to list them.

A key is optional (local servers need none). The key source's key is sent only where it may go:
not to an endpoint it was given for another (:func:`jupyter_turns.providers.endpoints.refusal`),
and the environment's ``OPENAI_API_KEY`` only to the endpoint the environment names with it
(``OPENAI_BASE_URL``, else OpenAI's own), never to whatever server a cell points at. Otherwise a
placeholder is sent (the SDK needs a string, and would otherwise read ``OPENAI_API_KEY``
itself); a 401 then says that no key was sent to this endpoint, and how to give one. The
client has ``max_retries=0``: ResilientCycle retries, visibly. :func:`.openai_errors.classify`
maps the SDK's exceptions; this module adds what only it knows (no key sent, nothing answering
at a local address).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx2
import openai

from ..errors import ProviderConfigError, ProviderError
from ..model.events import StreamEvent, Usage
from ..redaction import remember
from .base import Request
from .endpoints import OPENAI, environment_key, refusal, shown
from .keyed_client import client_timeout
from .models import model_info
from .openai_chat_stream import ChunkAdapter, completion_chunks
from .openai_chat_wire import build_params
from .openai_errors import classify
from .tls import untrusted_certificate

if TYPE_CHECKING:
    from .anthropic import KeySource

__all__ = [
    "NO_KEY",
    "OLLAMA_DEFAULT",
    "OllamaProvider",
    "OpenAIChatProvider",
    "ollama_base_url",
]

OLLAMA_DEFAULT = "http://localhost:11434"
NO_KEY = "not-needed"  # sent when no key may go to this endpoint: the SDK needs a string
_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}

NEEDS_BASE_URL = (
    "The openai-chat provider needs the server's address: --base-url URL (e.g. "
    "http://localhost:8000/v1), or %config ChatMagics.base_url = 'URL', or OPENAI_BASE_URL in "
    "the environment before Jupyter starts."
)
NEEDS_MODEL = (
    "The openai-chat provider needs a model name: there is no default across servers. "
    "Give one with --model NAME (or %config ChatMagics.model = 'NAME'); the server's "
    "GET /v1/models lists what it serves."
)
OLLAMA_NEEDS_MODEL = (
    "Ollama needs a model name: --model NAME (e.g. --model llama3.2), or "
    "%config ChatMagics.model = 'NAME'. `ollama list` shows the models on this machine, "
    "`ollama pull NAME` fetches one."
)


class OpenAIChatProvider:
    """``api_key`` is used as given; otherwise ``key_source`` (default: the environment's
    ``OPENAI_API_KEY``) is asked before each request and its key checked for the endpoint."""

    name = "openai-chat"
    needs_model = NEEDS_MODEL

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_source: KeySource | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        if not model:
            raise ProviderConfigError(self.needs_model)
        self.model = model
        self.streaming = True  # False: plain request/response (--stream off)
        self._base_url = base_url or self._default_base_url()
        self._api_key = api_key
        if api_key:
            remember(api_key)
        self._key_source = key_source
        self._timeout = timeout
        self._given_client = client
        self._client: openai.AsyncOpenAI | None = client
        self._built_with: str | None = None  # the key the client was built with
        self._why_no_key: str | None = None  # why the last request went without a key

    def _default_base_url(self) -> str:
        url = os.environ.get(OPENAI.base_url_variable, "").strip()
        if not url:
            raise ProviderConfigError(NEEDS_BASE_URL)
        return url

    @property
    def endpoint(self) -> str:
        """The base URL the next request goes to."""
        if self._given_client is not None:
            return str(self._given_client.base_url)
        return self._base_url

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(model={self.model!r}, endpoint={shown(self.endpoint)!r})"

    # ------------------------------------------------------------------ the key and the client

    def _key(self) -> str:
        """The key for this endpoint, or the placeholder (``_why_no_key`` then says why)."""
        if self._api_key:
            self._why_no_key = None
            return self._api_key
        key = self._key_source() if self._key_source is not None else environment_key(OPENAI)
        why: str | None = None
        if not key:
            why = "no API key was given"
        else:
            remember(key)  # whatever its source: withheld from text from now on
            refused = refusal(key, self.endpoint, OPENAI)
            if refused:  # e.g. the environment's key, which goes only where it names
                why = refused.partition(". A key never")[0].removeprefix("Not sent: ")
        self._why_no_key = why
        return NO_KEY if why else str(key)

    def _current_client(self) -> openai.AsyncOpenAI:
        """The client, rebuilt when the key to send changed since."""
        if self._given_client is not None:
            return self._given_client
        key = self._key()
        if self._client is None or key != self._built_with:
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self._base_url,
                max_retries=0,
                timeout=client_timeout(self._timeout),
            )
            self._built_with = key
        return self._client

    # ------------------------------------------------------------------ requests

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        model = request.model or self.model
        params = build_params(request, model, stream=self.streaming)
        client = self._current_client()
        adapter = ChunkAdapter()
        response = await client.chat.completions.create(**params)
        if not self.streaming:
            chunks: Any = _as_stream(completion_chunks(response))
        elif _is_json(response):  # a server that answers a stream request with one object
            chunks = _as_stream(completion_chunks(await _json_body(response)))
        else:
            chunks = response
        try:
            async for chunk in chunks:
                for item in adapter.feed(chunk):
                    yield item
        finally:
            if self.streaming:
                await response.close()
        for item in adapter.end():
            yield item

    def classify(self, error: BaseException) -> ProviderError:
        """:func:`.openai_errors.classify`, worded for this provider's server and key."""
        classified = classify(error)
        if classified.kind == "auth" and self._why_no_key:
            return ProviderError(
                f"{shown(self.endpoint)} asks for an API key, and none was sent to it: "
                f"{self._why_no_key}. Give one for this endpoint with %chat key openai (a "
                f"hidden prompt), or set {OPENAI.key_variable} together with "
                f"{OPENAI.base_url_variable}={shown(self.endpoint)} in the environment. "
                f"({classified.message})",
                kind="auth",
                status=classified.status,
            )
        if classified.kind == "connection" and _refused(error) and _is_local(self.endpoint):
            return ProviderError(
                self._nothing_answers(), kind="connection", retryable=False, status=None
            )
        return classified

    def _nothing_answers(self) -> str:
        return (
            f"Nothing answers at {shown(self.endpoint)} — is the server running? "
            "(Check --base-url.)"
        )

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return model_info(model or self.model).cost(usage)


class OllamaProvider(OpenAIChatProvider):
    """Ollama's OpenAI-compatible API: at ``OLLAMA_HOST`` or ``http://localhost:11434``."""

    name = "ollama"
    needs_model = OLLAMA_NEEDS_MODEL

    def _default_base_url(self) -> str:
        return ollama_base_url()

    def _nothing_answers(self) -> str:
        server = shown(self.endpoint).removesuffix("/").removesuffix("/v1")
        return f"Nothing answers at {server} — is Ollama running? (`ollama serve` starts it)"


def ollama_base_url(environ: dict[str, str] | None = None) -> str:
    """Ollama's OpenAI-compatible base URL: ``OLLAMA_HOST`` read as Ollama's CLI reads it
    (a scheme, a host and a port, each optional), else the default; ``/v1`` added."""
    host = (os.environ if environ is None else environ).get("OLLAMA_HOST", "").strip()
    if not host:
        return f"{OLLAMA_DEFAULT}/v1"
    if "://" not in host:
        host = f"http://{host}"
    parts = urlsplit(host)
    name = parts.hostname or "127.0.0.1"
    if ":" in name:  # IPv6
        name = f"[{name}]"
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{name}:{port}{path}/v1"


async def _as_stream(chunks: Any) -> AsyncIterator[Any]:
    for chunk in chunks:
        yield chunk


def _is_json(response: Any) -> bool:
    http = getattr(response, "response", None)
    content_type = str(http.headers.get("content-type", "")) if http is not None else ""
    return content_type.startswith("application/json")


async def _json_body(response: Any) -> Any:
    http = response.response
    await http.aread()
    return http.json()


def _refused(error: BaseException) -> bool:
    """Whether the connection was refused (nothing listens there), not lost on the way, nor
    refused by a certificate check, nor stopped at a proxy."""
    if untrusted_certificate(error) or _proxied():
        return False
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, httpx2.ConnectError | ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _proxied() -> bool:
    """Whether requests go through a proxy (then a refused connection is the proxy's)."""
    return any(os.environ.get(name) for name in _PROXY_VARIABLES)


def _is_local(url: str) -> bool:
    return (urlsplit(url).hostname or "") in _LOCAL_HOSTS
