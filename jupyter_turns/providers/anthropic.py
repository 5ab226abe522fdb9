"""AnthropicProvider: the Claude Messages API through the official SDK, streamed raw.

Reads ``ANTHROPIC_API_KEY`` (found by :func:`jupyter_turns.keys.api_key`: the environment or a
``.env`` file; a key changed later, e.g. by ``%chat key``, is picked up by the next request) and
the SDK's ``ANTHROPIC_BASE_URL``. The client has
``max_retries=0``: ResilientCycle retries, with the server's ``retry-after`` capped.
:meth:`AnthropicProvider.classify` is the one place SDK and ``httpx2`` exceptions become
ProviderErrors. A continuation is requested by assistant prefill where the model accepts it,
otherwise (or after a 400 that mentions prefill) by a user message quoting where the answer
stopped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import httpx2

from ..conversation import anthropic_messages
from ..errors import ProviderConfigError, ProviderError
from ..events import StreamEvent, Usage
from ..keys import ENV_KEY, api_key, remember
from .anthropic_message import NOT_STREAMING, is_event_stream, whole_response
from .anthropic_stream import StreamAdapter
from .base import Request
from .models import model_info

__all__ = ["DEFAULT_MODEL", "NOT_STREAMING", "AnthropicProvider", "build_params", "classify"]

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_THINKING_BUDGET = 8_000
_QUOTE_CHARS = 400

MISSING_KEY = (
    "No Anthropic API key found. Run %chat key (a hidden prompt; the key stays in this kernel), "
    "or set ANTHROPIC_API_KEY in the environment before starting Jupyter, or put "
    "ANTHROPIC_API_KEY=... in a .env file next to the notebook. Never type the key into a cell: "
    "cells and their outputs are saved in the notebook. "
    "To try everything offline, use %%chat --provider scripted."
)


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self._base_url = base_url  # None: the SDK reads ANTHROPIC_BASE_URL itself
        self.streaming = True  # False: plain request/response (--stream off, or a proxy)
        self._notices: list[str] = []  # for the next plain answer (see anthropic_message)
        self._timeout = timeout
        self._env_key: str | None = None  # the environment's key the client was built with
        if client is None:
            if api_key:
                remember(api_key)
            else:
                self._env_key = api_key = _find_key()
            client = self._new_client(api_key)
        self._client = client

    def _new_client(self, key: str) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=key,
            base_url=self._base_url,
            max_retries=0,
            timeout=httpx2.Timeout(self._timeout, connect=10.0),
        )

    def _current_client(self) -> anthropic.AsyncAnthropic:
        """The client, rebuilt if the environment's key changed since (``%chat key``)."""
        if self._env_key is not None:
            key = _find_key()
            if key != self._env_key:
                self._env_key = key
                self._client = self._new_client(key)
        return self._client

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(model={self.model!r})"

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        model = request.model or self.model
        params = build_params(request, model)
        client = self._current_client()
        if self.streaming:
            try:
                response = await self._create(client, params, request, model)
            except anthropic.BadRequestError as exc:
                if "stream" not in str(exc).lower():
                    raise
                response = None  # the endpoint refuses streaming
            try:
                whole = response is None or not await is_event_stream(response)
            except BaseException:  # the body broke off while it was read
                await response.close()
                raise
            if whole:
                if response is not None:
                    await response.close()
                self.streaming = False  # the thread's provider remembers it
                self._notices.append(NOT_STREAMING)
        if not self.streaming:  # the notice waits for the first plain answer (a retry's too)
            async for item in whole_response(client.messages.create, params, self._notices):
                yield item
            return
        adapter = StreamAdapter()
        try:
            async for event in response:
                for item in adapter.feed(event):
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
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any], request: Request, model: str
    ) -> Any:
        """``messages.create``; without assistant prefill if the model refuses it."""
        try:
            return await client.messages.create(**params)
        except anthropic.BadRequestError as exc:
            if not (_uses_prefill(params) and "prefill" in str(exc).lower()):
                raise
            params.update(build_params(request, model, prefill=False), stream=params["stream"])
            return await client.messages.create(**params)

    def classify(self, error: BaseException) -> ProviderError:
        return classify(error)

    def cost(self, usage: Usage, model: str | None) -> float | None:
        return model_info(model or self.model).cost(usage)


def _find_key() -> str:
    key = api_key()
    if not key:
        raise ProviderConfigError(MISSING_KEY)
    return key


# ---------------------------------------------------------------------------- requests


def build_params(request: Request, model: str, *, prefill: bool | None = None) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for one cycle."""
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
    _cache_newest_turn(messages)
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        params["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    if request.tools:
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        tools[-1]["cache_control"] = {"type": "ephemeral"}
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
    tail = partial[-_QUOTE_CHARS:]
    messages.append(
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Your previous answer was cut off. Continue it exactly where it "
                    "stopped, without repeating anything and without any preamble. It ended "
                    f"with:\n\n<answer_end>{tail}</answer_end>",
                }
            ],
        }
    )


def _uses_prefill(params: dict[str, Any]) -> bool:
    messages = params["messages"]
    return bool(messages) and messages[-1]["role"] == "assistant"


def _cache_newest_turn(messages: list[dict[str, Any]]) -> None:
    for message in reversed(messages):
        if message["role"] == "user" and message["content"]:
            last = dict(message["content"][-1])
            last["cache_control"] = {"type": "ephemeral"}
            message["content"][-1] = last
            return


# ---------------------------------------------------------------------------- errors

_FATAL_HINTS = {
    401: f" Check {ENV_KEY} (%chat key sets it for this kernel).",
    403: " The key may lack access to this model or feature.",
    404: " Check the model name (%chat settings or --model).",
    413: " The request is too large: start a new thread or send less.",
}


def classify(error: BaseException) -> ProviderError:
    """Map an SDK or transport exception to a ProviderError with its retryability."""
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error)
    if isinstance(error, anthropic.APITimeoutError):
        return ProviderError(
            "The request to the Anthropic API timed out.", kind="timeout", retryable=True
        )
    if isinstance(error, anthropic.APIConnectionError):
        return ProviderError(
            f"Could not reach the Anthropic API: {error}", kind="connection", retryable=True
        )
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def _status_error(error: anthropic.APIStatusError) -> ProviderError:
    status = error.status_code
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    error_type = str(detail.get("type") or getattr(error, "type", None) or "")
    server_message = str(detail.get("message") or error.message)
    retry_after = _retry_after(error)
    if status == 200:  # an `error` event inside a 200 stream
        kind = "overloaded" if error_type == "overloaded_error" else "stream_error"
        return ProviderError(
            f"The API reported an error mid-stream ({error_type or 'error'}): {server_message}",
            kind=kind,
            retryable=True,
            retry_after=retry_after,
            status=status,
        )
    if status == 429:
        kind, retryable = "rate_limit", True
    elif status == 529:
        kind, retryable = "overloaded", True
    elif status in (408, 409) or status >= 500:
        kind, retryable = "server", True
    elif status == 401:
        kind, retryable = "auth", False
    elif status == 403:
        kind, retryable = "permission", False
    elif status == 404:
        kind, retryable = "not_found", False
    elif status == 413:
        kind, retryable = "too_large", False
    else:
        kind, retryable = "bad_request", False
    label = f"{status} {error_type}".strip()
    message = f"Anthropic API error {label}: {server_message}{_FATAL_HINTS.get(status, '')}"
    return ProviderError(
        message, kind=kind, retryable=retryable, retry_after=retry_after, status=status
    )


def _retry_after(error: anthropic.APIStatusError) -> float | None:
    headers = getattr(error.response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None
