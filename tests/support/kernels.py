"""Kernels the tests start talk over Unix sockets (ZeroMQ's IPC transport), never TCP ports.

jupyter_client picks a TCP kernel's five ports by binding port 0 and closing the socket; the
kernel binds them a moment later. With two test workers, a server, a browser and their
connections on one machine, another process can take such a port in between (a connection's
ephemeral source port, another kernel's pick): the kernel dies with ``ZMQError: Address already
in use`` and the test waits out its start timeout. A socket file named for the kernel cannot be
taken by anybody else.

Every socket lives in one short directory of this process (a Unix socket's path may hold at
most 107 bytes; pytest's temporary paths can be longer), under a name unique to the kernel.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jupyter_client.connect import ConnectionFileMixin
from jupyter_client.manager import AsyncKernelManager, KernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode
from traitlets import default

from jupyter_turns.record.format import RECORD_MIME, joined_records

__all__ = [
    "SOCKET_DIR",
    "AsyncIpcKernelManager",
    "IpcKernelManager",
    "execute_notebook",
    "server_kernel_config",
]

SOCKET_DIR = Path(tempfile.mkdtemp(prefix="jt-ipc-"))
atexit.register(shutil.rmtree, SOCKET_DIR, ignore_errors=True)


def _socket_base() -> str:
    """Where one kernel's sockets go: ``<base>-1`` … ``<base>-5``."""
    return str(SOCKET_DIR / uuid.uuid4().hex[:16])


class _OnSocketFiles(ConnectionFileMixin):
    """The IPC transport, each kernel's sockets named after it in SOCKET_DIR."""

    @default("transport")
    def _ipc_transport(self) -> str:
        return "ipc"

    @default("ip")
    def _ipc_socket_base(self) -> str:
        return _socket_base()


class IpcKernelManager(_OnSocketFiles, KernelManager):
    """jupyter_client's kernel manager on socket files (tests/kernel/kernel.py)."""


class AsyncIpcKernelManager(_OnSocketFiles, AsyncKernelManager):
    """The same, asynchronous, for nbclient (``execute_notebook``)."""


def server_kernel_config() -> dict[str, dict[str, str]]:
    """A Jupyter server's config for IPC kernels. The server names each kernel's connection
    file in its runtime directory, and the sockets are named after that file, so the runtime
    directory must be short (see tests/browser/server.py)."""
    return {"KernelManager": {"transport": "ipc"}}


def execute_notebook(
    notebook: NotebookNode,
    *,
    cwd: Path | str = ".",
    env: Mapping[str, str] | None = None,
    timeout: int = 60,
) -> NotebookNode:
    """Run every cell of ``notebook`` in a new kernel, as ``jupyter execute`` does (nbclient),
    in working directory ``cwd``; ``env`` is the kernel's whole environment (default: this
    process's). Returns ``notebook``, its outputs filled in."""
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        kernel_manager_class=AsyncIpcKernelManager,
        resources={"metadata": {"path": str(cwd)}},
    )
    if env is not None:
        client.km = client.create_kernel_manager()
        client.start_new_kernel(env=dict(env))  # type: ignore[no-untyped-call]
    client.execute()
    return notebook


def cell_record(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The chat record a run cell holds: its one record output, or, when a headless turn ran
    long enough to be saved as it grew (slow on a loaded machine), its live parts joined into
    the finished record, as a page draws them (``joined_records``)."""
    records = [
        output["data"][RECORD_MIME]
        for output in cell.get("outputs", [])
        if RECORD_MIME in output.get("data", {})
    ]
    (record,) = joined_records(records)
    return record  # type: ignore[no-any-return]
