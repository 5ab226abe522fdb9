"""The saved record's mime type: the output a chat cell's turn is saved under.

Part of the record's format (:mod:`.format`), kept apart because it is read at ``%load_ext``:
the kernel's own history (:mod:`jupyter_turns.reading.history`), which logs every cell from
then on, leaves a chat cell's own outputs out by it, and must not load the conversation's models
to know it.
"""

from __future__ import annotations

__all__ = ["RECORD_MIME"]

RECORD_MIME = "application/vnd.jupyter-turns+json"
