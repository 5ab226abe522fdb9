import assert from "node:assert/strict";
import { test } from "node:test";
import { answerEdit, endRuns, followRun, trustLive } from "../labextension/edit.js";
import { RECORD_MIME, WIDGET_MIME } from "../labextension/constants.js";

let ids = 0;

/** A notebook model with the parts edit.js uses: cells, their shared source, outputs. */
function notebook(...sources) {
  const list = [];
  const make = (cell) => {
    let source = cell.source;
    const metadata = new Map();
    const outputs = [...(cell.outputs ?? [])];
    const made = {
      id: cell.id ?? `new-${++ids}`,
      type: cell.cell_type ?? "code",
      toJSON: () => ({
        id: made.id,
        cell_type: made.type,
        source,
        metadata: Object.fromEntries(metadata),
        ...(made.type === "code"
          ? { outputs: [...outputs], execution_count: made.executionCount }
          : {}),
      }),
      sharedModel: { getSource: () => source, setSource: (s) => (source = s) },
      executionCount: null,
      getMetadata: (k) => metadata.get(k),
      setMetadata: (k, v) => metadata.set(k, v),
      deleteMetadata: (k) => metadata.delete(k),
      outputs: {
        list: outputs,
        get length() {
          return outputs.length;
        },
        get: (i) => outputs[i],
        set: (i, o) => (outputs[i] = o),
        clear: () => outputs.splice(0),
        add: (o) => outputs.push(o),
      },
    };
    for (const [k, v] of Object.entries(cell.metadata ?? {})) metadata.set(k, v);
    if (typeof cell.execution_count === "number") made.executionCount = cell.execution_count;
    return made;
  };
  sources.forEach((source, i) => list.push(make({ id: `c${i}`, source })));
  return {
    list,
    cells: {
      get length() {
        return list.length;
      },
      get: (i) => list[i],
    },
    sharedModel: {
      insertCell: (i, cell) => list.splice(i, 0, make(cell)),
      deleteCell: (i) => list.splice(i, 1),
      moveCell: (from, to) => list.splice(to, 0, ...list.splice(from, 1)),
    },
  };
}

const ask = (model, request) => answerEdit(model, { request_id: "r1", ...request });

test("a cell is inserted right below the one named, and its id and index come back", () => {
  const nb = notebook("a", "%%chat\nhi", "b");
  const reply = ask(nb, {
    request: "insert_cell",
    after: "c1",
    cell_type: "code",
    source: "x = 1",
  });
  assert.equal(reply.ok, true);
  assert.equal(reply.index, 2);
  assert.equal(nb.list[2].id, reply.cell_id);
  assert.equal(nb.list[2].sharedModel.getSource(), "x = 1");
  assert.deepEqual(
    nb.list.map((c) => c.sharedModel.getSource()),
    ["a", "%%chat\nhi", "x = 1", "b"],
  );
  const md = ask(nb, {
    request: "insert_cell",
    after: reply.cell_id,
    cell_type: "markdown",
    source: "# T",
  });
  assert.equal(md.index, 3);
  assert.equal(nb.list[3].type, "markdown");
});

test("text is replaced or a cell deleted only while it holds the expected text", () => {
  const nb = notebook("x = 1", "y = 2");
  assert.deepEqual(
    ask(nb, { request: "set_source", cell_id: "c1", source: "y = 3", expected: "y = 2" }),
    {
      request_id: "r1",
      ok: true,
      index: 1,
      cell: {
        id: "c1",
        cell_type: "code",
        source: "y = 3",
        execution_count: null,
        outputs: [],
        index: 1,
      },
    },
  );
  assert.equal(nb.list[1].sharedModel.getSource(), "y = 3");
  const stale = ask(nb, {
    request: "set_source",
    cell_id: "c1",
    source: "y = 4",
    expected: "y = 2",
  });
  assert.equal(stale.ok, false);
  assert.match(stale.reason, /changed since/);
  assert.equal(nb.list[1].sharedModel.getSource(), "y = 3"); // the user's text stays
  assert.equal(ask(nb, { request: "delete_cell", cell_id: "c0", expected: "nope" }).ok, false);
  assert.equal(ask(nb, { request: "delete_cell", cell_id: "c0", expected: "x = 1" }).ok, true);
  assert.deepEqual(
    nb.list.map((c) => c.id),
    ["c1"],
  );
});

