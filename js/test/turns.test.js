import assert from "node:assert/strict";
import { test } from "node:test";
import { applyMetadata } from "../labextension/metadata.js";
import { RECORD_MIME, WIDGET_MIME } from "../labextension/constants.js";
import { joinEndedTurns, showUnfinishedTurns, recordOutput } from "../labextension/turns.js";

function cell(id, record, outputs) {
  const metadata = new Map(record ? [["jupyter_turns", record]] : []);
  return {
    id,
    metadata,
    getMetadata: (key) => metadata.get(key),
    setMetadata: (key, value) => metadata.set(key, value),
    deleteMetadata: (key) => metadata.delete(key),
    outputs: {
      list: outputs,
      get length() {
        return this.list.length;
      },
      get: (i) => outputs[i],
      set: (i, output) => (outputs[i] = output),
    },
  };
}

function notebook(...cells) {
  return {
    id: "nb",
    cells: { length: cells.length, get: (i) => cells[i] },
    setMetadata() {},
    deleteMetadata() {},
  };
}

const widget = () => ({
  data: { [WIDGET_MIME]: { model_id: "m1" }, "text/plain": "ChatWidget()" },
});
const live = {
  version: 1,
  conversation_id: "c",
  thread: "main",
  events: [{ kind: "chat_request" }],
  live: true,
};
const finished = { version: 1, conversation_id: "c", thread: "main", events: [{}, {}] };

test("a live widget whose turn did not finish shows the saved record instead", () => {
  const unfinished = cell("a", live, [widget()]);
  const done = cell("b", finished, [widget()]); // finished: its own update replaces it
  const other = cell("c", null, [widget()]); // not a chat cell: someone else's widget
  assert.equal(showUnfinishedTurns(notebook(unfinished, done, other)), 1);
  assert.deepEqual(unfinished.outputs.list, [recordOutput(live)]);
  assert.equal(
    unfinished.outputs.list[0].data["text/plain"],
    "Conversation · thread main · 1 event · did not finish",
  );
  assert.ok(WIDGET_MIME in done.outputs.list[0].data && WIDGET_MIME in other.outputs.list[0].data);
  assert.equal(showUnfinishedTurns(notebook(unfinished)), 0); // once
});

test("a turn the kernel still runs keeps its live widget: only dead turns are replaced", () => {
  const running = cell("a", live, [widget()]); // reloaded mid-turn: the kernel runs it
  const dead = cell("b", live, [widget()]); // the kernel that ran it is gone
  assert.equal(showUnfinishedTurns(notebook(running, dead), new Map(), new Set(["a"])), 1);
  assert.ok(WIDGET_MIME in running.outputs.list[0].data);
  assert.deepEqual(dead.outputs.list, [recordOutput(live)]);
});

test("the finished cell's metadata points at its output, and takes the record when cleared", () => {
  const listeners = [];
  const done = cell("a", live, [recordOutput(finished)]);
  done.outputs.changed = { connect: (fn) => listeners.push(fn) };
  const nb = notebook(done);
  const request = { cell_id: "a", key: "jupyter_turns", in_output: RECORD_MIME };
  assert.deepEqual(applyMetadata(nb, request), { ok: true });
  assert.deepEqual(done.metadata.get("jupyter_turns"), {
    version: 1,
    conversation_id: "c",
    thread: "main",
    in_output: RECORD_MIME,
  });
  // Clear Outputs: the record moves into the metadata
  const removed = done.outputs.list.splice(0);
  for (const fn of listeners) fn(null, { type: "remove", oldValues: removed });
  assert.equal(done.metadata.get("jupyter_turns"), finished);
  const empty = cell("b", null, []);
  assert.equal(applyMetadata(notebook(empty), { ...request, cell_id: "b" }).ok, false);
});

