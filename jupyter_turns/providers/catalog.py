"""The providers a thread can use, by name: what each needs, which extra installs its SDK, which
key service it uses, and whose reasoning its API takes back.

The kernel builds a provider with :func:`build` from a :class:`ProviderChoice` (the cell's
``--provider``, ``--model``, ``--base-url``, ``--region``, ``--project``, or the thread's own).
A provider's SDK is imported only when it is built: a missing extra is a ProviderConfigError
naming the ``pip install`` that adds it. Key sources come from the caller (the kernel's read a
``.env`` too), one per :class:`~jupyter_turns.providers.endpoints.Service`. A cloud provider's
``--base-url`` gets the cloud's credentials only if the user chose it in this kernel
(:func:`~jupyter_turns.providers.endpoints.chooser`): a thread's may have been restored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ProviderConfigError
from .endpoints import ANTHROPIC, OPENAI, Service, chooser

if TYPE_CHECKING:  # light at import: ChatMagics.provider reads KINDS at %load_ext
    from ..model.events import ConversationEvent
    from .base import Provider

__all__ = [
    "KINDS",
    "Kind",
    "ProviderChoice",
    "build",
    "default_model",
    "not_carried",
    "reasoning_api",
]

KeySources = Mapping[str, Callable[[], str | None]]  # service name -> key source


class ProviderChoice(NamedTuple):
    """Which provider a thread asks for; a change in any field builds a new provider."""

    kind: str
    model: str | None = None
    script: str | None = None  # --script VAR (scripted only)
    base_url: str | None = None  # --base-url (the OpenAI-compatible and the cloud providers)
    region: str | None = None  # --region (Bedrock, Vertex)
    project: str | None = None  # --project (Vertex)


@dataclass(frozen=True)
class Kind:
    """One ``--provider`` value."""

    name: str
    label: str  # as the user reads it
    extra: str | None  # the pip extra with its SDK (None: installed with the package)
    service: Service | None  # whose key it sends (None: a credential chain of its own, or none)
    api: str | None  # whose reasoning it takes back (None: none is sent back)
    needs: str  # for the README's table and the errors

    @property
    def keyed(self) -> bool:
        """Whether it cannot run without its service's key (a local server may need none)."""
        return self.service is not None and self.needs == "a key"


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind("anthropic", "Claude (Anthropic API)", None, ANTHROPIC, "anthropic", "a key"),
        Kind("openai", "OpenAI (Responses API)", "openai", OPENAI, "openai-responses", "a key"),
        Kind(
            "openai-chat",
            "OpenAI-compatible server (Chat Completions)",
            "openai",
            OPENAI,
            None,
            "--base-url and --model; a key only if the server asks",
        ),
        Kind("ollama", "Ollama", "openai", OPENAI, None, "a running Ollama and --model"),
        Kind("bedrock", "Claude on Amazon Bedrock", "bedrock", None, "anthropic", "AWS creds"),
        Kind("vertex", "Claude on Google Vertex AI", "vertex", None, "anthropic", "Google ADC"),
        Kind("scripted", "Scripted (offline)", None, None, None, "nothing"),
    )
}


def build(choice: ProviderChoice, keys: KeySources) -> Provider:
    """A new provider for ``choice`` (raises ProviderConfigError: unknown, or its SDK missing,
    or misconfigured). ``--script`` is resolved by the caller, not here."""
    kind = KINDS.get(choice.kind)
    if kind is None:
        raise ProviderConfigError(
            f"unknown provider {choice.kind!r}: use one of {', '.join(KINDS)}"
        )
    try:
        return _BUILDERS[kind.name](choice, keys)
    except ImportError as exc:
        extra = kind.extra or "test"
        raise ProviderConfigError(
            f"--provider {kind.name} needs the {extra!r} extra ({exc.name or exc}): "
            f"pip install 'jupyter_turns[{extra}]', then restart the kernel"
        ) from None


def default_model(kind: str) -> str | None:
    """The model a ``kind`` provider asks for without ``--model`` (None: it names none of its
    own, its SDK is not installed, or it depends on where it runs: Bedrock's region). Read
    from the provider's module, its one home; building one would need its key."""
    try:
        if kind == "anthropic":
            from .anthropic import DEFAULT_MODEL as anthropic_model

            return anthropic_model
        if kind == "openai":
            from .openai_responses import DEFAULT_MODEL as openai_model

            return openai_model
        if kind == "vertex":
            from .anthropic_cloud import VERTEX_MODEL

            return VERTEX_MODEL
    except ImportError:
        return None
    return None


def _key(keys: KeySources, service: Service) -> dict[str, Any]:
    source = keys.get(service.name)
    return {} if source is None else {"key_source": source}


def _anthropic(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .anthropic import AnthropicProvider

    return AnthropicProvider(choice.model, **_key(keys, ANTHROPIC))


def _openai(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .openai_responses import OpenAIResponsesProvider

    return OpenAIResponsesProvider(choice.model, base_url=choice.base_url, **_key(keys, OPENAI))


def _openai_chat(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .openai_chat import OpenAIChatProvider

    return OpenAIChatProvider(choice.model, base_url=choice.base_url, **_key(keys, OPENAI))


def _ollama(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .openai_chat import OllamaProvider

    return OllamaProvider(choice.model, base_url=choice.base_url, **_key(keys, OPENAI))


def _bedrock(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .anthropic_cloud import BedrockProvider

    return BedrockProvider(
        choice.model, region=choice.region, base_url=choice.base_url, chosen_by=chooser
    )


def _vertex(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .anthropic_cloud import VertexProvider

    return VertexProvider(
        choice.model,
        region=choice.region,
        project=choice.project,
        base_url=choice.base_url,
        chosen_by=chooser,
    )


def _scripted(choice: ProviderChoice, keys: KeySources) -> Provider:
    from .scripted import ScriptedProvider

    return ScriptedProvider()


_BUILDERS: dict[str, Callable[[ProviderChoice, KeySources], Provider]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-chat": _openai_chat,
    "ollama": _ollama,
    "bedrock": _bedrock,
    "vertex": _vertex,
    "scripted": _scripted,
}


# ---------------------------------------------------------------------------- switching


def reasoning_api(event: ConversationEvent) -> str | None:
    """Whose API a reasoning or opaque event can be sent back to (None: to none)."""
    if event.kind == "block":
        return "anthropic"
    if event.kind != "reasoning":
        return None
    api = event.metadata.get("api")
    if isinstance(api, str):
        return api
    return "anthropic" if event.metadata.get("signature") else None


def not_carried(events: Sequence[ConversationEvent], kind: str) -> int:
    """How many reasoning (and opaque) blocks of the conversation the ``kind`` provider's API
    cannot take: another provider's, kept in the notebook but never sent there."""
    api = KINDS[kind].api if kind in KINDS else None
    return sum(
        1
        for event in events
        if event.parent is None and (found := reasoning_api(event)) is not None and found != api
    )
