"""Claude on Amazon Bedrock and Google Vertex AI: the Anthropic provider with a cloud's client.

:class:`BedrockProvider` (``--provider bedrock``) and :class:`VertexProvider` (``--provider
vertex``) are :class:`~.anthropic.MessagesProvider`\\ s: the request, the stream and the plain
answer (``--stream off``), thinking, prompt caching, continuation, compaction and the error
mapping are the Anthropic provider's own. What differs is the client (the SDK's
``AsyncAnthropicBedrock`` / ``AsyncAnthropicVertex``, which sign each request and route it to
the platform's URL) and its credentials, which are the cloud's, never an Anthropic key:

- **Bedrock**: a Bedrock API key (``api_key``, else ``AWS_BEARER_TOKEN_BEDROCK``) or the AWS
  credential chain of boto3 (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, a profile,
  SSO, an instance role...) signing with SigV4. The region: ``region``, else ``AWS_REGION`` /
  ``AWS_DEFAULT_REGION``, else the profile's.
- **Vertex**: an OAuth access token (``api_key``), a google-auth ``credentials`` object, or the
  application default credentials. The region: ``region``, else ``CLOUD_ML_REGION``; the
  project: ``project``, else ``ANTHROPIC_VERTEX_PROJECT_ID``, else the credentials'.

Missing credentials, region or project are a ProviderConfigError that names the chain and what
to set, when the provider is made; a credential that fails later (an expired SSO session or
token) is an ``auth`` error saying the same.

The credentials go only to the platform's own endpoints (``bedrock-runtime.REGION.amazonaws.com``,
``REGION-aiplatform.googleapis.com``...) or to one the user chose (:func:`_check_endpoint`, where
each client is built, before anything is sent): ``base_url`` given by the code that makes the
provider, the SDK's ``ANTHROPIC_BEDROCK_BASE_URL`` / ``ANTHROPIC_VERTEX_BASE_URL`` as the
environment set it, or, when the kernel makes the provider for a thread (``chosen_by``), a
``--base-url`` given in this kernel. A ``.env`` file (through ``%chat endpoint --from-dotenv``)
or a restored thread never moves them: the provider is not made, and the ProviderConfigError
says where they would have gone and how to choose it (:func:`.endpoints.cloud_refusal`).

What the platforms do not offer, read from the SDK (``anthropic/lib/bedrock/_client.py``,
``lib/vertex/_client.py``):

- Bedrock has no token counter: the SDK refuses ``count_tokens`` before sending
  ("not supported in Bedrock yet"), so :meth:`count_tokens` answers None (the budget estimates
  from the last usage). Vertex routes it (``count-tokens:rawPredict``).
- Betas reach both (Bedrock: the ``anthropic-beta`` header becomes the body's
  ``anthropic_beta``; Vertex: the header), so compaction is asked for; where the platform
  refuses the compact edit, the request goes again without it and the thread says once that
  compaction is not offered (the Anthropic provider's own refusal path).
- The body carries the platform's ``anthropic_version`` (``bedrock-2023-05-31``,
  ``vertex-2023-10-16``, as their documentation requires); the SDK installed here would send
  its own API version instead.
- The 1-hour prompt-cache lifetime (``cache_control`` ``ttl: "1h"``): Vertex offers it like
  the Anthropic API; Bedrock only for Claude 4.5 models and later, so for older ones the
  request asks for the default 5 minutes (:meth:`BedrockProvider.long_cache`).

Model names are the platform's (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``,
``claude-sonnet-4-5@20250929``); :func:`~.models.model_info` reads them for prices, windows and
thinking. Each client has ``max_retries=0`` (the engine retries visibly) and honours the proxy
variables.
"""

from __future__ import annotations

import os
from typing import Any

import anthropic

from ..errors import ProviderConfigError, ProviderError
from ..redaction import masked, remember
from .anthropic import MessagesProvider
from .anthropic_errors import Platform
from .base import KeySource
from .endpoints import BEDROCK as BEDROCK_CLOUD
from .endpoints import VERTEX as VERTEX_CLOUD
from .endpoints import Chooser, Cloud, chooser, cloud_refusal
from .keyed_client import client_timeout
from .models import model_info