test("a code cell gets outputs and an execution count", () => {
  const nb = notebook("1 + 1");
  const outputs = [
    {
      output_type: "execute_result",
      data: { "text/plain": "2" },
      metadata: {},
      execution_count: 7,
    },
  ];
  assert.equal(
    ask(nb, { request: "set_outputs", cell_id: "c0", outputs, execution_count: 7 }).ok,
    true,
  );
  assert.deepEqual(nb.list[0].outputs.list, outputs);
  assert.equal(nb.list[0].executionCount, 7);
});

test("a record is replaced in the output holding that conversation, or in the metadata", () => {
  const nb = notebook("%%chat\nhi");
  const old = { version: 2, conversation_id: "conv", events: [] };
  nb.list[0].outputs.add({
    output_type: "display_data",
    data: { [RECORD_MIME]: old },
    metadata: {},
  });
  const record = { ...old, events: [{ kind: "undo", id: "u", call_id: "t" }] };
  const bundle = {
    [RECORD_MIME]: record,
    "text/html": "<div></div>",
    "text/plain": "Conversation",
  };
  assert.equal(ask(nb, { request: "replace_record", cell_id: "c0", bundle }).ok, true);
  assert.deepEqual(nb.list[0].outputs.get(0).data, bundle);

  nb.list[0].outputs.clear(); // Clear Outputs: the record lives in the metadata
  nb.list[0].setMetadata("jupyter_turns", old);
  assert.equal(ask(nb, { request: "replace_record", cell_id: "c0", bundle }).ok, true);
  assert.deepEqual(nb.list[0].getMetadata("jupyter_turns"), record);
  const other = { [RECORD_MIME]: { ...record, conversation_id: "another" } };
  assert.equal(ask(nb, { request: "replace_record", cell_id: "c0", bundle: other }).ok, false);
});

test("a change meant for a cell's earlier run never lands on its new run", () => {
  const nb = notebook("%%chat\nhi");
  const first = { version: 2, conversation_id: "conv", events: [{ kind: "message", id: "m1" }] };
  const again = { ...first, events: [{ kind: "message", id: "m2" }] }; // the cell ran again
  nb.list[0].outputs.add({ output_type: "display_data", data: { [RECORD_MIME]: again } });
  const rewound = { ...first, events: [...first.events, { kind: "rewind", id: "r" }] };
  const late = { request: "replace_record", cell_id: "c0", bundle: { [RECORD_MIME]: rewound } };
  assert.equal(ask(nb, late).ok, false);
  assert.deepEqual(nb.list[0].outputs.get(0).data[RECORD_MIME], again);
  const marked = { ...again, events: [...again.events, { kind: "rewind", id: "r2" }] };
  const own = { request: "replace_record", cell_id: "c0", bundle: { [RECORD_MIME]: marked } };
  assert.equal(ask(nb, own).ok, true);
  assert.deepEqual(nb.list[0].outputs.get(0).data[RECORD_MIME], marked);
});

