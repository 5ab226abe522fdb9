"""nbval: compare each chat cell's final output, all but the record (ids, timestamps)."""

from jupyter_turns.testing import nbval_for_chat_cells as pytest_collection_modifyitems

__all__ = ["pytest_collection_modifyitems"]
