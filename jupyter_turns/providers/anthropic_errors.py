"""The one place where the Anthropic SDK's and ``httpx2``'s exceptions become ProviderErrors.

Each gets its retryability (429, 529, 5xx, timeouts and broken connections are worth another
attempt; 4xx are not), the server's ``retry-after`` hint and a message the user can act on. A
server certificate the client does not trust is a connection error that no retry mends: it says
so at once and names ``SSL_CERT_FILE`` (:mod:`jupyter_turns.providers.tls`).
"""

from __future__ import annotations

import anthropic
import httpx2

from ..errors import ProviderError
from ..redaction import ENV_KEY
from .tls import CERTIFICATE_HINT, untrusted_certificate

__all__ = ["classify"]

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
    if isinstance(error, anthropic.APIConnectionError | httpx2.ConnectError):
        return _connection_error(error)
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def _connection_error(error: anthropic.APIConnectionError | httpx2.ConnectError) -> ProviderError:
    """The transport's own words (the SDK's are just "Connection error."); an untrusted
    certificate is not retryable and says what to set."""
    cause = error.__cause__ if isinstance(error, anthropic.APIConnectionError) else None
    detail = str(cause or "") or str(error) or type(error).__name__
    if untrusted_certificate(error):
        return ProviderError(
            "Could not reach the Anthropic API: its TLS certificate is not trusted "
            f"({detail}). {CERTIFICATE_HINT}",
            kind="connection",
            retryable=False,
        )
    return ProviderError(
        f"Could not reach the Anthropic API: {detail}", kind="connection", retryable=True
    )


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
