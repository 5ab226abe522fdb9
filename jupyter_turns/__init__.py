"""jupyter_turns: a Claude conversation with tools inside Jupyter notebooks.

In a notebook: ``%load_ext jupyter_turns`` then a ``%%chat`` cell. From Python:
``await Chat(provider=..., tools=[...], prompter=...).send("...")``.
"""

from __future__ import annotations

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
