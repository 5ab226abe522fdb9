"""OpenAIResponsesProvider: the OpenAI Responses API through the official SDK, streamed raw.

Asks its key source for the key before each request: by default the environment's
``OPENAI_API_KEY`` (:func:`.endpoints.environment_key` of the OpenAI service); the kernel passes
its own. It sends to ``OPENAI_BASE_URL`` of the environment, else :data:`DEFAULT_BASE_URL`
(``endpoints.OPENAI.current``), read again for each request. A key from the source is checked
with :func:`jupyter_turns.providers.endpoints.refusal` (never sent to an endpoint other than
the one it was given for) and withheld from text from then on. The client has
``max_retries=0``: ResilientCycle retries; :func:`.openai_errors.classify` is the one place SDK
exceptions become ProviderErrors.

Requests are stateless (``store: false``): the whole conversation goes each time
(:mod:`.openai_wire`), reasoning items with their ``encrypted_content``
(``include: ["reasoning.encrypted_content"]``) so the model keeps its reasoning across tool
calls. ``prompt_cache_key`` is the thread's first event id, so a thread's requests share a
cache. ``truncation`` is left at the API's default (disabled): a request too long for the model
is an error that says so, never a silent cut of the thread's start. ``--thinking`` maps to
``reasoning.effort`` (:func:`effort`), with ``summary: "auto"`` (dropped, once and for the
thread, when the organization may not get summaries). A continuation is the partial answer and
a user message quoting where it stopped (no prefill). ``--stream off`` (``streaming = False``)
sends ``stream: false`` and replays the whole Response through the same adapter.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any

import openai

from ..errors import ProviderError
from ..model.events import ConversationEvent, StreamEvent, Usage
from .anthropic_stream import as_dict
from .base import KeySource, Request, Thinking
from .endpoints import DEFAULTS, OPENAI, environment_key
from .keyed_client import KeyedClient, client_timeout
from .models import ModelInfo, model_info
from .openai_errors import classify
from .openai_stream import ResponsesAdapter, response_events
from .openai_wire import continued, responses_input

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MODEL",
    "OpenAIResponsesProvider",
    "build_params",
    "effort",
]

DEFAULT_MODEL = "gpt-5-mini"
DEFAULT_BASE_URL = DEFAULTS["openai"]

MISSING_KEY = (
    "No OpenAI API key found. Run %chat key openai (a hidden prompt; the key stays in this "
    "kernel), or set OPENAI_API_KEY in the environment before starting Jupyter, or put "
    "OPENAI_API_KEY=... in a .env file next to the notebook. Never type the key into a cell: "
    "cells and their outputs are saved in the notebook. "
    "To try everything offline, use %%chat --provider scripted."
)
NO_COMPACTION = (
    "The OpenAI Responses API offers no server-side compaction here; the thread goes on "
    "uncompacted (%chat forget N stops sending its oldest exchanges)."
)
_TOOL_CHOICE = {"auto": "auto", "any": "required", "none": "none"}
_ENVIRONMENT_KEY: KeySource = functools.partial(environment_key, OPENAI)  # the default source


class OpenAIResponsesProvider:
    """``api_key`` is used as given (no binding to an endpoint); otherwise ``key_source`` is
    asked before each request and its key is checked against the endpoint it was given for."""

    name = "openai"
    compaction = False  # the engine asks: no compact edit, no summarize request

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_source: KeySource = _ENVIRONMENT_KEY,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self._base_url = base_url  # None: the endpoint in use, read again for each request
        self.streaming = True  # False: plain request/response (--stream off)
        self.summaries = True  # False: the organization may not get reasoning summaries
        self._timeout = timeout
        self._keyed = KeyedClient(
            self._new_client,
            key_source=key_source,
            endpoint=lambda: self._base_url or OPENAI.current(),
            service=OPENAI,
            missing=MISSING_KEY,
            api_key=api_key,
            client=client,
        )

    @property
    def endpoint(self) -> str:
        """The base URL the next request goes to."""
        return self._keyed.endpoint

    def _new_client(self, key: str, endpoint: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=key, base_url=endpoint, max_retries=0, timeout=client_timeout(self._timeout)
        )

    def _current_client(self) -> openai.AsyncOpenAI:
        """The client, rebuilt if the source's key or the endpoint changed since."""
        return self._keyed.current()

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIResponsesProvider(model={self.model!r})"

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        if request.extra.get("compaction"):  # a summarize request: the engine goes on without
            raise ProviderError(NO_COMPACTION, kind="bad_request")
        params = build_params(request, request.model or self.model, summaries=self.summaries)
        client = self._current_client()
        adapter = ResponsesAdapter()
        if not self.streaming:
            response = await self._create(client, {**params, "stream": False})
            for event in response_events(as_dict(response)):
                for item in adapter.feed(event):
                    yield item
            return
        stream = await self._create(client, params)
        try:
            async for event in stream:
                for item in adapter.feed(event):
                    yield item
        finally:
            await stream.close()
        if not adapter.finished:
            raise ProviderError(
                "the response ended before it was complete (no response.completed)",
                kind="incomplete_stream",
                retryable=True,
            )

    async def _create(self, client: openai.AsyncOpenAI, params: dict[str, Any]) -> Any:
        """``responses.create``; without reasoning summaries if the organization may not get
        them (the API's 400 names them), and from then on for this provider."""
        create: Any = client.responses.create
        try:
            return await create(**params)
        except openai.BadRequestError as exc:
            reasoning = params.get("reasoning")
            if not (isinstance(reasoning, dict) and "summar" in str(exc).lower()):
                raise
            if "summary" not in reasoning:
                raise
            self.summaries = False
            params["reasoning"] = {k: v for k, v in reasoning.items() if k != "summary"}
            return await create(**params)

    def classify(self, error: BaseException) -> ProviderError:
        return classify(error)

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return model_info(model or self.model).cost(usage)