test("a page opened mid-turn shows the running widget, then the record, each once", () => {
  const nb = notebook("%%chat\nhi");
  const cell = nb.list[0];
  const live = { request: "show_live", cell_id: "c0", model_id: "m1" };
  assert.equal(ask(nb, live).ok, true);
  assert.equal(ask(nb, live).ok, true); // already shown: kept as it is
  assert.equal(cell.outputs.length, 1);
  assert.equal(cell.outputs.get(0).data[WIDGET_MIME].model_id, "m1");
  assert.equal(cell.trusted, undefined); // a model without the flag is left so
  const printed = { output_type: "stream", name: "stdout", text: "Restored thread 'main'\n" };
  cell.outputs.list.unshift(printed); // what the run printed before its widget stays
  assert.equal(ask(nb, live).ok, true);
  assert.deepEqual(cell.outputs.list[0], printed);
  cell.outputs.list.shift();

  const record = { version: 2, conversation_id: "conv", thread: "main", events: [{ id: "e" }] };
  const bundle = { [RECORD_MIME]: record, "text/plain": "Conversation" };
  assert.equal(ask(nb, { request: "show_record", cell_id: "c0", bundle }).ok, true);
  assert.deepEqual(cell.outputs.list, [
    { output_type: "display_data", data: bundle, metadata: {} },
  ]);
  assert.equal(cell.getMetadata("jupyter_turns").in_output, RECORD_MIME);
  cell.outputs.set(0, { output_type: "display_data", data: { ...bundle }, metadata: {} });
  const held = cell.outputs.get(0);
  assert.equal(ask(nb, { request: "show_record", cell_id: "c0", bundle }).ok, true);
  assert.equal(cell.outputs.get(0), held); // the same turn: not written again
  const longer = { ...record, events: [{ id: "e" }, { id: "f" }] };
  const next = { [RECORD_MIME]: longer };
  assert.equal(ask(nb, { request: "show_record", cell_id: "c0", bundle: next }).ok, true);
  assert.deepEqual(cell.outputs.get(0).data, next);
  assert.equal(ask(nb, { request: "show_live", cell_id: "gone", model_id: "m" }).ok, false);
});

test("a page that did not run a chat cell shows it running, then its count, as the kernel says", () => {
  const nb = notebook("%%chat\nhi", "x");
  const [chat, other] = nb.list;
  chat.executionCount = 2; // the file's, from an earlier run
  chat.executionState = "idle";
  const run = {
    request: "cell_run",
    request_id: "r",
    cell_id: "c0",
    execution_count: 7,
    runner: "page-a",
  };
  const ran = (data, client) => answerEdit(nb, { ...run, ...data }, () => null, client);
  assert.equal(ran({ running: true }, "page-b").ok, true);
  assert.deepEqual([chat.executionState, chat.executionCount], ["running", 2]); // shows [*]
  assert.equal(ran({ running: false }, "page-b").ok, true);
  assert.deepEqual([chat.executionState, chat.executionCount], ["idle", 7]);
  // the page that ran it follows its own request: left as JupyterLab keeps it
  chat.executionState = "running";
  assert.equal(ran({ running: false, execution_count: 8 }, "page-a").ok, true);
  assert.deepEqual([chat.executionState, chat.executionCount], ["running", 7]);
  assert.equal(ran({ running: false, execution_count: 8 }, null).ok, true); // a page of no kernel
  assert.deepEqual([chat.executionState, chat.executionCount], ["idle", 8]);
  assert.equal(ran({ running: true, cell_id: "gone" }, "page-b").ok, false);
  assert.equal(other.executionState, undefined); // no other cell is touched
});

test("a page that does not act on requests still follows a cell's run, and nothing else", () => {
  const nb = notebook("%%chat\nhi", "x");
  const [chat, other] = nb.list;
  const run = { request: "cell_run", request_id: "r", cell_id: chat.id, runner: "gone" };
  followRun(nb, { ...run, running: true }, "page-b");
  assert.equal(chat.executionState, "running");
  followRun(nb, { ...run, running: false, execution_count: 4 }, "page-b");
  assert.deepEqual([chat.executionState, chat.executionCount], ["idle", 4]);
  followRun(nb, { ...run, running: true, runner: "page-b" }, "page-b"); // its own run
  assert.equal(chat.executionState, "idle");
  followRun(nb, { request: "set_source", request_id: "s", cell_id: chat.id, source: "y" }, "b");
  followRun(nb, { ...run, running: true, cell_id: "gone" }, "page-b");
  followRun(null, { ...run, running: true }, "page-b"); // a closed notebook
  assert.equal(chat.sharedModel.getSource(), "%%chat\nhi"); // an edit is the acting page's
  assert.equal(other.executionState, undefined); // no other cell is touched
  assert.equal(chat.executionState, "idle");
});

