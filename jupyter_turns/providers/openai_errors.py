"""The one place where the OpenAI SDK's and ``httpx2``'s exceptions become ProviderErrors.

API-neutral between the Responses API and Chat Completions (both raise the same SDK exceptions
with the same ``{"error": {"message", "type", "param", "code"}}`` bodies), so every OpenAI
provider classifies here. Each error gets its retryability (429 rate limits, 5xx, timeouts and
broken connections are worth another attempt; 4xx are not, nor is a 429 ``insufficient_quota``:
no retry pays a bill), the server's ``retry-after-ms`` / ``retry-after`` hint and a message the
user can act on. An error reported inside a stream (an ``error`` event, ``response.failed``)
has a code and no status: :func:`coded_error` maps it.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from ..errors import ProviderError

__all__ = ["CONTEXT_TOO_LONG", "KEY_HINT", "classify", "coded_error"]

KEY_HINT = "Check the key: run %chat key openai, or set OPENAI_API_KEY (or put it in a .env file)."
CONTEXT_TOO_LONG = (
    "The conversation is longer than the model's context window: start a new thread "
    "(%%chat --new) or %chat compact (or %chat forget N to stop sending the oldest N "
    "exchanges)."
)
_QUOTA = (
    "The OpenAI account has no quota left (insufficient_quota): retrying will not help. "
    "Check the plan and billing at platform.openai.com."
)
_FATAL_HINTS = {
    401: f" {KEY_HINT}",
    403: " The key may lack access to this model or feature (some models need a verified "
    "organization).",
    404: " Check the model name (%chat settings or --model).",
    413: " The request is too large: start a new thread or send less.",
}
_CONTEXT_CODES = ("context_length_exceeded", "string_above_max_length")
_RETRYABLE_CODES = {
    "rate_limit_exceeded": "rate_limit",
    "server_error": "server",
    "server_is_overloaded": "overloaded",
    "slow_down": "overloaded",
    "internal_error": "server",
}


def classify(error: BaseException) -> ProviderError:
    """Map an SDK or transport exception to a ProviderError with its retryability."""
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, openai.APIStatusError):
        return _status_error(error)
    if isinstance(error, openai.APITimeoutError):
        return ProviderError(
            "The request to the OpenAI API timed out.", kind="timeout", retryable=True
        )
    if isinstance(error, openai.APIConnectionError):
        return ProviderError(
            f"Could not reach the OpenAI API: {error}", kind="connection", retryable=True
        )
    if isinstance(error, openai.APIError):  # an error in a 200 stream: a body, no status
        body = error.body if isinstance(error.body, dict) else {}
        return coded_error(error.code or body.get("type"), error.message)
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def coded_error(code: Any, message: Any) -> ProviderError:
    """An error the API reported inside a stream (its ``code`` and ``message``): the context
    window, rate limits and server trouble are told apart by the code; anything else is the
    request's fault and not retried."""
    code_text = str(code or "")
    text = str(message or "the API reported an error")
    if _is_context(code_text, text):
        return ProviderError(f"{CONTEXT_TOO_LONG} ({text})", kind="context_too_long")
    if code_text == "insufficient_quota":
        return ProviderError(f"{_QUOTA} ({text})", kind="rate_limit")
    kind = _RETRYABLE_CODES.get(code_text)
    label = f" ({code_text})" if code_text else ""
    if kind is not None:
        return ProviderError(
            f"The OpenAI API reported an error mid-stream{label}: {text}", kind=kind, retryable=True
        )
    return ProviderError(f"The OpenAI API refused the request{label}: {text}", kind="bad_request")


def _is_context(code: str, message: str) -> bool:
    lowered = message.lower()
    return code in _CONTEXT_CODES or "context window" in lowered or "context length" in lowered


def _status_error(error: openai.APIStatusError) -> ProviderError:
    status = error.status_code
    code = str(error.code or "")
    server_message = str(error.message)
    retry_after = _retry_after(error)
    if _is_context(code, server_message):
        return ProviderError(
            f"{CONTEXT_TOO_LONG} (OpenAI API error {status}: {server_message})",
            kind="context_too_long",
            status=status,
        )
    if status == 429 and code == "insufficient_quota":
        return ProviderError(f"{_QUOTA} ({server_message})", kind="rate_limit", status=status)
    kind, retryable = _status_kind(status)
    label = f"{status} {code or error.type or ''}".strip()
    message = f"OpenAI API error {label}: {server_message}{_FATAL_HINTS.get(status, '')}"
    return ProviderError(
        message, kind=kind, retryable=retryable, retry_after=retry_after, status=status
    )


def _status_kind(status: int) -> tuple[str, bool]:
    if status == 429:
        return "rate_limit", True
    if status == 503:
        return "overloaded", True
    if status in (408, 409) or status >= 500:
        return "server", True
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
