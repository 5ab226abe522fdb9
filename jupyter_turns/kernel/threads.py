"""Threads of a notebook session: named Chat objects that later %%chat cells continue.

A thread keeps its Chat (conversation, "always allow" decisions), its provider settings and the
built-in tools it enabled. Settings given on a cell stick to the thread; ``--script VAR`` does
not: the script plays that cell's turn, and the thread's provider answers the next plain cell.
A thread restored from a notebook file gets the settings this user's kernel saved for it
(signed: see :mod:`jupyter_turns.kernel.trust`), or, from a copy that does not verify, its
conversation and harmless settings; what would grant a permission waits in ``withheld`` for
``%chat trust --apply``.
Nothing here knows about widgets; the magic wires a thread to a cell's widget for each turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..engine.chat import Chat
from ..errors import ProviderConfigError
from ..kernel_tools.builtin import BUILTINS
from ..model.conversation import Conversation
from ..model.events import ConversationEvent, Notice
from ..providers import catalog
from ..providers.base import Provider
from ..providers.catalog import ProviderChoice
from ..providers.endpoints import SERVICES
from ..providers.scripted import ScriptedProvider
from ..reading.above import SentCells
from ..reading.sources import NotebookReader
from ..record.thread_settings import SavedSettings, UserDefaults, known_builtins, split_settings
from ..tools.registry import Tool
from .keys import key_source

__all__ = [
    "ALLOWED",
    "CELL",
    "CONFIG",
    "DEFAULT",
    "RESTORED",
    "Thread",
    "Threads",
    "apply_settings",
    "build_provider",
]

# Where a thread's setting came from, as ``%chat settings`` says it
DEFAULT = "default"
CONFIG = "%config"
CELL = "cell option"
RESTORED = "restored"
ALLOWED = "%chat allow"

if TYPE_CHECKING:
    from ..record.notebook import SavedThread


@dataclass
class Thread:
    name: str
    chat: Chat
    provider: str = "anthropic"
    base_url: str | None = None  # --base-url: an OpenAI-compatible server's
    region: str | None = None  # --region: Bedrock's or Vertex's
    project: str | None = None  # --project: Vertex's
    builtins: set[str] = field(default_factory=set)
    reasoning: str = "full"  # how the widget shows reasoning
    # None: ChatMagics.stream decides, cell by cell; True/False: this thread's own (--stream,
    # or False remembered once its endpoint answered without streaming)
    stream: bool | None = None
    # None: ChatMagics.context decides, cell by cell; else this thread's own (--context)
    context: str | None = None
    above: SentCells = field(default_factory=SentCells)  # what its model saw of the cells above
    instructions_shown: str | None = None  # the instruction files its card last named
    configured: bool = False  # defaults from the magic's settings applied
    withheld: dict[str, Any] = field(default_factory=dict)  # asked for by an unsigned copy
    restored: bool = False  # from a file, by this kernel: the next request says it restarted
    gone_reported: set[str] = field(default_factory=set)  # names already reported as gone
    # saved ServerSpecs: the servers it was offered, and restored ones not started yet
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # where each setting came from (``%chat settings``), by its saved name (:meth:`settings`):
    # DEFAULT, CONFIG, CELL, RESTORED or ALLOWED; a setting not named here has its default
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        """The model asked for (None: the provider's default); the Chat holds it."""
        return self.chat.config.model

    @model.setter
    def model(self, value: str | None) -> None:
        self.chat.config = replace(self.chat.config, model=value)

    @property
    def provider_key(self) -> ProviderChoice:
        return ProviderChoice(
            self.provider, self.model, None, self.base_url, self.region, self.project
        )

    def settings(self) -> dict[str, Any]:
        """What is saved for this thread in the notebook's metadata (never a secret)."""
        return {
            "provider": self.provider,
            "reasoning": self.reasoning,
            "model": self.model,
            "base_url": self.base_url,
            "region": self.region,
            "project": self.project,
            "builtins": sorted(self.builtins),
            "run_mode": self.chat.config.run_mode,
            "edits": self.chat.config.edits,
            "max_cycles": self.chat.config.max_cycles,
            "thinking": self.chat.config.thinking,
            "system": self.chat.config.system,
            "always_allow": sorted(self.chat.allowed_tools),
            "stream": self.stream,
            "context": self.context,
            "mcp_servers": self.mcp_servers,
            "conversation_id": self.chat.conversation.conversation_id,
        }


def build_provider(choice: ProviderChoice) -> Provider:
    """A new provider for ``choice`` (:func:`jupyter_turns.providers.catalog.build`; a cell's
    ``--script VAR`` is resolved by :meth:`Threads.provider_for`). The kernel gives each
    provider its key source: the environment, else a ``.env`` next to the notebook."""
    return catalog.build(choice, {name: key_source(s) for name, s in SERVICES.items()})


class Threads:
    """The session's threads by name, and which one is current."""

    def __init__(self, make_chat: Callable[[], Chat]) -> None:
        self._make_chat = make_chat
        self.by_name: dict[str, Thread] = {}
        self.current = "main"
        self._provider_key: dict[str, ProviderChoice] = {}
        # the provider playing each script list (by identity; the list is kept so its id is
        # never reused): later cells go on where one stopped, `script = [...]` again starts over
        self._scripts: dict[int, tuple[object, ScriptedProvider]] = {}

    def get(self, name: str | None = None, *, new: bool = False) -> Thread:
        """The named (or current) thread, created on first use; ``new`` starts a fresh one."""
        if new:
            name = name or self.fresh_name()
            self.by_name.pop(name, None)
            self._provider_key.pop(name, None)
        name = name or self.current
        thread = self.by_name.get(name)
        if thread is None:
            thread = self.by_name[name] = Thread(name, self._make_chat())
        self.current = name
        return thread

    def fork(
        self, source: Thread, name: str, history: list[ConversationEvent], notice: Notice
    ) -> Thread:
        """A new current thread ``name`` with ``source``'s settings and provider, starting
        from ``history`` in a conversation of its own; ``notice`` (where it came from) joins
        it with its first request, so that turn's record says so and a restore can rebuild
        the history (:func:`jupyter_turns.record.notebook.read_notebook`)."""
        thread = self.get(name, new=True)
        chat = thread.chat
        chat.conversation = Conversation(history)
        chat.config = source.chat.config
        chat.allowed_tools.update(source.chat.allowed_tools)
        chat.pending_notes.append(notice)
        for attribute in (*_THREAD_FIELDS, "configured"):
            setattr(thread, attribute, getattr(source, attribute))
        thread.builtins = set(source.builtins)
        thread.mcp_servers = dict(source.mcp_servers)
        thread.sources = dict(source.sources)
        chat.provider = source.chat.provider  # shared: the same key and endpoint
        self._provider_key[name] = thread.provider_key
        return thread

    def current_first(self) -> list[Thread]:
        """Every thread, the current one first (``%chat mcp``: its restored server wins)."""
        first = self.by_name.get(self.current)
        rest = [t for t in self.by_name.values() if t is not first]
        return [first, *rest] if first is not None else rest

    def fresh_name(self) -> str:
        """The name ``--new`` gives: ``main`` for a first thread, then ``thread-2``, ..."""
        if not self.by_name:
            return "main"
        n = len(self.by_name) + 1
        while f"thread-{n}" in self.by_name:
            n += 1
        return f"thread-{n}"

    def adopt(self, saved: SavedThread, defaults: UserDefaults) -> Thread:
        """Recreate a thread from a saved one. It starts from the user's ``defaults``, takes
        the conversation, then the settings this user's kernel signed, whole; without a signed
        copy, the harmless fields of the unsigned ones. Guarded fields of unsigned copies wait
        in ``withheld`` (those a signed copy already gives are not asked again)."""
        thread = self.get(saved.name, new=True)
        thread.chat.conversation = saved.conversation
        thread.configured = True
        thread.restored = True
        thread.provider, thread.model = defaults.provider, defaults.model
        thread.builtins = set(defaults.builtins)
        saved.settings = known_builtins(saved.settings, BUILTINS.keys())
        settings: SavedSettings = saved.settings
        harmless, guarded = split_settings(settings.values, defaults)
        if settings.signed is None:
            apply_settings(thread, harmless)
            thread.withheld = guarded
        else:
            apply_settings(thread, settings.signed)
            signed = settings.signed
            thread.withheld = {k: v for k, v in guarded.items() if signed.get(k) != v}
        return thread

    def provider_for(
        self, thread_name: str, key: ProviderChoice, namespace: Mapping[str, Any]
    ) -> Provider:
        """The provider for ``key``: the thread's own while its key is unchanged, else a new
        one (raises ProviderConfigError). Changes nothing in the thread or the namespace;
        :meth:`use_provider` commits it."""
        if key.kind == "scripted" and key.script is not None:
            return self._scripted(key.script, namespace)
        existing = self.by_name.get(thread_name)
        if existing is not None and self._provider_key.get(thread_name) == key:
            return existing.chat.provider
        return build_provider(key)

    def _scripted(self, script: str, namespace: Mapping[str, Any]) -> Provider:
        """``--script VAR``: a ScriptedProvider in VAR, or the one playing VAR's list of
        cycles. The variable is never rebound: it still holds what the user put there."""
        if script not in namespace:
            raise ProviderConfigError(f"--script {script}: no variable named {script!r}")
        value = namespace[script]
        if isinstance(value, ScriptedProvider):
            return value
        if not isinstance(value, list | tuple):
            raise ProviderConfigError(
                f"--script {script}: expected a ScriptedProvider or a list of cycles, "
                f"got {type(value).__name__}"
            )
        held = self._scripts.get(id(value))
        if held is None or held[0] is not value:
            held = self._scripts[id(value)] = (value, ScriptedProvider(value))
        return held[1]

    def use_provider(self, thread: Thread, provider: Provider, stream: bool = True) -> None:
        """Give the thread ``provider``; ``stream`` is the default of a thread with no choice
        of its own (``ChatMagics.stream``)."""
        if hasattr(provider, "streaming"):  # the Anthropic provider: stream or not, per thread
            provider.streaming = stream if thread.stream is None else thread.stream
        thread.chat.provider = provider
        self._provider_key[thread.name] = thread.provider_key

    def names(self) -> Iterable[str]:
        return self.by_name.keys()


def apply_settings(thread: Thread, values: dict[str, Any]) -> None:
    """Set a thread's settings from checked values (see :class:`ThreadSettings`): those a
    notebook saved, so each is marked ``restored``."""
    chat = thread.chat
    for name, value in values.items():
        thread.sources[name] = RESTORED
        if name in _THREAD_FIELDS:
            setattr(thread, name, value)
        elif name in ("thinking", "max_cycles", "run_mode", "edits"):
            chat.config = replace(chat.config, **{name: value})
        elif name == "system":
            chat.config = replace(chat.config, system=value or None)
        elif name == "builtins":
            thread.builtins = {n for n in value if n in BUILTINS}
        elif name == "always_allow":
            chat.allowed_tools.update(value)
        elif name == "mcp_servers":  # configured in the kernel when the thread next runs
            thread.mcp_servers = dict(value)


_THREAD_FIELDS = (
    "provider",
    "model",
    "base_url",
    "region",
    "project",
    "reasoning",
    "stream",
    "context",
)
_USER_TOOL = re.compile(r"^[A-Za-z_]\w*$")


def namespace_tools(
    namespace: dict[str, Any],
    only: Iterable[str] | None,
    builtins: Iterable[str],
    reader: NotebookReader | None = None,
) -> list[Tool]:
    """Every ``@tool`` in the user's namespace (or the ``only`` ones), plus enabled built-ins."""
    wanted = set(only) if only is not None else None
    found: dict[str, Tool] = {}
    for key, value in list(namespace.items()):
        if (
            isinstance(value, Tool)
            and _USER_TOOL.match(key)
            and not key.startswith("_")
            and (wanted is None or key in wanted or value.name in wanted)
        ):
            found.setdefault(value.name, value)
    reader = reader or NotebookReader(namespace)
    for name in builtins:
        found[name] = BUILTINS[name](reader)
    return list(found.values())
