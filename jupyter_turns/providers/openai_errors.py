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

import re
from typing import Any

import httpx2
import openai

from ..errors import ProviderError
from ..redaction import head
from .retry_hint import retry_after
from .tls import CERTIFICATE_HINT, untrusted_certificate

__all__ = ["CONTEXT_TOO_LONG", "KEY_HINT", "classify", "coded_error", "server_message"]

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
    404: " Check the model name (--model, or %chat settings) and the base URL.",
    413: " The request is too large: start a new thread or send less.",
}
_CONTEXT_CODES = ("context_length_exceeded", "exceed_context_size_error", "string_above_max_length")
_CONTEXT_WORDS = re.compile(r"context (length|size|window)|maximum context|too many tokens", re.I)
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
        return ProviderError("The request to the API timed out.", kind="timeout", retryable=True)
    if isinstance(error, openai.APIConnectionError | httpx2.ConnectError):
        return _connection_error(error)
    if isinstance(error, openai.APIError):  # an error in a 200 stream: a body, no status
        body = error.body if isinstance(error.body, dict) else {}
        return coded_error(error.code or body.get("type"), error.message)
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def _connection_error(error: BaseException) -> ProviderError:
    """The transport's own words (the SDK's are just "Connection error."); an untrusted
    certificate is not retryable and says what to set (:mod:`jupyter_turns.providers.tls`)."""
    cause = (error.__cause__ or error.__context__) if isinstance(error, openai.APIError) else None
    detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(error)
    if untrusted_certificate(error):
        return ProviderError(
            f"Could not reach the API: its TLS certificate is not trusted ({detail}). "
            f"{CERTIFICATE_HINT}",
            kind="connection",
        )
    return ProviderError(f"Could not reach the API: {detail}", kind="connection", retryable=True)


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
    if kind is None and code_text.isdigit():  # a server that reports a status as the code
        status_kind, retryable = _status_kind(int(code_text))
        kind = status_kind if retryable else None
    label = f" ({code_text})" if code_text else ""
    if kind is not None:
        return ProviderError(
            f"The OpenAI API reported an error mid-stream{label}: {text}", kind=kind, retryable=True
        )
    return ProviderError(f"The OpenAI API refused the request{label}: {text}", kind="bad_request")


def server_message(body: Any, fallback: str) -> str:
    """What the server said, whichever error shape it used (OpenAI's ``{"error": {...}}``,
    Ollama's ``{"error": "..."}``, a bare ``{"message"}`` or ``{"detail"}``, plain text)."""
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
        return head(body.strip(), 2000)  # a secret across the cut is withheld whole
    return fallback


def _is_context(code: str, message: str) -> bool:
    return code in _CONTEXT_CODES or _CONTEXT_WORDS.search(message) is not None


def _status_error(error: openai.APIStatusError) -> ProviderError:
    status = error.status_code
    body = error.body if isinstance(error.body, dict) else {}
    code = str(error.code or body.get("code") or body.get("type") or "")
    said = server_message(error.body, error.message)
    wait = retry_after(error.response)
    if status in (400, 413) and _is_context(code, said):
        return ProviderError(
            f"{CONTEXT_TOO_LONG} (API error {status}: {said})",
            kind="context_too_long",
            status=status,
        )
    if status == 429 and code == "insufficient_quota":
        return ProviderError(f"{_QUOTA} (API error 429: {said})", kind="rate_limit", status=status)
    kind, retryable = _status_kind(status)
    label = f"{status} {code or error.type or ''}".strip()
    message = f"API error {label}: {said}{_FATAL_HINTS.get(status, '')}"
    return ProviderError(message, kind=kind, retryable=retryable, retry_after=wait, status=status)


def _status_kind(status: int) -> tuple[str, bool]:
    if status == 429:
        return "rate_limit", True
    if status in (503, 529):
        return "overloaded", True
    if status in (408, 409) or status >= 500:
        return "server", True
    return {
        401: "auth",
        403: "permission",
        404: "not_found",
        413: "too_large",
    }.get(status, "bad_request"), False
