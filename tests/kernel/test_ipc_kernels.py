"""The suite's kernels listen on socket files, never on TCP ports (tests/support/kernels.py):
a TCP port picked by one process can be taken by another before the kernel binds it."""

from __future__ import annotations

import stat
from pathlib import Path

from nbformat.v4 import new_code_cell, new_notebook

from tests.kernel.kernel import KernelDriver
from tests.support.kernels import execute_notebook

UNIX_SOCKET_PATH_MAX = 107  # bytes, sockaddr_un.sun_path on Linux without its final NUL

TRANSPORT = "from ipykernel.kernelapp import IPKernelApp\nprint(IPKernelApp.instance().transport)"


def test_the_kernel_driver_kernel_listens_on_socket_files() -> None:
    driver = KernelDriver()
    try:
        info = driver.km.get_connection_info()
        assert info["transport"] == "ipc"
        for channel in ("shell", "iopub", "stdin", "control", "hb"):
            path = f"{info['ip']}-{info[f'{channel}_port']}"
            assert len(path.encode()) <= UNIX_SOCKET_PATH_MAX, path
            assert stat.S_ISSOCK(Path(path).stat().st_mode), path
        cell = driver.run(TRANSPORT)
        assert cell.stdout() == "ipc\n"
    finally:
        driver.close()


def test_a_notebook_executed_by_the_suite_runs_in_a_socket_file_kernel(tmp_path: Path) -> None:
    notebook = execute_notebook(new_notebook(cells=[new_code_cell(TRANSPORT)]), cwd=tmp_path)
    assert notebook.cells[0].outputs[0]["text"] == "ipc\n"
