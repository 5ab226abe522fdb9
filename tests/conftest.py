"""Shared test configuration."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_DATA_DIR = "JUPYTER_DATA_DIR"


def pytest_configure(config: pytest.Config) -> None:
    """This user's Jupyter data directory for the whole run, in a temporary folder: the user's
    own stores (``jupyter_turns/``: what their kernels wrote and granted) and Jupyter's
    signatures are made there, and kernels started by the tests inherit it; the real home is
    never written. Set for the process, not by a fixture: a save that a loop timer runs after
    the last test still lands here. A test that needs its own passes ``JUPYTER_DATA_DIR`` to
    its kernel or monkeypatches it."""
    folder = tempfile.mkdtemp(prefix="jupyter-turns-test-data-")
    config.stash[_STASH] = folder
    os.environ[_DATA_DIR] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_STASH, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


_STASH = pytest.StashKey[str]()