__all__ = [
    "BEDROCK",
    "BEDROCK_MODEL",
    "VERTEX",
    "VERTEX_MODEL",
    "BedrockProvider",
    "VertexProvider",
    "bedrock_model",
]

# Sonnet 4.5: the newest Sonnet whose ids on both platforms this package knows
BEDROCK_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
VERTEX_MODEL = "claude-sonnet-4-5@20250929"

_AWS_CHAIN = (
    "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment "
    "before starting Jupyter, or AWS_PROFILE for a profile of ~/.aws/config (aws configure, "
    "aws sso login), or AWS_BEARER_TOKEN_BEDROCK for a Bedrock API key."
)
_GOOGLE_CHAIN = (
    "Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a "
    "service account's key file, before starting Jupyter."
)
BEDROCK = Platform(
    "Amazon Bedrock",
    {
        401: f" Check the AWS credentials. {_AWS_CHAIN}",
        403: " The AWS credentials were refused, or they lack bedrock:InvokeModel* for this "
        "model, or the model is not enabled for the account (Bedrock console, Model access).",
        404: " Check the model id (--model): a Bedrock id like "
        f"{BEDROCK_MODEL}, or an inference profile (us.…, eu.…, global.…).",
        413: " The request is too large: start a new thread or send less.",
    },
)
VERTEX = Platform(
    "Vertex AI",
    {
        401: f" Check the Google credentials. {_GOOGLE_CHAIN}",
        403: " The Google credentials lack aiplatform.endpoints.predict in this project, or "
        "the model is not enabled (Vertex AI Model Garden).",
        404: " Check the model name (--model, e.g. "
        f"{VERTEX_MODEL}), the region (--region) and the project (--project).",
        413: " The request is too large: start a new thread or send less.",
    },
)


def bedrock_model(region: str) -> str:
    """The default model in ``region``: the cross-region inference profile of its geography
    (newer models are served only through one), ``global.`` outside the US and Europe."""
    geography = region.split("-")[0]
    prefix = geography if geography in ("us", "eu") else "global"
    return f"{prefix}.{BEDROCK_MODEL}"


class _CloudProvider(MessagesProvider):
    """A MessagesProvider whose client, built once, carries the cloud's own credentials."""

    def __init__(self, model: str, client: Any, *, timeout: float) -> None:
        super().__init__(model, timeout=timeout)
        self._client = client

    @property
    def endpoint(self) -> str:
        """The region's base URL, where every request goes."""
        return str(self._client.base_url).rstrip("/")

    def _current_client(self) -> Any:
        return self._client

    def classify(self, error: BaseException) -> ProviderError:
        """Credentials that failed while a request was signed (an expired SSO session or
        token) are an auth error naming the chain; the rest as the Anthropic provider's."""
        if _credential_failure(error):
            return ProviderError(
                f"{self.platform.label}: the credentials could not be used: "
                f"{type(error).__name__}: {error}.{self.platform.hints.get(401, '')}",
                kind="auth",
                retryable=False,
            )
        return super().classify(error)


