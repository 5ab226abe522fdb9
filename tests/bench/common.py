"""Shared pieces of the benchmarks: figures, distributions, the machine, the corpus, fake comms."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "bench"

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "REPO",
    "CountingComm",
    "Dist",
    "Figure",
    "Settings",
    "corpus",
    "counting_comms",
    "machine",
]


@dataclass(frozen=True)
class Settings:
    quick: bool = False

    def pick(self, full: Any, quick: Any) -> Any:
        return quick if self.quick else full


@dataclass
class Dist:
    """min / median / max of repeated measurements (n of them)."""

    min: float
    median: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Dist:
        values = list(values)
        return cls(min(values), statistics.median(values), max(values), len(values))

    def scaled(self, factor: float) -> Dist:
        return Dist(self.min * factor, self.median * factor, self.max * factor, self.n)


@dataclass
class Figure:
    """One row of the results table.

    ``value`` is what the goal is judged on (a median, or a single ratio); ``met`` is None for
    informational rows. ``kind`` is ``goal`` or ``info``.
    """

    bench: str
    name: str
    value: float
    unit: str
    dist: Dist | None = None
    goal: str = ""
    met: bool | None = None
    margin: str = ""
    kind: str = "goal"
    details: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.dist is None:
            out.pop("dist")
        return out


def judge_max(value: float, limit: float) -> tuple[bool, str]:
    """A goal of ``value <= limit``: whether it is met and by how much (as a factor)."""
    if value <= limit:
        return True, f"{limit / value:.2f}x under" if value > 0 else "met"
    return False, f"{value / limit:.2f}x over"


def judge_min(value: float, limit: float) -> tuple[bool, str]:
    """A goal of ``value >= limit``."""
    if value >= limit:
        return True, f"{value / limit:.2f}x above"
    return False, f"{limit / value:.2f}x short" if value > 0 else "missed"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    info: dict[str, Any] = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
    }
    versions = {}
    for name in (
        "ipykernel",
        "ipywidgets",
        "anywidget",
        "jupyter_client",
        "jupyterlab",
        "pydantic",
    ):
        with contextlib.suppress(Exception):
            from importlib.metadata import version

            versions[name] = version(name)
    info["packages"] = versions
    return info


# --------------------------------------------------------------------------- corpus

_corpus: ModuleType | None = None


def corpus() -> ModuleType:
    """js/dev/corpus.py — the deterministic markdown answers the widget harness checks use.

    ``markdown_answer(size)`` (prose, lists, ordered lists, python code blocks, tables, quotes,
    headings) and ``split_deltas(text, count)`` (cuts at random places: mid-word, mid-fence).
    """
    global _corpus
    if _corpus is None:
        path = REPO / "js" / "dev" / "corpus.py"
        spec = importlib.util.spec_from_file_location("jt_bench_corpus", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _corpus = module
    return _corpus


def answer(size: int) -> str:
    return str(corpus().markdown_answer(size))


def deltas(text: str, count: int) -> list[str]:
    return list(corpus().split_deltas(text, count))


# --------------------------------------------------------------------------- a comm that counts

from comm.base_comm import BaseComm  # noqa: E402


class CountingComm(BaseComm):
    """A comm whose messages are counted (and JSON-serialized, as the kernel would) — not sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.log: list[tuple[str, str, int]] = []  # (msg_type, method[:detail], json bytes)
        self.times: list[float] = []  # when each message of ``log`` left (perf_counter)
        self.serialize = True
        super().__init__(*args, **kwargs)

    def publish_msg(
        self,
        msg_type: str,
        data: Any = None,
        metadata: Any = None,
        buffers: Any = None,
        **keys: Any,
    ) -> None:
        data = {} if data is None else data
        method = str(data.get("method", "")) if isinstance(data, dict) else ""
        if method == "custom":
            method = f"custom:{data.get('content', {}).get('type', '?')}"
        elif method == "update":  # which traits: "update:events", "update:status", ...
            method = f"update:{','.join(sorted(data.get('state', {})))}"
        size = len(json.dumps(data, ensure_ascii=False)) if self.serialize else 0
        self.log.append((msg_type, method, size))
        self.times.append(time.perf_counter())

    def counts(self) -> Counter[str]:
        return Counter(f"{t}:{m}" if m else t for t, m, _ in self.log)


@contextlib.contextmanager
def counting_comms() -> Iterator[list[CountingComm]]:
    """Every comm created inside (widgets, the metadata comm) is a CountingComm."""
    import comm

    made: list[CountingComm] = []

    def create(*args: Any, **kwargs: Any) -> CountingComm:
        instance = CountingComm(*args, **kwargs)
        made.append(instance)
        return instance

    previous = comm.create_comm
    comm.create_comm = create
    try:
        yield made
    finally:
        comm.create_comm = previous
