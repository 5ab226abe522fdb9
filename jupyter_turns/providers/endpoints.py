"""The endpoint: where requests, and with them the API key, are sent.

Only the process environment (variables set before Jupyter started, or set by the user's own
code) and ``%chat endpoint`` (see :mod:`jupyter_turns.kernel.keys`) choose it; a ``.env`` file never
does. :data:`ENDPOINT_VARIABLES` are the variables that change where a request goes or what
credentials it carries besides the key; a ``.env`` file that names them is only reported.

A leaf module: it imports nothing of the package.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "BASE_URL",
    "DEFAULT_ENDPOINT",
    "ENDPOINT_VARIABLES",
    "current",
    "custom",
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


def apply(values: Mapping[str, str], who: str) -> None:
    """Set endpoint variables in this kernel's environment; ``who`` chose them."""
    os.environ.update(values)
    if BASE_URL in values:
        _chosen_by[current().strip()] = who


def described() -> str:
    """The endpoint in use and who chose it, for a sentence."""
    url = current()
    if not os.environ.get(BASE_URL, "").strip():
        return f"{shown(url)} (the default)"
    who = _chosen_by.get(url.strip(), f"{BASE_URL} in this kernel's environment")
    return f"{shown(url)} ({who})"
