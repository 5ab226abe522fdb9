"""AnthropicProvider: the Claude Messages API through the official SDK, streamed raw.

:class:`MessagesProvider` holds what every platform that serves Claude shares (the request, the
stream and the plain answer, continuation, compaction, errors); :class:`AnthropicProvider` adds
Anthropic's own client and its key, :mod:`.anthropic_cloud` Amazon Bedrock's and Vertex AI's
clients and their credentials.

Asks its key source for the key before each request: by default the environment's
``ANTHROPIC_API_KEY`` (:func:`jupyter_turns.providers.endpoints.environment_key`); the kernel
passes its own, which also reads a ``.env`` file next to the notebook
(:func:`jupyter_turns.kernel.keys.api_key`). A key changed later, e.g. by ``%chat key``, is
picked up by the next request. It sends to the endpoint in use
(:func:`jupyter_turns.providers.endpoints.current`: ``ANTHROPIC_BASE_URL`` of the environment,
never of a ``.env``), read again for each request. Whatever the key source, a key is never sent
to an endpoint other than the one it was given for
(:func:`jupyter_turns.providers.endpoints.refusal`): the request is not made and a
ProviderConfigError says to run ``%chat key``. The client has ``max_retries=0``: ResilientCycle
retries, with the server's ``retry-after`` capped. :meth:`AnthropicProvider.classify` is the one
place SDK and ``httpx2`` exceptions become ProviderErrors. A continuation is requested by
assistant prefill where the model accepts it, otherwise (or after a 400 that mentions prefill) by
a user message quoting where the answer stopped.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import anthropic

from ..errors import ProviderConfigError, ProviderError
from ..model.events import Finished, StreamEvent, Usage, compaction_note
from .anthropic_errors import ANTHROPIC, Platform, classify
from .anthropic_message import NOT_STREAMING, is_event_stream, whole_response, with_pending
from .anthropic_stream import StreamAdapter
from .anthropic_wire import anthropic_messages
from .base import KeySource, Request, continue_request
from .endpoints import ANTHROPIC as ANTHROPIC_API
from .endpoints import current, environment_key
from .keyed_client import KeyedClient, client_timeout
from .limits import check_request
from .models import model_info

__all__ = [
    "DEFAULT_MODEL",
    "NOT_STREAMING",
    "AnthropicProvider",
    "ClaudeClient",
    "KeySource",
    "MessagesProvider",
    "build_params",
    "classify",
    "client_timeout",
]

DEFAULT_MODEL = "claude-sonnet-5-5"
COMPACT_EDIT_BETA = "compact-2026-01-12"  # context_management edit compact_20260112
SUMMARIZE_BETA = "compact-2026-09-04"  # the top-level compaction = {"type": "summarize"}
DEFAULT_THINKING_BUDGET = 8_000

MISSING_KEY = (
    "No Anthropic API key found. Run %chat key (a hidden prompt; the key stays in this kernel), "
    "or set ANTHROPIC_API_KEY in the environment before starting Jupyter, or put "
    "ANTHROPIC_API_KEY=... in a .env file next to the notebook. Never type the key into a cell: "
    "cells and their outputs are saved in the notebook. "
    "To try everything offline, use %%chat --provider scripted."
)


ClaudeClient: TypeAlias = (
    "anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex"
)
"""An SDK client that speaks the Messages API: Anthropic's own, or Claude on a cloud platform."""


