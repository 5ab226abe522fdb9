"""A server's MCP tools as jupyter_turns tools: ``mcp__SERVER__TOOL`` with the server's schema.

Each one is a :class:`~jupyter_turns.tools.registry.Tool`, so it goes through the executor
like any tool: run modes (the server's ``run``, else the thread's default: ``ask``), "always
allow" per tool, the approval card, Stop, the timeout (the server's ``timeout``). What differs:

- the schema is the server's JSON schema, and :meth:`McpTool.validate` checks the model's
  arguments against it (``jsonschema``) before anything is asked or sent;
- a call goes to the server's :class:`~.connection.Connection`, looked up by name when the call
  runs (a removed server answers that it is gone; a crashed one is started again); the
  server's progress notifications become lines in the tool card (``ctx.progress``);
- a server that fails gives the model an error result saying why, and the user a notice in
  the transcript.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import Draft202012Validator, validator_for
from mcp.types import Tool as McpToolInfo
from pydantic import BaseModel, ConfigDict
from referencing import Registry
from referencing.exceptions import Unresolvable

from ..errors import McpServerError
from ..model.events import Notice
from ..tools.context import ToolContext
from ..tools.registry import Tool, ToolArgumentError
from ..tools.results import ToolFailed, ToolResult
from .connection import Connection
from .result_blocks import progress_line, tool_result

__all__ = ["PREFIX", "McpTool", "api_name", "server_tools"]

PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # the longest tool name the API takes (see tools/registry.py)


class _Arguments(BaseModel):
    """Unused by MCP tools (their schema is the server's); a Tool needs a model."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True)
class McpTool(Tool):
    """A tool of an MCP server; ``remote`` is its name on the server."""

    server: str = ""
    remote: str = ""
    checker: Validator | None = None

    def validate(self, arguments: Any) -> dict[str, Any]:
        """``{"arguments": ...}`` for the call, or ToolArgumentError naming each problem."""
        if not isinstance(arguments, dict):
            raise ToolArgumentError(
                f"arguments must be a JSON object, got {type(arguments).__name__}"
            )
        assert self.checker is not None
        try:
            errors = sorted(self.checker.iter_errors(arguments), key=lambda e: list(e.path))
        except Unresolvable as exc:  # a $ref elsewhere: never fetched (see server_tools)
            raise ToolArgumentError(
                f"{self.name}: the server's schema cannot be checked ({exc})"
            ) from None
        if errors:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error.path) or '(arguments)'}: {error.message}"
                for error in errors
            )
            raise ToolArgumentError(f"invalid arguments for {self.name}: {problems}")
        return {"arguments": dict(arguments)}


def api_name(server: str, tool: str) -> str:
    """``mcp__SERVER__TOOL``, with characters the API refuses made ``_`` and a long name cut
    (ending with a short hash of the full one, so two long names stay apart)."""
    name = f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(tool.encode()).hexdigest()[:6]
    return f"{name[: _MAX_NAME - 7]}-{digest}"


def server_tools(
    name: str, infos: list[McpToolInfo], find: Callable[[str], Connection | None]
) -> tuple[list[McpTool], list[str]]:
    """The server's tools as McpTools, and a note for each one that cannot be offered."""
    tools: list[McpTool] = []
    notes: list[str] = []
    taken: set[str] = set()
    for info in infos:
        full = api_name(name, info.name)
        schema = dict(info.input_schema or {})
        schema.setdefault("type", "object")
        try:
            checker_class = validator_for(schema, default=Draft202012Validator)
            checker_class.check_schema(schema)
        except SchemaError as exc:
            notes.append(
                f"MCP server '{name}': tool {info.name!r} is not offered: its input schema "
                f"is not valid JSON Schema ({exc.message})"
            )
            continue
        if full in taken:
            notes.append(f"MCP server '{name}': tool {info.name!r} is not offered: {full} is taken")
            continue
        taken.add(full)
        connection = find(name)
        assert connection is not None
        spec = connection.spec
        description = info.description or info.title or f"The {info.name} tool."
        tools.append(
            McpTool(
                name=full,
                description=f"{description}\n\n(From the MCP server '{name}'.)",
                fn=_caller(name, info.name, find),
                input_model=_Arguments,
                run=spec.run,
                timeout=spec.timeout,
                context_param="ctx",
                flavor="async",
                schema=schema,
                server=name,
                remote=info.name,
                # an empty registry: refs inside the schema resolve, others are never fetched
                checker=checker_class(schema, registry=Registry()),
            )
        )
    return tools, notes


def _caller(server: str, remote: str, find: Callable[[str], Connection | None]) -> Any:
    async def call(arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        connection = find(server)
        if connection is None:
            raise ToolFailed(f"The MCP server '{server}' is not configured any more.")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            ctx.progress(progress_line(progress, total, message))

        try:
            result = await connection.call(remote, arguments, progress)
        except McpServerError as exc:
            if ctx.nest is not None:  # the user sees it in the transcript, not only the card
                ctx.nest.record(Notice(level="warning", text=f"MCP server '{server}': {exc}"))
            raise ToolFailed(f"The MCP server '{server}' failed: {exc}") from exc
        return tool_result(result)

    return call