test("a headless turn killed mid-stream: its live record and parts become one output", () => {
  const head = {
    version: 2,
    conversation_id: "c",
    thread: "main",
    live: true,
    events: [
      { id: "r", kind: "chat_request", content: "Write" },
      { id: "d1", kind: "message", content: "Para 1. ", metadata: { partial: true } },
    ],
  };
  const part = (events, more = {}) => ({
    data: {
      [RECORD_MIME]: {
        version: 2,
        conversation_id: "c",
        live: true,
        continues: "r",
        events,
        ...more,
      },
      "text/plain": "",
    },
  });
  const stderr = { output_type: "stream", name: "stderr", text: "a warning" };
  const outputs = [
    {
      data: {
        [RECORD_MIME]: head,
        "text/plain": "Conversation · thread main · 2 events · running",
      },
    },
    part([{ id: "d1", kind: "message", content: "Para 2. ", metadata: { partial: true } }]),
    stderr,
    part([{ id: "m1", kind: "message", content: "Para 3." }], { extends: { m1: "d1" } }),
    part([{ id: "d2", kind: "reasoning", content: "Next", metadata: { partial: true } }]),
  ];
  const killed = cell("a", null, outputs);
  killed.outputs.clear = () => outputs.splice(0);
  killed.outputs.add = (output) => outputs.push(output);
  assert.equal(showUnfinishedTurns(notebook(killed)), 3);
  assert.equal(outputs.length, 2); // the record, and what else the cell printed
  const record = outputs[0].data[RECORD_MIME];
  assert.deepEqual(
    record.events.map((e) => [e.id, e.content]),
    [
      ["r", "Write"],
      ["m1", "Para 1. Para 2. Para 3."],
      ["d2", "Next"],
    ],
  );
  assert.equal(
    outputs[0].data["text/plain"],
    "Conversation · thread main · 3 events · did not finish",
  );
  assert.deepEqual(outputs[1], stderr);
});

test("a headless turn that ended as live parts is one output at once, with its transcript", () => {
  const head = {
    version: 2,
    conversation_id: "c",
    thread: "main",
    live: true,
    turn: { outcome: "running" },
    events: [{ id: "r", kind: "chat_request", content: "Write" }],
  };
  const draft = { kind: "message", metadata: { partial: true } };
  const output = (record, more = {}) => ({ data: { [RECORD_MIME]: record, ...more } });
  const printed = { output_type: "stream", name: "stdout", text: "a notice" };
  const outputs = [
    output(head, { "text/plain": "" }),
    output({ ...head, continues: "r", events: [{ ...draft, id: "d", content: "Once" }] }),
    printed,
    output({ ...head, continues: "r", events: [{ ...draft, id: "d", content: " upon" }] }),
    // the stream broke: an error, then the text so far, cut short, with an id of its own,
    // ending the streaming text (the record's order says where each event goes)
    output(
      {
        version: 2,
        conversation_id: "c",
        thread: "main",
        turn: { outcome: "aborted" },
        continues: "r",
        extends: { m: "d" },
        order: ["r", "e", "m"],
        events: [
          { kind: "error", id: "e", error_type: "StreamBroken", message: "cut" },
          { kind: "message", id: "m", content: " a time", metadata: { partial: true } },
        ],
      },
      { "text/html": "<p>Once upon a time</p>", "text/plain": "Conversation · 2 events" },
    ),
  ];
  const ended = cell("a", null, outputs);
  ended.outputs.clear = () => outputs.splice(0);
  ended.outputs.add = (o) => outputs.push(o);
  const runningOutputs = [output(head), output({ ...head, continues: "r", events: [] })];
  const running = cell("b", null, runningOutputs);
  running.outputs.clear = () => runningOutputs.splice(0);
  running.outputs.add = (o) => runningOutputs.push(o);
  assert.equal(joinEndedTurns(notebook(ended, running)), 3);
  assert.equal(outputs.length, 2);
  const { data } = outputs[0];
  assert.deepEqual(
    data[RECORD_MIME].events.map((e) => [e.id, e.content]),
    [
      ["r", "Write"],
      ["e", undefined],
      ["m", "Once upon a time"],
    ],
  );
  assert.equal(data[RECORD_MIME].live, undefined);
  assert.deepEqual(data[RECORD_MIME].turn, { outcome: "aborted" });
  assert.equal(data["text/html"], "<p>Once upon a time</p>");
  assert.equal(data["text/plain"], "Conversation · 2 events");
  assert.deepEqual(outputs[1], printed);
  assert.equal(running.outputs.length, 2); // no end: a live turn's parts wait for the kernel
});
