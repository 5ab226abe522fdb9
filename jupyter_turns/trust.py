"""Whether the user's own Jupyter trusts a notebook: the only source of restored permissions.

Jupyter signs a notebook when the user saves it with every output trusted, and keeps the
signatures in the user's data directory (``nbformat.sign.NotebookNotary``, what ``jupyter
trust`` and JupyterLab use to decide whether a notebook's HTML and scripts may run). A notebook
someone else wrote, downloaded or received, is not signed by this user, so nothing in it can
grant a permission until the user trusts it (``jupyter trust FILE`` or ``%chat trust --apply``).
"""

from __future__ import annotations

import logging

__all__ = ["is_trusted"]

log = logging.getLogger(__name__)


def is_trusted(text: str) -> bool:
    """Whether the notebook file's ``text`` carries this user's signature.

    It is read the way Jupyter's server reads it (``nbformat.reads``, version 4) so the
    signature is computed over the same content that was signed.
    """
    import nbformat
    from nbformat.sign import NotebookNotary

    try:
        invalid: dict[str, object] = {}  # a schema problem is kept here instead of logged
        notebook = nbformat.reads(text, as_version=4, capture_validation_error=invalid)
        return bool(NotebookNotary().check_signature(notebook))
    except Exception as exc:  # nbformat raises half a dozen unrelated types for a bad file
        # a notebook nbformat cannot read, or an unreadable signature store, is not trusted
        log.debug("jupyter_turns: signature not checked: %s", exc)
        return False
