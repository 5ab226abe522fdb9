"""The endpoint: where requests, and with them the API key, are sent; and which key may go where.

Only the process environment (variables set before Jupyter started, or set by the user's own
code) and ``%chat endpoint`` (see :mod:`jupyter_turns.kernel.endpoint_command`) choose it; a
``.env`` file never does. :data:`ENDPOINT_VARIABLES` are the variables that change where a
request goes or what credentials it carries besides the key; a ``.env`` file that names them is
only reported. A URL is shown in full (:func:`shown`): where requests go is no secret, only
the userinfo and the values of secret-looking query parameters in it are.

A key is sent only to the endpoint it was given for. Whoever gives a key binds it
(:func:`bind`: ``%chat key`` and a ``.env`` file, through :mod:`jupyter_turns.kernel.keys`) to
the endpoint in use at that moment; a key already in the environment is bound to the endpoint
in use when :func:`apply` changes it. :func:`refusal` says why a key must not go to another
endpoint; the provider then sends nothing. This module holds that binding and the endpoint's
state for the session, below the kernel layer: a provider checks every key its key source
gives (:func:`environment_key`, or the kernel's, which also reads a ``.env``).

A cloud's credentials (:class:`Cloud`: AWS's for Bedrock, Google's for Vertex AI) are nobody's
to give: they go only to the platform's own hosts (:meth:`Cloud.own`) or to a URL the user
chose in this kernel (:func:`chooser`: a cell's ``--base-url``, ``%chat endpoint URL``, or the
platform's base-URL variable as the environment set it, never as ``%chat endpoint
--from-dotenv`` did). :func:`cloud_refusal` says why they must not go elsewhere; the provider
builds no client (:mod:`jupyter_turns.providers.anthropic_cloud`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ..redaction import masked, remember

__all__ = [
    "ANTHROPIC",
    "BASE_URL",
    "BEDROCK",
    "CLOUDS",
    "DEFAULTS",
    "DEFAULT_ENDPOINT",
    "ENDPOINT_VARIABLES",
    "OPENAI",
    "SERVICES",
    "VERTEX",
    "Chooser",
    "Cloud",
    "Given",
    "Service",
    "apply",
    "bind",
    "bind_to",
    "choose",
    "chooser",
    "cloud_refusal",
    "current",
    "custom",
    "described",
    "dotenv_source",
    "environment_key",
    "forget_dotenv",
    "refusal",
    "same",
    "secret_looking",
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


_SECRET_PART = re.compile(r"auth|key|token|secret|cookie|pass|sig|credential|session", re.I)


def secret_looking(name: str) -> bool:
    """Whether a header or query parameter called ``name`` looks like it carries a credential
    (``Authorization``, ``x-api-key``, ``?token=``, ``X-Amz-Signature``...)."""
    return _SECRET_PART.search(name) is not None


def shown(url: str) -> str:
    """``url`` as the package shows and saves it: in full, for the reader to see where requests
    go, but for what may be a credential in it: the userinfo (``https://…@host``) and the
    values of secret-looking query parameters (``?key=…``). A host in another script is shown
    as the ASCII name requests go to (``xn--…``); characters that do not print are escaped."""
    parts = urlsplit(url.strip())
    if "@" in parts.netloc:
        parts = parts._replace(netloc="…@" + parts.netloc.rpartition("@")[2])
    if not parts.netloc.isascii():
        parts = parts._replace(netloc=_ascii_host(parts.netloc))
    if parts.query:
        pairs = [pair.partition("=") for pair in parts.query.split("&")]
        query = [
            f"{name}{sep}{'…' if sep and secret_looking(name) else value}"
            for name, sep, value in pairs
        ]
        parts = parts._replace(query="&".join(query))
    text = urlunsplit(parts)
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _ascii_host(netloc: str) -> str:
    """``netloc``'s host as IDNA (what the HTTP client resolves), or as written if it is not a
    valid name (the client will refuse it)."""
    userinfo, at, hostport = netloc.rpartition("@")
    host, colon, port = hostport.partition(":")
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return netloc
    return f"{userinfo}{at}{host}{colon}{port}"


def custom(url: str) -> str | None:
    """``url`` as shown, when it is not a service's default endpoint; None for a default."""
    return None if any(same(url, default) for default in DEFAULTS.values()) else shown(url)


# ---------------------------------------------------------------------------- who chose an endpoint


@dataclass(frozen=True)
class _Choice:
    who: str  # "chosen with %chat endpoint", "--base-url on a cell", "from /path/.env"
    dotenv: str | None = None  # the .env file it came from (None: the user, in this kernel)


_choices: dict[str, _Choice] = {}  # base URL (no trailing slash) -> who chose it in this kernel
# variable -> (value, the .env file, the value before): what %chat endpoint --from-dotenv set
_from_dotenv: dict[str, tuple[str, str, str | None]] = {}


def _normal(url: str) -> str:
    return url.strip().rstrip("/")


Chooser = Callable[[str], str | None]  # how the user chose a URL in this kernel, or None


def choose(url: str, who: str) -> None:
    """The user chose ``url`` in this kernel (``who``: how, e.g. ``--base-url on a cell``): a
    cloud's credentials may go there (:func:`chooser`)."""
    _choices[_normal(url)] = _Choice(who)


def chooser(url: str, variable: str | None = None) -> str | None:
    """How the user chose ``url`` in this kernel, or None if they did not: a URL given to
    :func:`choose` (or :func:`apply` without a file), or the value of the environment variable
    ``variable`` as set before Jupyter started or by the user's code, not by ``%chat endpoint
    --from-dotenv``. A ``.env`` file and a restored thread never choose."""
    choice = _choices.get(_normal(url))
    if choice is not None and choice.dotenv is None:
        return choice.who
    if variable is None or not same(os.environ.get(variable, ""), url):
        return None
    return None if dotenv_source(variable) else f"{variable} in this kernel's environment"


def dotenv_source(variable: str) -> str | None:
    """The ``.env`` file whose value ``variable`` holds, set by ``%chat endpoint
    --from-dotenv`` (None: not set by one, or changed since)."""
    applied = _from_dotenv.get(variable)
    if applied is None or os.environ.get(variable) != applied[0]:
        return None
    return applied[1]


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
    for name, value in values.items():
        if source is None:
            _from_dotenv.pop(name, None)
        else:
            before = _from_dotenv[name][2] if dotenv_source(name) else os.environ.get(name)
            _from_dotenv[name] = (value, source, before)
    os.environ.update(values)
    for service in SERVICES.values():
        if service.base_url_variable in values:
            _choices[_normal(service.current())] = _Choice(who, source)
        key = keys.get(service.name)
        if key and source is not None and _given[key].source == source:
            _given[key] = Given(service.current(), source)


def forget_dotenv() -> dict[str, str]:
    """Put back what ``%chat endpoint --from-dotenv`` set (each variable's value before, or
    none), where nobody changed it since; the variables and the file each came from."""
    put_back = {}
    for name in list(_from_dotenv):
        source = dotenv_source(name)
        _, _, before = _from_dotenv.pop(name)
        if source is None:
            continue
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
        put_back[name] = source
    return put_back


def described() -> str:
    """The endpoint in use and who chose it, for a sentence."""
    url = current()
    if not os.environ.get(BASE_URL, "").strip():
        return f"{shown(url)} (the default)"
    choice = _choices.get(_normal(url))
    who = choice.who if choice else f"{BASE_URL} in this kernel's environment"
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


# ---------------------------------------------------------------------------- cloud credentials


@dataclass(frozen=True)
class Cloud:
    """A cloud platform whose own credentials sign Claude's requests: the variable of its SDK
    that moves its endpoint, and the hosts that are its own (``https``, the default port)."""

    name: str  # the --provider value
    label: str
    base_url_variable: str
    hosts: re.Pattern[str]  # matches the whole host name
    example: str  # one of its endpoints, for a sentence

    def own(self, url: str) -> bool:
        """Whether ``url`` is one of the platform's own endpoints."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:  # a port that is not a number
            return False
        return (
            parts.scheme == "https"
            and "@" not in parts.netloc
            and port in (None, 443)
            and self.hosts.fullmatch(parts.hostname or "") is not None
        )


_REGION = r"[a-z]{2}(?:-[a-z]+)+-\d{1,2}"  # us-east-1, us-gov-west-1, ap-southeast-2
# bedrock-runtime.REGION.amazonaws.com and its FIPS endpoint (the AWS general reference,
# "Amazon Bedrock endpoints and quotas": bedrock-runtime-fips.us-east-1.amazonaws.com ...)
BEDROCK = Cloud(
    "bedrock",
    "Amazon Bedrock",
    "ANTHROPIC_BEDROCK_BASE_URL",
    re.compile(rf"bedrock-runtime(?:-fips)?\.{_REGION}\.amazonaws\.com"),
    "https://bedrock-runtime.REGION.amazonaws.com",
)
# what the SDK itself sends to: REGION-aiplatform.googleapis.com, aiplatform.googleapis.com
# (region "global") and the multi-region aiplatform.us.rep / .eu.rep.googleapis.com
VERTEX = Cloud(
    "vertex",
    "Vertex AI",
    "ANTHROPIC_VERTEX_BASE_URL",
    re.compile(
        r"(?:[a-z]+(?:-[a-z]+)*\d+-)?aiplatform\.googleapis\.com"
        r"|aiplatform\.[a-z]+\.rep\.googleapis\.com"
    ),
    "https://REGION-aiplatform.googleapis.com",
)
CLOUDS = {cloud.name: cloud for cloud in (BEDROCK, VERTEX)}


def cloud_refusal(
    cloud: Cloud, url: str, credentials: str, chosen: str | None, *, given: bool
) -> str | None:
    """Why ``credentials`` (a phrase: "the AWS credentials (…)") must not go to ``url``, or None:
    it is the platform's own, or the user chose it in this kernel (``chosen``: how, from
    :func:`chooser`). ``given``: ``url`` is the base URL given to the provider (the thread's);
    otherwise the platform's base-URL variable named it."""
    if cloud.own(url) or chosen is not None:
        return None
    source = dotenv_source(cloud.base_url_variable)
    if given:
        whence = "the thread's saved base URL, not chosen in this kernel"
        back = "%chat new starts a thread that uses the platform's own"
    elif source is not None:
        whence = f"{cloud.base_url_variable}, set from {source} by %chat endpoint --from-dotenv"
        back = "%chat endpoint default puts back what that file changed"
    else:  # the SDK's URL for a region that is none of the platform's
        whence = "the SDK's endpoint for the region asked for"
        back = "check the region (--region)"
    return (
        f"Not sent: {credentials} may go only to {cloud.label}'s own endpoints ({cloud.example}) "
        f"or to one you chose in this kernel, and requests would go to {shown(url)} ({whence}). "
        f"If you trust it, run the cell with --base-url {shown(url)}; otherwise {back}."
    )


def environment_key(service: Service | None = None) -> str | None:
    """The service's key in the environment (``ANTHROPIC_API_KEY`` by default), or None: a
    provider's key source when nobody passes one. A key handed out is withheld from text for the
    rest of the session, even after the environment changes (``%chat key``)."""
    key = os.environ.get((service or ANTHROPIC).key_variable) or None
    if key is not None:
        remember(key)
    return key
