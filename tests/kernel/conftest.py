from __future__ import annotations

from collections.abc import Iterator

import pytest

from .kernel import KernelDriver


@pytest.fixture
def kernel() -> Iterator[KernelDriver]:
    """A kernel with no notebook frontend: a headless run (like nbclient)."""
    driver = KernelDriver()
    driver.run("%load_ext jupyter_turns")
    yield driver
    driver.close()


@pytest.fixture
def lab_kernel(tmp_path) -> Iterator[KernelDriver]:  # type: ignore[no-untyped-def]
    """A kernel that believes JupyterLab owns it (JPY_SESSION_NAME set, as jupyter_server does);
    the test plays the frontend: it says ``ready`` for each widget and clicks with comm messages.
    """
    notebook = tmp_path / "chat.ipynb"
    driver = KernelDriver(env={"JPY_SESSION_NAME": str(notebook)})
    driver.run("%load_ext jupyter_turns")
    yield driver
    driver.close()