class MessagesProvider:
    """The Messages API's requests, streams and plain answers, whatever client sends them.

    The seam between Claude's platforms: a subclass says which client the next request goes
    through (:meth:`_current_client`, with its credentials) and where (:attr:`endpoint`); the
    request, the stream, the continuation, the compaction and its refusal, and the error
    mapping are the same for each. ``compaction`` and ``counts_tokens`` say what the platform
    offers: the engine reads ``compaction``, and ``count_tokens`` answers None where there is
    no token counter."""

    name = "anthropic"
    platform: Platform = ANTHROPIC
    # the content types of a streamed answer (a proxy may answer JSON instead)
    stream_types: tuple[str, ...] = ("text/event-stream",)
    counts_tokens = True  # the platform has a token counter
    api_version: str | None = None  # the body's anthropic_version (None: the SDK's)

    def __init__(self, model: str, *, timeout: float = 600.0) -> None:
        self.model = model
        self.streaming = True  # False: plain request/response (--stream off, or a proxy)
        self.compaction = True  # False: the endpoint refused the compact edit
        self._counts = self.counts_tokens  # False: the token counter is not available here
        # details for the next answer's Finished: notices, a refused compaction (cleared once
        # sent, so a retried request loses none)
        self._pending: dict[str, Any] = {}
        self._timeout = timeout

    @property
    def endpoint(self) -> str:
        """The base URL the next request goes to."""
        return str(self._current_client().base_url)

    def _current_client(self) -> ClaudeClient:
        """The client the next request goes through; raises ProviderConfigError when there is
        none to be had (no key, no credentials)."""
        raise NotImplementedError

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        model = request.model or self.model
        params = build_params(request, model, long_cache=self.long_cache(model))
        check_request(params)  # too large: say what, instead of a 413 after sending it all
        client = self._current_client()
        note = request.extra.get("compaction_note")
        if self.streaming:
            try:
                response = await self._create(client, params, request, model)
            except anthropic.BadRequestError as exc:
                if "stream" not in str(exc).lower():
                    raise
                response = None  # the endpoint refuses streaming
            try:
                whole = response is None or not await is_event_stream(response, self.stream_types)
            except BaseException:  # the body broke off while it was read
                await response.close()
                raise
            if whole:
                if response is not None:
                    await response.close()
                self.streaming = False  # the thread's provider remembers it
                self._pending.setdefault("notices", []).append(NOT_STREAMING)
        if not self.streaming:  # the notice waits for the first plain answer (a retry's too)
            create = functools.partial(self._call, client)
            async for item in whole_response(create, params, self._pending, note):
                yield item
            return
        adapter = StreamAdapter(note)
        try:
            async for event in response:
                for item in adapter.feed(event):
                    if isinstance(item, Finished) and self._pending:
                        item = with_pending(item, self._pending)
                    yield item
        finally:
            await response.close()
        if not adapter.finished:
            raise ProviderError(
                "the response ended before it was complete (no message_stop)",
                kind="incomplete_stream",
                retryable=True,
            )

    async def _create(
        self, client: ClaudeClient, params: dict[str, Any], request: Request, model: str
    ) -> Any:
        """``messages.create``; without assistant prefill if the model refuses it."""
        try:
            return await self._call(client, **params)
        except anthropic.BadRequestError as exc:
            if not (_uses_prefill(params) and "prefill" in str(exc).lower()):
                raise
            rebuilt = build_params(request, model, prefill=False, long_cache=self.long_cache(model))
            if not self.compaction:
                rebuilt.pop("context_management", None)
                _drop_beta(rebuilt, COMPACT_EDIT_BETA)
            params.update(rebuilt, stream=params["stream"])
            return await self._call(client, **params)

    async def _call(self, client: ClaudeClient, **params: Any) -> Any:
        """One request, through the beta endpoint when it names betas. A request with the
        compact edit that the endpoint refuses is sent again without it, once, and the thread
        goes on uncompacted; the answer's ``compaction_refused`` detail says why (the engine
        words the notice: the model or endpoint does not offer compaction)."""
        # Any: the cloud clients' beta resource borrows the first-party create, which a type
        # checker cannot bind to it
        messages: Any = client.beta.messages if "betas" in params else client.messages
        create = messages.create
        try:
            return await create(**params, **self._body_fields())
        except anthropic.BadRequestError as exc:
            if "context_management" not in params:
                raise
            self.compaction = False
            params.pop("context_management")
            _drop_beta(params, COMPACT_EDIT_BETA)
            self._pending["compaction_refused"] = str(self.classify(exc).message)
            return await self._call(client, **params)

    async def count_tokens(self, request: Request) -> int | None:
        """The input tokens of ``request`` by the API's token counter (None: not available
        here, or it failed; it is not asked again after a refusal)."""
        if not self._counts:
            return None
        model = request.model or self.model
        params = build_params(request, model, long_cache=self.long_cache(model))
        counted = {k: params[k] for k in ("model", "messages", "system", "tools") if k in params}
        try:
            client = self._current_client()
        except ProviderConfigError:
            return None  # the request itself says why it is not sent
        try:
            result = await client.messages.count_tokens(**counted, **self._body_fields())
        except (anthropic.APIStatusError, anthropic.APIConnectionError):
            self._counts = False
            return None
        tokens = getattr(result, "input_tokens", None)
        return tokens if isinstance(tokens, int) else None

    def long_cache(self, model: str) -> bool:
        """Whether the platform keeps a prefix an hour for ``model`` (``ttl: "1h"``): the
        Anthropic API and Vertex AI do for every Claude model they serve."""
        del model
        return True

    def _body_fields(self) -> dict[str, Any]:
        """What the platform wants in every body beside the request's own fields."""
        if self.api_version is None:
            return {}
        return {"extra_body": {"anthropic_version": self.api_version}}

    def classify(self, error: BaseException) -> ProviderError:
        return classify(error, self.platform)

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return model_info(model or self.model).cost(usage)


