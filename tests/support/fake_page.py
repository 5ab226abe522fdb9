"""A notebook page as the kernel sees it over the metadata comm, for tests without a browser.

It answers what the bundled extension answers (``js/labextension/cells.js`` and ``edit.js``,
whose own node tests and the browser tests check the real thing): the cells, inserting, editing
deleting and moving cells (refusing text that changed), outputs, a cell's provenance stamp
(written with the change that carries one, reported as ``provenance``) and a cell's chat record,
each answered with the cell as it is then.
"""

from __future__ import annotations

import itertools
from typing import Any

RECORD_MIME = "application/vnd.jupyter-turns+json"


class FakePage:
    def __init__(self, *sources: str, chat: int) -> None:
        self._ids = itertools.count()
        self.cells: list[dict[str, Any]] = [self._cell(s) for s in sources]
        self.chat_id: str = self.cells[chat]["id"]
        self.asked: list[dict[str, Any]] = []
        self.answering = True

    def _cell(self, source: str, cell_type: str = "code") -> dict[str, Any]:
        return {
            "id": f"cell-{next(self._ids)}",
            "cell_type": cell_type,
            "source": source,
            "execution_count": None,
            "outputs": [],
        }

    def sources(self) -> list[str]:
        return [c["source"] for c in self.cells]

    def _find(self, cell_id: Any) -> tuple[int, dict[str, Any]]:
        for index, cell in enumerate(self.cells):
            if cell["id"] == cell_id:
                return index, cell
        raise LookupError(f"no cell with id {cell_id}")

    async def ask(self, request: dict[str, Any], wait: float) -> dict[str, Any] | None:
        self.asked.append(request)
        if not self.answering:
            return None
        try:
            answer = self._apply(request)
            if "provenance" in request and "cell" in answer:
                self._stamp(answer["cell"]["id"], request["provenance"])
                answer = {**answer, **self._report(answer["cell"]["id"])}
            return {"ok": True, **answer}
        except LookupError as exc:
            return {"ok": False, "reason": str(exc)}

    def _stamp(self, cell_id: Any, stamp: Any) -> None:
        cell = self._find(cell_id)[1]
        if stamp is None:
            cell.pop("provenance", None)
        else:
            cell["provenance"] = stamp

    def _report(self, cell_id: Any) -> dict[str, Any]:
        index, cell = self._find(cell_id)
        return {"cell": {**cell, "index": index}}

    def _apply(self, request: dict[str, Any]) -> dict[str, Any]:
        kind = request["request"]
        if kind == "cells":
            return {"cells": [dict(c) for c in self.cells], "path": "nb.ipynb", "dirty": False}
        if kind == "insert_cell":
            return self._insert(request)
        index, cell = self._find(request.get("cell_id"))
        expected = request.get("expected")
        if expected is not None and cell["source"] != expected:
            raise LookupError("the cell changed since")
        if kind == "set_source":
            cell["source"] = request["source"]
        elif kind == "delete_cell":
            del self.cells[index]
            return {
                "cell": {**cell, "index": index},
                "removed": dict(cell),
                "cells": len(self.cells),
            }
        elif kind == "move_cell":
            self.cells.insert(request["to"], self.cells.pop(index))
        elif kind == "set_outputs":
            cell["outputs"] = request["outputs"]
            cell["execution_count"] = request["execution_count"]
        elif kind == "replace_record":
            cell["outputs"] = [{"output_type": "display_data", "data": request["bundle"]}]
            return {}
        else:
            raise LookupError(f"unknown request {kind}")
        return self._report(cell["id"])

    def _insert(self, request: dict[str, Any]) -> dict[str, Any]:
        if "cell" in request:  # undo puts a deleted cell back
            index = min(request["index"], len(self.cells))
            self.cells.insert(index, dict(request["cell"]))
        else:
            index = self._find(request["after"])[0] + 1
            self.cells.insert(index, self._cell(request["source"], request["cell_type"]))
        return {
            "cell_id": self.cells[index]["id"],
            "index": index,
            **self._report(self.cells[index]["id"]),
        }
