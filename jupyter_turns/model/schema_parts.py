"""JSON Schema fragments the saved events declare (``docs/event-schema.json``).

Readers (the page's views, restore) rely on a few keys inside free-form fields and on the
optional fields only some events carry (:func:`optional_field`); declaring them here keeps the
schema the one contract between the kernel and the page without writing ``null`` into every
event.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, JsonValue

__all__ = [
    "BUILTIN",
    "CELL",
    "COMPACTION",
    "CYCLE",
    "OUTPUTS",
    "PARENT",
    "PARTIAL",
    "PREVIEW",
    "RAW_BLOCK",
    "REPLAY",
    "SCRIPTED",
    "STATE",
    "SUBAGENT",
    "WHO",
    "metadata_field",
    "optional_field",
]


def metadata_field(**keys: JsonValue) -> Any:
    """A ``metadata`` field: free-form, with the keys readers rely on declared in its schema
    (``docs/event-schema.json``, which the page's views are checked against)."""
    properties: JsonValue = dict(keys)
    return Field(default_factory=dict, json_schema_extra={"properties": properties})


PARTIAL: JsonValue = {
    "type": "boolean",
    "description": "cut short: the stream ended or was stopped",
}
SCRIPTED: JsonValue = {
    "type": "boolean",
    "description": "written by the scripted provider (or a replay of its turn), not by a "
    "model: never sent to a real provider (a thread that switches keeps only the user's own "
    "requests of those turns)",
}
RAW_BLOCK: JsonValue = {
    "type": "object",
    "description": "the provider's block, kept verbatim to send back",
    "properties": {
        "type": {"type": "string"},
        "content": {
            "description": "a compaction block's summary, a string (null: a failed compaction, "
            "a no-op); other blocks' content is theirs",
        },
    },
    "required": ["type"],
}
COMPACTION: JsonValue = {
    "type": "object",
    "description": "a compaction block: how it came about (mode edit: the server compacted "
    "inline at the threshold; summarize: a summarize request), the last event a summarize "
    "request covered, and the sizes in tokens before (the context in use) and after (the "
    "summary, estimated from its length)",
    "properties": {
        "mode": {"type": "string", "enum": ["edit", "summarize"]},
        "covers": {"type": ["string", "null"]},
        "tokens_before": {"type": ["integer", "null"]},
        "tokens_after": {"type": ["integer", "null"]},
    },
}


PARENT: dict[str, Any] = {
    "type": "string",
    "description": "the call_id of the sub-agent tool call whose nested turn produced this "
    "event: drawn inside that call's card, never sent to the parent's model",
}
CYCLE: dict[str, Any] = {
    "type": "object",
    "description": "one complete response of a turn: how it ended, how many events the turn "
    "had then (a replay splits the saved events there), its usage and cost, the provider and "
    "model that answered (written when they change: a cycle without them is the previous one's; "
    "older records: usage and cost only)",
    "properties": {
        "stop_reason": {"type": "string"},
        "provider": {"type": "string"},
        "model": {"type": "string"},
        "events": {"type": "integer"},
        "input_tokens": {"type": "integer"},
        "output_tokens": {"type": "integer"},
        "cache_read_input_tokens": {"type": "integer"},
        "cache_creation_input_tokens": {"type": "integer"},
        "cache_creation_1h_input_tokens": {
            "type": "integer",
            "description": "of the cache writes, those kept an hour (absent: none)",
        },
        "cost_usd": {"type": ["number", "null"]},
    },
}
SUBAGENT: dict[str, Any] = {
    "type": "object",
    "description": "a sub-agent call's nested turn: how it ended, its cycles, usage and cost",
    "properties": {
        "outcome": {"type": "string"},
        "cycles": {"type": "integer"},
        "usage": {"type": "object"},
        "cost_usd": {"type": ["number", "null"]},
        "per_cycle": {"type": "array", "items": CYCLE},
    },
}


BUILTIN: dict[str, Any] = {
    "type": "boolean",
    "description": "whether the call went to one of the kernel's built-in tools (true) or to "
    "another tool, a notebook's @tool of a built-in's name included (false): the card draws a "
    "built-in's call with its own form, any other with its arguments as they are. Absent in "
    "records saved before it was written: drawn by the tool's name. A label, never a permission",
}
REPLAY: dict[str, Any] = {
    "type": "object",
    "description": "a replayed call: whether its result is the recorded one (and the recorded "
    "result when it is not)",
    "properties": {"same": {"type": "boolean"}, "saved": {"type": "string"}},
}


_NAMED = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "summary": {"type": "string"}},
    },
}
STATE: dict[str, Any] = {
    "type": "object",
    "description": "what a python run did to the user's namespace",
    "properties": {
        "created": _NAMED,
        "rebound": _NAMED,
        "deleted": {"type": "array", "items": {"type": "string"}},
        "changed": _NAMED,
    },
}


PREVIEW: dict[str, Any] = {
    "type": "object",
    "description": "what the approval showed: a proposed cell (insert_cell), a line diff of "
    "a cell's text (edit_cell), the code to run (run_cell), the cell and a line per output "
    "(delete_cell), a cell and where it goes (move_cell); kept whatever the answer was",
    "properties": {
        "kind": {"enum": ["insert", "edit", "run", "delete", "move"]},
        "cell_type": {"type": "string"},
        "source": {"type": "string"},
        "run": {"type": "boolean"},
        "index": {"type": "integer"},
        "after": {"type": "integer"},
        "to": {"type": "integer"},
        "diff": {"type": "string"},
        "outputs": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["kind"],
}
CELL: dict[str, Any] = {
    "type": "object",
    "description": "the notebook cell a call inserted, edited, ran, deleted or moved: enough "
    "to undo it (with what the kernel keeps in memory: a deleted cell's outputs, the outputs a "
    "run replaced)",
    "properties": {
        "op": {"enum": ["insert", "edit", "run", "delete", "move"]},
        "cell_id": {"type": "string"},
        "index": {"type": "integer", "description": "its index after the change (deleted: before)"},
        "before": {"type": "string"},
        "after": {"type": "string"},
        "from": {"type": "integer", "description": "a moved cell's index before"},
        "ran": {"type": "boolean", "description": "an edited cell also ran"},
    },
    "required": ["op", "cell_id"],
}
OUTPUTS: dict[str, Any] = {
    "type": "array",
    "description": "a code run's outputs as nbformat outputs (text and errors; its images are "
    "the response's images), for 'Add to notebook'; a tool that raised: its error with the full "
    "traceback (shown folded in its card, never sent to the model)",
    "items": {"type": "object", "properties": {"output_type": {"type": "string"}}},
}
WHO: dict[str, Any] = {
    "type": "object",
    "description": "who clicked, as their page reported it (JupyterLab's current user; absent: "
    "the page named nobody, or an older record): plain text, at most 80 characters, a label "
    "and never a permission",
    "properties": {"name": {"type": "string"}, "username": {"type": "string"}},
    "required": ["name"],
}


def _absent(value: object) -> bool:
    return value is None


def optional_field(schema: dict[str, Any]) -> Any:
    """A field only some events carry: None (the default) when it does not apply, and then
    left out of the saved JSON, so an event without it is saved as it always was (no
    ``null``). Its schema is ``schema``: what is written when it is there."""

    def declare(field_schema: dict[str, Any]) -> None:
        field_schema.clear()
        field_schema.update(schema)

    return Field(default=None, exclude_if=_absent, json_schema_extra=declare)