class AnthropicProvider(MessagesProvider):
    """``api_key`` is used as given (no binding to an endpoint); otherwise ``key_source`` is
    asked before each request and its key is checked against the endpoint it was given for."""

    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_source: KeySource = environment_key,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        super().__init__(model or DEFAULT_MODEL, timeout=timeout)
        self._base_url = base_url  # None: the endpoint in use, read again for each request
        self._keyed = KeyedClient(
            self._new_client,
            key_source=key_source,
            endpoint=lambda: self._base_url or current(),
            service=ANTHROPIC_API,
            missing=MISSING_KEY,
            api_key=api_key,
            client=client,
        )

    @property
    def endpoint(self) -> str:
        """The base URL the next request goes to."""
        return self._keyed.endpoint

    def _new_client(self, key: str, endpoint: str) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=key, base_url=endpoint, max_retries=0, timeout=client_timeout(self._timeout)
        )

    def _current_client(self) -> anthropic.AsyncAnthropic:
        """The client, rebuilt if the source's key or the endpoint changed since."""
        return self._keyed.current()

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(model={self.model!r})"


# ---------------------------------------------------------------------------- requests


def build_params(
    request: Request, model: str, *, prefill: bool | None = None, long_cache: bool = True
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for one cycle. ``long_cache``: the
    platform offers the 1-hour cache lifetime for ``model``, asked for by ``request.cache_ttl``."""
    info = model_info(model)
    messages = anthropic_messages(request.events)
    thinking = _thinking(request, info)
    max_tokens = request.max_tokens or info.max_tokens
    if isinstance(thinking, dict) and "budget_tokens" in thinking:
        max_tokens = max(max_tokens, int(thinking["budget_tokens"]) + 1024)
    if request.continuation is not None and request.continuation.partial_text:
        partial = request.continuation.partial_text
        allow = info.prefill and thinking is None and partial == partial.rstrip()
        _continue(messages, partial, prefill=allow if prefill is None else prefill and allow)
    control = _cache_control(request.cache_ttl if long_cache else "5m")
    _cache_newest_turn(messages, control)
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": True,
    }
    betas = []
    if request.extra.get("context_management"):
        params["context_management"] = request.extra["context_management"]
        betas.append(COMPACT_EDIT_BETA)
    if request.extra.get("compaction"):
        params["compaction"] = request.extra["compaction"]
        betas.append(SUMMARIZE_BETA)
    for event in request.events:  # a compaction block sent back is a beta block
        mode = compaction_note(event).get("mode")
        if mode:
            betas.append(SUMMARIZE_BETA if mode == "summarize" else COMPACT_EDIT_BETA)
    if betas:
        params["betas"] = sorted(set(betas))
    if request.system:
        params["system"] = [
            {"type": "text", "text": request.system, "cache_control": dict(control)}
        ]
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        tools[-1]["cache_control"] = dict(control)
        params["tools"] = tools
        params["tool_choice"] = {"type": request.tool_choice}
    if thinking is not None:
        params["thinking"] = thinking
    return params


def _thinking(request: Request, info: Any) -> dict[str, Any] | None:
    thinking = request.thinking
    if thinking == "off" or not info.thinking:
        return None
    if isinstance(thinking, int):
        return {"type": "enabled", "budget_tokens": thinking, "display": "summarized"}
    if info.adaptive_thinking:
        return {"type": "adaptive", "display": "summarized"}
    return {"type": "enabled", "budget_tokens": DEFAULT_THINKING_BUDGET, "display": "summarized"}


def _continue(messages: list[dict[str, Any]], partial: str, *, prefill: bool) -> None:
    """Ask the model to go on from ``partial``: as prefill, or by a quoting user message."""
    text_block = {"type": "text", "text": partial}
    if messages and messages[-1]["role"] == "assistant":
        messages[-1]["content"].append(text_block)
    else:
        messages.append({"role": "assistant", "content": [text_block]})
    if prefill:
        return
    messages.append(
        {"role": "user", "content": [{"type": "text", "text": continue_request(partial)}]}
    )


def _uses_prefill(params: dict[str, Any]) -> bool:
    messages = params["messages"]
    return bool(messages) and messages[-1]["role"] == "assistant"


def _drop_beta(params: dict[str, Any], beta: str) -> None:
    betas = [b for b in params.get("betas", ()) if b != beta]
    if betas:
        params["betas"] = betas
    else:
        params.pop("betas", None)


def _cache_control(ttl: str) -> dict[str, str]:
    """The breakpoints' marker. Every breakpoint of a request (the tools, the system prompt,
    the newest user turn) gets the same lifetime, so the API's rule for mixed lifetimes (a
    1-hour breakpoint may not follow a 5-minute one) always holds; the 5-minute one is the
    API's default and is sent as it always was, without a ``ttl``."""
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def _cache_newest_turn(messages: list[dict[str, Any]], control: dict[str, str]) -> None:
    for message in reversed(messages):
        if message["role"] == "user" and message["content"]:
            last = dict(message["content"][-1])
            last["cache_control"] = dict(control)
            message["content"][-1] = last
            return
