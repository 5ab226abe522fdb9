"""The one place where the ``openai`` SDK's and ``httpx2``'s exceptions become ProviderErrors.

Each gets its retryability (429, 5xx, timeouts and broken connections are worth another
attempt; other 4xx are not; a 429 for an exhausted quota is not), the server's ``retry-after``
hint and a message the user can act on. Servers that speak the OpenAI APIs word their errors
differently (``{"error": {"message": ...}}``, Ollama's ``{"error": "..."}``, a bare
``{"message": ...}``, plain text): the server's own words are quoted whatever the shape.
A provider adds its own wording (which key, which server) by wrapping :func:`classify`.
"""

from __future__ import annotations

import re
from typing import Any

import httpx2
import openai

from ..errors import ProviderError

__all__ = ["CONTEXT_TOO_LONG", "classify", "server_message"]

CONTEXT_TOO_LONG = (
    "The conversation no longer fits the model's context: start a new thread or %chat compact."
)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
_CONTEXT_WORDS = re.compile(r"context (length|size|window)|maximum context|too many tokens", re.I)
_HINTS = {
    401: " Check the API key (%chat key openai gives one to this kernel; or OPENAI_API_KEY).",
    403: " The key may lack access to this model or feature.",
    404: " Check the model name (--model, or %chat settings) and the base URL.",
    413: " The request is too large: start a new thread or send less.",
}


def classify(error: BaseException) -> ProviderError:
    """Map an SDK or transport exception to a ProviderError with its retryability."""
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, openai.APIStatusError):
        return _status_error(error)
    if isinstance(error, openai.APITimeoutError):
        return ProviderError("The request to the API timed out.", kind="timeout", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__ or error.__context__
        detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(error)
        return ProviderError(
            f"Could not reach the API: {detail}", kind="connection", retryable=True
        )
    if isinstance(error, openai.APIError):  # an error object inside a 200 stream
        return ProviderError(
            f"The API reported an error mid-stream: {server_message(error.body, error.message)}",
            kind="stream_error",
            retryable=True,
        )
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def server_message(body: Any, fallback: str) -> str:
    """What the server said, from whichever error shape it used."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message") or inner.get("detail") or inner
        if isinstance(inner, str) and inner:
            return inner
        detail = body.get("message") or body.get("detail")
        if isinstance(detail, str) and detail:
            return detail
    if isinstance(body, str) and body.strip():
        return body.strip()[:2000]
    return fallback


def _status_error(error: openai.APIStatusError) -> ProviderError:
    status = error.status_code
    body = error.body if isinstance(error.body, dict) else {}
    code = str(body.get("code") or body.get("type") or "")
    said = server_message(error.body, error.message)
    retry_after = _retry_after(error)
    kind, retryable = _kind(status, code, said)
    label = f"{status} {code}".strip() if code and not code.isdigit() else str(status)
    hint = f" {CONTEXT_TOO_LONG}" if kind == "context_too_long" else _HINTS.get(status, "")
    return ProviderError(
        f"API error {label}: {said}{hint}",
        kind=kind,
        retryable=retryable,
        retry_after=retry_after,
        status=status,
    )


def _kind(status: int, code: str, said: str) -> tuple[str, bool]:
    if status == 429:
        return "rate_limit", code != "insufficient_quota"  # a spent quota does not come back
    if status == 529:
        return "overloaded", True
    if status in (408, 409) or status >= 500:
        return "server", True
    if status in (400, 413) and (code in _CONTEXT_CODES or _CONTEXT_WORDS.search(said)):
        return "context_too_long", False
    return {
        401: "auth",
        403: "permission",
        404: "not_found",
        413: "too_large",
    }.get(status, "bad_request"), False


def _retry_after(error: openai.APIStatusError) -> float | None:
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
