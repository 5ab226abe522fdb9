"""``@tool``: a plain function, async function or async generator becomes a Tool with a schema.

The JSON schema comes from the signature, type hints and docstring (Google ``Args:``, Sphinx
``:param x:`` or NumPy ``Parameters`` sections) through a pydantic model, which also validates
the model's arguments before every call. A parameter annotated :class:`ToolContext` is not part
of the schema: it receives the call's context (cancellation token, progress, questions).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import (
    Any,
    Literal,
    TypeAlias,
    TypedDict,
    Unpack,
    get_args,
    get_type_hints,
    overload,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import ToolDefinitionError
from ..providers.base import ToolSpec
from .context import ToolContext

__all__ = [
    "RUN_MODES",
    "EditsMode",
    "ResultMode",
    "RunMode",
    "Tool",
    "ToolArgumentError",
    "ToolOptions",
    "tool",
    "tool_map",
]

# How a call is decided without asking: "ask" (the prompter decides), "unattended" (run),
# "edit" (the user edits the arguments first), "skip" (not run, the model is told), "deny" (tool
# use is off). A tool's own mode, else the thread's default (Chat(run_mode=...), %%chat --tools).
RunMode: TypeAlias = Literal["ask", "unattended", "edit", "skip", "deny"]
ResultMode: TypeAlias = Literal["deliver", "ask", "edit", "skip"]
RUN_MODES: tuple[RunMode, ...] = get_args(RunMode)
# How the model's notebook cell changes are approved: "ask" (each one, before it is made) or
# "review" (made as they come, kept or undone by the user at the end of the turn; only the
# calls a tool's ``reviewable`` accepts: running code always asks). Chat(edits=...), --edits.
EditsMode: TypeAlias = Literal["ask", "review"]
_RESULT_MODES = ("deliver", "ask", "edit", "skip")


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema; the message is meant for the model."""


@dataclass(frozen=True)
class Tool:
    """A callable the model may request, with its schema and its approval and result modes."""

    name: str
    description: str
    fn: Callable[..., Any]
    input_model: type[BaseModel]
    run: RunMode | None = None  # None: the thread's default run mode
    result: ResultMode = "deliver"
    timeout: float | None = None
    sequential: bool = False
    always_ask: bool = False  # only a person approves a call: no run mode or policy does
    reads_notebook: bool = False  # results are notebook content: requests carry the data rule
    context_param: str | None = None
    flavor: Literal["sync", "async", "asyncgen"] = "sync"
    schema: dict[str, Any] = field(default_factory=dict)
    # Before the approval: what the call would do, shown with the buttons and saved on the
    # response (a proposed cell, a diff). Gets the validated arguments; raises
    # :class:`~.results.NotRun` to end the call without asking (e.g. no page to insert into).
    preview: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    # Whether a call with these validated arguments is a notebook change that ``--edits
    # review`` makes without asking (the user keeps or undoes it at the end of the turn);
    # None: never (a run of code, any tool that is not a cell change).
    reviewable: Callable[[dict[str, Any]], bool] | None = None
    # One of the kernel's built-in tools (set where they are made, never by ``@tool``): the
    # page draws its approval with the built-in's own form, and its saved response says so. A
    # notebook's tool of the same name is not one, and is drawn with every argument as it is.
    builtin: bool = False

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.schema)

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Python keyword arguments for the call, or ToolArgumentError saying what is wrong."""
        if not isinstance(arguments, dict):
            raise ToolArgumentError(
                f"arguments must be a JSON object, got {type(arguments).__name__}"
            )
        try:
            model = self.input_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentError(f"invalid arguments for {self.name}: {problems}") from exc
        return {name: getattr(model, name) for name in type(model).model_fields}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (the decorator keeps it usable)."""
        return self.fn(*args, **kwargs)


