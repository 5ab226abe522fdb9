"""Threads of a notebook session: named Chat objects that later %%chat cells continue.

A thread keeps its Chat (conversation, "always allow" decisions), its provider settings and the
built-in tools it enabled. Settings given on a cell stick to the thread. Nothing here knows about
widgets; the magic wires a thread to a cell's widget for each turn.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .chat import Chat
from .conversation import Conversation
from .errors import ProviderConfigError
from .providers.base import Provider
from .providers.scripted import ScriptedProvider
from .tools.builtin import BUILTINS
from .tools.registry import Tool

__all__ = ["Thread", "Threads", "build_provider"]


@dataclass
class Thread:
    name: str
    chat: Chat
    provider: str = "anthropic"
    model: str | None = None
    script: str | None = None
    builtins: set[str] = field(default_factory=set)
    reasoning: str = "full"  # how the widget shows reasoning
    configured: bool = False  # defaults from the magic's settings applied

    def settings(self) -> dict[str, Any]:
        """What is saved for this thread in the notebook's metadata (never a secret)."""
        return {
            "provider": self.provider,
            "reasoning": self.reasoning,
            "model": self.model,
            "script": self.script,
            "builtins": sorted(self.builtins),
            "run_mode": "deny"
            if self.chat.execution.default_run is None
            else self.chat.execution.default_run,
            "max_cycles": self.chat.max_cycles,
            "system": self.chat.system,
            "always_allow": sorted(self.chat.allowed_tools),
            "conversation_id": self.chat.conversation.conversation_id,
        }


def build_provider(
    kind: str, model: str | None, script: str | None, namespace: MutableMapping[str, Any]
) -> Provider:
    """The provider a cell asked for; ``--script NAME`` names a notebook variable."""
    if kind == "scripted":
        if script is None:
            return ScriptedProvider()
        if script not in namespace:
            raise ProviderConfigError(f"--script {script}: no variable named {script!r}")
        value = namespace[script]
        if isinstance(value, ScriptedProvider):
            return value
        if isinstance(value, list | tuple):
            provider = ScriptedProvider(value)
            namespace[script] = provider  # later cells go on where this one stopped
            return provider
        raise ProviderConfigError(
            f"--script {script}: expected a ScriptedProvider or a list of cycles, "
            f"got {type(value).__name__}"
        )
    if kind == "anthropic":
        from .providers.anthropic import AnthropicProvider

        return AnthropicProvider(model)
    raise ProviderConfigError(f"unknown provider {kind!r}: use anthropic or scripted")


class Threads:
    """The session's threads by name, and which one is current."""

    def __init__(self, make_chat: Callable[[], Chat]) -> None:
        self._make_chat = make_chat
        self.by_name: dict[str, Thread] = {}
        self.current = "main"
        self._provider_key: dict[str, tuple[str, str | None, str | None]] = {}

    def get(self, name: str | None = None, *, new: bool = False) -> Thread:
        """The named (or current) thread, created on first use; ``new`` starts a fresh one."""
        if new:
            name = name or self._fresh_name()
            self.by_name.pop(name, None)
        name = name or self.current
        thread = self.by_name.get(name)
        if thread is None:
            thread = self.by_name[name] = Thread(name, self._make_chat())
        self.current = name
        return thread

    def adopt(self, name: str, conversation: Conversation, settings: dict[str, Any]) -> Thread:
        """Recreate a thread from a saved conversation and its saved settings."""
        thread = self.get(name, new=True)
        thread.chat.conversation = conversation
        thread.provider = str(settings.get("provider") or thread.provider)
        thread.model = settings.get("model") or thread.model
        thread.script = settings.get("script")
        thread.builtins = set(settings.get("builtins") or ())
        thread.reasoning = str(settings.get("reasoning") or thread.reasoning)
        thread.configured = True
        chat = thread.chat
        run_mode = settings.get("run_mode")
        if run_mode in ("ask", "unattended", "edit", "skip", "deny"):
            chat.execution.default_run = None if run_mode == "deny" else run_mode
        if isinstance(settings.get("max_cycles"), int):
            chat.max_cycles = max(1, settings["max_cycles"])
        if "system" in settings:
            chat.system = settings.get("system") or None
        thread.chat.allowed_tools.update(settings.get("always_allow") or ())
        return thread

    def _fresh_name(self) -> str:
        n = 2
        while f"thread-{n}" in self.by_name:
            n += 1
        return f"thread-{n}"

    def provider_for(self, thread: Thread, namespace: MutableMapping[str, Any]) -> Provider:
        key = (thread.provider, thread.model, thread.script)
        if self._provider_key.get(thread.name) != key:
            thread.chat.provider = build_provider(*key, namespace)
            self._provider_key[thread.name] = key
        return thread.chat.provider

    def names(self) -> Iterable[str]:
        return self.by_name.keys()


_USER_TOOL = re.compile(r"^[A-Za-z_]\w*$")


def namespace_tools(
    namespace: dict[str, Any],
    only: Iterable[str] | None,
    builtins: Iterable[str],
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
    for name in builtins:
        factory = BUILTINS[name]
        found[name] = factory(lambda: namespace)
    return list(found.values())