# ---------------------------------------------------------------------------- requests


def build_params(request: Request, model: str, *, summaries: bool = True) -> dict[str, Any]:
    """The keyword arguments of ``responses.create`` for one cycle."""
    items = responses_input(request.events)
    if request.continuation is not None and request.continuation.partial_text:
        continued(items, request.continuation.partial_text)
    params: dict[str, Any] = {"model": model, "input": items, "store": False, "stream": True}
    if request.system:
        params["instructions"] = request.system
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
                "strict": False,
            }
            for tool in request.tools
        ]
        params["tool_choice"] = _TOOL_CHOICE[request.tool_choice]
    if request.max_tokens:
        params["max_output_tokens"] = request.max_tokens
    chosen = effort(request.thinking, model_info(model))
    if chosen is not None:
        params["reasoning"] = (
            {"effort": chosen, "summary": "auto"} if summaries else {"effort": chosen}
        )
        if chosen != "none":
            params["include"] = ["reasoning.encrypted_content"]
    key = _cache_key(request.events)
    if key is not None:
        params["prompt_cache_key"] = key
    return params


def effort(thinking: Thinking, info: ModelInfo) -> str | None:
    """``reasoning.effort`` for ``--thinking`` (None: the model takes no reasoning parameter).

    ``off`` is the least the model allows (``minimal`` on GPT-5, ``none`` on GPT-5.1 and later,
    ``low`` on the o-series); ``adaptive`` is ``medium``; a token budget is ``low`` up to 4,096,
    ``medium`` up to 16,384, ``high`` above. A ``-pro`` model is always ``high``.
    """
    least = info.reasoning_off
    if least is None or least == "high":
        return least
    if thinking == "off":
        return least
    if thinking == "adaptive":
        return "medium"
    if thinking <= 4_096:
        return "low"
    return "medium" if thinking <= 16_384 else "high"


def _cache_key(events: Sequence[ConversationEvent]) -> str | None:
    """The thread's prompt cache key: its first event's id (stable for the thread's life)."""
    first = events[0] if events else None
    return f"jupyter-turns:{first.id}" if first is not None else None
