"""An SDK client for the key a key source gives, sent only to the endpoint it was given for.

The Anthropic and the OpenAI Responses providers hold their client through this: before each
request :meth:`KeyedClient.current` asks the key source again (a key changed by ``%chat key``
is picked up), checks the key against the endpoint in use (:func:`.endpoints.refusal`: the
request is not made, a ProviderConfigError says why) and rebuilds the client when the key or
the endpoint changed. Every key handed out is withheld from text from then on. A key or a
client given by the caller is used as given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import httpx2

from ..errors import ProviderConfigError
from ..redaction import remember
from .base import KeySource
from .endpoints import Service, refusal

__all__ = ["KeyedClient", "client_timeout"]

Client = TypeVar("Client")


def client_timeout(seconds: float) -> httpx2.Timeout:
    """An SDK client's timeout: ``seconds`` for a response to go on, 10 s to connect."""
    return httpx2.Timeout(seconds, connect=10.0)


class KeyedClient(Generic[Client]):
    """``build(key, endpoint)`` makes a client; ``endpoint()`` says where requests go now."""

    def __init__(
        self,
        build: Callable[[str, str], Client],
        *,
        key_source: KeySource,
        endpoint: Callable[[], str],
        service: Service,
        missing: str,  # what to say when the source has no key
        api_key: str | None = None,
        client: Client | None = None,
    ) -> None:
        self._build, self._key_source, self._endpoint = build, key_source, endpoint
        self._service, self._missing = service, missing
        # the source's key and the endpoint the client was built with (None: a key or a
        # client given by the caller, used as given)
        self._built_for: tuple[str, str] | None = None
        if client is None:
            if api_key:
                remember(api_key)
                client = build(api_key, endpoint())
            else:
                self._built_for = self._usable()
                client = build(*self._built_for)
        self._client = client

    @property
    def endpoint(self) -> str:
        """The base URL the next request goes to."""
        if self._built_for is None:
            return _base_url(self._client)
        return self._endpoint()

    def current(self) -> Client:
        """The client, rebuilt if the source's key or the endpoint changed since."""
        if self._built_for is not None:
            usable = self._usable()
            if usable != self._built_for:
                self._client = self._build(*usable)
                self._built_for = usable
        return self._client

    def _usable(self) -> tuple[str, str]:
        """The source's key and the endpoint in use; raises ProviderConfigError when there is no
        key, or the key was given for another endpoint."""
        endpoint = self._endpoint()
        key = self._key_source()
        if not key:
            raise ProviderConfigError(self._missing)
        remember(key)  # whatever its source: withheld from text from now on
        refused = refusal(key, endpoint, self._service)
        if refused:
            raise ProviderConfigError(refused)
        return key, endpoint


def _base_url(client: Any) -> str:
    """Where an SDK client (Anthropic's, OpenAI's) sends requests."""
    return str(client.base_url)
