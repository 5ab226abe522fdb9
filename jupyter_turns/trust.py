"""Whether the user's own Jupyter trusts a notebook: the only source of restored permissions.

Jupyter signs a notebook when the user saves it with every output trusted, and keeps the
signatures in the user's data directory (``nbformat.sign.NotebookNotary``, what ``jupyter
trust`` and JupyterLab use to decide whether a notebook's HTML and scripts may run). A notebook
someone else wrote, downloaded or received, is not signed by this user, so nothing in it can
grant a permission until the user trusts it (``jupyter trust FILE`` or ``%chat trust --apply``).
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

__all__ = ["is_trusted"]

log = logging.getLogger(__name__)


def is_trusted(notebook: Any) -> bool:
    """Whether ``notebook`` (as ``nbformat.read`` returns it) carries this user's signature."""
    from nbformat.sign import NotebookNotary

    try:
        return bool(NotebookNotary().check_signature(notebook))
    except (OSError, sqlite3.Error, ValueError, TypeError, KeyError, AttributeError) as exc:
        # an unreadable signature store or a malformed notebook is simply not trusted
        log.debug("jupyter_turns: signature not checked: %s", exc)
        return False
