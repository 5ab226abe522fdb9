"""Where a cell the model touched came from: ``metadata.jupyter_turns.provenance``.

A cell that ``insert_cell`` or ``edit_cell`` changed (and one ``run_cell`` ran, unless its text
already carries a stamp of its own) holds a :class:`Provenance` stamp: the thread, conversation
and turn that proposed it, the tool call, the model, who approved it and when, and the notebook
it was made in. The page writes it in the same change as the cell (``js/labextension/edit.js``)
and shows it as a badge ("from chat · turn 3"; "from Claude Code · call 7" for a terminal
agent's call through ``%chat serve``) that leads to the turn's card
(``js/labextension/provenance.js``, which checks this shape again: a notebook is untrusted). Undo
puts back the stamp the cell had before. It is cell metadata, not part of a conversation record;
``docs/event-schema.json`` declares it under ``$defs/Provenance``.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from .events import Who

__all__ = ["Provenance", "StampedTool", "TurnOrigin"]

StampedTool: TypeAlias = Literal["insert_cell", "edit_cell", "run_cell"]
TEXT_TOOLS = ("insert_cell", "edit_cell")  # their stamp says who wrote the cell's text


class TurnOrigin(BaseModel):
    """The turn a tool call runs in: what every stamp of that turn shares (the engine gives
    it to the turn's tools: :class:`~jupyter_turns.tools.context.ToolContext`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thread: str = Field(min_length=1, max_length=100)
    conversation_id: str = Field(min_length=1, max_length=200)
    turn: int = Field(ge=1, description="the thread's turns counted from 1: its chat requests")
    model: str | None = Field(default=None, max_length=200)
    client: str | None = Field(
        default=None,
        max_length=100,
        description="the MCP client whose call it was (%chat serve), as it named itself: a "
        "label, no permission",
    )
    call: int | None = Field(default=None, ge=1, description="the MCP session's call number")


class Provenance(TurnOrigin):
    """The stamp of one change: a turn's origin, the call, who approved it, when, and where."""

    call_id: str = Field(min_length=1, max_length=200)
    tool: StampedTool
    who: Who | None = Field(
        default=None, description="who approved it, as their page said (a label, no permission)"
    )
    timestamp: str = Field(description="when the change was made (ISO 8601)")
    notebook: str | None = Field(
        default=None,
        max_length=1000,
        description="the notebook's path on the server where it was made (the page fills it): "
        "a cell copied elsewhere says where it came from",
    )

    def written_text(self) -> bool:
        """Whether the stamp says the model wrote the cell's text (not only ran it)."""
        return self.tool in TEXT_TOOLS
