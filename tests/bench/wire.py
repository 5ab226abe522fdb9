"""Counting a kernel's IOPub bytes exactly as they travel: a raw ZMQ SUB socket on its port.

Every multipart message is kept as its frame sizes (topic identity, delimiter, HMAC signature,
header, parent header, metadata, content, buffers) plus a short classification, so a benchmark
can sum the bytes of a window of messages and break them down by kind.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import zmq
from jupyter_client.session import Session

__all__ = ["IOPubTap", "WireMessage"]

RECORD_MIME = "application/vnd.jupyter-turns+json"


@dataclass
class WireMessage:
    at: float
    total: int  # every frame, identities and signature included
    content: int  # the content frame alone
    msg_type: str
    parent: str | None
    kind: str  # the breakdown category
    msg: dict[str, Any]


class IOPubTap:
    """Subscribes to a kernel's IOPub (all topics) and records every message, in a thread."""

    def __init__(self, connection: dict[str, Any], session: Session) -> None:
        # Its own Session (same key and HMAC scheme): a Session rejects a signature it has seen,
        # and the driver's client reads the same messages.
        self.session = Session(key=session.key, signature_scheme=session.signature_scheme)
        self.messages: list[WireMessage] = []
        self.comm_kinds: dict[str, str] = {}  # comm_id -> "widget:<class>" | "metadata" | ...
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.SUB)
        self._socket.setsockopt(zmq.RCVHWM, 0)
        self._socket.setsockopt(zmq.SUBSCRIBE, b"")
        # tcp://IP:PORT, or ipc://BASE-PORT (a socket file; tests/support/kernels.py)
        sep = "-" if connection["transport"] == "ipc" else ":"
        url = f"{connection['transport']}://{connection['ip']}{sep}{connection['iopub_port']}"
        self._socket.connect(url)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="iopub-tap", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close(linger=0)
        self._context.term()

    def mark(self) -> int:
        with self._lock:
            return len(self.messages)

    def since(self, mark: int) -> list[WireMessage]:
        with self._lock:
            return list(self.messages[mark:])

    def _run(self) -> None:
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(50):
                continue
            frames = self._socket.recv_multipart(copy=True)
            at = time.time()
            _idents, rest = self.session.feed_identities(frames, copy=True)
            msg = self.session.deserialize(rest, content=True)
            wire = WireMessage(
                at,
                sum(len(f) for f in frames),
                len(rest[4]),
                msg["header"]["msg_type"],
                (msg.get("parent_header") or {}).get("msg_id"),
                self._classify(msg),
                msg,
            )
            with self._lock:
                self.messages.append(wire)

    def _classify(self, msg: dict[str, Any]) -> str:
        kind = msg["header"]["msg_type"]
        content = msg["content"]
        if kind == "comm_open":
            target = content.get("target_name")
            state = content.get("data", {}).get("state", {})
            if target == "jupyter.widget":
                name = str(state.get("_anywidget_id") or state.get("_model_name") or "widget")
                self.comm_kinds[content["comm_id"]] = f"widget:{name.rsplit('.', 1)[-1]}"
                if "_esm" in state:
                    return "widget comm_open (state incl. ESM bundle)"
                return f"widget comm_open ({state.get('_model_name', '?')})"
            self.comm_kinds[content["comm_id"]] = str(target)
            return f"comm_open {target}"
        if kind in ("comm_msg", "comm_close"):
            owner = self.comm_kinds.get(content.get("comm_id"), "unknown comm")
            data = content.get("data", {})
            if not owner.startswith("widget:"):
                return f"{owner} {kind}"
            method = data.get("method")
            if method == "custom":
                return f"widget custom: {data.get('content', {}).get('type')}"
            if method == "update":
                keys = ",".join(sorted(data.get("state", {})))
                return f"widget update: {keys}"
            return f"widget {kind} {method or ''}".strip()
        if kind in ("display_data", "update_display_data", "execute_result"):
            data = content.get("data", {})
            if RECORD_MIME in data:
                record = data[RECORD_MIME]
                if "continues" in record and record.get("live") is not True:
                    return "record output: the parts' end (what is new + HTML transcript)"
                if "text/html" in data:
                    return "record output: final (record + HTML transcript)"
                if "continues" in record:
                    return "record output: live part (only what is new)"
                if record.get("live") is not True:  # the server adds the transcript on save
                    return "record output: final (record)"
                return f"record output: live ({kind})"
            if "application/vnd.jupyter.widget-view+json" in data:
                return "widget view display_data"
            return f"{kind} ({','.join(sorted(data))})"
        if kind == "status":
            return "status"
        return kind


def breakdown(messages: list[WireMessage]) -> dict[str, dict[str, int]]:
    """Bytes, content bytes and count per kind, largest first."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"bytes": 0, "content": 0, "count": 0})
    for m in messages:
        row = table[m.kind]
        row["bytes"] += m.total
        row["content"] += m.content
        row["count"] += 1
    return dict(sorted(table.items(), key=lambda kv: -kv[1]["bytes"]))
