"""Threads of a notebook session: named Chat objects that later %%chat cells continue.

A thread keeps its Chat (conversation, "always allow" decisions), its provider settings and the
built-in tools it enabled. Settings given on a cell stick to the thread; ``--script VAR`` does
not: the script plays that cell's turn, and the thread's provider answers the next plain cell.
A thread restored from a notebook file gets its conversation, and the settings the user granted
it in that notebook (their own store: :mod:`jupyter_turns.kernel.grants`), else the file's
harmless settings; what would grant a permission waits in ``withheld`` for ``%chat trust
--apply``. Turns someone else wrote are marked so that a request quotes them (``Chat.quoted``).
Nothing here knows about widgets; the magic wires a thread to a cell's widget for each turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.chat import Chat
from ..engine.quoted import Quoted
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
from ..record.thread_settings import UserDefaults, known_builtins, split_settings
from ..tools.registry import Tool
from .grants import Verdict
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
    "namespace_tools",
    "stepped_aside",
    "stepped_aside_notes",
    "user_tools",
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
    instruction_notes_shown: tuple[str, ...] = ()  # the refused ones its card last named
    configured: bool = False  # defaults from the magic's settings applied
    # guarded settings asked for and not applied: the file's, or the user's own grant of this
    # thread in the notebook at ``proposed_by`` (a moved or renamed notebook)
    withheld: dict[str, Any] = field(default_factory=dict)
    proposed_by: str | None = None  # None: the file restored from (``origin``) asks
    origin: str | None = None  # the real path of the notebook it was restored from
    # digests of the events of someone else's it holds (kept with the user's grant: those,
    # and only those, may be there when the grant is applied again)
    foreign: frozenset[str] = frozenset()
    restored: bool = False  # from a file, by this kernel: the next request says it restarted
    gone_reported: set[str] = field(default_factory=set)  # names already reported as gone
    # the built-ins a notebook tool of the same name replaced, as its cards last said it
    stepped_aside: set[str] = field(default_factory=set)
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
        chat.quoted = source.chat.quoted  # someone else's turns stay quoted in the fork
        thread.foreign = source.foreign
        chat.pending_notes.append(notice)
        for attribute in (*_THREAD_FIELDS, "configured"):
            setattr(thread, attribute, getattr(source, attribute))
        thread.builtins = set(source.builtins)
        thread.mcp_servers = dict(source.mcp_servers)
        thread.sources = dict(source.sources)
        if self._provider_key.get(source.name) == source.provider_key:
            chat.provider = source.chat.provider  # shared: the same key and endpoint
            self._provider_key[name] = thread.provider_key
        # else the source's provider is not built yet (a restored thread before its first
        # turn holds a placeholder): the fork builds its own at its first turn, as the source
        # would (provider_for)
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

    def adopt(
        self, saved: SavedThread, defaults: UserDefaults, verdict: Verdict, origin: str
    ) -> Thread:
        """Recreate a thread from a saved one, as ``verdict`` (the user's own stores) says.
        It starts from the user's ``defaults`` and takes the conversation, its turns of
        someone else's marked to be quoted. With a grant, the granted settings apply whole;
        without, the harmless fields of the file's. Guarded fields wait in ``withheld``: the
        file's (those a grant already gives are not asked again), or, for a notebook the
        user granted at another path, that grant's."""
        thread = self.get(saved.name, new=True)
        chat = thread.chat
        chat.conversation = saved.conversation
        who = verdict.authorship
        chat.quoted = Quoted(who.quoted, Path(origin).name) if who.mixed else None
        thread.foreign, thread.origin = who.foreign, origin
        thread.configured = True
        thread.restored = True
        thread.provider, thread.model = defaults.provider, defaults.model
        thread.builtins = set(defaults.builtins)
        values, note = known_builtins(saved.settings.values, BUILTINS.keys())
        if note:
            saved.settings.problems.append(note)
        harmless, guarded = split_settings(values, defaults)
        if verdict.grant is not None:
            granted, _ = known_builtins(verdict.grant, BUILTINS.keys())
            apply_settings(thread, granted)
            thread.withheld = {k: v for k, v in guarded.items() if granted.get(k) != v}
            return thread
        apply_settings(thread, harmless)
        if verdict.moved is not None:
            moved, _ = known_builtins(verdict.moved, BUILTINS.keys())
            thread.withheld = split_settings(moved, defaults)[1]
            thread.proposed_by = verdict.moved_from
        else:
            thread.withheld = guarded
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
    """Every ``@tool`` in the user's namespace (or the ``only`` ones), plus the enabled
    built-ins. A tool of the notebook is never replaced: a built-in of its name steps aside
    (:func:`stepped_aside` names them; docs/tools.md)."""
    found = user_tools(namespace, only)
    reader = reader or NotebookReader(namespace)
    for name in builtins:
        if name not in found:
            found[name] = BUILTINS[name](reader)
    return list(found.values())


def user_tools(namespace: dict[str, Any], only: Iterable[str] | None = None) -> dict[str, Tool]:
    """The ``@tool`` objects of the user's namespace (or the ``only`` ones), by tool name."""
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
    return found


def stepped_aside(tools: Iterable[Tool], builtins: Iterable[str]) -> list[str]:
    """The enabled built-ins (``builtins``) that a tool of the notebook replaced in ``tools``:
    a tool with a built-in's name that is not the built-in."""
    enabled = set(builtins)
    return sorted(t.name for t in tools if t.name in enabled and not t.builtin)


def stepped_aside_notes(thread: Thread, aside: list[str]) -> list[Notice]:
    """Each built-in the notebook's tool replaced, said once in the thread (again after it came
    back and went again): the card of the turn it first happens in names both."""
    told = thread.stepped_aside
    thread.stepped_aside = set(aside)
    return [
        Notice(
            level="info",
            text=f"{name}: the model gets your @tool {name}, not the built-in tool {name} of "
            f"thread {thread.name!r} (it steps aside while your tool has its name). To offer "
            f'both, name yours otherwise: @tool(name="my_{name}").',
            data={"stepped_aside": name},
        )
        for name in aside
        if name not in told
    ]
