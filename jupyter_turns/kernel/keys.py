"""API keys in the kernel: where the Anthropic key comes from, ``.env`` files, ``%chat key``.

The key is never written into the notebook. :func:`api_key` finds it, in this order (the kernel
passes it to every provider it builds as the provider's key source,
:func:`jupyter_turns.kernel.threads.build_provider`; a provider built in plain Python reads only
the environment):

1. the process environment (``ANTHROPIC_API_KEY`` set before Jupyter started, or by ``%chat
   key``, which asks for it with a hidden prompt and sets it in this kernel's environment);
2. a ``.env`` file next to the notebook or in the working directory: only its key variables
   (:data:`KEY_VARIABLES`) are read into the environment, never overriding one that is already
   set, and a line says which file they came from (the key itself masked).

A ``.env`` that is not the user's is not read for a key: one owned by another user (the file, or
a link to it), writable by every user, or in a folder every user can write without the sticky
bit (:mod:`jupyter_turns.ownership`). Its key would send the user's requests, and the data in
them, to its owner's account. A line says so, with the key masked and the command that uses it
anyway once the user has read that: ``%chat key --from-dotenv PATH``.

A ``.env`` file never chooses where requests go: an endpoint variable in it
(:data:`jupyter_turns.providers.endpoints.ENDPOINT_VARIABLES`: base URL, auth token, custom headers)
is not applied, only shown (a token masked), with the command that applies it: ``%chat endpoint
--from-dotenv``. Whoever can write a ``.env`` in a shared folder could otherwise send the next
key the user types to their own server.

A key is sent only to the endpoint it was given for: one entered with ``%chat key`` or read
from a ``.env`` is bound (:func:`jupyter_turns.providers.endpoints.bind`) to the endpoint in use
at that moment, and a key already in the environment to the endpoint in use when ``%chat
endpoint`` changes it. The binding lives below the kernel, in
:mod:`jupyter_turns.providers.endpoints`, so that the provider checks it for every request
whatever its key source; the provider then sends nothing to another endpoint.

:mod:`jupyter_turns.redaction` withholds the key in use (read from the environment at each
call), every key handed out here (:func:`~jupyter_turns.redaction.remember`) and the
secret-named values of every ``.env`` read here (:func:`~jupyter_turns.redaction.watch`) from
whatever the package sends to the model, shows or saves.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ownership import not_yours, open_for_others, open_regular, opened_path, read_at_most
from ..providers import endpoints
from ..providers.endpoints import (
    ANTHROPIC,
    CLOUDS,
    ENDPOINT_VARIABLES,
    OPENAI,
    SERVICES,
    Service,
    environment_key,
    secret_looking,
    shown,
)
from ..redaction import ENV_KEY, masked, watch

__all__ = [
    "ENV_KEY",
    "KEY_VARIABLES",
    "DotenvFile",
    "api_key",
    "dotenv_dirs",
    "endpoint_lines",
    "key_command",
    "key_source",
    "load_dotenv",
    "parse_dotenv",
    "read_dotenvs",
]

KEY_VARIABLES = tuple(service.key_variable for service in SERVICES.values())  # all a .env sets
_PREFIXES = ("ANTHROPIC_", "OPENAI_")  # the variables of this package's services a .env may name


# ---------------------------------------------------------------------------- finding the key


def api_key(namespace: dict[str, Any] | None = None, service: Service = ANTHROPIC) -> str | None:
    """The service's key to use: the environment's, else one read from a ``.env`` file into it
    (and bound to the endpoint in use). The kernel's key source for the providers it builds.

    A key handed out is withheld from text for the rest of the session, even after the
    environment changes (``%chat key``).
    """
    key = environment_key(service)
    if key is None:
        load_dotenv(dotenv_dirs(namespace))
        key = environment_key(service)
    return key


def key_source(service: Service) -> Callable[[], str | None]:
    """The kernel's key source for a provider of ``service`` (asked before each request)."""
    return lambda: api_key(None, service)