class BedrockProvider(_CloudProvider):
    """Claude through Amazon Bedrock. ``api_key`` is a Bedrock API key (a bearer token), not an
    Anthropic key; ``key_source`` is accepted for the registry's sake and never asked: no
    Anthropic key goes to AWS. ``base_url`` (a proxy, a private endpoint) is the caller's
    choice, unless ``chosen_by`` is given: then only a URL it names a chooser for gets the
    AWS credentials (the kernel passes :func:`.endpoints.chooser`)."""

    name = "bedrock"
    platform = BEDROCK
    stream_types = ("application/vnd.amazon.eventstream",)  # the AWS event stream
    counts_tokens = False  # the SDK: "Token counting is not supported in Bedrock yet"
    api_version = "bedrock-2023-05-31"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_source: KeySource | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: anthropic.AsyncAnthropicBedrock | None = None,
        region: str | None = None,
        profile: str | None = None,
        chosen_by: Chooser | None = None,
    ) -> None:
        del key_source  # Bedrock signs with AWS credentials
        if client is None:
            region = region or _aws_region(profile)
            client = _bedrock_client(api_key, region, profile, (base_url, chosen_by), timeout)
        self.region = str(client.aws_region)
        super().__init__(model or bedrock_model(self.region), client, timeout=timeout)

    def long_cache(self, model: str) -> bool:
        """Bedrock keeps a prefix an hour for Claude 4.5 models and later only."""
        info = model_info(model)
        return info.family != "unknown" and info.version >= (4, 5)

    def __repr__(self) -> str:
        return f"BedrockProvider(model={self.model!r}, region={self.region!r})"


class VertexProvider(_CloudProvider):
    """Claude through Google Vertex AI. ``api_key`` is an OAuth access token, not an Anthropic
    key; ``key_source`` is accepted for the registry's sake and never asked. ``base_url`` and
    ``chosen_by`` as :class:`BedrockProvider`'s."""

    name = "vertex"
    platform = VERTEX
    api_version = "vertex-2023-10-16"

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        key_source: KeySource | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        client: anthropic.AsyncAnthropicVertex | None = None,
        region: str | None = None,
        project: str | None = None,
        credentials: Any = None,
        chosen_by: Chooser | None = None,
    ) -> None:
        del key_source  # Vertex authenticates with Google credentials
        if client is None:
            where = (base_url, chosen_by)
            client = _vertex_client(api_key, credentials, region, project, where, timeout)
        self.region = str(client.region)
        self.project = client.project_id
        super().__init__(model or VERTEX_MODEL, client, timeout=timeout)

    def __repr__(self) -> str:
        return (
            f"VertexProvider(model={self.model!r}, region={self.region!r}, "
            f"project={self.project!r})"
        )


# ---------------------------------------------------------------------------- where they go


# the base URL the caller gave (None: the SDK's variable, else the platform's own), and who chose
# it (None: the caller)
_Where = tuple[str | None, Chooser | None]


def _check_endpoint(cloud: Cloud, client: Any, where: _Where, credentials: str) -> None:
    """Raise ProviderConfigError, before anything is sent, when ``client`` would send
    ``credentials`` (a phrase for the sentence) to an endpoint that is neither the platform's
    own nor one the user chose: the base URL given when its chooser names nobody, else the
    SDK's base-URL variable when ``%chat endpoint --from-dotenv`` set it."""
    base_url, chosen_by = where
    url = str(client.base_url)
    if base_url is None:
        chosen = chooser(url, cloud.base_url_variable)
    else:
        chosen = "base_url, given with the provider" if chosen_by is None else chosen_by(base_url)
    refused = cloud_refusal(cloud, url, credentials, chosen, given=base_url is not None)
    if refused:
        raise ProviderConfigError(refused)


# ---------------------------------------------------------------------------- Bedrock


def _aws_region(profile: str | None) -> str:
    """``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the profile's region (as the SDK does)."""
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        return region
    session = _aws_session(profile)
    if session.region_name:
        return str(session.region_name)
    raise ProviderConfigError(
        "No AWS region for Bedrock. Pass --region (or %config ChatMagics.aws_region), or set "
        "AWS_REGION in the environment, or a region in the AWS profile (aws configure)."
    )


def _aws_credentials(api_key: str | None) -> str:
    """The AWS credentials a Bedrock client signs with, as a phrase."""
    if api_key:
        return f"the Bedrock API key ({masked(api_key)})"
    bearer = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    if bearer:
        return f"the Bedrock API key in AWS_BEARER_TOKEN_BEDROCK ({masked(bearer)})"
    return "the AWS credentials (each signed request carries the access key id and session token)"


