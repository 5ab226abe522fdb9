"""nbval: the conversation records carry ids and timestamps; compare everything else."""

from jupyter_turns.testing import skip_record_comparison as pytest_collection_modifyitems

__all__ = ["pytest_collection_modifyitems"]