def dotenv_dirs(namespace: dict[str, Any] | None) -> list[Path]:
    """The notebook's directory (if the frontend told the kernel), then the working directory."""
    from ..record.notebook import session_paths

    if namespace is None:
        namespace = _ipython_namespace()
    dirs = [Path(p).parent for p in session_paths(namespace) if p.endswith(".ipynb")]
    dirs.append(Path.cwd())
    unique: list[Path] = []
    for directory in dirs:
        resolved = directory.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def _ipython_namespace() -> dict[str, Any]:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return {}
    shell = get_ipython()
    return dict(shell.user_ns) if shell is not None else {}


@dataclass(frozen=True)
class DotenvFile:
    """What one ``.env`` file says to this package: keys it gives, endpoint values it names
    (never applied by reading), and other ``ANTHROPIC_*`` / ``OPENAI_*`` names (never applied);
    ``refused``: why it is not the user's (its keys are then not read), None when it is."""

    path: Path
    keys: dict[str, str]
    endpoint: dict[str, str]
    ignored: tuple[str, ...]
    refused: str | None = None


_DOTENV_BYTES = 1_000_000  # more of a .env is never read


def read_dotenvs(directories: Iterable[Path]) -> list[DotenvFile]:
    """The ``.env`` files in ``directories`` that name any ``ANTHROPIC_*`` or ``OPENAI_*``
    variable, in order, the user's and the others (``refused`` says why)."""
    found: list[DotenvFile] = []
    for directory in directories:
        read = _read_dotenv(directory / ".env")
        if read is None:
            continue
        text, refused = read
        # its secret-named values are withheld from what leaves, as it changes (the user's
        # file or another's)
        watch(directory / ".env")
        named = {k: v for k, v in parse_dotenv(text).items() if k.startswith(_PREFIXES) and v}
        if named:
            found.append(
                DotenvFile(
                    directory / ".env",
                    keys={k: v for k, v in named.items() if k in KEY_VARIABLES},
                    endpoint={k: v for k, v in named.items() if k in ENDPOINT_VARIABLES},
                    ignored=tuple(
                        sorted(set(named) - set(KEY_VARIABLES) - set(ENDPOINT_VARIABLES))
                    ),
                    refused=refused,
                )
            )
    return found


