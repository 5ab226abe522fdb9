"""The JSON Schema of a saved conversation record, generated from :mod:`jupyter_turns.model.events`.

It is the one contract between the two readers of a record: the kernel (restore, the HTML
transcript) and the page (the live widget and the saved-record renderer share its views). It
is written to ``docs/event-schema.json``, with the provenance stamp of a cell the model changed
(cell metadata, not a record: ``$defs/Provenance``); ``tests/unit/test_event_contract.py``
fails when that file is stale, and the JS tests check every field the views read against it.
Regenerate with ``python -m jupyter_turns.model.record_schema > docs/event-schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

from .events import READABLE_VERSIONS, SCHEMA_VERSION, event_adapter
from .provenance import Provenance
from .schema_parts import CYCLE

__all__ = ["record_schema"]


_LIVE_PART = {  # the envelope of a live part (headless, saved as the turn grew)
    "continues": {
        "type": "string",
        "description": (
            "a live part (headless, saved as the turn grew): the first event id of the "
            "turn it continues; its events are what was new, joined to that record. The "
            "turn's last part has no `live`: joined, the record is the finished one, with "
            "that part's `turn` and `settings`"
        ),
    },
    "extends": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": (
            "a live part: finished event id -> the id of the streaming text it ends "
            "(the event holds only the rest of the text)"
        ),
    },
    "order": {
        "type": "array",
        "items": {"type": "string"},
        "description": (
            "a turn's last part: the finished record's event ids in order (what the parts "
            "held and the record no longer has, a streaming text no event took over, goes)"
        ),
    },
}


def record_schema() -> dict[str, Any]:
    """The schema of one cell's record (``application/vnd.jupyter-turns+json``)."""
    events = event_adapter.json_schema(ref_template="#/$defs/{model}")
    defs = events.pop("$defs")
    stamp = Provenance.model_json_schema(ref_template="#/$defs/{model}")
    defs |= stamp.pop("$defs", {})
    defs["Provenance"] = {
        **stamp,
        "description": "not part of a record: a notebook cell's metadata.jupyter_turns."
        "provenance, written by the page with a change the model made to the cell "
        "(jupyter_turns/model/provenance.py). " + str(stamp.get("description", "")),
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "jupyter_turns conversation record",
        "type": "object",
        "required": ["version", "conversation_id", "events"],
        "properties": {
            "version": {
                "enum": list(READABLE_VERSIONS),
                "description": f"{SCHEMA_VERSION} is written; every earlier version is read",
            },
            "conversation_id": {"type": "string", "minLength": 1, "maxLength": 200},
            "thread": {"type": "string"},
            "events": {"type": "array", "items": events},
            "turn": {
                "type": "object",
                "description": "how the turn ended and what it used",
                "properties": {
                    "outcome": {"type": "string"},
                    "usage": {"type": "object"},
                    "cost_usd": {"type": ["number", "null"]},
                    "cycles": {"type": "array", "items": CYCLE},
                    "endpoint": {
                        "type": "string",
                        "description": "where the turn's requests went, when not the default",
                    },
                    "replayed_from": {
                        "type": "string",
                        "description": "a replayed turn: the notebook file its recording came from",
                    },
                },
            },
            "settings": {"type": "object", "description": "the thread's settings (checked)"},
            "displaced": {"type": "array", "items": {"$ref": "#"}},
            "live": {"const": True, "description": "saved while the turn was still running"},
            **_LIVE_PART,
        },
        "$defs": defs,
    }


if __name__ == "__main__":
    print(json.dumps(record_schema(), indent=1, sort_keys=True))
