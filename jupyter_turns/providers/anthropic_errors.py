"""The one place where the Anthropic SDK's and ``httpx2``'s exceptions become ProviderErrors.

Each gets its retryability (429, 529, 5xx, timeouts and broken connections are worth another
attempt; 4xx are not), the server's ``retry-after`` hint and a message the user can act on. A
server certificate the client does not trust is a connection error that no retry mends: it says
so at once and names ``SSL_CERT_FILE`` (:mod:`jupyter_turns.providers.tls`).

The same Claude reaches us through Amazon Bedrock and Google Vertex AI with the same SDK
exceptions but other error bodies: a :class:`Platform` names the service and what to check for
each fatal status. Bedrock answers ``{"message": ...}`` with the error's name in the
``x-amzn-errortype`` header, and mid-stream sends exception frames (``throttlingException``,
``modelStreamErrorException``...) that the SDK turns into ``error`` events; Vertex answers
Google's ``{"error": {"code", "message", "status": "RESOURCE_EXHAUSTED"}}``, sometimes inside a
list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import anthropic
import httpx2

from ..errors import ProviderError
from ..redaction import ENV_KEY
from .retry_hint import retry_after
from .tls import CERTIFICATE_HINT, untrusted_certificate

__all__ = ["ANTHROPIC", "Platform", "classify"]

_FATAL_HINTS = {
    401: f" Check {ENV_KEY} (%chat key sets it for this kernel).",
    403: " The key may lack access to this model or feature.",
    404: " Check the model name (%chat settings or --model).",
    413: " The request is too large: start a new thread or send less.",
}


@dataclass(frozen=True, slots=True)
class Platform:
    """Where Claude is served: how errors name it and what to check after a fatal status."""

    label: str  # "Anthropic API", "Amazon Bedrock"...
    hints: Mapping[int, str] = field(default_factory=lambda: dict(_FATAL_HINTS))


ANTHROPIC = Platform("Anthropic API")

# an error's type inside a 200 stream -> (kind, retryable); other types: a retryable stream_error
_STREAM_KINDS: dict[str, tuple[str, bool]] = {
    "overloaded_error": ("overloaded", True),
    "throttlingexception": ("rate_limit", True),  # Bedrock
    "serviceunavailableexception": ("overloaded", True),  # Bedrock
    "validationexception": ("bad_request", False),  # Bedrock
}


def classify(error: BaseException, platform: Platform = ANTHROPIC) -> ProviderError:
    """Map an SDK or transport exception to a ProviderError with its retryability."""
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, anthropic.APIStatusError):
        return _status_error(error, platform)
    if isinstance(error, anthropic.APITimeoutError):
        return ProviderError(
            f"The request to the {platform.label} timed out.", kind="timeout", retryable=True
        )
    if isinstance(error, anthropic.APIConnectionError | httpx2.ConnectError):
        return _connection_error(error, platform)
    if isinstance(error, httpx2.TimeoutException):
        return ProviderError("The response stalled and timed out.", kind="timeout", retryable=True)
    if isinstance(error, httpx2.TransportError):
        detail = str(error) or type(error).__name__
        return ProviderError(f"The connection broke: {detail}", kind="connection", retryable=True)
    return ProviderError(f"{type(error).__name__}: {error}", kind="internal")


def _connection_error(
    error: anthropic.APIConnectionError | httpx2.ConnectError, platform: Platform
) -> ProviderError:
    """The transport's own words (the SDK's are just "Connection error."); an untrusted
    certificate is not retryable and says what to set."""
    cause = error.__cause__ if isinstance(error, anthropic.APIConnectionError) else None
    detail = str(cause or "") or str(error) or type(error).__name__
    if untrusted_certificate(error):
        return ProviderError(
            f"Could not reach the {platform.label}: its TLS certificate is not trusted "
            f"({detail}). {CERTIFICATE_HINT}",
            kind="connection",
            retryable=False,
        )
    return ProviderError(
        f"Could not reach the {platform.label}: {detail}", kind="connection", retryable=True
    )


def _status_error(error: anthropic.APIStatusError, platform: Platform) -> ProviderError:
    status = error.status_code
    error_type, server_message = _described(error)
    wait = retry_after(error.response)
    if status == 200:  # an `error` event inside a 200 stream
        kind, retryable = _STREAM_KINDS.get(error_type.lower(), ("stream_error", True))
        return ProviderError(
            f"The {platform.label} reported an error mid-stream ({error_type or 'error'}): "
            f"{server_message}",
            kind=kind,
            retryable=retryable,
            retry_after=wait,
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
    hint = platform.hints.get(status, "")
    message = f"{platform.label} error {label}: {server_message}{hint}"
    return ProviderError(message, kind=kind, retryable=retryable, retry_after=wait, status=status)


def _described(error: anthropic.APIStatusError) -> tuple[str, str]:
    """The error's type and the server's message, from an Anthropic body, Google's (``status``,
    maybe inside a list) or Bedrock's (``message``, the type in ``x-amzn-errortype``)."""
    body = error.body[0] if isinstance(error.body, list) and error.body else error.body
    body = body if isinstance(body, dict) else {}
    detail = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    headers = getattr(error.response, "headers", None)
    amazon = str(headers.get("x-amzn-errortype", "")) if headers is not None else ""
    error_type = (
        detail.get("type")
        or detail.get("status")
        or amazon.split(":")[0]
        or getattr(error, "type", None)
        or ""
    )
    return str(error_type), str(detail.get("message") or body.get("Message") or error.message)
