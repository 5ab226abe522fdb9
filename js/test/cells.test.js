import assert from "node:assert/strict";
import { test } from "node:test";
import { answerRequest, isRequest } from "../labextension/cells.js";
import { RECORD_MIME, WIDGET_MIME } from "../labextension/constants.js";

/** A cell model whose toJSON() gives nbformat JSON, as JupyterLab's does. */
function cell(json) {
  return { id: json.id, toJSON: () => structuredClone(json) };
}

function notebook(cells, dirty = false) {
  return { dirty, cells: { length: cells.length, get: (i) => cells[i] } };
}

const ask = (model, extra = {}) =>
  answerRequest(model, { request: "cells", request_id: "r1", ...extra }, () => "work/a.ipynb");

const stream = { output_type: "stream", name: "stdout", text: ["a\n", "b\n"] };
const error = {
  output_type: "error",
  ename: "ValueError",
  evalue: "bad",
  traceback: ["\u001b[31mValueError\u001b[0m", "bad"],
};
const png = {
  output_type: "display_data",
  data: { "image/png": "iVBORw0KGgo=", "text/plain": "<Figure>" },
  metadata: { "image/png": { width: 10 } },
};

test("answers with every cell, its source joined, and the notebook's path and state", () => {
  const model = notebook(
    [
      cell({
        id: "c1",
        cell_type: "code",
        source: ["import pandas\n", "df = 1"],
        metadata: { tags: ["x"] },
        execution_count: 3,
        outputs: [stream],
      }),
      cell({ id: "m1", cell_type: "markdown", source: "# Title", metadata: {}, attachments: {} }),
      cell({ id: "raw1", cell_type: "raw", source: ["raw"], metadata: {} }),
    ],
    true,
  );
  assert.deepEqual(ask(model), {
    request_id: "r1",
    ok: true,
    path: "work/a.ipynb",
    dirty: true,
    cells: [
      {
        id: "c1",
        cell_type: "code",
        source: "import pandas\ndf = 1",
        execution_count: 3,
        outputs: [stream],
      },
      { id: "m1", cell_type: "markdown", source: "# Title", execution_count: null, outputs: [] },
      { id: "raw1", cell_type: "raw", source: "raw", execution_count: null, outputs: [] },
    ],
  });
});

test("a code cell never run has no execution count; an unknown path is null", () => {
  const model = notebook([
    cell({
      id: "c",
      cell_type: "code",
      source: "",
      metadata: {},
      execution_count: null,
      outputs: [],
    }),
  ]);
  const reply = answerRequest(model, { request: "cells", request_id: "x" });
  assert.equal(reply.ok, true);
  assert.equal(reply.path, null);
  assert.equal(reply.dirty, false);
  assert.deepEqual(reply.cells[0], {
    id: "c",
    cell_type: "code",
    source: "",
    execution_count: null,
    outputs: [],
  });
});

test("chat records and widgets are replaced by their text; other outputs are kept", () => {
  const record = {
    output_type: "display_data",
    data: {
      [RECORD_MIME]: { events: new Array(50).fill({ kind: "message", content: "x" }) },
      "text/html": "<div>long transcript</div>",
      "text/plain": ["Conversation · thread main · ", "50 events"],
    },
    metadata: {},
    transient: { display_id: "d1" },
  };
  const widget = {
    output_type: "execute_result",
    execution_count: 4,
    data: { [WIDGET_MIME]: { model_id: "m1", version_major: 2 } },
    metadata: { foo: 1 },
  };
  const model = notebook([
    cell({
      id: "c",
      cell_type: "code",
      source: "chat('hi')",
      metadata: {},
      execution_count: 4,
      outputs: [stream, record, png, widget, error],
    }),
  ]);
  assert.deepEqual(ask(model).cells[0].outputs, [
    stream,
    {
      output_type: "display_data",
      data: { "text/plain": "Conversation · thread main · 50 events" },
      metadata: {},
      jupyter_turns: true,
    },
    png,
    {
      output_type: "execute_result",
      execution_count: 4,
      data: { "text/plain": "chat conversation" },
      metadata: {},
      jupyter_turns: true,
    },
    error,
  ]);
});

test("cell metadata and attachments are not sent", () => {
  const model = notebook([
    cell({
      id: "m",
      cell_type: "markdown",
      source: "![x](attachment:x.png)",
      metadata: { jupyter_turns: { big: true } },
      attachments: { "x.png": { "image/png": "AAAA" } },
    }),
  ]);
  assert.deepEqual(Object.keys(ask(model).cells[0]).sort(), [
    "cell_type",
    "execution_count",
    "id",
    "outputs",
    "source",
  ]);
});

test("bad requests are refused with a reason, echoing the request_id", () => {
  const model = notebook([]);
  for (const [data, id] of [
    [{ request: "everything", request_id: "r7" }, "r7"],
    [{ request: "cells" }, null],
    [{ request: "cells", request_id: 7 }, null],
  ]) {
    const reply = answerRequest(model, data);
    assert.equal(reply.ok, false, JSON.stringify(data));
    assert.equal(reply.request_id, id);
    assert.ok(reply.reason.length > 0);
  }
  const closed = answerRequest(null, { request: "cells", request_id: "r8" });
  assert.deepEqual(closed, { request_id: "r8", ok: false, reason: "the notebook is closed" });
});

test("a model that fails to give its cells gets a failure reply, not an exception", () => {
  const broken = notebook([
    {
      id: "c",
      toJSON() {
        throw new Error("disposed");
      },
    },
  ]);
  const reply = ask(broken);
  assert.equal(reply.ok, false);
  assert.equal(reply.request_id, "r1");
  assert.match(reply.reason, /disposed/);
});

test("only messages with a request key are requests; metadata writes are not", () => {
  assert.equal(isRequest({ request: "cells", request_id: "r" }), true);
  assert.equal(isRequest({ cell_id: "a", key: "jupyter_turns", value: 1 }), false);
  assert.equal(isRequest({ cell_id: null, scope: "notebook", key: "k", value: 1 }), false);
  for (const other of [null, undefined, "cells", ["request"], {}]) {
    assert.equal(isRequest(other), false);
  }
});
