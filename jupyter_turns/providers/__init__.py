"""Providers: the protocol, the scripted provider (offline) and the Anthropic provider.

Each name is imported when first read, as the root package's are (jupyter_turns/__init__.py):
``%load_ext`` reads :mod:`.catalog` and :mod:`.endpoints` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy_exports

if TYPE_CHECKING:
    from .base import Continuation, Provider, Request, ToolSpec
    from .scripted import Delay, Fail, Gate, ScriptedProvider, cycle, message, reasoning, tool_call

_HOMES = {  # name -> its module
    "Continuation": ".base",
    "Provider": ".base",
    "Request": ".base",
    "ToolSpec": ".base",
    "Delay": ".scripted",
    "Fail": ".scripted",
    "Gate": ".scripted",
    "ScriptedProvider": ".scripted",
    "cycle": ".scripted",
    "message": ".scripted",
    "reasoning": ".scripted",
    "tool_call": ".scripted",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


__all__ = [
    "Continuation",
    "Delay",
    "Fail",
    "Gate",
    "Provider",
    "Request",
    "ScriptedProvider",
    "ToolSpec",
    "cycle",
    "message",
    "reasoning",
    "tool_call",
]
