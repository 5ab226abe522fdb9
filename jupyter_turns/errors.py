"""The package's error hierarchy; foreign exceptions are mapped into it at one boundary each.

    JupyterTurnsError
    ├── ConversationError        the conversation would stop being valid to send
    │   └── SchemaError          a saved record cannot be read
    ├── InvalidTransition        the turn state machine was asked for a move it does not allow
    ├── ProtocolError            a provider's stream broke the Part/Flush/Finished rules
    ├── ToolDefinitionError      a function cannot be turned into a tool
    ├── McpServerError           an MCP server cannot be used: the SDK is missing, it is
    │                            configured wrong, it did not start, its connection closed
    └── ProviderError            a model request failed; carries retryability and the server's text
        ├── StreamBroken         a cycle failed after some of its text reached the user
        └── ProviderConfigError  the provider cannot be used as configured (e.g. no API key)

A tool's failure is never an exception for the user: it becomes an ``is_error`` tool response.
A ProviderError's and an McpServerError's message is redacted
(:func:`jupyter_turns.redaction.redact`) when it is made: every provider failure passes here,
and a server may echo the key it was sent.
"""

from __future__ import annotations

from .redaction import redact

__all__ = [
    "ConversationError",
    "InvalidTransition",
    "JupyterTurnsError",
    "McpServerError",
    "ProtocolError",
    "ProviderConfigError",
    "ProviderError",
    "SchemaError",
    "StreamBroken",
    "ToolDefinitionError",
]


class JupyterTurnsError(Exception):
    """Base of every error this package raises on purpose."""


class ConversationError(JupyterTurnsError):
    """An event would make the conversation invalid to send to the model."""


class SchemaError(ConversationError):
    """A persisted record does not match any schema version this package can read."""


class InvalidTransition(JupyterTurnsError):
    """The turn state machine does not allow this move."""


class ProtocolError(JupyterTurnsError):
    """A provider yielded stream events that break the Part/Flush/Finished rules."""


class ToolDefinitionError(JupyterTurnsError):
    """A function cannot be made into a tool (bad signature, unsupported type...)."""


class McpServerError(JupyterTurnsError):
    """An MCP server cannot be used; the message says why and what to do (for the user, and
    for the model when a call fails). It may quote the server's stderr: secrets are withheld."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message).text)


class ProviderError(JupyterTurnsError):
    """A model request failed.

    ``kind`` is a short machine name (``rate_limit``, ``overloaded``, ``auth``...), ``retryable``
    tells ResilientCycle whether another attempt may succeed, ``retry_after`` is the server's hint
    in seconds (uncapped; the retry policy caps it), ``status`` the HTTP status if there was one.
    The message is the text shown to the user, including the server's own explanation, with
    any API key taken out.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "error",
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        message = redact(message).text
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, kind={self.kind!r}, "
            f"retryable={self.retryable}, retry_after={self.retry_after}, status={self.status})"
        )


class StreamBroken(ProviderError):
    """A cycle failed after at least one of its Parts reached the user: no silent retry."""

    def __init__(self, cause: ProviderError) -> None:
        super().__init__(
            cause.message,
            kind=cause.kind,
            retryable=cause.retryable,
            retry_after=cause.retry_after,
            status=cause.status,
        )
        self.cause = cause


class ProviderConfigError(ProviderError):
    """The provider cannot be used as configured (missing API key, unknown model...)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="config", retryable=False)
