"""Providers: the protocol, the scripted provider (offline) and the Anthropic provider."""

from __future__ import annotations

from .base import Continuation, Provider, Request, ToolSpec
from .scripted import Delay, Fail, Gate, ScriptedProvider, cycle, message, reasoning, tool_call

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
