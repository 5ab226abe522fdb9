import assert from "node:assert/strict";
import { test } from "node:test";
import { changeLine, REVIEWED, reviewedChanges } from "../src/render/review.js";

const made = (/** @type {string} */ callId, /** @type {object} */ cell) => ({
  kind: "tool_call_response",
  id: `r-${callId}`,
  call_id: callId,
  content: "",
  status: "done",
  decisions: [{ action: "approved", by: "policy", detail: REVIEWED }],
  cell,
});
const call = (/** @type {string} */ callId, /** @type {string} */ name, args = {}) => ({
  kind: "tool_call_request",
  id: `q-${callId}`,
  call_id: callId,
  name,
  arguments: args,
});

test("the changes made for review, each with its outcome from the record alone", () => {
  const events = [
    call("a", "insert_cell", { source: "x = 1", cell_type: "code" }),
    made("a", { op: "insert", index: 3 }),
    call("b", "move_cell", { index: 1, to: 4 }),
    made("b", { op: "move", index: 4, from: 1 }),
    call("c", "delete_cell", { index: 0 }),
    made("c", { op: "delete", index: 0 }),
    call("d", "edit_cell", { index: 2, source: "y" }),
    // asked and approved by the user: not part of the review
    {
      ...made("d", { op: "edit", index: 2 }),
      decisions: [{ action: "approved", by: "user" }],
    },
    { kind: "undo", id: "u", call_id: "b", tool: "move_cell", who: { name: "Ada" } },
    { kind: "review", id: "k", kept: ["a"], who: { name: "Grace", username: "g" } },
  ];
  const changes = reviewedChanges(/** @type {any} */ (events));
  assert.deepEqual(
    changes.map((c) => [c.callId, c.state, c.by, changeLine(c)]),
    [
      ["a", "kept", "Grace", "Inserted a code cell, the 4th cell"],
      ["b", "undone", "Ada", "Moved the 2nd cell to be the 5th cell"],
      ["c", "pending", "", "Deleted the 1st cell"],
    ],
  );
});

test("a refused or failed change, or one of a sub-agent, is not offered for review", () => {
  const events = [
    call("a", "insert_cell", { source: "x" }),
    { ...made("a", {}), status: "error" },
    call("b", "delete_cell", { index: 0 }),
    { ...made("b", {}), parent: "toolu_sub" },
    made("orphan", {}),
  ];
  assert.deepEqual(reviewedChanges(/** @type {any} */ (events)), []);
});

test("a cell's place reads as a person counts: never its index in brackets", async () => {
  const { cellPlace, ordinal } = await import("../src/util/places.js");
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111, 112].map(ordinal), [
    "1st",
    "2nd",
    "3rd",
    "4th",
    "11th",
    "12th",
    "13th",
    "21st",
    "22nd",
    "101st",
    "111th",
    "112th",
  ]);
  assert.equal(cellPlace(3), "the 4th cell");
  assert.equal(cellPlace("x"), "a cell");
});
