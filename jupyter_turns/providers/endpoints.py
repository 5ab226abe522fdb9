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

from ..redaction import masked, remember

__all__ = [
    "ANTHROPIC",
    "BASE_URL",
    "DEFAULTS",
    "DEFAULT_ENDPOINT",
    "ENDPOINT_VARIABLES",
    "OPENAI",
    "SERVICES",
    "Given",
    "Service",
    "apply",
    "bind",
    "bind_to",
    "current",
    "custom",
    "described",
    "environment_key",
    "refusal",
    "same",
    "shown",
]

DEFAULTS: dict[str, str] = {  # service -> its default base URL (tests point one at 127.0.0.1)
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
}
DEFAULT_ENDPOINT = DEFAULTS["anthropic"]
BASE_URL = "ANTHROPIC_BASE_URL"
# Read by the SDKs from the environment: another host, a bearer token, extra headers (which can
# replace the key's own header).
ENDPOINT_VARIABLES = (
    BASE_URL,
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "OPENAI_BASE_URL",
)


@dataclass(frozen=True)
class Service:
    """An API whose key the package holds: the variable of its key, the variable that moves its
    endpoint, and its default endpoint. The Anthropic API (and with it the Anthropic provider)
    and the OpenAI API (the Responses and the Chat Completions providers, whatever server the
    latter talks to)."""

    name: str  # "anthropic" | "openai": the argument of %chat key
    label: str
    key_variable: str
    base_url_variable: str

    @property
    def default(self) -> str:
        return DEFAULTS[self.name]

    def current(self, environ: Mapping[str, str] | None = None) -> str:
        """The base URL its requests go to when nothing else is chosen: the environment's
        base-URL variable if set, else the default."""
        url = (os.environ if environ is None else environ).get(self.base_url_variable, "").strip()
        return url or self.default


ANTHROPIC = Service("anthropic", "Anthropic", "ANTHROPIC_API_KEY", BASE_URL)
OPENAI = Service("openai", "OpenAI", "OPENAI_API_KEY", "OPENAI_BASE_URL")
SERVICES = {service.name: service for service in (ANTHROPIC, OPENAI)}


def current(environ: Mapping[str, str] | None = None) -> str:
    """The base URL Anthropic requests go to: ``ANTHROPIC_BASE_URL`` if set, else the default."""
    return ANTHROPIC.current(environ)


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
    """``url`` as shown, when it is not a service's default endpoint; None for a default."""
    return None if any(same(url, default) for default in DEFAULTS.values()) else shown(url)


_chosen_by: dict[str, str] = {}  # base URL -> who chose it in this kernel (%chat endpoint ...)


def apply(values: Mapping[str, str], who: str, source: str | None = None) -> None:
    """Set endpoint variables in this kernel's environment (``who`` chose them); each service's
    key in use stays bound to the endpoint it was given for, unless it came from ``source``: the
    .env file the values come from (a key and an endpoint given together go together)."""
    keys = {}
    for service in SERVICES.values():
        key = os.environ.get(service.key_variable)
        if key:
            _given.setdefault(key, Given(service.current(), "the environment"))
            keys[service.name] = key
    os.environ.update(values)
    for service in SERVICES.values():
        if service.base_url_variable in values:
            _chosen_by[service.current().strip()] = who
        key = keys.get(service.name)
        if key and source is not None and _given[key].source == source:
            _given[key] = Given(service.current(), source)


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


def bind_to(key: str, source: str, endpoint: str) -> None:
    """``key`` was just given (by ``source``) for ``endpoint``, not the service's usual one
    (``%chat key openai`` for the current thread's ``--base-url``)."""
    _given[key] = Given(endpoint, source)


def refusal(key: str, endpoint: str, service: Service | None = None) -> str | None:
    """Why ``key`` must not be sent to ``endpoint`` (it was given for another), or None.

    A key nobody bound (one in the environment before Jupyter started) goes where its service's
    environment sends requests (``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``, else the default):
    a base URL chosen on a cell (``--base-url``) or in a saved thread gets it only after the user
    gives it there with ``%chat key``. (An unbound Anthropic key goes where the Anthropic
    provider was pointed: in the kernel that is always the environment's endpoint.)"""
    service = service or ANTHROPIC
    given = _given.get(key)
    if given is None and service is not ANTHROPIC:  # Anthropic's has no per-thread base URL
        given = Given(service.current(), "the environment")
    if given is None or same(given.endpoint, endpoint):
        return None
    command = "%chat key" if service is ANTHROPIC else f"%chat key {service.name}"
    back = (
        f"%chat endpoint {shown(given.endpoint)} to go back"
        if service is ANTHROPIC
        else "go back to that endpoint"
    )
    return (
        f"Not sent: the {service.label} key in use ({masked(key)}, from {given.source}) was "
        f"given for {shown(given.endpoint)}, and requests now go to {shown(endpoint)}. A key "
        f"never follows a change of endpoint. Run {command} to give a key for "
        f"{shown(endpoint)}, or {back}."
    )


def environment_key(service: Service | None = None) -> str | None:
    """The service's key in the environment (``ANTHROPIC_API_KEY`` by default), or None: a
    provider's key source when nobody passes one. A key handed out is withheld from text for the
    rest of the session, even after the environment changes (``%chat key``)."""
    key = os.environ.get((service or ANTHROPIC).key_variable) or None
    if key is not None:
        remember(key)
    return key
