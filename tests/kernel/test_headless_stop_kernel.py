"""A stream that breaks off in a headless run is stopped by the policy, and the cell says so:
never "Stopped by the user." when no person was there (issue 31, "status that lies")."""

from __future__ import annotations

import pytest

from .kernel import KernelDriver

pytestmark = pytest.mark.kernel

SCRIPT = (
    "from jupyter_turns.errors import ProviderError\n"
    "from jupyter_turns.providers.scripted import Fail, cycle, message\n"
    "reset = Fail(ProviderError('connection reset by peer', kind='connection', retryable=True))\n"
    "broken = [[*cycle(message('Half an answer, then'))[:3], reset]]  # three words, then a reset"
)


def test_a_reset_connection_in_a_headless_run_is_not_called_the_users_stop() -> None:
    kernel = KernelDriver()  # no frontend: nobody to click, the headless policy chooses
    try:
        kernel.run("%load_ext jupyter_turns")
        kernel.run(SCRIPT)
        cell = kernel.run("%%chat --script broken\nTell me something.")
        shown = cell.stdout() + str(cell.outputs)
    finally:
        kernel.close()
    assert "Half an answer" in shown  # what arrived is kept
    assert "Stopped by the headless policy: the stream broke off" in shown
    assert "Stopped by the user" not in shown