def _aws_session(profile: str | None) -> Any:
    import boto3  # type: ignore[import-untyped]  # an extra: imported when Bedrock is used
    import botocore.exceptions  # type: ignore[import-untyped]

    try:
        return boto3.Session(profile_name=profile)
    except botocore.exceptions.BotoCoreError as exc:  # e.g. ProfileNotFound
        raise ProviderConfigError(f"AWS: {exc}. {_AWS_CHAIN}") from exc


def _bedrock_client(
    api_key: str | None, region: str, profile: str | None, where: _Where, timeout: float
) -> anthropic.AsyncAnthropicBedrock:
    """The SDK's Bedrock client; raises ProviderConfigError when the AWS chain has no
    credentials (checked here, not at the first request), or they must not go where it would
    send them."""
    bearer = api_key or os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    if bearer:
        remember(bearer)
    elif _aws_session(profile).get_credentials() is None:
        raise ProviderConfigError(f"No AWS credentials found for Bedrock. {_AWS_CHAIN}")
    try:
        client = anthropic.AsyncAnthropicBedrock(
            aws_region=region,
            aws_profile=profile,
            api_key=api_key,
            base_url=where[0],
            max_retries=0,
            timeout=client_timeout(timeout),
        )
    except ValueError as exc:  # e.g. a Bedrock API key and a profile at once
        raise ProviderConfigError(f"Bedrock: {exc}") from exc
    _check_endpoint(BEDROCK_CLOUD, client, where, _aws_credentials(api_key))
    return client


# ---------------------------------------------------------------------------- Vertex


def _vertex_client(
    api_key: str | None,
    credentials: Any,
    region: str | None,
    project: str | None,
    where: _Where,
    timeout: float,
) -> anthropic.AsyncAnthropicVertex:
    """The SDK's Vertex client with the region, the project and the credentials resolved
    here, so that what is missing is said now (the SDK would find out at the first request),
    and only if they may go where it would send them."""
    region = region or os.environ.get("CLOUD_ML_REGION")
    if not region:
        raise ProviderConfigError(
            "No Vertex AI region. Pass --region (or %config ChatMagics.vertex_region), or set "
            "CLOUD_ML_REGION in the environment (e.g. us-east5, europe-west1 or global)."
        )
    project = project or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID")
    what = "the Google credentials given"
    if api_key:
        remember(api_key)
        what = f"the Google access token ({masked(api_key)})"
    elif credentials is None:
        credentials, found = _google_credentials()
        project = project or found
        what = "the Google application default credentials (an access token)"
    if not project:
        raise ProviderConfigError(
            "No Google Cloud project for Vertex AI. Pass --project (or %config "
            "ChatMagics.vertex_project), or set ANTHROPIC_VERTEX_PROJECT_ID in the environment."
        )
    client = anthropic.AsyncAnthropicVertex(
        region=region,
        project_id=project,
        access_token=api_key,
        credentials=credentials,
        base_url=where[0],
        max_retries=0,
        timeout=client_timeout(timeout),
    )
    _check_endpoint(VERTEX_CLOUD, client, where, what)
    return client


def _google_credentials() -> tuple[Any, str | None]:
    """The application default credentials and their project (no token is fetched here: the
    SDK refreshes before the first request)."""
    import google.auth
    import google.auth.exceptions

    try:
        credentials, project = google.auth.default(
            scopes=["https://www.googleapis.com/auth/cloud-platform"]
        )
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ProviderConfigError(
            f"No Google credentials found for Vertex AI ({exc}). {_GOOGLE_CHAIN}"
        ) from exc
    return credentials, project


# ---------------------------------------------------------------------------- errors


def _credential_failure(error: BaseException) -> bool:
    """Whether ``error`` came from the cloud's credential chain while a request was signed:
    botocore's and google-auth's errors, and the SDK's "Could not resolve ..." (no credentials,
    no token)."""
    module = type(error).__module__
    if module.startswith(("botocore.", "google.auth.")):
        return True
    return isinstance(error, RuntimeError) and str(error).startswith("Could not resolve")