test("a cell shown running for the kernel goes idle when the kernel dies, no other", () => {
  const nb = notebook("%%chat\nhi", "%%chat\nagain", "x");
  const [marked, own, plain] = nb.list;
  const mark = { request: "cell_run", request_id: "r", running: true, runner: "a" };
  answerEdit(nb, { ...mark, cell_id: marked.id }, () => null, "b");
  own.executionState = "running"; // the page's own run: its request ends it
  plain.executionState = "idle";
  assert.equal(endRuns(nb), 1);
  assert.deepEqual(
    nb.list.map((c) => c.executionState),
    ["idle", "running", "idle"],
  );
  assert.equal(endRuns(nb), 0); // once
  assert.equal(endRuns(null), 0);
});

test("a running turn's cell is trusted while it holds no output, and nothing is written", () => {
  const nb = notebook("%%chat\nhi", "x");
  const [chat, other] = nb.list;
  chat.trusted = false;
  other.trusted = false;
  trustLive(nb, { request: "show_record", cell_id: chat.id }); // only a running turn's widget
  assert.equal(chat.trusted, false);
  assert.equal(ask(nb, { request: "trust_live", cell_id: chat.id }).ok, true);
  assert.deepEqual([chat.trusted, other.trusted], [true, false]);
  assert.equal(chat.outputs.length, 0); // and writes nothing
  other.outputs.add({ output_type: "stream", name: "stdout", text: "old\n" });
  trustLive(nb, { request: "show_live", cell_id: other.id, model_id: "m1" });
  assert.equal(other.trusted, false); // trusting would rewrite that output: left untrusted
  trustLive(null, { request: "trust_live", cell_id: chat.id }); // a closed notebook: nothing
});

test("unknown cells, requests and missing ids are refused with a reason", () => {
  const nb = notebook("a");
  for (const bad of [
    { request: "insert_cell", after: "zzz", source: "x" },
    { request: "set_outputs", cell_id: "zzz", outputs: [] },
    { request: "explode" },
  ]) {
    const reply = ask(nb, bad);
    assert.equal(reply.ok, false);
    assert.equal(typeof reply.reason, "string");
  }
  assert.equal(answerEdit(nb, { request: "delete_cell", cell_id: "c0" }).ok, false); // no request_id
  assert.equal(
    answerEdit(null, { request: "delete_cell", request_id: "r" }).reason,
    "the notebook is closed",
  );
});

test("every change answers with the cell as the notebook holds it afterwards", () => {
  const nb = notebook("a", "%%chat\nhi", "b");
  const edited = ask(nb, { request: "set_source", cell_id: "c2", source: "b2", expected: "b" });
  assert.deepEqual(
    { source: edited.cell.source, index: edited.cell.index, id: edited.cell.id },
    { source: "b2", index: 2, id: "c2" },
  );
  const ran = ask(nb, {
    request: "set_outputs",
    cell_id: "c2",
    outputs: [{ output_type: "stream", name: "stdout", text: "hi\n" }],
    execution_count: 4,
    expected: "b2",
  });
  assert.equal(ran.cell.execution_count, 4);
  assert.equal(ran.cell.outputs[0].text, "hi\n");
  const stale = ask(nb, { request: "set_outputs", cell_id: "c2", outputs: [], expected: "b" });
  assert.equal(stale.ok, false); // outputs never go under text they did not come from
  assert.equal(nb.list[2].outputs.length, 1);
});

test("a cell moves to the index asked, and a changed or missing one is refused", () => {
  const nb = notebook("a", "b", "c");
  const moved = ask(nb, { request: "move_cell", cell_id: "c0", to: 2, expected: "a" });
  assert.equal(moved.ok, true);
  assert.deepEqual(
    nb.list.map((c) => c.id),
    ["c1", "c2", "c0"],
  );
  assert.equal(moved.cell.index, 2);
  assert.equal(ask(nb, { request: "move_cell", cell_id: "c0", to: 0, expected: "x" }).ok, false);
  assert.equal(ask(nb, { request: "move_cell", cell_id: "c0", to: 9, expected: "a" }).ok, false);
});

