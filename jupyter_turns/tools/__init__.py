"""Tools: ``@tool`` and the registry, the per-call executor, the per-response coordinator."""

from __future__ import annotations

from .context import ToolContext
from .coordinator import ToolCoordinator
from .executor import ExecutionSettings, ToolExecutor
from .registry import EditsMode, ResultMode, RunMode, Tool, ToolArgumentError, tool, tool_map
from .results import ResponseFields, ToolResult, format_result

__all__ = [
    "EditsMode",
    "ExecutionSettings",
    "ResponseFields",
    "ResultMode",
    "RunMode",
    "Tool",
    "ToolArgumentError",
    "ToolContext",
    "ToolCoordinator",
    "ToolExecutor",
    "ToolResult",
    "format_result",
    "tool",
    "tool_map",
]