def _read_dotenv(path: Path) -> tuple[str, str | None] | None:
    """The text of the ``.env`` at ``path`` and why it is not the user's (None: it is); None
    when there is no readable text file there (a FIFO is never opened for reading)."""
    try:
        entry = os.lstat(path)  # the file, or a link to it: whoever made it
    except OSError:
        return None
    opened = open_regular(path, follow=True)
    if not isinstance(opened, tuple):
        return None
    fd, info = opened
    real = opened_path(fd) or Path(os.path.realpath(path))
    try:
        text = read_at_most(fd, _DOTENV_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    writable = "every user can write it" if info.st_mode & stat.S_IWOTH else None
    folders = dict.fromkeys([path.parent, real.parent])  # where it is found, where it really is
    refused = not_yours(entry) or not_yours(info) or writable
    return text, refused or next(filter(None, map(open_for_others, folders)), None)


def load_dotenv(directories: Iterable[Path], *, announce: bool = True) -> Path | None:
    """Read the key variables of the first ``.env`` that gives any (never overriding); report
    what any of the files names and this package does not apply.

    Returns the file the keys came from, or None. With ``announce`` it prints where they came
    from, with the key masked, and (once per file and content) what was not applied.
    """
    files = read_dotenvs(directories)
    if announce:
        for file in files:
            _report_refused(file)
            _report_unapplied(file)
    source = next((file for file in files if file.keys and file.refused is None), None)
    if source is None:
        return None
    taken = {k: v for k, v in source.keys.items() if not os.environ.get(k)}
    os.environ.update(taken)
    for name, value in taken.items():
        service = next(s for s in SERVICES.values() if s.key_variable == name)
        endpoints.bind_to(value, str(source.path), service.current())
    if announce and taken:
        names = ", ".join(f"{name} ({masked(value)})" for name, value in sorted(taken.items()))
        print(f"jupyter_turns: read {names} from {source.path}{_for_endpoint()}")
    return source.path


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_QUOTED = re.compile(r"""^(['"])(.*?)\1\s*(?:#.*)?$""")


def parse_dotenv(text: str) -> dict[str, str]:
    """``NAME=value`` lines of a ``.env`` file (``export``, quotes and ``#`` comments allowed)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        match = _ASSIGNMENT.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        name, value = match.group(1), match.group(2).strip()
        quoted = _QUOTED.match(value)
        if quoted is not None:
            value = quoted.group(2)
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        values[name] = value
    return values


# ---------------------------------------------------------------------------- what is not applied

_reported: set[tuple[str, str]] = set()  # (file, what it named): each said once per kernel


def _report_refused(file: DotenvFile) -> None:
    """Print, once, that ``file`` gives a key and was not read for it because it is not the
    user's, and how to use it anyway."""
    if file.refused is None or not file.keys:
        return
    names = ", ".join(f"{name} ({masked(value)})" for name, value in sorted(file.keys.items()))
    mark = (str(file.path), f"refused {names}: {file.refused}")
    if mark in _reported:
        return
    _reported.add(mark)
    print(
        f"jupyter_turns: {file.path} was NOT read: {file.refused}. It gives {names}: a key from "
        "a file that is not yours would send your requests, and the data in them, to its "
        "owner's account. If you trust it: %chat key --from-dotenv "
        f"{shlex.quote(str(file.path))}"
    )


def _report_unapplied(file: DotenvFile) -> None:
    """Print, once, the endpoint values ``file`` names that were not applied, and how to."""
    if not file.endpoint and not file.ignored:
        return
    mark = (str(file.path), repr(sorted(file.endpoint.items())) + repr(file.ignored))
    if mark in _reported:
        return
    _reported.add(mark)
    whose = f" ({file.refused})" if file.refused else ""
    lines = [f"jupyter_turns: {file.path}{whose} sets these, NOT applied:"]
    lines += [f"  {line}" for line in endpoint_lines(file.endpoint)]
    if file.ignored:
        lines.append(f"  {', '.join(file.ignored)} (a .env file gives only {_key_names()})")
    if file.endpoint:
        lines.append(
            "A .env file may give a key, not choose where requests (and your key) go. "
            f"{_where_requests_go(file.endpoint)}. If you trust this file and want its "
            "endpoint: %chat endpoint --from-dotenv"
        )
    print("\n".join(lines))


def _where_requests_go(named: Iterable[str]) -> str:
    """Where requests go now, for each service or cloud whose endpoint the file named (an
    ``OPENAI_BASE_URL`` is about OpenAI's requests, not Anthropic's)."""
    named = set(named)
    clouds = [cloud for cloud in CLOUDS.values() if cloud.base_url_variable in named]
    said = []
    if named - {OPENAI.base_url_variable} - {cloud.base_url_variable for cloud in clouds}:
        said.append(f"Requests go to {endpoints.described()}")
    if OPENAI.base_url_variable in named:
        url = OPENAI.current()
        where = (
            "the default"
            if endpoints.same(url, OPENAI.default)
            else f"{OPENAI.base_url_variable} in this kernel's environment"
        )
        said.append(f"OpenAI requests go to {shown(url)} ({where})")
    for cloud in clouds:
        url = os.environ.get(cloud.base_url_variable, "").strip()
        where = (
            f"{shown(url)} ({cloud.base_url_variable} in this kernel's environment)"
            if url
            else f"its own endpoints ({cloud.example})"
        )
        said.append(f"{cloud.label} requests go to {where}")
    return "; ".join(said)


def endpoint_lines(values: dict[str, str]) -> list[str]:
    """Endpoint values as the user may see them: each URL in full (:func:`shown`: without its
    userinfo), tokens masked, each custom header with a secret-looking name masked."""
    lines = []
    for name, value in sorted(values.items()):
        if name in _BASE_URLS:
            lines.append(f"{name}={shown(value)}")
        elif name == "ANTHROPIC_CUSTOM_HEADERS":
            headers = [h.partition(":") for h in value.split("\n") if ":" in h]
            shown_headers = [
                f"{k.strip()}: {masked(v.strip()) if secret_looking(k) else v.strip()}"
                for k, _, v in headers
            ]
            lines.append(f"{name}={'; '.join(shown_headers)}")
        else:
            lines.append(f"{name}={masked(value)}")
    return lines


_BASE_URLS = tuple(service.base_url_variable for service in SERVICES.values()) + tuple(
    cloud.base_url_variable for cloud in CLOUDS.values()
)


def _key_names() -> str:
    return ", ".join(KEY_VARIABLES)


def _for_endpoint(service: Service = ANTHROPIC, endpoint: str | None = None) -> str:
    """``"; it will be sent to http://…"``: where a key just given goes, if not the default."""
    url = endpoints.custom(endpoint or service.current())
    return f"; it will be sent to {url} (not the default {service.default})" if url else ""


# ---------------------------------------------------------------------------- %chat key

KEY_USAGE = (
    "usage: %chat key (Anthropic) | %chat key openai: asks with a hidden prompt | "
    "%chat key --from-dotenv PATH: the keys of that .env file, whoever owns it"
)
_KEY_PREFIX = {"anthropic": "sk-ant-", "openai": "sk-"}


def key_command(args: list[str], endpoint_for: Callable[[Service], str] | None = None) -> None:
    """``%chat key [openai]``: ask for the service's key with a hidden prompt and set it for
    this kernel only, bound to the endpoint it will go to (``endpoint_for``: the current
    thread's, e.g. its ``--base-url``; named when it is not the default). ``%chat key
    --from-dotenv PATH``: the keys of that ``.env`` instead, bound the same way."""
    import getpass

    from IPython.core.error import StdinNotImplementedError, UsageError

    if args[:1] == ["--from-dotenv"] and len(args) == 2:
        _keys_from(Path(args[1]).expanduser(), endpoint_for)
        return
    if len(args) > 1 or (args and args[0] not in SERVICES):
        # Whatever was typed is in the cell's source now, which the notebook saves.
        raise UsageError(
            f"{KEY_USAGE}. If you typed a key on this line, delete it from the cell: cell "
            "sources are saved."
        )
    service = SERVICES[args[0]] if args else ANTHROPIC
    endpoint = endpoint_for(service) if endpoint_for is not None else service.current()
    try:
        key = getpass.getpass(f"{service.label} API key (hidden; kept in this kernel only): ")
    except (StdinNotImplementedError, EOFError):
        raise UsageError(
            f"this frontend cannot ask for input. Set {service.key_variable} in the environment "
            "before starting Jupyter, or put it in a .env file next to the notebook."
        ) from None
    key = key.strip()
    if not key:
        print("No key entered; nothing changed.")
        return
    os.environ[service.key_variable] = key
    endpoints.bind_to(key, "%chat key", endpoint)
    prefix = _KEY_PREFIX[service.name]
    note = "" if key.startswith(prefix) else f" ({service.label} keys usually start with {prefix})"
    note = note if endpoints.same(endpoint, service.default) else ""  # other servers: any key
    print(
        f"{service.key_variable} set for this kernel: {masked(key)}{note}"
        f"{_for_endpoint(service, endpoint)}. It is not saved in the notebook; a restarted "
        "kernel asks again."
    )


def _keys_from(path: Path, endpoint_for: Callable[[Service], str] | None) -> None:
    """``%chat key --from-dotenv PATH``: set this kernel's keys from the ``.env`` at ``path``,
    which the user named (so whoever owns it; the line says who does when it is not the user),
    each bound to the endpoint it will go to, as ``%chat key`` does."""
    from IPython.core.error import UsageError

    read = _read_dotenv(path)
    if read is None:
        raise UsageError(f"%chat key --from-dotenv: no readable .env file at {path}")
    text, refused = read
    given = {k: v for k, v in parse_dotenv(text).items() if k in KEY_VARIABLES and v}
    if not given:
        raise UsageError(f"{path} gives no key ({_key_names()}); nothing changed.")
    whose = f" ({refused})" if refused else ""
    for name, key in sorted(given.items()):
        service = next(s for s in SERVICES.values() if s.key_variable == name)
        endpoint = endpoint_for(service) if endpoint_for is not None else service.current()
        os.environ[name] = key
        endpoints.bind_to(key, str(path), endpoint)
        print(
            f"{name} set for this kernel from {path}{whose}: {masked(key)}"
            f"{_for_endpoint(service, endpoint)}. It is not saved in the notebook."
        )