test("a deleted cell comes back whole, outputs and metadata, where it was", () => {
  const nb = notebook("a", "b", "c");
  nb.list[1].outputs.add({ output_type: "stream", name: "stdout", text: "6\n" });
  nb.list[1].setMetadata("tags", ["keep"]);
  const gone = ask(nb, { request: "delete_cell", cell_id: "c1", expected: "b" });
  assert.equal(gone.ok, true);
  assert.equal(gone.cells, 2);
  assert.equal(gone.cell.index, 1);
  assert.equal(gone.cell.outputs.length, 1);
  const back = ask(nb, { request: "insert_cell", index: gone.cell.index, cell: gone.removed });
  assert.equal(back.ok, true);
  assert.equal(back.cell.index, 1);
  assert.equal(back.cell.source, "b");
  assert.equal(nb.list[1].outputs.list[0].text, "6\n");
  assert.deepEqual(nb.list[1].getMetadata("tags"), ["keep"]);
});

test("a deleted cell comes back under its own id, unless a cell holds that id now", () => {
  const nb = notebook("a", "b", "c");
  const gone = ask(nb, { request: "delete_cell", cell_id: "c1", expected: "b" });
  const back = ask(nb, { request: "insert_cell", index: 1, cell: gone.removed });
  assert.equal(back.cell_id, "c1"); // an earlier step that names c1 finds it again
  assert.equal(nb.list[1].id, "c1");
  const again = ask(nb, { request: "insert_cell", index: 3, cell: gone.removed });
  assert.notEqual(again.cell_id, "c1"); // never two cells with one id
  const odd = ask(nb, { request: "insert_cell", index: 0, cell: { ...gone.removed, id: "<x>" } });
  assert.notEqual(odd.cell_id, "<x>");
});

test("a change carries the cell's stamp: written with it, reported with it, null removes it", () => {
  const nb = notebook("%%chat\nhi", "x = 1");
  const stamp = { thread: "main", turn: 1, call_id: "a", tool: "insert_cell" };
  const path = () => "work/nb.ipynb";
  const made = answerEdit(
    nb,
    {
      request_id: "r",
      request: "insert_cell",
      after: "c0",
      cell_type: "code",
      source: "y = 2",
      provenance: stamp,
    },
    path,
  );
  const saved = { ...stamp, notebook: "work/nb.ipynb" };
  assert.deepEqual(nb.list[1].getMetadata("jupyter_turns"), { provenance: saved });
  assert.deepEqual(made.cell.provenance, saved); // read back after the change
  const edit = { ...stamp, tool: "edit_cell", call_id: "b" };
  const edited = answerEdit(
    nb,
    {
      request_id: "r",
      request: "set_source",
      cell_id: "c1",
      source: "x = 2",
      expected: "x = 1",
      provenance: edit,
    },
    path,
  );
  assert.equal(edited.cell.provenance.call_id, "b");
  assert.equal(nb.list[2].sharedModel.getSource(), "x = 2");
  // undo of that edit: the cell had no stamp, and has none again
  answerEdit(
    nb,
    {
      request_id: "r",
      request: "set_source",
      cell_id: "c1",
      source: "x = 1",
      expected: "x = 2",
      provenance: null,
    },
    path,
  );
  assert.equal(nb.list[2].getMetadata("jupyter_turns"), undefined);
  // outputs without a stamp leave the cell's as it is
  const ran = ask(nb, {
    request: "set_outputs",
    cell_id: made.cell_id,
    outputs: [],
    execution_count: 3,
  });
  assert.deepEqual(ran.cell.provenance, saved);
  // a refused change writes no stamp either
  const stale = answerEdit(
    nb,
    {
      request_id: "r",
      request: "set_source",
      cell_id: "c1",
      source: "z",
      expected: "nope",
      provenance: edit,
    },
    path,
  );
  assert.equal(stale.ok, false);
  assert.equal(nb.list[2].getMetadata("jupyter_turns"), undefined);
});
