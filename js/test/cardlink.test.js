import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * A card's "Go to cell": shown for a cell the call changed while it is there, asking the page
 * (the lab extension's `__jupyter_turns_show_cell`) to scroll to it. The DOM is fakedom.js.
 */
import { install } from "./fakedom.js";

install();
const { renderAfterCall } = await import("../src/render/cardactions.js");

const REQUEST = { name: "edit_cell", arguments: { index: 1, source: "x" } };

/** @param {any} el */
const buttons = (el) => (el ? el.tags("button").map((b) => b.textContent) : []);

test("a card links to the cell its call changed, through the page", async () => {
  const asked = [];
  globalThis.__jupyter_turns_show_cell = (_from, cellId) => {
    asked.push(cellId);
    return Promise.resolve({ ok: false, reason: "That cell is no longer in this notebook." });
  };
  try {
    const response = { status: "done", cell: { op: "edit", cell_id: "c-9" } };
    const after = renderAfterCall("k", REQUEST, response, null, null);
    const go = after.tags("button").find((b) => b.textContent === "Go to cell");
    go.click();
    await new Promise((r) => setTimeout(r, 0));
    assert.deepEqual(asked, ["c-9"]);
    assert.equal(
      after.find("jt-action-status")[0].textContent,
      "That cell is no longer in this notebook.",
    );
  } finally {
    delete globalThis.__jupyter_turns_show_cell;
  }
});

test("no link to a deleted cell, an undone insert, or where no page can scroll", () => {
  globalThis.__jupyter_turns_show_cell = () => Promise.resolve({ ok: true });
  try {
    const deleted = { status: "done", cell: { op: "delete", cell_id: "c-9" } };
    assert.deepEqual(buttons(renderAfterCall("k", REQUEST, deleted, null, null)), []);
    const undone = { kind: "undo", call_id: "k", done: [], not_undone: [] };
    const inserted = { status: "done", cell: { op: "insert", cell_id: "c-9" } };
    const insert = { name: "insert_cell", arguments: {} };
    assert.deepEqual(buttons(renderAfterCall("k", insert, inserted, undone, null)), []);
    assert.deepEqual(buttons(renderAfterCall("k", insert, inserted, null, null)), ["Go to cell"]);
  } finally {
    delete globalThis.__jupyter_turns_show_cell;
  }
  const moved = { status: "done", cell: { op: "move", cell_id: "c-9" } };
  assert.deepEqual(buttons(renderAfterCall("k", REQUEST, moved, null, null)), []);
});
