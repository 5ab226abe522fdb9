"""How an MCP server is configured: :class:`ServerSpec`, checked, and the parts that are saved.

A server is reached by a command (stdio: the kernel starts it as a subprocess) or a URL
(streamable HTTP). Secrets are never given by value: a stdio server gets kernel environment
variables by *name* (``env``), an HTTP server gets headers whose values name environment
variables (``"Authorization": "Bearer ${TRACKER_TOKEN}"``, or just ``"TRACKER_TOKEN"``), read
when the server starts. So a spec holds nothing secret, and :meth:`ServerSpec.saved` is what a
thread records in the notebook — except a URL's query string, which may carry a token: it is
left out (``incomplete``), and such a copy is never connected to again from a notebook.

The dict form is what ``%config ChatMagics.mcp_servers = {...}`` takes, keyed by server name;
``"command": "python", "args": [...]`` (the common ``mcpServers`` JSON shape) is accepted too.

:meth:`ServerSpec.describe` is the one description of a server a person reads before it starts
(the restore notice, ``%chat trust``, ``%chat mcp list`` and ``start``): the whole command line
as a shell would read it, or the URL and each header with the names of the variables it reads,
and which variables and run mode it gets; a literal secret in it is withheld.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from ..errors import McpServerError
from ..providers.endpoints import shown
from ..redaction import redact
from ..tools.registry import RunMode

__all__ = [
    "SERVER_NAME",
    "ServerName",
    "ServerSpec",
    "check_name",
    "parse_servers",
    "problem_text",
]

SERVER_NAME = r"^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$"  # no "__": it separates mcp__NAME__TOOL
ServerName = Annotated[str, StringConstraints(pattern=SERVER_NAME, max_length=32)]
_EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
_HeaderName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")]
_Word = Annotated[str, StringConstraints(min_length=1, max_length=4_000)]
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ServerSpec(BaseModel):
    """One MCP server: a ``command`` (stdio) or a ``url`` (streamable HTTP), the environment
    variable names it may read, its tools' default run mode and per-call timeout."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[_Word] | None = Field(default=None, min_length=1, max_length=200)
    url: Annotated[str, StringConstraints(max_length=2_000)] | None = None
    env: list[_EnvName] = Field(default_factory=list, max_length=100)  # names, passed on
    headers: dict[_HeaderName, Annotated[str, StringConstraints(max_length=500)]] = Field(
        default_factory=dict, max_length=50
    )
    run: RunMode | None = None  # None: the thread's
    timeout: float = Field(default=120.0, gt=0, le=86_400)  # seconds per call
    incomplete: bool = False  # a saved copy whose URL lost its query string

    @model_validator(mode="before")
    @classmethod
    def _common_shape(cls, data: Any) -> Any:
        """``"command": "python", "args": [...]`` (the usual mcpServers JSON) -> one list."""
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            data = dict(data)
            args = data.pop("args", [])
            data["command"] = [data["command"], *(args if isinstance(args, list) else [args])]
        if isinstance(data, dict) and data.get("type") in ("stdio", "http", "streamable-http"):
            data = {k: v for k, v in data.items() if k != "type"}
        return data

    @model_validator(mode="after")
    def _one_transport(self) -> ServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either a command (stdio) or a url (streamable HTTP)")
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"the url must be http:// or https://, not {self.url!r}")
            if parts.username or parts.password:
                raise ValueError(
                    "the url holds credentials; give them as a header that names an "
                    "environment variable: --header Authorization='Bearer ${TOKEN}'"
                )
            if self.env:
                raise ValueError("env is for stdio servers; an HTTP server gets headers")
        elif self.headers:
            raise ValueError("headers are for HTTP servers; a stdio server gets env names")
        for header, value in self.headers.items():
            if not (_REFERENCE.search(value) or _BARE.match(value)):
                raise ValueError(
                    f"header {header}: name an environment variable (TOKEN or "
                    "'Bearer ${TOKEN}'), never the value itself"
                )
        return self

    # ------------------------------------------------------------------ reading it

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """One line for people, all the server would be given: ``stdio: /usr/bin/python3
        server.py --root 'my data' · env TOKEN · run: unattended``, or ``http:
        https://t.example/mcp · header Authorization: Bearer ${TOKEN}`` (a header's variables by
        name). The command line is quoted as a shell reads it; what does not print is escaped;
        a literal secret (an argument, a header's text beside its variable) is withheld."""
        if self.command is not None:
            parts = ["stdio: " + " ".join(_shell_word(word) for word in self.command)]
            if self.env:
                parts.append("env " + ", ".join(self.env))
        else:
            parts = [f"http: {shown(self.url or '')}"]
            for header, value in self.headers.items():
                named = f"${{{value}}}" if _BARE.match(value) else value
                parts.append(f"header {header}: {_printable(named)}")
        if self.run:
            parts.append(f"run: {self.run}")
        return redact(" · ".join(parts)).text

    def saved_url(self) -> tuple[str, bool]:
        """The URL without its query and fragment, and whether anything was left out."""
        assert self.url is not None
        parts = urlsplit(self.url)
        bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        return bare, bare != self.url

    def saved(self) -> dict[str, Any]:
        """What a thread records in the notebook: nothing secret, no default values."""
        out: dict[str, Any] = {}
        if self.command is not None:
            out["command"] = list(self.command)
        else:
            out["url"], dropped = self.saved_url()
            if dropped or self.incomplete:
                out["incomplete"] = True
        for key in ("env", "headers", "run"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.timeout != ServerSpec.model_fields["timeout"].default:
            out["timeout"] = self.timeout
        return out

    def environment(self) -> dict[str, str]:
        """The named environment variables' values, read now; raises McpServerError for a
        missing one."""
        return {name: _variable(name, "env") for name in self.env}

    def header_values(self) -> dict[str, str]:
        """Each header with its environment references filled in, read now."""
        out = {}
        for header, value in self.headers.items():
            used_by = f"header {header}"
            if _BARE.match(value):
                out[header] = _variable(value, used_by)
                continue
            for name in _REFERENCE.findall(value):
                value = value.replace(f"${{{name}}}", _variable(name, used_by))
            out[header] = value
        return out


def _printable(text: str) -> str:
    """``text`` with each character that does not print escaped (``\\r``, ``\\x1b``): a carriage
    return or a terminal escape could hide what comes before it on the screen."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _shell_word(word: str) -> str:
    """``word`` quoted as a POSIX shell reads it (:func:`shlex.quote`); one with a character
    that does not print in bash's ``$'...'`` form, its escapes visible."""
    if word.isprintable():
        return shlex.quote(word)
    escaped = {"\\": "\\\\", "'": "\\'"}
    return "$'" + "".join(escaped.get(c) or _printable(c) for c in word) + "'"


def _variable(name: str, used_by: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise McpServerError(
            f"the environment variable {name} ({used_by}) is not set in this kernel"
        )
    return value


def check_name(name: str) -> str:
    """``name`` if it can name a server (it becomes part of tool names), else ValueError."""
    if len(name) > 32 or not re.match(SERVER_NAME, name):
        raise ValueError(
            f"server name {name!r}: 1-32 letters and digits, single '-' or '_' between them"
        )
    return name


def problem_text(exc: ValidationError) -> str:
    """A pydantic error as one line: ``url: ...; timeout: ...``."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return "; ".join(problems)


def parse_servers(value: Mapping[str, Any], where: str) -> dict[str, ServerSpec]:
    """Specs from ``{name: {...}}``; raises ValueError naming the first wrong entry."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a dict of server name -> settings")
    specs = {}
    for name, raw in value.items():
        try:
            check_name(str(name))
            spec = raw if isinstance(raw, ServerSpec) else ServerSpec.model_validate(raw)
            specs[str(name)] = spec
        except ValidationError as exc:
            raise ValueError(f"{where}[{name!r}]: {problem_text(exc)}") from None
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return specs
