import assert from "node:assert/strict";
import { test } from "node:test";
import { RECORD_MIME } from "../labextension/constants.js";
import {
  badgeText,
  badgeTitle,
  notHere,
  readStamp,
  turnCell,
  writeStamp,
} from "../labextension/provenance.js";

const STAMP = {
  thread: "main",
  conversation_id: "conv-1",
  turn: 3,
  model: "claude-test",
  call_id: "call-7",
  tool: "insert_cell",
  who: { name: "Ada Lovelace", username: "ada" },
  timestamp: "2025-01-01T00:00:00.000+00:00",
  notebook: "analysis.ipynb",
};

test("a stamp of the kernel's shape is read; the badge says where it came from", () => {
  const stamp = readStamp(STAMP);
  assert.ok(stamp);
  assert.equal(badgeText(stamp, { path: "analysis.ipynb", here: true }), "from chat · turn 3");
  // copied elsewhere: the conversation is not here, and the stamp names another notebook
  assert.equal(
    badgeText(stamp, { path: "report.ipynb", here: false }),
    "from chat in analysis.ipynb · turn 3",
  );
  assert.equal(
    badgeText(readStamp({ ...STAMP, tool: "edit_cell" }), { path: null, here: true }),
    "edited from chat · turn 3",
  );
  assert.equal(
    badgeTitle(stamp),
    "thread main · turn 3 · insert_cell call-7 · model claude-test · approved by Ada Lovelace · " +
      "2025-01-01T00:00:00.000+00:00",
  );
  assert.equal(
    notHere(stamp, "report.ipynb"),
    "That conversation is in analysis.ipynb, not in this notebook.",
  );
  assert.equal(
    notHere(stamp, "analysis.ipynb"),
    "The chat cell of turn 3 is no longer in this notebook.",
  );
});

test("a stamp of any other shape is no stamp: no badge", () => {
  const bad = [
    null,
    "from chat",
    [STAMP],
    { ...STAMP, turn: "3" },
    { ...STAMP, turn: 0 },
    { ...STAMP, turn: 2.5 },
    { ...STAMP, tool: "python" },
    { ...STAMP, tool: "__proto__" },
    { ...STAMP, thread: "" },
    { ...STAMP, call_id: 7 },
    { ...STAMP, who: { name: 42 } },
    { ...STAMP, notebook: ["x"] },
    { ...STAMP, model: "m".repeat(201) },
  ];
  for (const value of bad) assert.equal(readStamp(value), null, JSON.stringify(value));
  // text is text: control characters become spaces, HTML stays characters
  const odd = readStamp({ ...STAMP, notebook: "<img src=x onerror=alert(1)>\n.ipynb" });
  assert.equal(odd?.notebook, "<img src=x onerror=alert(1)> .ipynb");
  assert.equal(readStamp({ ...STAMP, model: null, who: null, notebook: null })?.model, null);
});

/** A cell with metadata and outputs, as provenance.js reads them. */
function cell(metadata = {}, outputs = []) {
  const meta = new Map(Object.entries(metadata));
  return {
    meta,
    getMetadata: (k) => meta.get(k),
    setMetadata: (k, v) => meta.set(k, v),
    deleteMetadata: (k) => meta.delete(k),
    outputs: { length: outputs.length, get: (i) => outputs[i] },
  };
}

test("writing a stamp keeps the rest of the cell's metadata; null removes it", () => {
  const c = cell({ jupyter_turns: { other: 1 } });
  writeStamp(c, { turn: 1 }, "nb.ipynb");
  assert.deepEqual(c.meta.get("jupyter_turns"), {
    other: 1,
    provenance: { turn: 1, notebook: "nb.ipynb" },
  });
  writeStamp(c, { turn: 2, notebook: "first.ipynb" }, "nb.ipynb"); // undo: as it was
  assert.equal(c.meta.get("jupyter_turns").provenance.notebook, "first.ipynb");
  writeStamp(c, null, "nb.ipynb");
  assert.deepEqual(c.meta.get("jupyter_turns"), { other: 1 });
  const plain = cell();
  writeStamp(plain, { turn: 1 }, null);
  writeStamp(plain, null, null);
  assert.equal(plain.meta.has("jupyter_turns"), false);
});

test("the turn's cell is the one whose record holds the call, else the conversation's first", () => {
  const record = (id, calls) => ({
    data: {
      [RECORD_MIME]: {
        conversation_id: id,
        events: calls.map((c) => ({ kind: "tool_call_request", call_id: c })),
      },
    },
  });
  const pointer = { jupyter_turns: { conversation_id: "conv-1", in_output: RECORD_MIME } };
  const cells = [
    cell(),
    cell(pointer, [record("conv-1", ["call-1"])]),
    cell({ jupyter_turns: { provenance: STAMP } }),
    cell(pointer, [record("conv-1", ["call-7"])]),
    cell({}, [record("conv-2", ["call-7"])]),
  ];
  const model = { cells: { length: cells.length, get: (i) => cells[i] } };
  const stamp = readStamp(STAMP);
  assert.deepEqual(turnCell(model, stamp), { index: 3, exact: true });
  assert.deepEqual(turnCell(model, { ...stamp, call_id: "gone" }), { index: 1, exact: false });
  assert.equal(turnCell(model, { ...stamp, conversation_id: "elsewhere" }), null);
});

test("a terminal agent's stamp (%chat serve) names the client and the call", () => {
  const served = {
    ...STAMP,
    thread: "serve",
    turn: 1,
    model: null,
    client: "Claude Code",
    call: 7,
  };
  const stamp = readStamp(served);
  assert.ok(stamp);
  assert.equal(
    badgeText(stamp, { path: "analysis.ipynb", here: true }),
    "from Claude Code · call 7",
  );
  assert.equal(
    badgeText(readStamp({ ...served, tool: "run_cell" }), { path: null, here: true }),
    "run from Claude Code · call 7",
  );
  assert.match(badgeTitle(stamp), /asked by Claude Code/);
  // a client name is plain text like every other field; a bad one means no badge
  const odd = readStamp({ ...served, client: "Evil\u202eCode\nsays" });
  assert.equal(odd?.client, "Evil Code says");
  for (const bad of [{ client: 7 }, { call: 0 }, { call: 1.5 }, { client: "x".repeat(101) }]) {
    assert.equal(readStamp({ ...served, ...bad }), null, JSON.stringify(bad));
  }
  // a chat turn's stamp has neither and reads as before
  assert.equal(readStamp(STAMP)?.client, null);
});
