"""``%chat endpoint``: show or choose where requests, and the key with them, go.

``%chat endpoint`` shows the endpoint in use, who chose it, whether the key in use may be sent
there, and what a ``.env`` file names without it being applied. ``%chat endpoint URL`` (or
``default``) chooses one; ``%chat endpoint --from-dotenv`` applies the endpoint values of the
first ``.env`` file that names any, after the user has read them in full. Either way the key in
use stays bound to the endpoint it was given for (:func:`jupyter_turns.providers.endpoints.apply`),
and a cloud's credentials go to a Bedrock or Vertex base URL that a ``.env`` file set only once
the user chooses it on a cell (``--base-url``). ``%chat endpoint default`` also puts back what
``--from-dotenv`` set.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from IPython.core.error import UsageError

from ..providers import endpoints
from ..providers.endpoints import ANTHROPIC, BASE_URL, CLOUDS, refusal, shown
from ..redaction import ENV_KEY, masked
from .keys import dotenv_dirs, endpoint_lines, read_dotenvs

__all__ = ["ENDPOINT_USAGE", "endpoint_command"]

ENDPOINT_USAGE = (
    "usage: %chat endpoint (show where requests go) | %chat endpoint URL|default (choose) | "
    "%chat endpoint --from-dotenv (apply the endpoint a .env file names; default puts it back)"
)


def endpoint_command(args: list[str]) -> None:
    """``%chat endpoint [URL|default|--from-dotenv]``: show or choose where requests go."""
    if not args:
        _show()
    elif args == ["--from-dotenv"]:
        _from_dotenv()
    elif len(args) == 1 and not args[0].startswith("-"):
        url = ANTHROPIC.default if args[0] == "default" else args[0]
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"not an http(s) URL: {shown(url)!r}. {ENDPOINT_USAGE}")
        put_back = endpoints.forget_dotenv() if args[0] == "default" else {}
        for name, source in put_back.items():
            print(f"{name} is back to what it was before {source} set it.")
        endpoints.apply({BASE_URL: url}, "chosen with %chat endpoint")
        _say_where()
    else:
        raise UsageError(ENDPOINT_USAGE)


def _say_where() -> None:
    """Where requests go, and whether the key in use goes there too."""
    print(f"Requests go to {endpoints.described()}.")
    key = os.environ.get(ENV_KEY)
    if not key:
        print(_no_key_yet())
    else:
        print(refusal(key, endpoints.current()) or f"The key in use ({masked(key)}) goes there.")


def _say_clouds() -> None:
    """Where Bedrock and Vertex requests go when their SDK's base-URL variable is set, and
    whether the cloud's credentials go there."""
    for cloud in CLOUDS.values():
        url = os.environ.get(cloud.base_url_variable, "").strip()
        if not url:
            continue
        source = endpoints.dotenv_source(cloud.base_url_variable)
        who = f"from {source}" if source else "this kernel's environment"
        line = f"{cloud.label} requests go to {shown(url)} ({cloud.base_url_variable}, {who})"
        if source and not cloud.own(url) and endpoints.chooser(url) is None:
            line += (
                f": its credentials are not sent there unless you choose it on a cell: "
                f"%%chat --provider {cloud.name} --base-url {shown(url)}"
            )
        print(line + ".")


def _no_key_yet() -> str:
    """What the kernel has for a key before one is set: a ``.env`` key is read (and bound to the
    endpoint in use then) at the first request that needs it, not before."""
    held = next((f for f in read_dotenvs(dotenv_dirs(None)) if ENV_KEY in f.keys), None)
    if held is None:
        return "No key yet: %chat key asks for one."
    return (
        f"No key in this kernel yet; {held.path} holds one ({masked(held.keys[ENV_KEY])}): the "
        "first request reads it, for the endpoint in use then (%chat key gives another)."
    )


def _show() -> None:
    _say_where()
    _say_clouds()
    headers = os.environ.get("ANTHROPIC_CUSTOM_HEADERS")
    if headers:
        print("With " + endpoint_lines({"ANTHROPIC_CUSTOM_HEADERS": headers})[0])
    for file in read_dotenvs(dotenv_dirs(None)):
        if file.endpoint:
            values = "; ".join(endpoint_lines(file.endpoint))
            print(f"{file.path} names {values}: not applied (%chat endpoint --from-dotenv).")


def _from_dotenv() -> None:
    dirs = dotenv_dirs(None)
    file = next((f for f in read_dotenvs(dirs) if f.endpoint), None)
    if file is None:
        looked = ", ".join(str(d / ".env") for d in dirs)
        print(f"No .env file names an endpoint (looked at {looked}); nothing changed.")
        return
    whose = f" ({file.refused})" if file.refused else ""
    print(f"Applying from {file.path}{whose}: " + "; ".join(endpoint_lines(file.endpoint)))
    endpoints.apply(file.endpoint, f"from {file.path}", source=str(file.path))
    _say_where()
    _say_clouds()