class ToolOptions(TypedDict, total=False):
    """The keyword options of ``@tool(...)``; their defaults and meaning: :func:`tool`."""

    name: str | None
    description: str | None
    run: RunMode | None
    result: ResultMode
    timeout: float | None
    sequential: bool
    always_ask: bool


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    run: RunMode | None = None,
    result: ResultMode = "deliver",
    timeout: float | None = None,
    sequential: bool = False,
    always_ask: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a tool of ``fn``; usable bare (``@tool``) or with options (``@tool(run="ask")``).

    ``run``: ask (default of most threads) / unattended / edit (open the argument editor first) /
    skip. ``result``: deliver / ask (the user reviews the result) / edit / skip. ``timeout`` in
    seconds. ``sequential``: run alone, after earlier calls of the same response finish.
    ``always_ask``: every call waits for a person's Approve (or the user's own "always allow"):
    neither ``--tools unattended`` nor a headless policy approves it.
    """

    # names local to the defining scope (a class defined in a function) resolve in the hints
    caller = inspect.currentframe()
    localns = dict(caller.f_back.f_locals) if caller and caller.f_back else {}

    def make(func: Callable[..., Any]) -> Tool:
        built = _build(func, name, description, run, result, timeout, sequential, localns)
        return dataclasses.replace(built, always_ask=True) if always_ask else built

    return make(fn) if fn is not None else make


def tool_map(tools: Iterable[Tool | Callable[..., Any]]) -> dict[str, Tool]:
    """Tools by name; plain functions are wrapped with default options. Names must be unique."""
    out: dict[str, Tool] = {}
    for item in tools:
        made = item if isinstance(item, Tool) else tool(item)
        if made.name in out:
            raise ToolDefinitionError(f"two tools are named {made.name!r}")
        out[made.name] = made
    return out


_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _build(
    func: Callable[..., Any],
    name: str | None,
    description: str | None,
    run: RunMode | None,
    result: ResultMode,
    timeout: float | None,
    sequential: bool,
    localns: dict[str, Any] | None = None,
) -> Tool:
    tool_name: str = name or str(getattr(func, "__name__", ""))
    _check_options(tool_name, run, result, timeout)
    summary, param_docs = _parse_docstring(inspect.getdoc(func) or "")
    fields, context_param = _fields(func, tool_name, param_docs, localns)
    try:
        model = create_model(
            f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = _clean_schema(model.model_json_schema())
    except Exception as exc:
        raise ToolDefinitionError(f"{tool_name}: cannot build an argument schema: {exc}") from exc
    return Tool(
        name=tool_name,
        description=description or summary or f"The {tool_name} function.",
        fn=func,
        input_model=model,
        run=run,
        result=result,
        timeout=timeout,
        sequential=sequential,
        context_param=context_param,
        flavor=_flavor(func),
        schema=schema,
    )


def _check_options(
    tool_name: str, run: RunMode | None, result: ResultMode, timeout: float | None
) -> None:
    """The decorator's options, checked where the tool is defined rather than at its first call."""
    if not _NAME.match(tool_name):
        raise ToolDefinitionError(
            f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'"
        )
    if run is not None and run not in RUN_MODES:
        raise ToolDefinitionError(f"run mode must be one of {RUN_MODES}, not {run!r}")
    if result not in _RESULT_MODES:
        raise ToolDefinitionError(f"result mode must be one of {_RESULT_MODES}, not {result!r}")
    if timeout is not None and timeout <= 0:
        raise ToolDefinitionError("timeout must be a positive number of seconds")


def _fields(
    func: Callable[..., Any],
    tool_name: str,
    param_docs: dict[str, str],
    localns: dict[str, Any] | None,
) -> tuple[dict[str, Any], str | None]:
    """The argument model's fields from the signature, and the parameter that gets the
    :class:`ToolContext` (not an argument the model sees), if any."""
    try:
        hints = get_type_hints(func, localns=localns)
    except Exception as exc:
        raise ToolDefinitionError(f"cannot read the type hints of {tool_name}: {exc}") from exc
    fields: dict[str, Any] = {}
    context_param = None
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolDefinitionError(
                f"{tool_name}: parameter {param.name!r} must be a plain or keyword parameter"
            )
        annotation = hints.get(param.name, Any)
        if annotation is ToolContext:
            context_param = param.name
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, Field(default, description=param_docs.get(param.name)))
    return fields, context_param


def _flavor(func: Callable[..., Any]) -> Literal["sync", "async", "asyncgen"]:
    if inspect.isasyncgenfunction(func):
        return "asyncgen"
    return "async" if inspect.iscoroutinefunction(func) else "sync"


def _clean_schema(node: Any) -> Any:
    """Drop pydantic's generated titles: they cost tokens and tell the model nothing."""
    if isinstance(node, dict):
        return {
            key: _clean_schema(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_clean_schema(value) for value in node]
    return node


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:?\s*$")
_GOOGLE_ITEM = re.compile(r"^\s*(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_ITEM = re.compile(r"^\s*:param\s+(?:[^:]+\s+)?(\w+)\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")
_STOP = re.compile(r"^(Returns?|Raises?|Yields?|Examples?|Notes?|See Also)\s*:?\s*$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Summary (first paragraph) and per-parameter descriptions."""
    lines = doc.splitlines()
    summary_lines: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()) or line.strip().startswith(":"):
            break
        summary_lines.append(line.strip())
    params: dict[str, str] = {}
    current: str | None = None
    in_section = numpy_style = False
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        sphinx = _SPHINX_ITEM.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if _SECTION.match(stripped):
            in_section, numpy_style, current = True, False, None
            continue
        if _STOP.match(stripped):
            in_section, current = False, None
            continue
        if not in_section or not stripped:
            continue
        if set(stripped) <= {"-"}:
            numpy_style = True
            continue
        indent = len(line) - len(line.lstrip())
        if numpy_style:
            item = _NUMPY_ITEM.match(stripped) if indent == 0 else None
            if item:
                current = item.group(1)
                params[current] = ""
                continue
        else:
            item = _GOOGLE_ITEM.match(line) if indent <= 4 else None
            if item and item.group(2):
                current = item.group(1)
                params[current] = item.group(2).strip()
                continue
        if current:
            params[current] = f"{params[current]} {stripped}".strip()
    return " ".join(summary_lines), params
