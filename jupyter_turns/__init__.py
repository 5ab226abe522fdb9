"""jupyter_turns: a Claude conversation with tools inside Jupyter notebooks.

In a notebook: ``%load_ext jupyter_turns`` then a ``%%chat`` cell. From Python:
``await Chat(provider=..., tools=[...], prompter=...).send("...")``.
"""

from __future__ import annotations

from .chat import Chat
from .content import Attachment, ImageData
from .conversation import Conversation
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
from .events import Finished, Flush, MessageDelta, Part, ReasoningDelta, ToolCall, Usage
from .interrupt import CancelToken, InterruptAction, InterruptChoice, InterruptContext
from .prompter import (
    Approval,
    ApprovalRequest,
    InquiryAnswer,
    InquiryPrompt,
    PolicyPrompter,
    Prompter,
    ResultDecision,
    ResultReview,
)
from .providers import Provider, Request, ScriptedProvider
from .retry import RetryPolicy
from .sink import PrintSink, RecordingSink, Sink
from .subagent import subagent
from .tools import Tool, ToolContext, ToolResult, tool
from .turn import TurnResult, TurnState

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext jupyter_turns``: registers ``%%chat`` and ``%chat``."""
    from .magic import load_ipython_extension as load

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
    "ToolResult",
    "TurnResult",
    "TurnState",
    "Usage",
    "__version__",
    "load_ipython_extension",
    "subagent",
    "tool",
]
