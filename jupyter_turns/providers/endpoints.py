"""The endpoint: where requests, and with them the API key, are sent; and which key may go where.

Only the process environment (variables set before Jupyter started, or set by the user's own
code) and ``%chat endpoint`` (see :mod:`jupyter_turns.kernel.endpoint_command`) choose it; a
``.env`` file never does. :data:`ENDPOINT_VARIABLES` are the variables that change where a
request goes or what credentials it carries besides the key; a ``.env`` file that names them is
only reported.

A key is sent only to the endpoint it was given for. Whoever gives a key binds it
(:func:`bind`: ``%chat key`` and a ``.env`` file, through :mod:`jupyter_turns.kernel.keys`) to
the endpoint in use at that moment; a key already in the environment is bound to the endpoint
in use when :func:`apply` changes it. :func:`refusal` says why a key must not go to another
endpoint; the provider then sends nothing. This module holds that binding and the endpoint's
state for the session, below the kernel layer: a provider checks every key its key source
gives (:func:`environment_key`, or the kernel's, which also reads a ``.env``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..redaction import ENV_KEY, masked, remember

__all__ = [
    "BASE_URL",
    "DEFAULT_ENDPOINT",
    "ENDPOINT_VARIABLES",
    "Given",
    "apply",
    "bind",
    "current",
    "custom",
    "described",
    "environment_key",
    "refusal",
    "same",
    "shown",
]

DEFAULT_ENDPOINT = "https://api.anthropic.com"
BASE_URL = "ANTHROPIC_BASE_URL"
# Read by the Anthropic SDK from the environment: another host, a bearer token, extra headers
# (which can replace the key's own header).
ENDPOINT_VARIABLES = (BASE_URL, "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS")


def current(environ: Mapping[str, str] | None = None) -> str:
    """The base URL requests go to: ``ANTHROPIC_BASE_URL`` if set, else the default."""
    url = (os.environ if environ is None else environ).get(BASE_URL, "").strip()
    return url or DEFAULT_ENDPOINT


def same(first: str, second: str) -> bool:
    """Whether two base URLs name the same endpoint (a trailing slash does not count)."""
    return first.strip().rstrip("/") == second.strip().rstrip("/")


def shown(url: str) -> str:
    """``url`` as the package shows and saves it: without a password or query values in it
    (either may hold a credential; the host and path say where requests go)."""
    parts = urlsplit(url.strip())
    if parts.password is not None:
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        parts = parts._replace(netloc=f"{parts.username or ''}:…@{host}{port}")
    if parts.query:
        names = [pair.partition("=")[0] for pair in parts.query.split("&")]
        parts = parts._replace(query="&".join(f"{name}=…" for name in names))
    return urlunsplit(parts)


def custom(url: str) -> str | None:
    """``url`` as shown, when it is not the default endpoint; None for the default."""
    return None if same(url, DEFAULT_ENDPOINT) else shown(url)


_chosen_by: dict[str, str] = {}  # base URL -> who chose it in this kernel (%chat endpoint ...)


def apply(values: Mapping[str, str], who: str, source: str | None = None) -> None:
    """Set endpoint variables in this kernel's environment (``who`` chose them); the key in use
    stays bound to the endpoint it was given for, unless it came from ``source``: the .env file
    the values come from (a key and an endpoint given together go together)."""
    before = current()
    key = os.environ.get(ENV_KEY)
    if key and key not in _given:
        _given[key] = Given(before, "the environment")
    os.environ.update(values)
    if BASE_URL in values:
        _chosen_by[current().strip()] = who
    if key and source is not None and _given[key].source == source:
        _given[key] = Given(current(), source)


def described() -> str:
    """The endpoint in use and who chose it, for a sentence."""
    url = current()
    if not os.environ.get(BASE_URL, "").strip():
        return f"{shown(url)} (the default)"
    who = _chosen_by.get(url.strip(), f"{BASE_URL} in this kernel's environment")
    return f"{shown(url)} ({who})"


# ---------------------------------------------------------------------------- keys and endpoints


@dataclass(frozen=True)
class Given:
    """The endpoint a key was given for, and how it was given."""

    endpoint: str
    source: str  # "%chat key", a .env file's path, or "the environment"


_given: dict[str, Given] = {}  # key -> where it may be sent; a key not here is not bound yet


def bind(key: str, source: str) -> None:
    """``key`` was just given (by ``source``): it may go only to the endpoint in use now."""
    _given[key] = Given(current(), source)


def refusal(key: str, endpoint: str) -> str | None:
    """Why ``key`` must not be sent to ``endpoint`` (it was given for another), or None."""
    given = _given.get(key)
    if given is None or same(given.endpoint, endpoint):
        return None
    return (
        f"Not sent: the API key in use ({masked(key)}, from {given.source}) was given for "
        f"{shown(given.endpoint)}, and requests now go to {shown(endpoint)}. A key never follows "
        f"a change of endpoint. Run %chat key to give a key for {shown(endpoint)}, or "
        f"%chat endpoint {shown(given.endpoint)} to go back."
    )


def environment_key() -> str | None:
    """The key in the environment (``ANTHROPIC_API_KEY``), or None: a provider's key source when
    nobody passes one. A key handed out is withheld from text for the rest of the session, even
    after the environment changes (``%chat key``)."""
    key = os.environ.get(ENV_KEY) or None
    if key is not None:
        remember(key)
    return key
