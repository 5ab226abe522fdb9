"""jupyter_turns: a Claude conversation with tools inside Jupyter notebooks.

In a notebook: ``%load_ext jupyter_turns`` then a ``%%chat`` cell. From Python:
``await Chat(provider=..., tools=[...], prompter=...).send("...")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .exports import lazy_exports

# Each public name is imported when first read (PEP 562's module ``__getattr__``): the
# extension's load imports none of them (docs/architecture.md, "Loading the extension"), and
# ``from jupyter_turns import Chat`` imports the engine at that line. mypy and editors read the
# imports under TYPE_CHECKING; tests/unit/test_lazy_exports.py keeps _HOMES equal to them.
if TYPE_CHECKING:
    from .engine.chat import Chat
    from .engine.retry import RetryPolicy
    from .engine.subagent import subagent
    from .engine.turn import TurnResult, TurnState
    from .errors import (
        ConversationError,
        InvalidTransition,
        JupyterTurnsError,
        ProtocolError,
        ProviderError,
        SchemaError,
        StreamBroken,
        ToolDefinitionError,
    )
    from .model.content import Attachment, ImageData
    from .model.conversation import Conversation
    from .model.events import (
        Finished,
        Flush,
        MessageDelta,
        Part,
        ReasoningDelta,
        ToolCall,
        ToolInputDelta,
        Usage,
    )
    from .model.interrupt import CancelToken, InterruptAction, InterruptChoice, InterruptContext
    from .model.prompter import (
        Approval,
        ApprovalRequest,
        InquiryAnswer,
        InquiryPrompt,
        PolicyPrompter,
        Prompter,
        ResultDecision,
        ResultReview,
    )
    from .model.sink import PrintSink, RecordingSink, Sink
    from .providers import Provider, Request, ScriptedProvider
    from .tools import Tool, ToolContext, ToolResult, tool

_HOMES = {  # name -> its module
    "Chat": ".engine.chat",
    "RetryPolicy": ".engine.retry",
    "subagent": ".engine.subagent",
    "TurnResult": ".engine.turn",
    "TurnState": ".engine.turn",
    "ConversationError": ".errors",
    "InvalidTransition": ".errors",
    "JupyterTurnsError": ".errors",
    "ProtocolError": ".errors",
    "ProviderError": ".errors",
    "SchemaError": ".errors",
    "StreamBroken": ".errors",
    "ToolDefinitionError": ".errors",
    "Attachment": ".model.content",
    "ImageData": ".model.content",
    "Conversation": ".model.conversation",
    "Finished": ".model.events",
    "Flush": ".model.events",
    "MessageDelta": ".model.events",
    "Part": ".model.events",
    "ReasoningDelta": ".model.events",
    "ToolCall": ".model.events",
    "ToolInputDelta": ".model.events",
    "Usage": ".model.events",
    "CancelToken": ".model.interrupt",
    "InterruptAction": ".model.interrupt",
    "InterruptChoice": ".model.interrupt",
    "InterruptContext": ".model.interrupt",
    "Approval": ".model.prompter",
    "ApprovalRequest": ".model.prompter",
    "InquiryAnswer": ".model.prompter",
    "InquiryPrompt": ".model.prompter",
    "PolicyPrompter": ".model.prompter",
    "Prompter": ".model.prompter",
    "ResultDecision": ".model.prompter",
    "ResultReview": ".model.prompter",
    "PrintSink": ".model.sink",
    "RecordingSink": ".model.sink",
    "Sink": ".model.sink",
    "Provider": ".providers",
    "Request": ".providers",
    "ScriptedProvider": ".providers",
    "Tool": ".tools",
    "ToolContext": ".tools",
    "ToolResult": ".tools",
    "tool": ".tools",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())


__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext jupyter_turns``: registers ``%%chat`` and ``%chat``."""
    from .kernel.magic import load_ipython_extension as load

    load(ipython)


__all__ = [
    "Approval",
    "ApprovalRequest",
    "Attachment",
    "CancelToken",
    "Chat",
    "Conversation",
    "ConversationError",
    "Finished",
    "Flush",
    "ImageData",
    "InquiryAnswer",
    "InquiryPrompt",
    "InterruptAction",
    "InterruptChoice",
    "InterruptContext",
    "InvalidTransition",
    "JupyterTurnsError",
    "MessageDelta",
    "Part",
    "PolicyPrompter",
    "PrintSink",
    "Prompter",
    "ProtocolError",
    "Provider",
    "ProviderError",
    "ReasoningDelta",
    "RecordingSink",
    "Request",
    "ResultDecision",
    "ResultReview",
    "RetryPolicy",
    "SchemaError",
    "ScriptedProvider",
    "Sink",
    "StreamBroken",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolDefinitionError",
    "ToolInputDelta",
    "ToolResult",
    "TurnResult",
    "TurnState",
    "Usage",
    "__version__",
    "load_ipython_extension",
    "subagent",
    "tool",
]
